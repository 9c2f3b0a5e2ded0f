"""Every value's shape, computed from the model's inputs: ONNX shape inference, then what it
leaves unknown.

ONNX's shape inference (``onnx.shape_inference.infer_shapes`` with data propagation) stops
where a shape is computed by operators it does not propagate: PyTorch's TorchScript exporter
writes ``x.chunk(2, dim=1)`` as ``Shape -> Gather -> Add -> Div -> Mul -> Unsqueeze -> Slice``
and ONNX's propagation stops at ``Div``, so every later value of a static ShuffleNetV2 has
unknown sizes. It also knows no operator outside the ONNX domain: onnxruntime's int8
``QOperator`` models are made of ``com.microsoft`` operators (``QLinearAdd``,
``QLinearGlobalAveragePool``, ``QGemm``, ...) after which nothing is known.

``infer`` therefore runs ONNX's inference, then walks the nodes in order once:

- **values**: a node a shape may depend on whose inputs are all known values (small
  constants, or a ``Shape`` / ``Size`` of a value whose shape is known) is evaluated with
  ``onnx.reference`` (ONNX's own reference implementation of every standard operator, so any
  operator that computes a shape folds, not a list of them), when its outputs are small
  (``MAX_VALUE_ELEMENTS``);
- **shapes**: a node whose outputs' shapes are not all known is inferred again with those
  values (``onnx.shape_inference.infer_node_outputs``); an operator of ``com.microsoft`` is
  inferred as its float counterpart (``CONTRIB``: the same shape rule on the same inputs).

Inner shapes a model states (``value_info``, the outputs' shapes) are dropped before and
recomputed from the inputs, so a model exported at batch 1 whose input's batch is free
imports at ``--batch N`` with batch-N layers; a stated shape that differs from the computed
one is counted (``Inferred.stale``). Weights are never needed: their shapes are in the model
and values are read only from the small tensors ``reader`` keeps whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vtatune.errors import ModelError
from vtatune.escaping import shown

#: Largest value (elements) computed while folding: shapes, axes and indices are a few
#: elements; a ``ConstantOfShape`` of an activation's size is not folded (its shape is enough).
MAX_VALUE_ELEMENTS = 4096
#: Operators whose outputs change between runs even on constant inputs (never folded).
NOT_FOLDABLE = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike",
                          "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"})
ONNX_DOMAINS = ("", "ai.onnx")
MICROSOFT = "com.microsoft"


@dataclass(frozen=True)
class Counterpart:
    """The ONNX operator whose shape rule a contrib operator follows: ``op`` on the inputs at
    ``inputs`` (in ``op``'s order; -1 for none), with the attributes ``attrs`` kept, inferred
    at ONNX ``opset`` (0: the model's). ``out``: the output's element type, ``"input"`` (the
    first input's: a quantized result), ``"float"`` or ``"zero_point"`` (input ``zp``'s when
    given, else uint8)."""

    op: str
    inputs: tuple[int, ...]
    attrs: tuple[str, ...] = ()
    out: str = "input"
    zp: int = -1
    opset: int = 0
    channels_last: bool = False  # the attribute channels_last=1 means NHWC


_POOL = ("kernel_shape", "pads", "strides", "auto_pad", "ceil_mode", "count_include_pad")
_CONV = ("kernel_shape", "pads", "strides", "auto_pad", "dilations", "group")
#: onnxruntime's contrib operators (``com.microsoft``, onnxruntime's
#: ``docs/ContribOperators.md``) whose shapes follow a float ONNX operator's.
CONTRIB: dict[str, Counterpart] = {
    "QLinearAdd": Counterpart("Add", (0, 3)),
    "QLinearMul": Counterpart("Mul", (0, 3)),
    "QLinearGlobalAveragePool": Counterpart("GlobalAveragePool", (0,), channels_last=True),
    "QLinearAveragePool": Counterpart("AveragePool", (0,), _POOL, channels_last=True),
    "QLinearSigmoid": Counterpart("Identity", (0,)),
    "QLinearLeakyRelu": Counterpart("Identity", (0,)),
    "QLinearSoftmax": Counterpart("Identity", (0,)),
    "QLinearReduceMean": Counterpart("ReduceMean", (0,), ("axes", "keepdims"), opset=13),
    "QLinearConv": Counterpart("Conv", (0, 3, 8), _CONV, channels_last=True),
    "QLinearConvTranspose": Counterpart(
        "ConvTranspose", (0, 3, 8), (*_CONV, "output_padding", "output_shape")),
    "QGemm": Counterpart("Gemm", (0, 3, 6), ("transA", "transB", "alpha"), out="zero_point",
                         zp=8),
    "QuantizeLinear": Counterpart("Identity", (0,), out="zero_point", zp=2),
    "DequantizeLinear": Counterpart("Identity", (0,), out="float"),
    "DynamicQuantizeMatMul": Counterpart("MatMul", (0, 1), out="float"),
    "MatMulIntegerToFloat": Counterpart("MatMul", (0, 1), out="float"),
    "FusedConv": Counterpart("Conv", (0, 1, 2), _CONV),
    "FusedGemm": Counterpart("Gemm", (0, 1, 2), ("transA", "transB", "alpha", "beta")),
    "NhwcMaxPool": Counterpart("MaxPool", (0,), _POOL, channels_last=True),
}
# QLinearConcat(Y_scale, Y_zero_point, X1, X1_scale, X1_zero_point, X2, ...): its own rule.
QLINEAR_CONCAT = "QLinearConcat"


@dataclass
class Inferred:
    """What ``infer`` found beyond ONNX's own inference."""

    model: Any  # onnx.ModelProto with every computed shape in value_info
    values: dict[str, Any] = field(default_factory=dict)  # value -> numpy array (folded)
    stale: list[tuple[str, str, str]] = field(default_factory=list)  # (value, stated, computed)


def infer(model: Any, opset: int, order: list[int], label: str) -> Inferred:
    """``model``'s shapes computed from its inputs (see the module docstring), walking its
    nodes in ``order`` (indices, topological); ``ModelError`` (one line) when ONNX's
    inference rejects the model."""
    import onnx

    graph = model.graph
    stated = _stated(graph)
    del graph.value_info[:]
    for out in graph.output:
        if out.type.HasField("tensor_type"):
            out.type.tensor_type.ClearField("shape")
    try:
        model = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False,
                                                  data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError,
            ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"{label}: ONNX shape inference failed: {shown(first, 200)}"
                         ) from None
    out = Inferred(model=model)
    _Pass(model, opset, out).run(order)
    _restore(model.graph, stated, out)
    return out


def _stated(graph: Any) -> dict[str, Any]:
    """The inner and output types the model states, by value."""
    found = {}
    for vi in (*graph.value_info, *graph.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            found[vi.name] = _copy(vi.type)
    return found


def _copy(t: Any) -> Any:
    import onnx

    c = onnx.TypeProto()
    c.CopyFrom(t)
    return c


def dims(t: Any) -> tuple[int | None, ...] | None:
    """A tensor type's dimensions (None where unknown), or None without a shape."""
    if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None
                 for d in t.tensor_type.shape.dim)


def _known(t: Any) -> bool:
    d = dims(t)
    return d is not None and all(x is not None for x in d)


def _show(d: tuple[int | None, ...] | None) -> str:
    return "?" if d is None else "x".join("?" if x is None else str(x) for x in d) or "scalar"


def _restore(graph: Any, stated: dict[str, Any], out: Inferred) -> None:
    """Where the computed shape is unknown, keep the model's stated one, unless stated shapes
    were found stale elsewhere (then none is trusted); count stated shapes that differ."""
    computed = {vi.name: vi for vi in (*graph.value_info, *graph.output)}
    for name, t in stated.items():
        vi = computed.get(name)
        if vi is not None and _known(vi.type) and _known(t) and dims(vi.type) != dims(t):
            out.stale.append((name, _show(dims(t)), _show(dims(vi.type))))
    if out.stale:
        return
    for name, t in stated.items():
        vi = computed.get(name)
        if vi is None:
            vi = graph.value_info.add()
            vi.name = name
            vi.type.CopyFrom(t)
        elif not _known(vi.type) and _known(t):
            vi.type.CopyFrom(t)


class _Pass:
    """One walk over the nodes in graph order: fold small values, infer again what ONNX left
    unknown (see the module docstring)."""

    def __init__(self, model: Any, opset: int, out: Inferred) -> None:
        import onnx

        self.model, self.opset, self.out = model, opset, out
        g = model.graph
        self.types: dict[str, Any] = {}
        self.infos: dict[str, Any] = {}
        for vi in (*g.input, *g.value_info, *g.output):
            self.types[vi.name] = vi.type
            self.infos[vi.name] = vi
        self.values = out.values
        for t in g.initializer:
            tt = onnx.TypeProto()
            tt.tensor_type.elem_type = t.data_type
            tt.tensor_type.shape.dim.extend(
                onnx.TensorShapeProto.Dimension(dim_value=d) for d in t.dims)
            self.types[t.name] = tt
            v = _tensor_value(t)
            if v is not None:
                self.values[t.name] = v
        # (an initializer that is also a graph input is read as its value, as graph.load's
        # constants do: IR 3 models list every initializer as an input)
        self.imports = list(model.opset_import)
        self.evaluators: dict[tuple[Any, ...], Any] = {}

    def run(self, order: list[int]) -> None:
        nodes = self.model.graph.node
        # the values a shape may depend on: every input of a node whose outputs' shapes are
        # not all known, and back through their producers (only those are folded, so a model
        # ONNX infers whole costs nothing more)
        self.needed: set[str] = set()
        for node in (nodes[i] for i in reversed(order)):
            if any(o in self.needed or (o and not _known(self.types.get(o)))
                   for o in node.output):
                self.needed.update(v for v in node.input if v)
        if not self.needed:
            return
        for node in (nodes[i] for i in order):
            if any(a.g.node or a.graphs for a in node.attribute):
                continue  # If / Loop / Scan: ONNX's inference is all there is
            if any(o in self.needed for o in node.output):
                self._fold(node)
            if not all(_known(self.types.get(o)) for o in node.output if o):
                self._reinfer(node)

    # ---- values ------------------------------------------------------------------------------
    def _fold(self, node: Any) -> None:
        import numpy as np

        if node.domain not in ONNX_DOMAINS or node.op_type in NOT_FOLDABLE:
            return
        if node.op_type in ("Shape", "Size") and node.input:
            d = dims(self.types.get(node.input[0]))
            if d is None or any(x is None for x in d):
                return
            if node.op_type == "Size":
                self._set_value(node.output[0], np.array(int(np.prod(d)), dtype=np.int64))
                return
            a = {x.name: x.i for x in node.attribute}
            shape = np.array(d, dtype=np.int64)
            start, end = a.get("start", 0), a.get("end", len(d))
            self._set_value(node.output[0], shape[start:end] if "end" in a else shape[start:])
            return
        if node.op_type == "Constant":
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:  # its tensor, unless ``reader`` stripped its payload
                v = _tensor_value(value)
                if v is not None and node.output:
                    self._set_value(node.output[0], v)
                return
        inputs = [v for v in node.input if v]
        if not all(v in self.values for v in inputs) or not node.output:
            return
        if node.op_type != "Constant" and not inputs:
            return
        # outputs must be small: infer their shapes from the values first
        self._reinfer(node)
        for o in node.output:
            d = dims(self.types.get(o))
            if o and (d is None or any(x is None for x in d)
                      or int(np.prod(d)) > MAX_VALUE_ELEMENTS):
                return
        try:
            ev, names = self._evaluator(node)
            results = ev.run(None, {k: self.values[v] for k, v in zip(names, node.input,
                                                                      strict=True) if v})
        except Exception:  # noqa: BLE001 - a node the reference cannot run stays unfolded
            return
        for o, r in zip(node.output, results, strict=False):
            if o and r is not None:
                r = np.asarray(r)
                if r.size <= MAX_VALUE_ELEMENTS:
                    self._set_value(o, r)

    def _evaluator(self, node: Any) -> tuple[Any, list[str]]:
        """``onnx.reference``'s evaluator of ``node`` with its inputs renamed ``i0, i1, ...``
        (and those names), one per operator and attributes: exporters repeat the same shape
        arithmetic node many times."""
        import onnx
        from onnx.reference import ReferenceEvaluator

        names = [f"i{k}" if v else "" for k, v in enumerate(node.input)]
        key = (node.op_type, tuple(names), len(node.output),
               tuple(a.SerializeToString() for a in node.attribute))
        ev = self.evaluators.get(key)
        if ev is None:
            canon = onnx.helper.make_node(node.op_type, names,
                                          [f"o{k}" for k in range(len(node.output))])
            canon.attribute.extend(node.attribute)
            ev = self.evaluators[key] = ReferenceEvaluator(canon, opsets={"": self.opset})
        return ev, names

    def _set_value(self, name: str, value: Any) -> None:
        import onnx

        try:
            elem = onnx.helper.np_dtype_to_tensor_dtype(value.dtype)
        except (KeyError, TypeError, ValueError):
            return  # a value no ONNX tensor type holds (strings as objects): not a shape
        self.values[name] = value
        t = onnx.helper.make_tensor_type_proto(elem, list(value.shape))
        if not _known(self.types.get(name)):
            self._set_type(name, t)

    # ---- shapes ------------------------------------------------------------------------------
    def _reinfer(self, node: Any) -> None:
        if node.domain == MICROSOFT and node.op_type == QLINEAR_CONCAT:
            self._concat(node)
            return
        if node.domain == MICROSOFT and node.op_type in CONTRIB:
            self._contrib(node, CONTRIB[node.op_type])
            return
        if node.domain not in ONNX_DOMAINS:
            return
        found = self._infer_node(node, self.imports)
        for o, t in found.items():
            if not _known(self.types.get(o)) and _better(t, self.types.get(o)):
                self._set_type(o, t)

    def _infer_node(self, node: Any, imports: list[Any]) -> dict[str, Any]:
        import onnx

        try:
            schema = onnx.defs.get_schema(node.op_type, self._version(imports, node.domain),
                                          node.domain)
            types = {v: self.types[v] for v in node.input if v and v in self.types}
            if len(types) != len({v for v in node.input if v}):
                return {}
            data = {v: onnx.numpy_helper.from_array(self.values[v], v)
                    for v in node.input if v in self.values}
            return onnx.shape_inference.infer_node_outputs(
                schema, node, types, data, opset_imports=imports,
                ir_version=self.model.ir_version)
        except Exception:  # noqa: BLE001 - ONNX cannot infer it: the shape stays unknown
            return {}

    def _version(self, imports: list[Any], domain: str) -> int:
        for o in imports:
            if o.domain in ((domain,) if domain not in ONNX_DOMAINS else ONNX_DOMAINS):
                return o.version
        return self.opset

    def _contrib(self, node: Any, cp: Counterpart) -> None:
        """A ``com.microsoft`` node inferred as its float counterpart ``cp``."""
        import onnx

        a = {x.name: x for x in node.attribute}
        last = bool(cp.channels_last and "channels_last" in a and a["channels_last"].i)
        names = [node.input[i] if 0 <= i < len(node.input) else "" for i in cp.inputs]
        while names and not names[-1]:
            names.pop()
        if not names or not all(v in self.types for v in names if v):
            return
        saved = {v: self.types[v] for v in names if v}
        proxy = {}
        for k, v in enumerate(names):
            if not v:
                continue
            t = _copy(saved[v])
            if t.HasField("tensor_type"):
                t.tensor_type.elem_type = onnx.TensorProto.FLOAT
                if last and k == 0:
                    _to_channels_first(t)
            proxy[v] = t
        float_node = onnx.helper.make_node(cp.op, names, [node.output[0]])
        float_node.attribute.extend(a[k] for k in cp.attrs if k in a)
        imports = ([onnx.helper.make_opsetid("", cp.opset)] if cp.opset else self.imports)
        self.types.update(proxy)
        try:
            found = self._infer_node(float_node, imports)
        finally:
            self.types.update(saved)
        t = found.get(node.output[0])
        if t is None or not t.HasField("tensor_type"):
            return
        if last:
            _to_channels_last(t)
        t.tensor_type.elem_type = self._out_type(node, cp)
        if not _known(self.types.get(node.output[0])) and _better(t, self.types.get(
                node.output[0])):
            self._set_type(node.output[0], t)

    def _out_type(self, node: Any, cp: Counterpart) -> int:
        import onnx

        if cp.out == "float":
            return onnx.TensorProto.FLOAT
        if cp.out == "zero_point":
            if len(node.input) > cp.zp and node.input[cp.zp] in self.types:
                return self.types[node.input[cp.zp]].tensor_type.elem_type
            if cp.op == "Gemm" and (len(node.input) <= 7 or not node.input[7]):
                return onnx.TensorProto.FLOAT  # QGemm without y_scale: a float result
            return onnx.TensorProto.UINT8
        return self.types[node.input[0]].tensor_type.elem_type

    def _concat(self, node: Any) -> None:
        """``QLinearConcat``: ``Concat`` of inputs 2, 5, 8, ... along ``axis``."""
        import onnx

        xs = list(node.input[2::3])
        if not xs or not all(v in self.types for v in xs):
            return
        float_node = onnx.helper.make_node("Concat", xs, [node.output[0]])
        float_node.attribute.extend(a for a in node.attribute if a.name == "axis")
        found = self._infer_node(float_node, self.imports)
        t = found.get(node.output[0])
        if t is not None and not _known(self.types.get(node.output[0])):
            self._set_type(node.output[0], t)

    def _set_type(self, name: str, t: Any) -> None:
        vi = self.infos.get(name)
        if vi is None:
            vi = self.model.graph.value_info.add()
            vi.name = name
            self.infos[name] = vi
        vi.type.CopyFrom(t)
        self.types[name] = vi.type


def _better(new: Any, old: Any) -> bool:
    """Whether type ``new`` says more about the shape than ``old``."""
    dn, do = dims(new), dims(old)
    if dn is None:
        return False
    if do is None:
        return True
    return sum(x is not None for x in dn) > sum(x is not None for x in do)


def _to_channels_first(t: Any) -> None:
    dim = t.tensor_type.shape.dim
    if len(dim) >= 3:
        last = _copy_dim(dim[len(dim) - 1])
        rest = [_copy_dim(d) for d in dim[1:len(dim) - 1]]
        for k, d in enumerate([last, *rest], 1):
            dim[k].CopyFrom(d)


def _to_channels_last(t: Any) -> None:
    dim = t.tensor_type.shape.dim
    if len(dim) >= 3:
        c = _copy_dim(dim[1])
        rest = [_copy_dim(d) for d in dim[2:]]
        for k, d in enumerate([*rest, c], 1):
            dim[k].CopyFrom(d)


def _copy_dim(d: Any) -> Any:
    import onnx

    c = onnx.TensorShapeProto.Dimension()
    c.CopyFrom(d)
    return c


def _tensor_value(t: Any) -> Any:
    """The values of initializer ``t`` when the model holds them (not stripped by ``reader``,
    not external) and they are few; else None."""
    import numpy as np
    import onnx

    if t.data_location == onnx.TensorProto.EXTERNAL or t.data_type in (
            onnx.TensorProto.STRING, onnx.TensorProto.UNDEFINED):
        return None
    n = int(np.prod(t.dims)) if t.dims else 1
    if n > MAX_VALUE_ELEMENTS:
        return None
    if n > 0 and not (t.raw_data or t.float_data or t.int32_data or t.int64_data
                      or t.double_data or t.uint64_data):
        return None  # a weight whose payload ``reader`` skipped
    try:
        return onnx.numpy_helper.to_array(t)
    except (ValueError, TypeError):
        return None
