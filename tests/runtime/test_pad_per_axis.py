"""Convolutions padded per axis (Inception's 1x7 / 7x1 kernels pad (0, 3) / (3, 0)): the numpy
reference against TVM's own references with the same (rows, columns) padding, and compile ->
build -> functional simulation bit-exact against it over a sample of each knob space."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_bit_exact, hw_named

from vtatune import schedules
from vtatune.workloads import Conv2d
from vtatune.workloads.conv2d_transpose import Conv2dTranspose
from vtatune.workloads.group_conv2d import GroupConv2d

CASES = [
    ("default", Conv2d(1, 20, 9, 9, 24, 1, 7, 0, 1, pad_w=3)),   # Inception's 1x7
    ("default", Conv2d(1, 16, 9, 8, 16, 7, 1, 3, 1, pad_w=0)),   # and 7x1
    ("1x8x8", Conv2d(2, 12, 9, 7, 8, 3, 3, 1, 2, pad_w=0)),     # strided, rows only
    ("default", GroupConv2d(1, 32, 7, 8, 32, 1, 3, 0, 1, 2, pad_w=1)),
    ("default", Conv2dTranspose(1, 16, 5, 4, 16, 4, 4, 1, 2, pad_w=2)),
]
#: Knob points per case (an even sample of the space, whole and partial tiles, threads).
POINTS = 6


def _inputs(wl, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = wl.plain_shapes()
    return (rng.integers(-128, 128, s["data"], dtype=np.int8),
            rng.integers(-128, 128, s["kernel"], dtype=np.int8))


@pytest.mark.parametrize(("hw_name", "wl"), CASES, ids=[wl.signature for _, wl in CASES])
def test_reference_is_tvms_with_rows_and_columns_padded(hw_name, wl) -> None:
    testing = pytest.importorskip("tvm.topi.testing")
    x, w = _inputs(wl)
    x64, w64 = x.astype(np.int64), w.astype(np.int64)
    pads = (wl.pad_h, wl.pad_cols, wl.pad_h, wl.pad_cols)  # top, left, bottom, right
    if isinstance(wl, Conv2dTranspose):
        acc = testing.conv2d_transpose_nchw_python(x64, w64, wl.stride, pads, (0, 0))
    elif isinstance(wl, GroupConv2d):
        acc = testing.conv2d_nchw_python(x64, w64, wl.stride, (wl.pad_h, wl.pad_cols),
                                         groups=wl.groups)
    else:
        acc = testing.conv2d_nchw_python(x64, w64, wl.stride, (wl.pad_h, wl.pad_cols))
    acc = np.asarray(acc).astype(np.int64)
    assert acc.shape == (wl.n, wl.cout, wl.oh, wl.ow)
    np.testing.assert_array_equal(wl.reference(x, w), np.clip(acc >> 8, 0, 127).astype(np.int8))


def _cases() -> list:
    out = []
    for hw_name, wl in CASES:
        space = list(schedules.knob_space(wl, hw_named(hw_name)))
        step = max(1, -(-len(space) // POINTS))
        out += [pytest.param(hw_name, wl, k, id=f"{wl.signature}-{i}")
                for i, k in enumerate(space[::step])]
    return out


@pytest.mark.parametrize(("hw_name", "wl", "knobs"), _cases())
def test_padded_per_axis_is_bit_exact(hw_name, wl, knobs) -> None:
    assert_bit_exact(wl, hw_named(hw_name), knobs, seed=3)
