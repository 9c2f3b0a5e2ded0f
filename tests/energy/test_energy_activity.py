"""Events of a program: hand counts on a program built instruction by instruction, and the
functional simulator's own counters and the timing model's DRAM bytes on compiled programs."""

from __future__ import annotations

import pytest

from vtatune.energy.activity import INSN_BYTES, activity
from vtatune.hardware import config
from vtatune.program.isa import AluOp, MemId, Uop
from vtatune.program.program import ProgramBuilder


def _small_program():
    """LOAD inp (2x3 tiles, padded 1 on every side), LOAD wgt (1x4), a 3-uop GEMM kernel run
    2x5 times, a 2-uop ALU kernel run 1x4 times with an immediate, STORE 1x6 tiles."""
    hw = config.default()
    b = ProgramBuilder(hw, "hand")
    b.add_region("inp", 64 * hw.inp_tile_bytes)
    b.add_region("wgt", 64 * hw.wgt_tile_bytes)
    b.add_region("out", 64 * hw.out_tile_bytes)
    b.load(MemId.INP, 0, "inp", 0, 2, 3, pads=(1, 1, 1, 1))
    b.load(MemId.WGT, 0, "wgt", 0, 1, 4)
    g = b.load_uops(b.add_uop_kernel([Uop(0, 0, 0), Uop(1, 1, 1), Uop(2, 2, 2)], "gemm"))
    b.gemm(g, iter_out=2, iter_in=5, dst_factor=(3, 0), src_factor=(0, 1))
    a = b.load_uops(b.add_uop_kernel([Uop(0, 0), Uop(1, 1)], "alu"), sram_base=3)
    b.alu(AluOp.SHR, a, iter_out=1, iter_in=4, dst_factor=(0, 2), imm=8)
    b.store(0, "out", 0, 1, 6)
    b.finish()
    return hw, b.build()


def test_hand_count_of_a_small_program() -> None:
    hw, program = _small_program()
    act = activity(program)
    gemm, alu = 2 * 5 * 3, 1 * 4 * 2
    assert (act.gemm_uops, act.gemm_reset_uops, act.alu_uops) == (gemm, 0, alu)
    assert act.macs == gemm * hw.batch * hw.block_in * hw.block_out
    assert act.alu_lane_ops == alu * hw.batch * hw.block_out
    # reads: every GEMM uop reads its uop, a weight, an input and an accumulator tile; every
    # ALU uop its uop and two accumulator tiles (vta.cc alu() reads src even with an imm);
    # the STORE reads its 6 output tiles.
    assert act.sram_reads == {"uop": gemm + alu, "wgt": gemm, "inp": gemm,
                              "acc": gemm + 2 * alu, "out": 6}
    # writes: the padded input region (2+2) x (3+2), 4 weight tiles, 3 + 2 micro-ops; every
    # GEMM and ALU uop writes one accumulator and one output tile.
    assert act.sram_writes == {"inp": 4 * 5, "wgt": 4, "uop": 3 + 2, "acc": gemm + alu,
                               "out": gemm + alu}
    # DRAM: unpadded tiles read, output tiles written, 16 bytes fetched per instruction
    assert act.dram_read_bytes == (6 * hw.inp_tile_bytes + 4 * hw.wgt_tile_bytes + 5 * 4)
    assert act.dram_write_bytes == 6 * hw.out_tile_bytes
    assert act.insn_fetch_bytes == INSN_BYTES * len(program.insns)


def test_counts_agree_with_the_simulators() -> None:
    """On a compiled ResNet-18 layer: micro-op executions as the functional simulator counts
    them, DRAM bytes as the timing model moves them."""
    from vtatune.compiler import compile_candidate
    from vtatune.runtime import build_program, program_counters
    from vtatune.simulator import simulate
    from vtatune.workloads import RESNET18

    hw = config.default()
    wl = RESNET18["C8"]
    knobs = dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=1, tile_co=8, h_nthread=1,
                 oc_nthread=2)
    res = compile_candidate(wl, hw, knobs)
    if not res.ok:
        pytest.skip(f"the tutorial's schedule does not compile here: {res.reason}")
    program = build_program(res, wl, hw)
    act = activity(program)
    counters = program_counters(program)
    # VTA's counters skip reset GEMMs; the hardware runs them (and the program has some)
    assert act.gemm_reset_uops > 0
    assert act.gemm_uops - act.gemm_reset_uops == counters.gemm_counter
    assert act.alu_uops == counters.alu_counter
    assert act.macs >= wl.macs  # padding to blocks only adds work
    timing = simulate(program, "pynq-z1")
    assert act.dram_read_bytes == timing.dram_read_bytes
    assert act.dram_write_bytes == timing.dram_write_bytes
    assert act.dram_read_bytes == (counters.inp_load_nbytes + counters.wgt_load_nbytes
                                   + counters.acc_load_nbytes + counters.uop_load_nbytes)
    assert act.dram_write_bytes == counters.out_store_nbytes
