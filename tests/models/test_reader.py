"""The weight-free reader: what it keeps, what it skips, and the model's fingerprint."""

from __future__ import annotations

import numpy as np

from tests.models.onnx_graphs import conv_model, onnx, save
from vtatune.models import examples, reader
from vtatune.models.graph import load


def test_weights_are_skipped_and_the_graph_kept(tmp_path) -> None:
    path = tmp_path / "r50.onnx"
    full = examples.build("resnet50", path=path)
    s = reader.read(path)
    # 25.6 M float32 weights in the file; the stripped model holds none of them
    assert s.file_bytes > 100e6 and len(s.data) < 0.005 * s.file_bytes  # BN vectors stay
    assert s.skipped_bytes > 0.99 * s.file_bytes
    m = reader.parse(s, path)
    assert [n.op_type for n in m.graph.node] == [n.op_type for n in full.graph.node]
    assert [(t.name, list(t.dims), t.data_type) for t in m.graph.initializer] == [
        (t.name, list(t.dims), t.data_type) for t in full.graph.initializer]
    assert all(not t.raw_data for t in m.graph.initializer if np.prod(t.dims) > 1024)


def test_small_tensors_keep_their_values(tmp_path) -> None:
    path = tmp_path / "dcgan.onnx"
    examples.build("dcgan", path=path)
    m = reader.parse(reader.read(path), path)
    shape = next(t for t in m.graph.initializer if t.data_type == onnx.TensorProto.INT64)
    assert onnx.numpy_helper.to_array(shape).tolist() == [-1, 1024, 4, 4]


def test_fingerprint_follows_the_graph_not_the_weights(tmp_path) -> None:
    a = conv_model([1, 16, 8, 8], (16, 16, 3, 3), pads=[1] * 4)
    b = onnx.ModelProto()
    b.CopyFrom(a)
    w = b.graph.initializer[0]
    w.CopyFrom(onnx.numpy_helper.from_array(np.ones((16, 16, 3, 3), np.float32), "w"))
    fa = reader.read(save(a, tmp_path / "a.onnx")).fingerprint
    fb = reader.read(save(b, tmp_path / "b.onnx")).fingerprint
    assert fa == fb  # retrained weights: the same model for VTA
    b.graph.node[0].attribute[0].ints[:] = [0, 0, 0, 0]  # pads changed
    assert reader.read(save(b, tmp_path / "c.onnx")).fingerprint != fa
    # doc strings do not count either
    a.doc_string = "trained on a Tuesday"
    assert reader.read(save(a, tmp_path / "d.onnx")).fingerprint == fa


def test_external_weights_are_not_read(tmp_path) -> None:
    path = tmp_path / "vgg16.onnx"
    examples.build("vgg16", weights="external", path=path)
    data = tmp_path / "vgg16.onnx.data"
    assert data.stat().st_size > 500e6
    g = load(path)
    assert g.external_files == 1
    # the weights stay in their file: the loaded model's tensors still point to it
    assert all(t.data_location == onnx.TensorProto.EXTERNAL for t in g.model.graph.initializer
               if t.name.endswith("_w"))
