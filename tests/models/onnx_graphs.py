"""Small ONNX graphs for the importer's tests, built with onnx.helper (nothing downloaded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weight(name: str, dims: tuple[int, ...], dtype: Any = np.float32) -> Any:
    return numpy_helper.from_array(np.zeros(dims, dtype=dtype), name)


def model(nodes: list[Any], inputs: dict[str, list[Any]], inits: list[Any] = (),
          opset: int = 17, out: str | None = None, name: str = "g") -> Any:
    """A model of ``nodes`` whose float inputs have the given shapes; the last node's first
    output is the graph output (or ``out``)."""
    out = out or nodes[-1].output[0]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(k, TensorProto.FLOAT, v)
                      for k, v in inputs.items()],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def conv_model(x: list[Any], w: tuple[int, ...], op: str = "Conv", **attrs: Any) -> Any:
    """One convolution (``Conv`` or ``ConvTranspose``) of input ``x`` by weight ``w``."""
    node = helper.make_node(op, ["x", "w"], ["y"], name="the_conv", **attrs)
    return model([node], {"x": x}, [weight("w", w)])


def save(m: Any, path: Path) -> Path:
    path.write_bytes(m.SerializeToString())
    return path


def dense_model(a: list[Any], b: tuple[int, ...], op: str = "MatMul", constant: bool = True,
                **attrs: Any) -> Any:
    inputs = {"a": a}
    inits = []
    if constant:
        inits.append(weight("b", b))
    else:
        inputs["b"] = list(b)
    node = helper.make_node(op, ["a", "b"], ["y"], name="the_product", **attrs)
    return model([node], inputs, inits)


__all__ = ["conv_model", "dense_model", "helper", "model", "onnx", "save", "weight"]
