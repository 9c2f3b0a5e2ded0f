"""SRAM -> block-RAM mapping, checked against counts worked out by hand from the aspect ratios."""

from __future__ import annotations

import pytest

from vtatune.area.coefficients import load
from vtatune.area.sram import Memory, map_memory

CO = load()
X7 = CO.family("xilinx-7series")
USP = CO.family("xilinx-ultrascale+")
CV = CO.family("intel-cyclonev")
PORT = CO.vta.max_port_bits  # 1024


def blocks(width: int, depth: int, mode: str = "tdp", fam=X7, copies: int = 1,
           uram: bool = False) -> float:
    return map_memory(Memory("m", width, depth, mode, copies), fam, PORT, uram).blocks


def test_default_weight_sram_on_bram36() -> None:
    # 1x16x16 wgt SRAM: 2048-bit rows (16*16*8), 256 KiB -> 1024 rows; two 1024-bit banks.
    # True dual-port RAMB36 is at most 1Kx36: 28 columns cover 1008 bits, the last 16 bits take
    # one RAMB18 1Kx18 (half a block) -> 28.5 per bank, 57 in all.
    m = map_memory(Memory("wgt", 2048, 1024, "tdp"), X7, PORT, False)
    assert m.banks == 2
    assert m.blocks == 57.0
    assert m.primitive == "bram36"
    assert "56 x BRAM36 1024x36" in m.describe() and "2 x RAMB18 1024x18" in m.describe()


def test_default_buffers_by_hand() -> None:
    # inp/out: 128b x 2048 rows. 7 RAMB36 2Kx18 (126 bits) + one RAMB18 8Kx2 -> 7.5.
    assert blocks(128, 2048) == 7.5
    # acc: 512b x 2048 rows (simple dual-port): 28 x 2Kx18 (504 bits) + 1 RAMB18 2Kx9 -> 28.5.
    assert blocks(512, 2048, "sdp") == 28.5
    # uop: 32b x 8192 rows: 256 Kbit needs at least 7.1 blocks; 7.5 is reachable.
    assert blocks(32, 8192, "sdp") == 7.5
    # Command queue 128b x 512 in a FIFO (simple dual-port): two 512x72 blocks each.
    assert blocks(128, 512, "sdp", copies=3) == 6.0
    # Dependence queue 8b x 1024: one RAMB18 each.
    assert blocks(8, 1024, "sdp", copies=4) == 2.0


def test_512x72_only_in_simple_dual_port() -> None:
    assert blocks(72, 512, "sdp") == 1.0
    assert blocks(72, 512, "tdp") == 2.0  # 2 x 1Kx36 (or 4 RAMB18 1Kx18)


def test_never_below_capacity_and_grows_with_depth() -> None:
    for width in (8, 32, 128, 512, 1024, 2048):
        last = 0.0
        for log_depth in range(1, 16):
            depth = 1 << log_depth
            n = blocks(width, depth)
            assert n * X7.bram_bits >= width * depth
            assert n >= last
            last = n


def test_m10k_default_weight_sram() -> None:
    # 1024-bit bank on M10K (true dual-port max 1Kx10 at 1024 rows): 102 x 1Kx10 (1020 bits)
    # + one 2Kx4 column -> 103 per bank, 206 for two banks (2 Mbit / 10 Kbit = 204.8 minimum).
    assert blocks(2048, 1024, fam=CV) == 206


def test_uram_used_only_where_it_helps() -> None:
    # 72b x 4096 fills one URAM exactly.
    m = map_memory(Memory("m", 72, 4096, "sdp"), USP, PORT, True)
    assert (m.primitive, m.blocks) == ("uram", 1.0)
    # The default weight SRAM would fill a quarter of 15 URAMs per bank: stay in block RAM.
    assert map_memory(Memory("w", 2048, 1024, "tdp"), USP, PORT, True).primitive == "bram36"
    # Without URAM on the board, always block RAM.
    assert map_memory(Memory("m", 72, 4096, "sdp"), USP, PORT, False).primitive == "bram36"


@pytest.mark.parametrize("fam", [X7, USP, CV], ids=lambda f: f.name)
def test_wide_rows_are_banked(fam) -> None:
    m = map_memory(Memory("w", 8192, 512, "tdp"), fam, PORT, False)
    assert m.banks == 8
    assert m.blocks == 8 * map_memory(Memory("b", 1024, 512, "tdp"), fam, PORT, False).blocks
