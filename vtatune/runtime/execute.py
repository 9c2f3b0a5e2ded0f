"""Run a workload's program on plain-layout inputs through the functional simulator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vtatune.errors import ProgramError
from vtatune.program.isa import COL_OPCODE, GEMM_COL, MEM_COL, MemId, Opcode
from vtatune.program.program import Program
from vtatune.simulator.functional import Counters, FunctionalResult, run
from vtatune.workloads.base import Workload

#: int8 range of random inputs.
INT8_MIN, INT8_MAX = -128, 127


@dataclass(frozen=True, eq=False)
class Execution:
    """The unpacked result (plain layout, int8) and the simulator's full result."""

    output: np.ndarray
    result: FunctionalResult


_LOAD_KEYS = {MemId.INP: "inp_load_nbytes", MemId.WGT: "wgt_load_nbytes",
              MemId.ACC: "acc_load_nbytes", MemId.ACC_8BIT: "acc_load_nbytes",
              MemId.UOP: "uop_load_nbytes"}


def program_counters(program: Program) -> Counters:
    """VTA's simulator counters read off the instruction stream, without running it (equal
    to ``run(program).counters``: DRAM bytes moved, pads excluded; GEMM tile-ops without
    resets; ALU tile-ops)."""
    cols = program.insns.cols
    op, mt = cols[:, COL_OPCODE], cols[:, MEM_COL["memory_type"]]
    load, store = op == Opcode.LOAD, op == Opcode.STORE
    if (load & (mt == MemId.OUT)).any():
        raise ProgramError("a LOAD of memory type OUT (only STORE moves OUT tiles)")
    nbytes = cols[:, MEM_COL["y_size"]] * cols[:, MEM_COL["x_size"]] * program.dma_tile_bytes()
    c = dict.fromkeys(Counters.__dataclass_fields__, 0)
    c["out_store_nbytes"] = int(nbytes[store].sum())
    for m, key in _LOAD_KEYS.items():
        c[key] += int(nbytes[load & (mt == m)].sum())
    ops = program.insns.tile_ops()
    gemm = (op == Opcode.GEMM) & (cols[:, GEMM_COL["reset"]] == 0)
    c["gemm_counter"] = int(ops[gemm].sum())
    c["alu_counter"] = int(ops[op == Opcode.ALU].sum())
    return Counters(**c)


def random_inputs(wl: Workload, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Uniform random int8 ``data`` and ``kernel`` in plain layouts."""
    rng = np.random.default_rng(seed)
    shapes = wl.plain_shapes()
    data = rng.integers(INT8_MIN, INT8_MAX + 1, size=shapes["data"], dtype=np.int8)
    kernel = rng.integers(INT8_MIN, INT8_MAX + 1, size=shapes["kernel"], dtype=np.int8)
    return data, kernel


def execute(program: Program, wl: Workload, data: np.ndarray, kernel: np.ndarray) -> Execution:
    """Pack ``data``/``kernel`` (plain layouts), run ``program``, unpack ``res``."""
    hw = program.hw
    d, k = wl.pack_inputs(data, kernel, hw)
    result = run(program, {"data": d, "kernel": k})
    res = result.region("res", np.dtype(hw.out_dtype), wl.packed_shapes(hw)["res"])
    return Execution(wl.unpack_output(res, hw), result)
