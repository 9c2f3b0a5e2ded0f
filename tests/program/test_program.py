"""Programs: DRAM regions, counts, the program.bin round trip and the builder."""

from __future__ import annotations

import numpy as np
import pytest

from vtatune.errors import ProgramError
from vtatune.hardware.config import default, load, shipped
from vtatune.program import (
    UOP_REGION,
    DramRegion,
    MemId,
    MemInsn,
    Opcode,
    Program,
    ProgramBuilder,
    Uop,
    alignment,
    deps,
    tile_bytes,
)
from vtatune.program.examples import DenseShape, dense_program


def _dense(hw, threads: int = 2) -> Program:
    s = DenseShape(m=4 * hw.batch, k=4 * hw.block_in, n=4 * hw.block_out, tm=2, tk=2, tn=2,
                   threads=threads)  # fmt: skip
    return dense_program(hw, s)


@pytest.mark.parametrize("path", shipped(), ids=lambda p: p.stem)
def test_program_bin_round_trip(path) -> None:
    hw = load(path)
    prog = _dense(hw)
    raw = prog.to_bytes()
    assert raw[:8] == b"VTAPROG\0"
    assert len(raw) == 64 + 48 * len(prog.regions) + 16 * len(prog.insns) + 4 * prog.uops.size
    again = Program.from_bytes(hw, raw)
    assert again == prog
    assert Program.from_bytes(None, raw) == prog  # HwConfig rebuilt from the header
    assert again.to_bytes() == raw


def test_program_bin_errors() -> None:
    prog = _dense(default())
    raw = prog.to_bytes()
    with pytest.raises(ProgramError, match="built for"):
        Program.from_bytes(load("1x8x8"), raw)
    with pytest.raises(ProgramError, match="magic"):
        Program.from_bytes(None, b"X" + raw[1:])
    with pytest.raises(ProgramError, match="header says"):
        Program.from_bytes(None, raw[:-4])
    with pytest.raises(ProgramError, match="shorter than its header"):
        Program.from_bytes(None, raw[:10])


def test_counts_and_uop_bytes() -> None:
    hw = default()
    prog = _dense(hw, threads=2)
    c = prog.counts()
    # 4 blocks x 2 k-steps: 8 INP + 8 WGT loads, 3 uop kernels (2 gemm threads, reset, alu).
    assert c["LOAD_INP"] == 8 and c["LOAD_WGT"] == 8 and c["LOAD_UOP"] == 4
    assert c["LOAD"] == 20 and c["STORE"] == 4 and c["FINISH"] == 1
    assert c["GEMM"] == 4 + 8 and c["ALU"] == 12 and c["total"] == len(prog.insns)
    assert prog.uop_buffer_bytes == 4 * (2 + 2 + 1 + 1)
    # The reset kernel Uop(0, 0, 0) and the ALU kernel Uop(0, 0) are the same word: one copy.
    assert prog.uop_image_bytes == prog.uop_buffer_bytes - 4


def test_builder_dedupes_kernels_and_aligns_regions() -> None:
    hw = default()
    b = ProgramBuilder(hw)
    a = b.add_region("data", 100)
    k = b.add_region("kernel", 10)
    assert a.offset == 0 and k.offset % alignment(hw) == 0 and k.offset >= 100
    k1 = b.add_uop_kernel([Uop(0, 1, 2), Uop(3, 4, 5)])
    k2 = b.add_uop_kernel([Uop(7, 7, 7)])
    assert b.add_uop_kernel([Uop(0, 1, 2), Uop(3, 4, 5)]) == k1
    assert (k1.bgn, k1.end, k2.bgn, k2.end) == (0, 2, 2, 3)
    assert b.load_uops(k2, sram_base=10) == (10, 11)
    b.load(MemId.INP, 0, "data", 3, 1, 2)
    b.finish()
    prog = b.build()
    uops = prog.regions[UOP_REGION]
    assert uops.offset % alignment(hw) == 0 and uops.nbytes == 12
    load_uop = prog.insns[0]
    assert load_uop.dram_base * 4 == uops.offset + 4 * k2.bgn  # fixed up by build()
    assert prog.insns[1].dram_base * hw.inp_tile_bytes == 3 * hw.inp_tile_bytes
    assert prog.dram_bytes >= uops.end and prog.check() == []


def test_region_problems() -> None:
    hw = default()
    with pytest.raises(ProgramError, match="not a multiple"):
        Program(hw, (), np.zeros(0), {"a": DramRegion("a", 8, 8)}, 1024)
    with pytest.raises(ProgramError, match="overlap"):
        Program(hw, (), np.zeros(0),
                {"a": DramRegion("a", 0, 512), "b": DramRegion("b", 256, 8)}, 1024)  # fmt: skip
    with pytest.raises(ProgramError, match="dram_bytes"):
        Program(hw, (), np.zeros(0), {"a": DramRegion("a", 0, 2048)}, 1024)
    with pytest.raises(ProgramError, match="no 'uops' region"):
        Program(hw, (), np.ones(3), {}, 1024)
    # the micro-op region's own size is named (not the last region's listed)
    with pytest.raises(ProgramError, match="region 'uops' holds 4 bytes < micro-op image 12"):
        Program(hw, (), np.ones(3),
                {"uops": DramRegion("uops", 0, 4), "b": DramRegion("b", 512, 64)}, 1024)


def test_check_lists_routing_and_field_problems() -> None:
    hw = default()
    bad = (
        MemInsn(Opcode.LOAD, deps("pop_prev"), MemId.INP, 0, 0, 1, 1, 1),
        MemInsn(Opcode.LOAD, deps(), MemId.INP, 1 << 16, 0, 1, 1, 1),
    )
    prog = Program(hw, bad, np.zeros(0), {}, 1024)
    problems = prog.check()
    assert any("instruction #0" in p and "no previous module" in p for p in problems)
    assert any("sram_base=65536" in p for p in problems)
    with pytest.raises(ProgramError, match="unknown dependence flag"):
        deps("pop_sideways")


def test_tile_bytes() -> None:
    hw = load("2x16x16")
    assert tile_bytes(hw, MemId.INP) == 32 and tile_bytes(hw, MemId.WGT) == 256
    assert tile_bytes(hw, MemId.ACC) == 128 and tile_bytes(hw, MemId.OUT) == 32
    assert tile_bytes(hw, MemId.UOP) == 4 and alignment(hw) == 256
