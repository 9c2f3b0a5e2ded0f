"""Knob spaces: enumeration, constraints, parsing, suggestions and footprints."""

from __future__ import annotations

import pytest

from vtatune import schedules
from vtatune.errors import KnobError
from vtatune.hardware import config
from vtatune.schedules.knobs import divisors, parse_knobs, split_sizes, tile_sizes
from vtatune.workloads import RESNET18, Conv2d, Dense


def test_divisors() -> None:
    assert divisors(56) == (1, 2, 4, 7, 8, 14, 28, 56)
    assert divisors(1) == (1,)
    assert divisors(13) == (1, 13)


def test_tile_sizes_and_splits() -> None:
    # one tile per number of tiles: the divisors and the tiles that leave a tail
    assert tile_sizes(14) == (1, 2, 3, 4, 5, 7, 14)
    assert tile_sizes(9) == (1, 2, 3, 5, 9)
    assert set(divisors(56)) < set(tile_sizes(56))
    for extent in range(1, 300):
        sizes = tile_sizes(extent)
        counts = {-(-extent // v) for v in range(1, extent + 1)}
        # every reachable number of tiles once, with the smallest tile that reaches it
        assert {-(-extent // v) for v in sizes} == counts and len(sizes) == len(counts)
        assert all(v == 1 or -(-extent // (v - 1)) > -(-extent // v) for v in sizes)
        assert len(sizes) <= 2 * extent ** 0.5
    assert split_sizes(14, 4) == [4, 4, 4, 2] and split_sizes(14, 7) == [7, 7]


def test_c2_space_is_enumerable_and_constrained() -> None:
    hw = config.default()
    space = schedules.knob_space(RESNET18["C2"], hw)
    n = len(tile_sizes(56))
    assert space.product_size == 1 * n * n * 3 * 3 * 2 * 2
    points = list(space)
    assert len(points) == len(space) < space.product_size
    for k in points:
        if k["h_nthread"] == 2:  # threads over whole, even tiles only
            assert 56 % k["tile_h"] == 0 and (56 // k["tile_h"]) % 2 == 0
        if k["oc_nthread"] == 2:
            assert 4 % k["tile_co"] == 0 and (4 // k["tile_co"]) % 2 == 0
    assert "does not divide" in space.problem({**points[0], "h_nthread": 2, "tile_h": 56})
    assert "needs whole tiles" in space.problem({**points[0], "h_nthread": 2, "tile_h": 5})


def test_any_tile_up_to_the_extent_is_legal() -> None:
    space = schedules.knob_space(RESNET18["C8"], config.default())  # 14 rows
    assert 6 not in space.axes["tile_h"]  # not enumerated (7 covers 14 rows in 2 tiles too)
    k = space.complete({"tile_h": 6, "tile_w": 14, "tile_ci": 1, "tile_co": 1})
    assert (k["tile_h"], k["tile_w"]) == (6, 14)
    # a column tail loads rows narrower than the SRAM's: VTA's compiler refuses the copy
    with pytest.raises(KnobError, match="Cannot prove compact"):
        space.complete({"tile_h": 6, "tile_w": 13, "tile_ci": 1, "tile_co": 1})
    with pytest.raises(KnobError, match=r"tile_h=15 is outside 1..14 \(output rows\)"):
        space.complete({"tile_h": 15})
    with pytest.raises(KnobError, match="oc_nthread=3 is not one of 1, 2"):
        space.complete({"oc_nthread": 3})


def test_tile_knobs_are_in_tiles_of_the_hardware() -> None:
    wl = RESNET18["C8"]  # 256 channels
    assert schedules.knob_space(wl, config.default()).axes["tile_co"] == tile_sizes(16)
    assert schedules.knob_space(wl, config.load("1x32x32")).axes["tile_co"] == tile_sizes(8)
    assert schedules.knob_space(Dense(16, 64, 64), config.load("2x16x16")).axes["tile_b"] == \
        tile_sizes(8)
    # 48 channels on 32-wide blocks: 2 tiles (the second half padding)
    assert schedules.knob_space(Dense(1, 48, 48), config.load("1x32x32")).extents == {
        "tile_b": 1, "tile_ci": 2, "tile_co": 2}


def test_parse_knobs() -> None:
    assert parse_knobs("tile_h=2, tile_co=4") == {"tile_h": 2, "tile_co": 4}
    assert parse_knobs(None) == {}
    with pytest.raises(KnobError, match="NAME=VALUE"):
        parse_knobs("tile_h")
    with pytest.raises(KnobError, match="integer"):
        parse_knobs("tile_h=big")


def test_check_and_complete() -> None:
    space = schedules.knob_space(RESNET18["C8"], config.default())
    with pytest.raises(KnobError, match="unknown knob 'tile_x'"):
        space.complete({"tile_x": 1})
    with pytest.raises(KnobError, match=r"tile_h=0 is outside 1..14"):
        space.complete({"tile_h": 0})
    with pytest.raises(KnobError, match="missing"):
        space.check({"tile_h": 7})
    assert space.complete({"tile_h": 7})["tile_h"] == 7


@pytest.mark.parametrize("path", config.shipped(), ids=lambda p: p.stem)
def test_suggestions_fit_by_the_analytic_footprint(path) -> None:
    hw = config.load(path)
    for wl in [*RESNET18.values(), Dense(16, 256, 256), Conv2d(1, 3, 9, 9, 8, 3, 3, 1, 1)]:
        k = schedules.suggest(wl, hw)
        assert schedules.knob_space(wl, hw).problem(k) is None
        fp = schedules.footprint(wl, hw, k)
        assert fp["inp"] <= hw.inp_buff_bytes and fp["wgt"] <= hw.wgt_buff_bytes
        assert fp["acc"] <= hw.acc_buff_bytes and fp["uops"] <= hw.uop_depth


def test_footprint_of_the_tutorial_schedule() -> None:
    # VTA's conv2d tutorial: 2 threads x (9x16 padded rows of 16 int8; 8x9 weight tiles;
    # 8x7x14 int32 output tiles); the largest micro-op kernel is VTA's template's on these
    # knobs: 3 kernel rows x 8 channel tiles x 7 rows (VTA's lowering, see
    # tests/passes/test_hardware_passes.py)
    k = dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=1, tile_co=8, h_nthread=1, oc_nthread=2)
    fp = schedules.footprint(RESNET18["C8"], config.default(), k)
    assert fp == {"inp": 2 * 9 * 16 * 16, "wgt": 2 * 8 * 9 * 256, "acc": 2 * 8 * 7 * 14 * 64,
                  "uops": 3 * 8 * 7}


def test_suggestion_equals_its_definition_on_every_buffer_size() -> None:
    # suggest ranks a knob space once per GEMM shape and widths and picks the first point
    # that fits each design's buffers; the definition enumerates the space per design
    import itertools

    from vtatune.workloads.registry import parse

    wls = [RESNET18["C1"], RESNET18["C2"], RESNET18["C11"], Dense(16, 256, 256),
           Conv2d(1, 3, 9, 9, 8, 3, 3, 1, 1), parse("group_conv2d", "D5"),
           parse("group_conv2d", shape="1,64,28,28,64,3,3,1,2,64"),
           parse("conv2d_transpose", "CT2")]
    base = config.default()
    sizes = itertools.product((0,), (4, 5), (10, 15), (15, 18), (10, 17), (10, 15))
    checked = fits_none = 0
    for batch, block, inp, wgt, acc, uop in sizes:
        hw = config.HwConfig.from_params({**base.log_params(), "LOG_BATCH": batch,
                                         "LOG_BLOCK_IN": block, "LOG_BLOCK_OUT": block,
                                         "LOG_INP_BUFF_SIZE": inp, "LOG_WGT_BUFF_SIZE": wgt,
                                         "LOG_ACC_BUFF_SIZE": acc, "LOG_UOP_BUFF_SIZE": uop})
        if config.problems_of(hw):
            continue
        for wl in wls:
            got = schedules.suggest(wl, hw)
            assert tuple(got.items()) == schedules.enumerated_suggestion(wl, hw), (wl, hw)
            checked += 1
            fp = schedules.footprint(wl, hw, got)
            fits_none += fp["inp"] > hw.inp_buff_bytes or fp["uops"] > hw.uop_depth
    # (fits_none: designs on which nothing fits, where suggest gives the space's default)
    assert checked >= 100 and fits_none > 0, (checked, fits_none)
