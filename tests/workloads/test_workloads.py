"""Workloads: shapes, names, packing, and the numpy reference against a naive loop."""

from __future__ import annotations

import numpy as np
import pytest

from vtatune.errors import WorkloadError
from vtatune.hardware import config
from vtatune.workloads import RESNET18, Conv2d, Dense, parse


def test_resnet18_table() -> None:
    assert list(RESNET18) == [f"C{i}" for i in range(1, 12)]
    c8 = RESNET18["C8"]
    assert (c8.h, c8.cin, c8.cout, c8.kh, c8.pad, c8.stride) == (14, 256, 256, 3, 1, 1)
    assert (RESNET18["C1"].oh, RESNET18["C1"].ow) == (112, 112)
    assert RESNET18["C9"].oh == 7


def test_parse_defaults_and_errors() -> None:
    assert parse("conv2d").name == "C8"
    assert parse("conv2d", shape="1,16,8,8,16,3,3,1,1") == Conv2d(1, 16, 8, 8, 16, 3, 3, 1, 1)
    assert parse("dense", shape="4,32,48") == Dense(4, 32, 48)
    for args, msg in [(("conv2d", "C12"), "unknown layer"), (("gemm",), "unknown workload"),
                      (("conv2d", None, "1,2"), "takes 9"), (("conv2d", "C1", "1"), "not both"),
                      (("dense", None, "1,x,3"), "integer"), (("dense", "C1"), "no named")]:
        with pytest.raises(WorkloadError, match=msg):
            parse(*args)


def test_impossible_shapes() -> None:
    with pytest.raises(WorkloadError, match="does not fit"):
        Conv2d(1, 16, 2, 2, 16, 5, 5, 0, 1)
    with pytest.raises(WorkloadError, match="must be >= 1"):
        Dense(0, 4, 4)


def _naive_conv(x, w, pad, stride):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nckl,ockl->no", win, w.astype(np.int64))
    return out


@pytest.mark.parametrize("shape", [(1, 3, 9, 7, 5, 3, 3, 1, 2), (2, 8, 6, 6, 4, 1, 1, 0, 1),
                                   (1, 4, 11, 11, 6, 7, 7, 3, 2)])
def test_conv2d_reference_matches_naive_loops(shape) -> None:
    wl = Conv2d(*shape)
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, wl.plain_shapes()["data"], dtype=np.int8)
    w = rng.integers(-128, 128, wl.plain_shapes()["kernel"], dtype=np.int8)
    expect = np.clip(_naive_conv(x, w, wl.pad, wl.stride) >> 8, 0, 127).astype(np.int8)
    np.testing.assert_array_equal(wl.reference(x, w), expect)


def test_dense_reference() -> None:
    wl = Dense(5, 40, 7)
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (5, 40), dtype=np.int8)
    w = rng.integers(-128, 128, (7, 40), dtype=np.int8)
    expect = np.clip((x.astype(np.int64) @ w.astype(np.int64).T) >> 5, 0, 127).astype(np.int8)
    np.testing.assert_array_equal(wl.reference(x, w, shift=5), expect)


@pytest.mark.parametrize("hwname", ["default", "2x16x16", "1x16x32"])
def test_packing_pads_channels_and_round_trips(hwname: str) -> None:
    hw = config.load(hwname)
    wl = Conv2d(3, 20, 5, 4, 18, 3, 3, 1, 1)  # batch, Cin and Cout not multiples of the tile
    rng = np.random.default_rng(2)
    x = rng.integers(-128, 128, wl.plain_shapes()["data"], dtype=np.int8)
    w = rng.integers(-128, 128, wl.plain_shapes()["kernel"], dtype=np.int8)
    d, k = wl.pack_inputs(x, w, hw)
    assert d.shape == wl.packed_shapes(hw)["data"] and k.shape == wl.packed_shapes(hw)["kernel"]
    # packed [b // B, c // BI, y, x, b % B, c % BI] is plain [b, c, y, x]; padding is zero
    bi = hw.block_in
    assert d[2 // hw.batch, 19 // bi, 2, 3, 2 % hw.batch, 19 % bi] == x[2, 19, 2, 3]
    assert k[17 // hw.block_out, 19 // bi, 1, 2, 17 % hw.block_out, 19 % bi] == w[17, 19, 1, 2]
    assert d.sum(dtype=np.int64) == x.sum(dtype=np.int64)
    assert k.sum(dtype=np.int64) == w.sum(dtype=np.int64)
    # a packed output made from a plain one unpacks back to it
    t = wl.tiles(hw)
    plain = rng.integers(-128, 128, (t["b"] * hw.batch, t["co"] * hw.block_out, wl.oh, wl.ow),
                         dtype=np.int8)
    packed = plain.reshape(t["b"], hw.batch, t["co"], hw.block_out, wl.oh, wl.ow).transpose(
        0, 2, 4, 5, 1, 3)
    np.testing.assert_array_equal(wl.unpack_output(packed, hw), plain[:3, :18])


def test_compulsory_bytes_counts_padded_tiles() -> None:
    hw = config.default()
    wl = Dense(1, 16, 16)
    assert wl.compulsory_bytes(hw) == 16 + 256 + 16
    assert RESNET18["C8"].macs == 14 * 14 * 256 * 256 * 9
