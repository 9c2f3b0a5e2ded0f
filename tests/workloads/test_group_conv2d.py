"""group_conv2d: shapes, MobileNet-G's layers, groups packed into GEMM tiles (depthwise
included), and the numpy reference against a naive loop and TVM's own reference."""

from __future__ import annotations

import numpy as np
import pytest

from vtatune import workloads
from vtatune.errors import WorkloadError
from vtatune.hardware import config
from vtatune.schedules.knobs import tile_sizes
from vtatune.workloads.group_conv2d import MOBILENET_G, GroupConv2d

SHAPES = [(1, 32, 6, 6, 32, 3, 3, 1, 1, 2), (2, 6, 5, 4, 9, 3, 1, 0, 2, 3),
          (1, 8, 5, 5, 8, 3, 3, 1, 2, 8), (1, 4, 4, 4, 12, 1, 1, 0, 1, 4),
          (1, 24, 5, 5, 48, 3, 3, 1, 1, 3)]


def _naive(x: np.ndarray, w: np.ndarray, pad: int, stride: int, groups: int) -> np.ndarray:
    n, cin, h, wd = x.shape
    cout, cin_g, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, cout, oh, ow), np.int64)
    cout_g = cout // groups
    for o in range(cout):
        g = o // cout_g
        for i in range(oh):
            for j in range(ow):
                win = xp[:, g * cin_g:(g + 1) * cin_g, i * stride:i * stride + kh,
                         j * stride:j * stride + kw]
                out[:, o, i, j] = (win * w[o].astype(np.int64)).sum(axis=(1, 2, 3))
    return out


def _inputs(wl: GroupConv2d, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = wl.plain_shapes()
    return (rng.integers(-128, 128, s["data"], dtype=np.int8),
            rng.integers(-128, 128, s["kernel"], dtype=np.int8))


@pytest.mark.parametrize("shape", SHAPES)
def test_reference_matches_naive_loops_and_tvm(shape) -> None:
    wl = GroupConv2d(*shape)
    x, w = _inputs(wl)
    acc = _naive(x, w, wl.pad, wl.stride, wl.groups)
    np.testing.assert_array_equal(wl.reference(x, w),
                                  np.clip(acc >> 8, 0, 127).astype(np.int8))
    testing = pytest.importorskip("tvm.topi.testing")
    tvm_acc = testing.conv2d_nchw_python(x.astype(np.int64), w.astype(np.int64), wl.stride,
                                         wl.pad, wl.groups)
    np.testing.assert_array_equal(np.asarray(tvm_acc).astype(np.int64), acc)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("hwname", ["default", "1x8x8", "2x16x16", "1x32x16"])
def test_packed_groups_compute_the_same_sums(shape, hwname: str) -> None:
    """The packed computation in numpy (each packed group a plain conv over its tiles, with the
    block-diagonal weights) equals the definition."""
    wl = GroupConv2d(*shape)
    hw = config.load(hwname)
    x, w = _inputs(wl, 2)
    d, k = wl.pack_inputs(x, w, hw)
    shapes = wl.packed_shapes(hw)
    assert d.shape == shapes["data"] and k.shape == shapes["kernel"]
    p, s = wl.pad, wl.stride
    dp = np.pad(d.astype(np.int64), ((0, 0),) * 3 + ((p, p), (p, p)) + ((0, 0),) * 2)
    res = np.zeros(shapes["res"], np.int64)
    for ky in range(wl.kh):
        for kx in range(wl.kw):
            win = dp[:, :, :, ky:ky + s * (wl.oh - 1) + 1:s, kx:kx + s * (wl.ow - 1) + 1:s]
            res += np.einsum("bgchwxi,gocyi->bgohwxy", win, k[:, :, :, ky, kx].astype(np.int64))
    out = np.clip(res >> 8, 0, 127).astype(np.int8)
    np.testing.assert_array_equal(wl.unpack_output(out, hw), wl.reference(x, w))


def test_packing_puts_small_groups_side_by_side() -> None:
    d16, d32 = config.default(), config.load("1x32x32")
    depthwise = GroupConv2d(1, 64, 8, 8, 64, 3, 3, 1, 1, 64)
    assert depthwise.packing(d16) == (16, 1, 1)  # 16 channels per tile, diagonal weights
    assert depthwise.packing(d32) == (32, 1, 1)
    assert depthwise.padded_macs(d16) == 16 * depthwise.macs
    # MobileNet-G's groups fill whole tiles: VTA's own layout, one group per packed group
    for layer in MOBILENET_G.values():
        assert layer.packing(d16)[0] == 1 and layer.padded_macs(d16) == layer.macs
    # 3 groups of 8 channels: two groups would not divide 3, so each group pads to a tile
    assert GroupConv2d(1, 24, 4, 4, 24, 1, 1, 0, 1, 3).packing(d16) == (1, 1, 1)


def test_tile_g_counts_whole_packed_groups() -> None:
    from vtatune import schedules

    depthwise = GroupConv2d(1, 64, 8, 8, 64, 3, 3, 1, 1, 64)
    space = schedules.knob_space(depthwise, config.default())
    assert space.axes["tile_g"] == (16, 32, 64)
    assert space.axes["tile_co"] == (1,)  # a packed group's one output tile
    knobs = dict(tile_b=1, tile_g=16, tile_h=8, tile_w=8, tile_ci=1, tile_co=1, h_nthread=1,
                 oc_nthread=2)
    # packed groups keep threads within a packed group's output tiles
    assert "does not divide the 1 outer tiles" in space.problem(knobs)
    assert "multiple of 16 groups" in space.problem({**knobs, "tile_g": 8, "oc_nthread": 1})


VTA_KNOBS = dict(tile_b=1, tile_g=1, tile_h=14, tile_w=56, tile_ci=1, tile_co=1, h_nthread=1,
                 oc_nthread=2)


def test_tile_co_and_oc_nthread_span_groups_that_fill_whole_tiles() -> None:
    """VTA's group_conv2d_packed splits (tile_co) and threads (oc_nthread) the output tiles of
    all groups together: MobileNet-G's schedules with two threads over one tile per group."""
    from vtatune import schedules

    d16 = config.default()
    d1 = GroupConv2d(1, 32, 56, 56, 32, 3, 3, 1, 1, 2)  # MobileNet-G-like, 16 channels a group
    assert d1.whole_tiles(d16) and d1.tiles(d16)["co"] == 2 and d1.tiles(d16)["ci"] == 1
    space = schedules.knob_space(d1, d16)
    assert space.axes["tile_g"] == (1,) and space.axes["tile_co"] == (1, 2)
    # the schedule the issue names ("oc_nthread=2 does not divide the 1 outer tiles")
    assert space.problem(VTA_KNOBS) is None
    assert space.problem({**VTA_KNOBS, "tile_co": 2}) == (
        "oc_nthread=2 does not divide the 1 outer tiles of tile_co=2")
    assert "tile_co counts the output tiles of all groups" in space.problem(
        {**VTA_KNOBS, "tile_g": 2, "oc_nthread": 1})
    assert d1.output_tile(d16, VTA_KNOBS) == (1, 1)
    assert d1.output_tile(d16, {**VTA_KNOBS, "tile_co": 2}) == (2, 1)  # both groups
    for layer in MOBILENET_G.values():  # every layer's outer tiles split over its groups
        s = schedules.knob_space(layer, d16)
        assert s.extents["tile_co"] == layer.groups
        assert s.axes["tile_co"] == tile_sizes(layer.groups)
        assert s.problem({**VTA_KNOBS, "tile_h": 7, "tile_w": 7}) is None


def test_tiles_over_groups_never_straddle_a_group() -> None:
    """Two output tiles a group (BLOCK 8): tile_co <= 2 cuts each group, a larger one holds
    whole groups; three tiles a group: two threads need a group's tiles cut evenly."""
    from vtatune import schedules

    d8 = config.load("1x8x8")
    wl = GroupConv2d(1, 64, 6, 6, 64, 3, 3, 1, 1, 4)  # 16 channels a group: 2 tiles of 8
    space = schedules.knob_space(wl, d8)
    assert space.extents["tile_co"] == 8
    assert space.axes["tile_co"] == (1, 2, 4, 8)  # within a group, or 2 or 4 whole groups
    assert space.legal("tile_co", 6) is None  # 3 groups, then a tail of 1 (legal)
    # ... but a padded input over several groups pads inside VTA's 2-D DMA
    assert "Do not support pad on the innermost block" in space.problem(
        {**VTA_KNOBS, "tile_h": 3, "tile_w": 6, "tile_co": 6, "oc_nthread": 1})
    assert "holds whole groups (a multiple of 2)" in space.problem(
        {**VTA_KNOBS, "tile_h": 3, "tile_w": 6, "tile_co": 3})
    assert wl.output_tile(d8, {**VTA_KNOBS, "tile_co": 4}) == (2, 2)
    assert wl.output_tile(d8, {**VTA_KNOBS, "tile_co": 1}) == (1, 1)
    three = GroupConv2d(1, 192, 5, 5, 192, 3, 3, 1, 1, 4)  # 3 tiles a group on 16
    s3 = schedules.knob_space(three, config.default())
    k3 = {**VTA_KNOBS, "tile_h": 5, "tile_w": 5}
    assert s3.problem(k3) is None  # 12 tiles, 2 threads: pairs may cross groups
    assert s3.problem({**k3, "tile_co": 2}) == (
        "oc_nthread=2 needs whole tiles, but tile_co=2 leaves a tail of 1 in each group's 3 "
        "output tiles")
    assert s3.problem({**k3, "tile_co": 2, "oc_nthread": 1}) is None  # tiles 2, 1 a group


def test_mobilenet_g_layers() -> None:
    assert list(MOBILENET_G) == [f"D{i}" for i in range(1, 10)]
    d1 = MOBILENET_G["D1"]
    assert (d1.cin_g, d1.oh, d1.groups) == (16, 112, 2)
    assert d1.plain_shapes()["kernel"] == (32, 16, 3, 3)
    assert MOBILENET_G["D2"].oh == 56
    assert workloads.parse("group_conv2d", layer="d9") == MOBILENET_G["D9"]


def test_shape_errors() -> None:
    assert workloads.parse("group_conv2d", shape="1,32,8,8,32,3,3,1,1,32").groups == 32
    for shape, msg in [("1,32,8,8,32,3,3,1,1", "takes 10"), ("1,30,8,8,32,3,3,1,1,4",
                                                               "CIN=30 is not a multiple"),
                       ("1,32,8,8,30,3,3,1,1,4", "COUT=30"), ("1,32,8,8,32,3,3,1,1,0",
                                                                "groups=0 must be >= 1")]:
        with pytest.raises(WorkloadError, match=msg):
            workloads.parse("group_conv2d", shape=shape)
