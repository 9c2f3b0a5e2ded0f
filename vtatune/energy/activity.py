"""What a VTA program makes the hardware do: SRAM accesses, MACs, ALU lane-ops, DRAM bytes.

Counted from the instruction stream alone, as VTA's HLS design executes it
(apache/tvm-vta ``hardware/xilinx/src/vta.cc``, cited by function and loop label):

- **GEMM** (``gemm()``, loop ``READ_GEMM_UOP``, II 1): per micro-op execution it reads the
  micro-op (``uop_mem[upc]``), one weight tile, one input tile and one accumulator tile
  (``read_tensor`` x3), and writes the accumulator tile and the output tile (``write_tensor``
  x2). A ``reset_reg`` GEMM runs the same loop (it reads and computes, then writes zeros), so
  it counts the same.
- **ALU** (``alu()``, loop ``READ_ALU_UOP``, II 2): per micro-op execution it reads the
  micro-op, the source and the destination accumulator tiles (the source is read even with an
  immediate), and writes the accumulator tile and the output tile.
- **LOAD** (``load_pad_2d``/``load_2d``): writes every tile of the padded 2-D region into its
  SRAM (``reset_mem`` writes the pads as zeros). **STORE** reads ``y_size * x_size`` tiles from
  the output SRAM.
- **DRAM**: the bytes the loads read and the stores write, plus 16 bytes fetched per
  instruction (``fetch()`` reads ``insns[pc]``, 128 bits).

A micro-op execution is ``iter_out * iter_in * (uop_end - uop_bgn)``, as VTA's simulator counts
``gemm_counter``/``alu_counter`` (vtatune.simulator.functional.Counters), except that reset
GEMMs count here (the hardware runs them) and not there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from vtatune.program.isa import COL_OPCODE, GEMM_COL, MEM_COL, MemId, Opcode
from vtatune.program.program import Program, tile_bytes

#: Bytes the fetch module reads per instruction (128-bit instructions, vta.cc ``fetch()``).
INSN_BYTES = 16
SRAMS = ("inp", "wgt", "acc", "out", "uop")
_LOAD_TARGET = {MemId.UOP: "uop", MemId.WGT: "wgt", MemId.INP: "inp", MemId.ACC: "acc",
                MemId.ACC_8BIT: "acc"}


@dataclass(frozen=True)
class Activity:
    """Events of one run of a program. SRAM figures are row accesses (one tile, or one
    micro-op for ``uop``); ``macs`` and ``alu_lane_ops`` are element operations."""

    gemm_uops: int
    gemm_reset_uops: int  # of ``gemm_uops``: those of reset_reg GEMMs (VTA's counters skip them)
    alu_uops: int
    macs: int
    alu_lane_ops: int
    sram_reads: dict[str, int]
    sram_writes: dict[str, int]
    dram_read_bytes: int
    dram_write_bytes: int
    insn_fetch_bytes: int

    @property
    def dram_bytes(self) -> int:
        return self.dram_read_bytes + self.dram_write_bytes + self.insn_fetch_bytes

    def sram_accesses(self, name: str) -> int:
        return self.sram_reads[name] + self.sram_writes[name]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def activity(program: Program) -> Activity:
    """The events of one run of ``program`` (see the module docstring for what counts)."""
    hw = program.hw
    cols = program.insns.cols
    op = cols[:, COL_OPCODE]
    uops = np.maximum(cols[:, GEMM_COL["uop_end"]] - cols[:, GEMM_COL["uop_bgn"]], 0)
    execs = cols[:, GEMM_COL["iter_out"]] * cols[:, GEMM_COL["iter_in"]] * uops
    gemm = int(execs[op == Opcode.GEMM].sum())
    reset = int(execs[(op == Opcode.GEMM) & (cols[:, GEMM_COL["reset"]] != 0)].sum())
    alu = int(execs[op == Opcode.ALU].sum())

    mt = cols[:, MEM_COL["memory_type"]]
    y, x = cols[:, MEM_COL["y_size"]], cols[:, MEM_COL["x_size"]]
    padded = ((cols[:, MEM_COL["y_pad_0"]] + y + cols[:, MEM_COL["y_pad_1"]])
              * (cols[:, MEM_COL["x_pad_0"]] + x + cols[:, MEM_COL["x_pad_1"]]))
    load = op == Opcode.LOAD
    store = op == Opcode.STORE
    moved = (y != 0) & (x != 0)  # a zero-size LOAD/STORE only moves dependence tokens
    writes = dict.fromkeys(SRAMS, 0)
    read_bytes = 0
    present = set(np.unique(mt[(load | store) & moved]).tolist())
    for mem, name in _LOAD_TARGET.items():
        if mem not in present:
            continue
        sel = load & moved & (mt == mem)
        writes[name] += int(padded[sel].sum())
        read_bytes += int((y[sel] * x[sel]).sum()) * tile_bytes(hw, mem)
    stored_tiles = 0
    write_bytes = 0
    for mem in (MemId.OUT, MemId.ACC_8BIT, MemId.ACC):
        if mem not in present:
            continue
        sel = store & moved & (mt == mem)
        tiles = int((y[sel] * x[sel]).sum())
        stored_tiles += tiles
        write_bytes += tiles * tile_bytes(hw, mem)

    reads = {"uop": gemm + alu, "wgt": gemm, "inp": gemm, "acc": gemm + 2 * alu,
             "out": stored_tiles}
    writes["acc"] += gemm + alu
    writes["out"] += gemm + alu
    return Activity(
        gemm_uops=gemm, gemm_reset_uops=reset, alu_uops=alu,
        macs=gemm * hw.macs_per_cycle,
        alu_lane_ops=alu * hw.batch * hw.block_out,
        sram_reads=reads, sram_writes=writes,
        dram_read_bytes=read_bytes, dram_write_bytes=write_bytes,
        insn_fetch_bytes=INSN_BYTES * len(program.insns),
    )
