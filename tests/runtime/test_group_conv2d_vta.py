"""group_conv2d with VTA's own schedules: tile_co and oc_nthread over the output tiles of all
groups (apache/tvm-vta ``python/vta/top/vta_group_conv2d.py``, ``group_conv2d_packed`` and
its schedule), for layers whose groups fill whole BLOCK tiles as MobileNet-G's do.

Each schedule compiles, is bit-exact against numpy's grouped convolution, and issues the
instructions and GEMM work of VTA's loop nest, counted by hand from the template below.
"""

from __future__ import annotations

import math

import pytest
from conftest import assert_bit_exact, hw_named

from vtatune import schedules
from vtatune.compiler import compile_candidate
from vtatune.program.isa import MemId, MemInsn, Opcode
from vtatune.workloads.group_conv2d import GroupConv2d


def _knobs(**k: int) -> dict[str, int]:
    base = dict(tile_b=1, tile_g=1, tile_ci=1, h_nthread=1, oc_nthread=1)
    return {**base, **k}


#: (hardware, layer, schedule): MobileNet-G-like layers (16 or 32 channels a group).
CASES = [
    # two groups, one output tile each: VTA's tile_co=1 with oc_nthread=2, a thread per group
    ("default", GroupConv2d(1, 32, 56, 56, 32, 3, 3, 1, 1, 2),
     _knobs(tile_h=14, tile_w=56, tile_co=1, oc_nthread=2)),
    # a group's two output tiles cut in two; threads over neighbouring tiles of one group
    ("1x8x8", GroupConv2d(1, 32, 14, 14, 32, 3, 3, 1, 1, 2),
     _knobs(tile_h=7, tile_w=14, tile_ci=1, tile_co=1, oc_nthread=2)),
]
#: Schedules of VTA's template whose padded input window spans several input-channel tiles
#: (several groups per output tile, or tile_ci > 1): VTA's compiler refuses them ("Do not
#: support pad on the innermost block", vta/python/vta/transform.py _inject_copy; its answers
#: for conv2d in tests/passes/data/vta_oracle_conv2d.json), and so does vtatune.
REFUSED_CASES = [
    # two groups per output tile, threads over pairs of groups and over rows
    ("default", GroupConv2d(1, 64, 28, 28, 64, 3, 3, 1, 1, 4),
     _knobs(tile_h=2, tile_w=28, tile_co=2, oc_nthread=2, h_nthread=2)),
    # strided, four groups per tile
    ("default", GroupConv2d(1, 128, 14, 14, 128, 3, 3, 1, 2, 8),
     _knobs(tile_h=7, tile_w=7, tile_co=4, oc_nthread=2)),
    # 32 channels a group on 8-wide blocks: 2 x 2 tiles a group; the tile holds both groups
    ("1x8x8", GroupConv2d(1, 32, 14, 14, 32, 3, 3, 1, 1, 2),
     _knobs(tile_h=7, tile_w=14, tile_ci=2, tile_co=4, h_nthread=2)),
    # three output tiles a group, three input tiles per reduction step
    ("default", GroupConv2d(1, 96, 10, 10, 96, 3, 3, 1, 1, 2),
     _knobs(tile_h=5, tile_w=10, tile_ci=3, tile_co=1, oc_nthread=2)),
]


@pytest.mark.parametrize(("hw_name", "wl", "knobs"), REFUSED_CASES)
def test_padded_windows_over_several_channel_tiles_are_refused_as_vta_refuses(
        hw_name: str, wl, knobs) -> None:
    hw = hw_named(hw_name)
    why = "Do not support pad on the innermost block"
    assert why in schedules.knob_space(wl, hw).problem(knobs)
    r = compile_candidate(wl, hw, knobs)
    assert r.status == "invalid" and why in r.reason


IDS = [f"{h}-{w.signature}-co{k['tile_co']}-t{k['oc_nthread']}" for h, w, k in CASES]


def vta_loop_nest(wl: GroupConv2d, hw, k: dict[str, int]) -> dict[str, int]:
    """Counts of VTA's group_conv2d_packed loop nest for batch 1, padded layers and output
    tiles as wide as the output (``tile_w = OW``) whose ``tile_co`` divides the output tiles.

    The template tiles the output (N/B, GROUPS*CO, OH, OW) by tile_co x tile_h x tile_w; per
    tile and per reduction step (CI / tile_ci of them) it loads, by 2-D DMA, each input channel
    tile's padded window (one DMA a channel tile: the window's rows are not whole planes) and
    the tile's weights (one DMA: tile_co x tile_ci x KH x KW contiguous tiles when tile_ci =
    CI, else one a channel tile); it resets the accumulator once (a GEMM), runs one GEMM per
    step, the epilogue's three ALU ops (shift, max, min) and stores the tile by one DMA (its
    tile_h x OW rows of a channel tile are contiguous, the channel tiles its 2-D rows).
    """
    co_all = wl.groups * wl.cout_g // hw.block_out
    ci = wl.cin_g // hw.block_in
    co = wl.cout_g // hw.block_out
    tc, tci, th = k["tile_co"], k["tile_ci"], k["tile_h"]
    assert wl.n == 1 and wl.pad and k["tile_w"] == wl.ow and co_all % tc == 0 and ci % tci == 0
    groups_in_tile = max(1, tc // co)
    co_tiles, h_tiles = co_all // tc, math.ceil(wl.oh / th)
    tiles, steps = co_tiles * h_tiles, ci // tci
    # input rows a tile's window reads from DRAM (the rest is padding the DMA writes)
    rows = sum(min(wl.h, (y + th - 1) * wl.stride - wl.pad + wl.kh)
               - max(0, y * wl.stride - wl.pad) for y in range(0, wl.oh, th))
    return {
        "LOAD_INP": tiles * steps * groups_in_tile * tci,
        "LOAD_WGT": tiles * steps * (1 if tci == ci else tc),
        "GEMM": tiles * (1 + steps),
        "ALU": 3 * tiles,
        "STORE": tiles,
        "gemm_counter": co_all * wl.oh * wl.ow * ci * wl.kh * wl.kw,
        "alu_counter": 3 * co_all * wl.oh * wl.ow,
        "inp_load_nbytes": co_tiles * groups_in_tile * ci * rows * wl.w * hw.block_in,
        "wgt_load_nbytes": tiles * tc * ci * wl.kh * wl.kw * hw.block_out * hw.block_in,
        "out_store_nbytes": co_all * wl.oh * wl.ow * hw.block_out,
    }


@pytest.mark.parametrize(("hw_name", "wl", "knobs"), CASES, ids=IDS)
def test_vta_schedules_over_groups_are_bit_exact_with_vta_counts(hw_name: str, wl, knobs
                                                                 ) -> None:
    hw = hw_named(hw_name)
    assert wl.whole_tiles(hw)
    assert schedules.knob_space(wl, hw).problem(knobs) is None
    compiled = compile_candidate(wl, hw, knobs)
    assert compiled.ok, compiled.reason  # fits the SRAMs (the helper below would skip)
    run = assert_bit_exact(wl, hw, knobs)
    program, c = run.result.program, run.result.counters
    moved = {}  # DMAs that move data (the runtime's zero-size ones only carry tokens)
    for i in program.insns:
        if isinstance(i, MemInsn) and i.y_size and i.memory_type != MemId.UOP:
            key = "STORE" if i.opcode == Opcode.STORE else f"LOAD_{i.memory_type.name}"
            moved[key] = moved.get(key, 0) + 1
    counts = program.counts()
    got = {**moved, "GEMM": counts["GEMM"], "ALU": counts["ALU"],
           **{n: getattr(c, n) for n in ("gemm_counter", "alu_counter", "inp_load_nbytes",
                                         "wgt_load_nbytes", "out_store_nbytes")}}
    assert got == vta_loop_nest(wl, hw, knobs)
