"""conv2d_transpose: shapes, DCGAN's layers, the numpy reference against a naive loop and TVM's
own reference, the sub-pixel packing, and exact work."""

from __future__ import annotations

import numpy as np
import pytest

from vtatune import workloads
from vtatune.errors import WorkloadError
from vtatune.hardware import config
from vtatune.workloads.conv2d_transpose import DCGAN, Conv2dTranspose

SHAPES = [(1, 3, 4, 5, 2, 4, 4, 1, 2), (2, 5, 3, 3, 4, 3, 3, 0, 1), (1, 2, 5, 4, 3, 5, 3, 2, 3),
          (1, 4, 3, 3, 6, 3, 3, 2, 2), (1, 2, 2, 6, 2, 1, 1, 0, 2), (1, 3, 4, 4, 2, 2, 4, 1, 4)]


def _naive(x: np.ndarray, w: np.ndarray, pad: int, stride: int) -> np.ndarray:
    """The definition, one product at a time: out[i*S + ky - P][j*S + kx - P] += x * w."""
    n, cin, h, wd = x.shape
    _, cout, kh, kw = w.shape
    oh, ow = (h - 1) * stride - 2 * pad + kh, (wd - 1) * stride - 2 * pad + kw
    out = np.zeros((n, cout, oh, ow), np.int64)
    for i in range(h):
        for j in range(wd):
            for ky in range(kh):
                for kx in range(kw):
                    y, z = i * stride + ky - pad, j * stride + kx - pad
                    if 0 <= y < oh and 0 <= z < ow:
                        out[:, :, y, z] += x[:, :, i, j].astype(np.int64) @ w[:, :, ky, kx]
    return out


def _inputs(wl: Conv2dTranspose, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = wl.plain_shapes()
    return (rng.integers(-128, 128, s["data"], dtype=np.int8),
            rng.integers(-128, 128, s["kernel"], dtype=np.int8))


@pytest.mark.parametrize("shape", SHAPES)
def test_reference_matches_naive_loops_and_tvm(shape) -> None:
    wl = Conv2dTranspose(*shape)
    x, w = _inputs(wl)
    acc = _naive(x, w, wl.pad, wl.stride)
    assert acc.shape == (wl.n, wl.cout, wl.oh, wl.ow)
    np.testing.assert_array_equal(wl.reference(x, w),
                                  np.clip(acc >> 8, 0, 127).astype(np.int8))
    testing = pytest.importorskip("tvm.topi.testing")
    tvm_acc = testing.conv2d_transpose_nchw_python(x.astype(np.int64), w.astype(np.int64),
                                                   wl.stride, wl.pad, (0, 0))
    np.testing.assert_array_equal(np.asarray(tvm_acc).astype(np.int64), acc)


@pytest.mark.parametrize("shape", SHAPES)
def test_macs_and_padded_macs(shape) -> None:
    wl = Conv2dTranspose(*shape)
    x = np.ones(wl.plain_shapes()["data"], np.int8)
    w = np.ones(wl.plain_shapes()["kernel"], np.int8)
    # all-ones inputs: the sum of the outputs counts the products that land in the output;
    # MACs also count those cropped at the borders (as conv2d's count those on padding)
    landed = _naive(x, w, wl.pad, wl.stride).sum()
    assert landed <= wl.macs == wl.n * wl.cin * wl.cout * wl.h * wl.w * wl.kh * wl.kw
    # the GEMM core multiplies each output pixel with T x T taps per phase
    ty, tx = wl.taps
    hw = config.load("1x8x8")
    t = wl.tiles(hw)
    assert wl.padded_macs(hw) == (t["b"] * t["co"] * t["ci"] * wl.oh * wl.ow * ty * tx
                                  * hw.macs_per_cycle)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("hwname", ["default", "1x8x8", "2x16x16"])
def test_sub_pixel_packing_computes_the_same_sums(shape, hwname: str) -> None:
    """The packed computation, done in numpy on the packed tensors exactly as the TE states it
    (input rows (y + P) // S - t, phase-major taps), equals the definition."""
    wl = Conv2dTranspose(*shape)
    hw = config.load(hwname)
    x, w = _inputs(wl, 1)
    d, k = wl.pack_inputs(x, w, hw)
    assert d.shape == wl.packed_shapes(hw)["data"] and k.shape == wl.packed_shapes(hw)["kernel"]
    top, bottom, oy = wl._pads(wl.kh, wl.h, wl.oh, wl.pad)
    left, right, ox = wl._pads(wl.kw, wl.w, wl.ow, wl.pad_cols)
    dp = np.pad(d.astype(np.int64), ((0, 0), (0, 0), (top, bottom), (left, right), (0, 0),
                                     (0, 0)))
    ty, tx = wl.taps
    s, p = wl.stride, wl.pad
    res = np.zeros(wl.packed_shapes(hw)["res"], np.int64)
    for y in range(wl.oh):
        for z in range(wl.ow):
            for dy in range(ty):
                for dx in range(tx):
                    win = dp[:, :, (y + p) // s + dy + oy, (z + p) // s + dx + ox]  # b ci bb bi
                    tap = k[:, :, (y + p) % s * ty + dy, (z + p) % s * tx + dx]  # co ci bo bi
                    res[:, :, y, z] += np.einsum("bcxi,ocyi->boxy", win, tap)
    out = np.clip(res >> 8, 0, 127).astype(np.int8)
    np.testing.assert_array_equal(wl.unpack_output(out, hw), wl.reference(x, w))


def test_dcgan_layers_double_the_resolution() -> None:
    assert list(DCGAN) == ["CT1", "CT2", "CT3"]
    for name, layer in DCGAN.items():
        assert (layer.oh, layer.ow) == (2 * layer.h, 2 * layer.w)
        assert layer.cout == layer.cin // 2 and layer.name == name
        assert workloads.parse("conv2d_transpose", layer=name.lower()) == layer
    assert workloads.parse("conv2d_transpose").name == "CT2"
    ct1 = DCGAN["CT1"]
    assert ct1.plain_shapes() == {"data": (1, 1024, 4, 4), "kernel": (1024, 512, 4, 4),
                                  "res": (1, 512, 8, 8)}
    # stride 2 divides the 4x4 kernel: 2x2 taps per phase, no wasted products
    assert ct1.taps == (2, 2)
    assert ct1.padded_macs(config.default()) == ct1.macs == 1024 * 512 * 8 * 8 * 4


def test_shape_errors() -> None:
    assert workloads.parse("conv2d_transpose", shape="1,16,4,4,8,4,4,1,2").oh == 8
    with pytest.raises(WorkloadError, match="takes 9"):
        workloads.parse("conv2d_transpose", shape="1,16,4,4,8,4,4,1")
    with pytest.raises(WorkloadError, match="leaves no output"):
        Conv2dTranspose(1, 4, 1, 1, 4, 1, 1, 1, 1)
    with pytest.raises(WorkloadError, match="stride=0 must be >= 1"):
        Conv2dTranspose(1, 4, 4, 4, 4, 3, 3, 1, 0)
