"""Models that cannot be imported end as one ModelError line naming the problem; models that
are unusual but valid import."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.models.onnx_graphs import conv_model, helper, model, onnx, save, weight
from vtatune.errors import ModelError, UserError
from vtatune.models import examples, import_model


def _err(path, **kw) -> str:
    with pytest.raises(ModelError) as exc:
        import_model(path, **kw)
    text = str(exc.value)
    assert "\n" not in text
    return text


def _conv(tmp_path, name="m.onnx", **kw):
    return save(conv_model([1, 16, 8, 8], (16, 16, 3, 3), pads=[1] * 4, **kw),
                tmp_path / name)


@pytest.mark.parametrize(("content", "why"), [
    (b"hello, this is a text file\n", "not an ONNX model"),
    (b'{"graph": {"node": []}}', "not an ONNX model"),
    (bytes(range(256)) * 8, "not an ONNX model"),
    (b"", "empty"),
    (b"\x08\x08", "not an ONNX model (no IR version or no graph)"),
])
def test_not_onnx(tmp_path, content, why) -> None:
    p = tmp_path / "x.onnx"
    p.write_bytes(content)
    assert why in _err(p)


def test_truncated(tmp_path) -> None:
    path = tmp_path / "r18.onnx"
    examples.build("resnet18", path=path)
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 1, 100):
        p = tmp_path / f"cut{cut}.onnx"
        p.write_bytes(data[:cut])
        assert "truncated" in _err(p)


def test_no_layer_vta_can_run(tmp_path) -> None:
    m = model([helper.make_node("Relu", ["x"], ["y"])], {"x": [1, 16, 8, 8]})
    assert "no layer VTA can run" in _err(save(m, tmp_path / "relu.onnx"))
    # a convolution VTA cannot run: the reason is in the message
    m = conv_model([1, 16, 8, 8], (16, 16, 3, 3), dilations=[2, 2])
    assert "dilations 2x2" in _err(save(m, tmp_path / "dil.onnx"))


def test_unreadable_opset_and_ir_version(tmp_path) -> None:
    m = conv_model([1, 16, 8, 8], (16, 16, 3, 3))
    m.opset_import[0].version = 999
    assert "opset 999" in _err(save(m, tmp_path / "op.onnx"))
    m.opset_import[0].version = 17
    m.ir_version = onnx.IR_VERSION + 1
    assert f"IR version {onnx.IR_VERSION + 1}" in _err(save(m, tmp_path / "ir.onnx"))
    m.ir_version = 8
    del m.opset_import[:]
    assert "no opset" in _err(save(m, tmp_path / "none.onnx"))


def _external(tmp_path):
    path = tmp_path / "vgg16.onnx"
    examples.build("vgg16", weights="external", path=path)
    return path, tmp_path / "vgg16.onnx.data"


def test_missing_or_short_external_data(tmp_path) -> None:
    path, data = _external(tmp_path)
    size = data.stat().st_size
    assert import_model(path).graph.external_files == 1
    os.truncate(data, size // 2)
    assert "truncated or not this model's" in _err(path)
    data.unlink()
    assert "which is missing" in _err(path)


def test_external_data_is_needed_only_when_a_node_reads_it(tmp_path) -> None:
    m = conv_model([1, 16, 8, 8], (16, 16, 3, 3), pads=[1] * 4)
    unused = onnx.TensorProto(name="unused", data_type=1, dims=[1000])
    unused.data_location = onnx.TensorProto.EXTERNAL
    unused.external_data.add(key="location", value="gone.bin")
    m.graph.initializer.append(unused)
    assert import_model(save(m, tmp_path / "m.onnx")).network.invocations == 1
    m.graph.initializer[0].CopyFrom(unused)  # now the conv's weight points to it
    m.graph.initializer[0].name = "w"
    m.graph.initializer[0].dims[:] = [16, 16, 3, 3]
    assert "'gone.bin', which is missing" in _err(save(m, tmp_path / "m.onnx"))


def test_external_data_outside_the_model_folder(tmp_path) -> None:
    m = conv_model([1, 16, 8, 8], (16, 16, 3, 3))
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.data_location = onnx.TensorProto.EXTERNAL
    for loc in ("../secret.bin", "/etc/passwd"):
        del w.external_data[:]
        w.external_data.add(key="location", value=loc)
        assert "not a file name inside the model's folder" in _err(save(m, tmp_path / "m.onnx"))


def test_small_external_tensors_are_read_for_shape_inference(tmp_path) -> None:
    # a Reshape whose target shape lives in an external file: needed to infer the conv's input
    shape = np.array([1, 16, 8, 8], dtype=np.int64)
    (tmp_path / "shape.bin").write_bytes(shape.tobytes())
    t = onnx.TensorProto(name="s", data_type=onnx.TensorProto.INT64, dims=[4])
    t.data_location = onnx.TensorProto.EXTERNAL
    t.external_data.add(key="location", value="shape.bin")
    reshape = helper.make_node("Reshape", ["x", "s"], ["r"])
    conv = helper.make_node("Conv", ["r", "w"], ["y"], pads=[1] * 4)
    m = model([reshape, conv], {"x": [1, 1024]}, [t, weight("w", (8, 16, 3, 3))])
    net = import_model(save(m, tmp_path / "m.onnx")).network
    assert [la.workload.signature for la in net.layers] == ["conv2d_n1_c16_h8_w8_o8_k3x3_p1_s1"]


def test_two_gigabyte_protobuf(tmp_path) -> None:
    p = tmp_path / "huge.onnx"
    with open(p, "wb") as f:
        f.truncate(1 << 31)  # sparse: no disk
    assert "more than protobuf's 2 GB limit" in _err(p)


def test_graph_with_a_cycle(tmp_path) -> None:
    add = helper.make_node("Add", ["x", "c"], ["a"], name="add")
    relu = helper.make_node("Relu", ["a"], ["c"], name="relu")
    conv = helper.make_node("Conv", ["a", "w"], ["y"])
    m = model([add, relu, conv], {"x": [1, 16, 8, 8]}, [weight("w", (16, 16, 3, 3))])
    assert "cycle" in _err(save(m, tmp_path / "cycle.onnx"))


def test_malformed_graphs(tmp_path) -> None:
    twice = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("Conv", ["a", "w"], ["y"])]
    m = model(twice, {"x": [1, 16, 8, 8]}, [weight("w", (16, 16, 3, 3))])
    assert "produced twice" in _err(save(m, tmp_path / "twice.onnx"))
    dangling = [helper.make_node("Conv", ["nowhere", "w"], ["y"])]
    m = model(dangling, {"x": [1, 16, 8, 8]}, [weight("w", (16, 16, 3, 3))])
    assert "which no node, input or initializer produces" in _err(save(m, tmp_path / "d.onnx"))


def test_nodes_out_of_order_still_import(tmp_path) -> None:
    relu = helper.make_node("Relu", ["y"], ["z"])
    conv = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1] * 4)
    m = model([relu, conv], {"x": [1, 16, 8, 8]}, [weight("w", (16, 16, 3, 3))], out="z")
    assert import_model(save(m, tmp_path / "m.onnx")).network.invocations == 1


def test_dimensions_and_batch(tmp_path) -> None:
    m = conv_model([1, 16, "H", "W"], (16, 16, 3, 3))
    assert "axis 2 ('H') is not fixed" in _err(save(m, tmp_path / "hw.onnx"))
    p = _conv(tmp_path)  # batch fixed at 1
    assert "fixed batch of 1" in _err(p, batch=4)
    assert import_model(p, batch=1).graph.batch == 1
    with pytest.raises(UserError, match="--batch must be"):
        import_model(p, batch=0)
    with pytest.raises(UserError, match="--name"):
        import_model(p, name="../x")


def test_messages_nested_too_deep(tmp_path) -> None:
    # graph > node > attribute > graph > ... 100 levels, written as raw protobuf
    def field(no: int, body: bytes) -> bytes:
        n, length = bytearray(), len(body)
        while True:
            b = length & 0x7F
            length >>= 7
            n.append(b | (0x80 if length else 0))
            if not length:
                break
        return bytes([no << 3 | 2]) + bytes(n) + body

    body = b""
    for _ in range(100):
        body = field(1, field(5, field(6, body)))  # node > attribute > g
    data = bytes([0x08, 0x08]) + field(7, body)
    p = tmp_path / "deep.onnx"
    p.write_bytes(data)
    assert "nested more than" in _err(p)


def test_a_huge_field_is_not_read(tmp_path) -> None:
    # a graph name claiming 100 MB (sparse: the file holds zeros): refused before reading it
    p = tmp_path / "name.onnx"
    head = bytes([0x08, 0x08, 0x3A]) + bytes([0x85, 0x80, 0x80, 0x32]) + bytes([0x12, 0x80,
                                                                                 0x80, 0x80, 0x32])
    with open(p, "wb") as f:
        f.write(head)
        f.truncate(len(head) + (100 << 20) + 5)
    assert "more than any graph field" in _err(p)
