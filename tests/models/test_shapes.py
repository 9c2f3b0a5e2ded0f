"""Shapes ONNX's own inference leaves unknown: shape arithmetic computed inside the graph (as
PyTorch's TorchScript exporter writes ``x.chunk()`` and ShuffleNet's channel shuffle),
onnxruntime's QOperator (``com.microsoft``) int8 models, and inner shapes stated for another
batch. Every expected shape below is computed by hand from the architecture."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

from tests.models.onnx_graphs import helper, model, save, weight
from vtatune.models import graph, import_model, reader, rules, shapes
from vtatune.workloads.conv2d import Conv2d
from vtatune.workloads.dense import Dense
from vtatune.workloads.group_conv2d import GroupConv2d

MS = "com.microsoft"


def _i64(name: str, v) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, dtype=np.int64), name)


class _Net:
    """A graph under construction, in the TorchScript exporter's style: sizes read with
    ``Shape``/``Gather`` and computed with integer arithmetic."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.inits: list = [_i64("one", 1), _i64("two", 2), _i64("ax0", [0]),
                            _i64("ax1", [1]), _i64("zero1", [0]), _i64("minus1", [-1]),
                            _i64("two1", [2])]
        self.n = 0

    def op(self, op: str, inputs: list[str], domain: str = "", **attrs) -> str:
        self.n += 1
        out = f"{op.lower()}{self.n}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, domain=domain,
                                           **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: int, group: int = 1,
             stride: int = 1) -> str:
        w = f"w{self.n}"
        self.inits.append(weight(w, (cout, cin // group, k, k)))
        return self.op("Relu", [self.op("Conv", [x, w], pads=[k // 2] * 4, group=group,
                                        strides=[stride] * 2)])

    def size(self, x: str, axis: int) -> str:
        """``x.size(axis)``: Shape -> Gather (a scalar)."""
        index = f"i{self.n}"
        self.inits.append(_i64(index, axis))
        return self.op("Gather", [self.op("Shape", [x]), index], axis=0)

    def chunk(self, x: str) -> tuple[str, str]:
        """``x.chunk(2, dim=1)`` as TorchScript exports it: the split size
        ``(C + 1) / 2`` (Add, Div), the ends (Mul), Unsqueeze and Slice."""
        half = self.op("Div", [self.op("Add", [self.size(x, 1), "one"]), "two"])
        end1 = self.op("Unsqueeze", [self.op("Mul", [half, "one"]), "ax0"])
        end2 = self.op("Unsqueeze", [self.op("Mul", [half, "two"]), "ax0"])
        return (self.op("Slice", [x, "zero1", end1, "ax1"]),
                self.op("Slice", [x, end1, end2, "ax1"]))

    def shuffle(self, x: str) -> str:
        """``channel_shuffle(x, 2)``: view(b, 2, c // 2, h, w), transpose(1, 2),
        view(b, -1, h, w), every size from ``Shape``."""
        b, c, h, w = (self.op("Unsqueeze", [self.size(x, a), "ax0"]) for a in range(4))
        cpg = self.op("Div", [c, "two1"])
        five = self.op("Concat", [b, "two1", cpg, h, w], axis=0)
        y = self.op("Transpose", [self.op("Reshape", [x, five])], perm=[0, 2, 1, 3, 4])
        four = self.op("Concat", [b, "minus1", h, w], axis=0)
        return self.op("Reshape", [y, four])


def _shufflenet_units(units: int = 3, c: int = 116, hw: int = 28):
    """ShuffleNetV2 stride-1 units (Ma et al. 2018, Figure 3c) after a stem conv."""
    net = _Net()
    x = net.conv("x", 24, c, 1)
    for _ in range(units):
        x1, x2 = net.chunk(x)
        half = c // 2
        y = net.conv(x2, half, half, 1)
        y = net.conv(y, half, half, 3, group=half)
        y = net.conv(y, half, half, 1)
        x = net.shuffle(net.op("Concat", [x1, y], axis=1))
    x = net.conv(x, c, 1024, 1)
    return model(net.nodes, {"x": ["N", 24, hw, hw]}, net.inits, out=x)


def test_chunk_and_channel_shuffle_shapes_are_folded(tmp_path) -> None:
    m = _shufflenet_units(units=3)
    # ONNX's own inference stops at Div: the first unit's convolutions have unknown sizes
    inferred = onnx.shape_inference.infer_shapes(m, data_prop=True)
    known = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
             for vi in inferred.graph.value_info}
    assert not all(known.get("slice12", [0])), "ONNX itself resolves the chunk now"
    imp = import_model(save(m, tmp_path / "shufflenet.onnx"), batch=2)
    assert not [h for h in imp.host_ops if h.reason], imp.host_ops
    layers = {la.workload: la.count for la in imp.layers}
    # by hand: stem 24 -> 116 at 28x28, per unit 1x1 58 -> 58, depthwise 3x3 58, 1x1
    # 58 -> 58, then 1x1 116 -> 1024; the 1x1 58 -> 58 of each unit are the same shape
    assert layers == {Conv2d(2, 24, 28, 28, 116, 1, 1, 0, 1): 1,
                      Conv2d(2, 58, 28, 28, 58, 1, 1, 0, 1): 6,
                      GroupConv2d(2, 58, 28, 28, 58, 3, 3, 1, 1, 58): 3,
                      Conv2d(2, 116, 28, 28, 1024, 1, 1, 0, 1): 1}
    g = imp.graph
    assert g.shape(imp.graph.nodes[-1].output[0]) == (2, 1024, 28, 28)
    # the shape arithmetic is computed once at load, not listed as host work
    folded = dict(imp.folded)
    assert folded["Div"] == 3 * 2 and folded["Shape"] == 3 * 5 and folded["Gather"] == 3 * 5
    assert {h.op for h in imp.host_ops} == {"Slice", "Concat", "Reshape", "Transpose",
                                            "Relu"}


def test_folding_follows_the_arithmetic_not_a_guess(tmp_path) -> None:
    # an odd channel count: chunk's first part is (C + 1) // 2 = 59, the second 58
    net = _Net()
    a, b = net.chunk("x")
    net.inits.append(weight("wa", (8, 59, 1, 1)))
    net.inits.append(weight("wb", (8, 58, 3, 3)))
    ya = net.op("Conv", [a, "wa"])
    yb = net.op("Conv", [b, "wb"], pads=[1] * 4)
    out = net.op("Add", [ya, yb])
    imp = import_model(save(model(net.nodes, {"x": [1, 117, 14, 14]}, net.inits, out=out),
                            tmp_path / "odd.onnx"))
    assert {la.workload for la in imp.layers} == {Conv2d(1, 59, 14, 14, 8, 1, 1, 0, 1),
                                                  Conv2d(1, 58, 14, 14, 8, 3, 3, 1, 1)}


def test_range_constant_of_shape_where_and_cast_fold(tmp_path) -> None:
    # a target shape built from Range / ConstantOfShape / Equal / Where / Cast, as
    # exporters write ``view`` with an inferred size
    net = _Net()
    n = net.op("Unsqueeze", [net.size("x", 0), "ax0"])
    rank = net.op("Range", ["zero_s", "four_s", "one"])  # [0, 1, 2, 3]
    ones = net.op("ConstantOfShape", [net.op("Shape", [rank])],
                  value=numpy_helper.from_array(np.array([1], dtype=np.int64)))
    is_n = net.op("Equal", [rank, "zero_s"])
    full = net.op("Where", [is_n, net.op("Expand", [n, net.op("Shape", [rank])]), ones])
    # full = [N, 1, 1, 1]; times [1, 32, 7, 7] gives the conv's input [N, 32, 7, 7]
    target = net.op("Cast", [net.op("Mul", [net.op("Cast", [full], to=TensorProto.FLOAT),
                                            "dims_f"])], to=TensorProto.INT64)
    r = net.op("Reshape", ["x", target])
    net.inits += [_i64("zero_s", 0), _i64("four_s", 4),
                  numpy_helper.from_array(np.array([1, 32, 7, 7], np.float32), "dims_f"),
                  weight("w", (64, 32, 3, 3))]
    y = net.op("Conv", [r, "w"], pads=[1] * 4)
    imp = import_model(save(model(net.nodes, {"x": ["N", 1568]}, net.inits, out=y),
                            tmp_path / "view.onnx"), batch=3)
    assert [la.workload for la in imp.layers] == [Conv2d(3, 32, 7, 7, 64, 3, 3, 1, 1)]


def test_large_or_stripped_values_are_never_folded(tmp_path) -> None:
    # a ConstantOfShape of an activation's size is not computed (only its shape is needed),
    # and a weight whose payload the reader skipped is never read (as zeros or at all)
    net = _Net()
    big = net.op("ConstantOfShape", [net.op("Shape", ["x"])])
    s = net.op("Add", ["x", big])
    net.inits += [weight("w", (16, 64, 3, 3)), _i64("sizes", [56, 60, 70, 99]),
                  _i64("head", [1, 64, 56])]
    # a target shape from a small kept tensor: [1, 64, 56, min(sizes)] folds
    side = net.op("ReduceMin", ["sizes"], keepdims=1)
    r = net.op("Reshape", [s, net.op("Concat", ["head", side], axis=0)])
    y = net.op("Conv", [r, "w"], pads=[1] * 4)
    # a target shape from a stripped weight: never folded, the shape stays unknown
    peak = net.op("Cast", [net.op("ReduceMax", ["w"], keepdims=1)], to=TensorProto.INT64)
    z = net.op("Reshape", [y, net.op("Concat", ["head", peak], axis=0)])
    m = model(net.nodes, {"x": [1, 64, 56, 56]}, net.inits, out=z)
    path = save(m, tmp_path / "big.onnx")
    loaded = reader.parse(reader.read(path), path)
    order = list(range(len(loaded.graph.node)))
    found = shapes.infer(loaded, 17, order, "big.onnx")
    assert big not in found.values and s not in found.values
    assert peak not in found.values and "w" not in found.values
    assert list(found.values[side]) == [56]
    g = graph.load(path)
    assert g.shape(big) == (1, 64, 56, 56) and g.shape(y) == (1, 16, 56, 56)
    assert graph.dims_of(g.shape(z)) is None


# ---- onnxruntime's QOperator models -------------------------------------------------------

def _q(net: _Net, tag: str) -> tuple[str, str]:
    """A scale and a uint8 zero point."""
    net.inits += [helper.make_tensor(f"{tag}_s", TensorProto.FLOAT, [], [0.02]),
                  helper.make_tensor(f"{tag}_z", TensorProto.UINT8, [], [128])]
    return f"{tag}_s", f"{tag}_z"


def _qconv(net: _Net, x: str, tag: str, cin: int, cout: int, k: int, stride: int = 1,
           group: int = 1) -> str:
    xs, xz = _q(net, f"{tag}x")
    ws, wz = _q(net, f"{tag}w")
    ys, yz = _q(net, f"{tag}y")
    net.inits.append(weight(f"{tag}_w", (cout, cin // group, k, k), np.uint8))
    return net.op("QLinearConv", [x, xs, xz, f"{tag}_w", ws, wz, ys, yz],
                  pads=[k // 2] * 4, strides=[stride] * 2, group=group)


def _qoperator_model(channels_last_pool: bool = False):
    """The operators onnxruntime's ``quantize_static(..., QuantFormat.QOperator)`` writes for a
    residual block, an SE-style gate and a classifier."""
    net = _Net()
    s, z = _q(net, "in")
    x = net.op("QuantizeLinear", ["x", s, z])
    x = _qconv(net, x, "c1", 3, 32, 3, stride=2)                      # 1x32x16x16
    y = _qconv(net, x, "c2", 32, 32, 3)
    y = _qconv(net, y, "c3", 32, 32, 3)
    a = [x, *_q(net, "a1"), y, *_q(net, "a2"), *_q(net, "a3")]
    x = net.op("QLinearAdd", a, domain=MS)
    x = net.op("QLinearLeakyRelu", [x, *_q(net, "l1"), *_q(net, "l2")], domain=MS,
               alpha=0.1)
    gate = net.op("QLinearGlobalAveragePool", [x, *_q(net, "g1"), *_q(net, "g2")],
                  domain=MS, channels_last=0)                           # 1x32x1x1
    gate = net.op("QLinearSigmoid", [gate, *_q(net, "s1"), *_q(net, "s2")], domain=MS)
    x = net.op("QLinearMul", [x, *_q(net, "m1"), gate, *_q(net, "m2"), *_q(net, "m3")],
               domain=MS)
    p = net.op("QLinearAveragePool", [x, *_q(net, "p1"), *_q(net, "p2")], domain=MS,
               kernel_shape=[2, 2], strides=[2, 2])                     # 1x32x8x8
    q = _qconv(net, p, "c4", 32, 16, 1)
    cat = net.op("QLinearConcat", [*_q(net, "k0"), p, *_q(net, "k1"), q, *_q(net, "k2")],
                 domain=MS, axis=1)                                     # 1x48x8x8
    x = _qconv(net, cat, "c5", 48, 64, 3, stride=2)                    # 1x64x4x4
    x = net.op("QLinearGlobalAveragePool", [x, *_q(net, "g3"), *_q(net, "g4")],
               domain=MS, channels_last=0)
    x = net.op("Flatten", [x], axis=1)                                  # 1x64
    net.inits.append(weight("fc_w", (10, 64), np.uint8))
    net.inits.append(weight("fc_b", (10,), np.int32))
    x = net.op("QGemm", [x, *_q(net, "f1"), "fc_w", *_q(net, "f2"), "fc_b", *_q(net, "f3")],
               domain=MS, transB=1)
    x = net.op("DequantizeLinear", [x, *_q(net, "out")])
    m = model(net.nodes, {"x": ["batch", 3, 32, 32]}, net.inits, out=x)
    m.opset_import.append(helper.make_opsetid(MS, 1))
    return m


def test_qoperator_model_imports_every_layer(tmp_path) -> None:
    imp = import_model(save(_qoperator_model(), tmp_path / "q.onnx"))
    assert not [h for h in imp.host_ops if h.reason], imp.host_ops
    assert sorted((la.workload.signature, la.count) for la in imp.layers) == sorted(
        (wl.signature, n) for wl, n in (
            (Conv2d(1, 3, 32, 32, 32, 3, 3, 1, 2), 1),
            (Conv2d(1, 32, 16, 16, 32, 3, 3, 1, 1), 2),
            (Conv2d(1, 32, 8, 8, 16, 1, 1, 0, 1), 1),
            (Conv2d(1, 48, 8, 8, 64, 3, 3, 1, 2), 1),
            (Dense(1, 64, 10), 1)))
    g = imp.graph
    by_op = {n.op_type: n.output[0] for n in g.nodes}
    assert g.shape(by_op["QLinearConcat"]) == (1, 48, 8, 8)
    assert g.shape(by_op["QGemm"]) == (1, 10)
    assert g.dtypes[by_op["QGemm"]] == TensorProto.UINT8  # its y_zero_point's type
    assert g.dtypes[by_op["QLinearAdd"]] == TensorProto.UINT8


def test_qoperator_batch(tmp_path) -> None:
    imp = import_model(save(_qoperator_model(), tmp_path / "q.onnx"), batch=8)
    assert Dense(8, 64, 10) in {la.workload for la in imp.layers}
    assert imp.graph.shape([n for n in imp.graph.nodes if n.op_type == "QLinearAveragePool"][
        0].output[0]) == (8, 32, 8, 8)


def test_channels_last_contrib_operators(tmp_path) -> None:
    # onnxruntime's NHWC forms: QLinearConv (com.microsoft, channels_last=1) and the pool
    net = _Net()
    s, z = _q(net, "in")
    x = net.op("QuantizeLinear", ["x", s, z])                           # 1x20x20x16 NHWC
    net.inits.append(weight("w", (32, 16, 3, 3), np.uint8))
    y = net.op("QLinearConv", [x, *_q(net, "a"), "w", *_q(net, "b"), *_q(net, "c")],
               domain=MS, channels_last=1, pads=[1] * 4, strides=[2, 2])
    p = net.op("QLinearGlobalAveragePool", [y, *_q(net, "d"), *_q(net, "e")], domain=MS,
               channels_last=1)
    m = model(net.nodes, {"x": [1, 20, 20, 16]}, net.inits, out=p)
    m.opset_import.append(helper.make_opsetid(MS, 1))
    imp = import_model(save(m, tmp_path / "nhwc.onnx"))
    assert [la.workload for la in imp.layers] == [Conv2d(1, 16, 20, 20, 32, 3, 3, 1, 2)]
    assert imp.graph.shape(y) == (1, 10, 10, 32)
    assert imp.graph.shape(p) == (1, 1, 1, 32)


# ---- layers VTA does not run always say why -------------------------------------------------

@pytest.mark.parametrize(("domain", "op", "why"), [
    (MS, "FusedMatMul", "com.microsoft.FusedMatMul computes a convolution or a matrix product"),
    ("", "Einsum", "Einsum computes"),
    (MS, "QLinearConvTranspose", "no rule"),
])
def test_a_layer_kind_without_a_rule_has_a_reason(tmp_path, domain, op, why) -> None:
    node = helper.make_node(op, ["x", "w"], ["y"], name="the_node", domain=domain,
                            **({"equation": "ij,jk->ik"} if op == "Einsum" else {}))
    conv = helper.make_node("Conv", ["img", "cw"], ["z"], name="conv")
    m = model([node, conv], {"x": [4, 8], "img": [1, 16, 8, 8]},
              [weight("w", (8, 8)), weight("cw", (16, 16, 1, 1))], out="z")
    if domain:
        m.opset_import.append(helper.make_opsetid(domain, 1))
    imp = import_model(save(m, tmp_path / "m.onnx"))
    reasons = {h.nodes: h.reason for h in imp.host_ops}
    assert why in (reasons[("the_node",)] or ""), reasons


def test_qgemm_that_vta_cannot_run_says_why(tmp_path) -> None:
    net = _Net()
    for tag in ("a", "b", "y"):
        _q(net, tag)
    node = helper.make_node("QGemm", ["x", "a_s", "a_z", "w", "b_s", "b_z", "", "y_s", "y_z"],
                            ["y"], name="qgemm", domain=MS, transA=1)
    m = model([node], {"x": [64, 4]}, [*net.inits, weight("w", (64, 10), np.uint8)])
    m.opset_import.append(helper.make_opsetid(MS, 1))
    g = graph.load(save(m, tmp_path / "q.onnx"))
    r = rules.read(g.nodes[0], g)
    assert isinstance(r, rules.Refusal) and "transA=1" in r.reason
    node = helper.make_node("QGemm", ["x", "a_s", "a_z", "w", "b_s", "b_z", "", "y_s", "y_z"],
                            ["y"], name="qgemm", domain=MS)
    m = model([node], {"x": [4, 64], "w": [64, 10]}, net.inits)
    m.opset_import.append(helper.make_opsetid(MS, 1))
    g = graph.load(save(m, tmp_path / "q2.onnx"))
    r = rules.read(g.nodes[0], g)
    assert isinstance(r, rules.Refusal) and "not constant" in r.reason


# ---- inner shapes stated for another batch ------------------------------------------------

def _stale(tmp_path, out_shape=(1, 8, 14, 14)):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1] * 4, name="c1"),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Conv", ["r", "w"], ["y"], pads=[1] * 4, name="c2")]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8, 14, 14])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))],
        initializer=[weight("w", (8, 8, 3, 3))],
        value_info=[helper.make_tensor_value_info(v, TensorProto.FLOAT, [1, 8, 14, 14])
                    for v in ("c", "r")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return save(m, tmp_path / "stale.onnx")


def test_inner_shapes_of_another_batch_are_recomputed(tmp_path) -> None:
    imp = import_model(_stale(tmp_path), batch=4)
    assert [(la.workload, la.count) for la in imp.layers] == [
        (Conv2d(4, 8, 14, 14, 8, 3, 3, 1, 1), 2)]
    assert imp.graph.shape("r") == (4, 8, 14, 14) and imp.graph.shape("y") == (4, 8, 14, 14)
    assert "recomputed" in imp.graph.batch_note and "1x8x14x14" in imp.graph.batch_note
    # at the batch the model states, nothing is stale
    imp = import_model(_stale(tmp_path))
    assert "recomputed" not in imp.graph.batch_note
    assert imp.layers[0].workload == Conv2d(1, 8, 14, 14, 8, 3, 3, 1, 1)


def test_shapes_onnx_cannot_compute_keep_what_the_model_states(tmp_path) -> None:
    # a custom operator's output: its shape is only in value_info; the conv after it imports
    node = helper.make_node("MyOp", ["x"], ["c"], domain="my.ops")
    conv = helper.make_node("Conv", ["c", "w"], ["y"], name="conv")
    g = helper.make_graph(
        [node, conv], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[weight("w", (8, 16, 1, 1))],
        value_info=[helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 16, 7, 7])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("my.ops", 1)])
    m.ir_version = 8
    imp = import_model(save(m, tmp_path / "custom.onnx"))
    assert [la.workload for la in imp.layers] == [Conv2d(1, 16, 7, 7, 8, 1, 1, 0, 1)]


def test_a_node_reading_one_value_twice(tmp_path) -> None:
    # onnxruntime's QLinearConcat of a tensor with itself (torch.cat([x, x])): inputs repeat
    net = _Net()
    s, z = _q(net, "in")
    x = net.op("QuantizeLinear", ["x", s, z])
    cat = net.op("QLinearConcat", [*_q(net, "o"), x, s, z, x, s, z], domain=MS, axis=1)
    y = _qconv(net, cat, "c", 32, 8, 3)
    m = model(net.nodes, {"x": [1, 16, 10, 10]}, net.inits, out=y)
    m.opset_import.append(helper.make_opsetid(MS, 1))
    imp = import_model(save(m, tmp_path / "twice.onnx"))
    assert imp.graph.shape(cat) == (1, 32, 10, 10)
    assert [la.workload for la in imp.layers] == [Conv2d(1, 32, 10, 10, 8, 3, 3, 1, 1)]
