"""Which ONNX nodes become which vtatune layer, and which stay on the host with a reason."""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.onnx_graphs import conv_model, dense_model, helper, model, save, weight
from vtatune.models import graph, rules
from vtatune.workloads.conv2d import Conv2d
from vtatune.workloads.conv2d_transpose import Conv2dTranspose
from vtatune.workloads.dense import Dense
from vtatune.workloads.group_conv2d import GroupConv2d


def _read(m, tmp_path, batch=None):
    g = graph.load(save(m, tmp_path / "m.onnx"), batch)
    return rules.read(g.nodes[-1], g)


def _oh(h: int, k: int, pad: int, s: int) -> int:
    return (h + 2 * pad - k) // s + 1


def test_conv_group_1_is_conv2d(tmp_path) -> None:
    wl = _read(conv_model([1, 16, 28, 28], (32, 16, 3, 3), pads=[1] * 4, strides=[2, 2]),
               tmp_path)
    assert wl == Conv2d(1, 16, 28, 28, 32, 3, 3, 1, 2)
    assert (wl.oh, wl.ow) == (_oh(28, 3, 1, 2),) * 2


def test_depthwise_and_grouped_are_group_conv2d(tmp_path) -> None:
    dw = _read(conv_model([1, 32, 14, 14], (32, 1, 3, 3), pads=[1] * 4, group=32), tmp_path)
    assert dw == GroupConv2d(1, 32, 14, 14, 32, 3, 3, 1, 1, 32)
    g4 = _read(conv_model([1, 64, 14, 14], (128, 16, 3, 3), pads=[1] * 4, group=4), tmp_path)
    assert g4 == GroupConv2d(1, 64, 14, 14, 128, 3, 3, 1, 1, 4)


def test_non_square_kernel_is_a_layer(tmp_path) -> None:
    # conv2d takes KH and KW apart (Inception's 1x7): a layer, not a refusal
    wl = _read(conv_model([1, 16, 17, 17], (16, 16, 1, 7), pads=[0, 3, 0, 3]), tmp_path)
    assert wl == Conv2d(1, 16, 17, 17, 16, 1, 7, 0, 1, pad_w=3)  # per axis, as VTA's template
    assert (wl.oh, wl.ow) == (17, 17) and wl.signature.endswith("_k1x7_p0x3_s1")
    wl = _read(conv_model([1, 16, 17, 17], (16, 16, 7, 1), pads=[3, 0, 3, 0]), tmp_path)
    assert wl == Conv2d(1, 16, 17, 17, 16, 7, 1, 3, 1, pad_w=0)
    wl = _read(conv_model([1, 32, 17, 17], (32, 4, 1, 3), pads=[0, 1, 0, 1], group=8),
               tmp_path)
    assert wl == GroupConv2d(1, 32, 17, 17, 32, 1, 3, 0, 1, 8, pad_w=1)
    wl = _read(conv_model([1, 16, 17, 17], (16, 16, 1, 3), pads=[0] * 4), tmp_path)
    assert wl == Conv2d(1, 16, 17, 17, 16, 1, 3, 0, 1)


@pytest.mark.parametrize(("attrs", "x", "w", "why"), [
    ({"dilations": [2, 2], "pads": [2] * 4}, [1, 16, 28, 28], (16, 16, 3, 3), "dilations 2x2"),
    ({"strides": [1, 2]}, [1, 16, 28, 28], (16, 16, 3, 3), "strides 1x2"),
    ({"pads": [0, 0, 1, 1], "strides": [2, 2]}, [1, 16, 28, 28], (16, 16, 3, 3),
     "asymmetric padding"),
    ({"auto_pad": "SAME_UPPER", "strides": [2, 2]}, [1, 16, 28, 28], (16, 16, 3, 3),
     "asymmetric padding (pads [0, 0, 1, 1]"),
    ({"pads": [1, 0, 2, 0]}, [1, 16, 28, 28], (16, 16, 3, 3),
     "the padding before and after differs on an axis"),
    ({}, [1, 16, 28], (16, 16, 3), "1-D conv2d"),
    ({}, [1, 4, 8, 8, 8], (4, 4, 3, 3, 3), "3-D conv2d"),
    ({"pads": [16] * 4}, [1, 16, 8, 8], (16, 16, 3, 3), "pads at most 15"),
])
def test_what_vta_cannot_run_stays_on_the_host_with_the_reason(tmp_path, attrs, x, w,
                                                               why) -> None:
    r = _read(conv_model(x, w, **attrs), tmp_path)
    assert isinstance(r, rules.Refusal) and why in r.reason, r


def test_same_padding_that_is_symmetric_is_a_layer(tmp_path) -> None:
    # SAME at stride 1 with an odd kernel pads (k - 1) / 2 on every side
    wl = _read(conv_model([1, 16, 28, 28], (16, 16, 5, 5), auto_pad="SAME_UPPER"), tmp_path)
    assert wl == Conv2d(1, 16, 28, 28, 16, 5, 5, 2, 1)
    wl = _read(conv_model([1, 16, 28, 28], (16, 16, 3, 3), auto_pad="VALID"), tmp_path)
    assert wl == Conv2d(1, 16, 28, 28, 16, 3, 3, 0, 1)


def test_conv_transpose(tmp_path) -> None:
    wl = _read(conv_model([1, 512, 8, 8], (512, 256, 4, 4), op="ConvTranspose", pads=[1] * 4,
                          strides=[2, 2]), tmp_path)
    assert wl == Conv2dTranspose(1, 512, 8, 8, 256, 4, 4, 1, 2)
    assert (wl.oh, wl.ow) == (16, 16)  # (H - 1) S - 2 P + K
    # output_shape given instead of pads: the same layer
    wl = _read(conv_model([1, 512, 8, 8], (512, 256, 4, 4), op="ConvTranspose",
                          strides=[2, 2], output_shape=[16, 16]), tmp_path)
    assert wl == Conv2dTranspose(1, 512, 8, 8, 256, 4, 4, 1, 2)
    for attrs, why in (({"output_padding": [1, 1], "strides": [2, 2], "pads": [1] * 4},
                        "output_padding"),
                       ({"group": 2}, "group 2"),
                       ({"dilations": [2, 2]}, "dilations")):
        w = (512, 128, 4, 4) if attrs.get("group") else (512, 256, 4, 4)
        r = _read(conv_model([1, 512, 8, 8], w, op="ConvTranspose", **attrs), tmp_path)
        assert isinstance(r, rules.Refusal) and why in r.reason, r


def test_gemm_and_matmul_with_constant_weights_are_dense(tmp_path) -> None:
    assert _read(dense_model([1, 512], (512, 1000)), tmp_path) == Dense(1, 512, 1000)
    assert _read(dense_model([4, 512], (1000, 512), op="Gemm", transB=1), tmp_path) == Dense(
        4, 512, 1000)
    assert _read(dense_model([4, 512], (512, 1000), op="Gemm"), tmp_path) == Dense(4, 512, 1000)


@pytest.mark.parametrize(("a", "b", "kw", "why"), [
    ([1, 512], (512, 1000), {"constant": False}, "not constant"),
    ([2, 8, 512], (512, 1000), {}, "3-D product"),
    ([512, 4], (512, 1000), {"op": "Gemm", "transA": 1}, "transA=1"),
])
def test_products_vta_cannot_run(tmp_path, a, b, kw, why) -> None:
    r = _read(dense_model(a, b, **kw), tmp_path)
    assert isinstance(r, rules.Refusal) and why in r.reason, r


def test_integer_and_qlinear_forms(tmp_path) -> None:
    f32 = np.float32
    x_scale = [helper.make_tensor(n, 1, [], [0.1]) for n in ("xs", "ws", "ys")]
    zps = [helper.make_tensor(n, 3, [], [0]) for n in ("xz", "wz", "yz")]  # int8
    qconv = helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                             ["y"], pads=[1] * 4)
    quant = helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"])
    m = model([quant, qconv], {"x": [1, 16, 14, 14]},
              [weight("w", (32, 16, 3, 3), np.int8), *x_scale, *zps])
    assert _read(m, tmp_path) == Conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1)
    ci = helper.make_node("ConvInteger", ["xq", "w"], ["y"], strides=[2, 2])
    m = model([quant, ci], {"x": [1, 16, 14, 14]}, [weight("w", (32, 16, 1, 1), np.int8),
                                                     *x_scale, *zps])
    assert _read(m, tmp_path) == Conv2d(1, 16, 14, 14, 32, 1, 1, 0, 2)
    qmm = helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                           ["y"])
    m = model([quant, qmm], {"x": [8, 64]}, [weight("w", (64, 10), np.int8), *x_scale, *zps])
    assert _read(m, tmp_path) == Dense(8, 64, 10)
    mmi = helper.make_node("MatMulInteger", ["xq", "w"], ["y"])
    m = model([quant, mmi], {"x": [8, 64]}, [weight("w", (64, 10), np.int8), *x_scale, *zps])
    assert _read(m, tmp_path) == Dense(8, 64, 10)
    del f32


def test_symbolic_batch_takes_batch(tmp_path) -> None:
    m = conv_model(["N", 16, 14, 14], (16, 16, 3, 3), pads=[1] * 4)
    assert _read(m, tmp_path) == Conv2d(1, 16, 14, 14, 16, 3, 3, 1, 1)
    assert _read(m, tmp_path, batch=4) == Conv2d(4, 16, 14, 14, 16, 3, 3, 1, 1)


def test_shapes_come_from_shape_inference_through_host_ops(tmp_path) -> None:
    # the conv's input size is known only after a max pool and a reshape chain
    pool = helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2])
    shape = helper.make_node("Shape", ["p"], ["s"])
    reshape = helper.make_node("Reshape", ["p", "s"], ["r"])
    conv = helper.make_node("Conv", ["r", "w"], ["y"], pads=[1] * 4)
    m = model([pool, shape, reshape, conv], {"x": [1, 16, 56, 56]},
              [weight("w", (8, 16, 3, 3))])
    assert _read(m, tmp_path) == Conv2d(1, 16, 28, 28, 8, 3, 3, 1, 1)
