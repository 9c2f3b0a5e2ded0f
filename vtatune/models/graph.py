"""An ONNX model as vtatune reads it: checked, its batch fixed, every value's shape inferred.

``load`` reads the file without its weights (``reader``), refuses what it cannot read (an IR
version or opset newer than the installed ``onnx`` knows, a graph whose values are read before
anything produces them or that has a cycle, an external data file that is missing), fixes a
batch dimension that is not fixed to ``--batch``, and computes every value's shape from the
inputs (``shapes``: ONNX shape inference, then shape arithmetic folded on constants and
onnxruntime's contrib operators inferred as their float counterparts). Every problem is one
``ModelError`` line.

External data (weights saved beside the model, ``save_as_external_data=True``) is never read
for the weights: a tensor's shape is in the model. Each external file that a tensor used by the
graph points to must exist beside the model (inside its folder) and be long enough for the
tensor's bytes, checked with ``stat`` only: a model whose weights are missing cannot be
deployed, so importing it is an error. A tensor no node reads is not checked. Values are read
from an external file only for tensors of at most ``reader.KEEP_BYTES`` bytes (a target shape
saved externally), which shape inference may need.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtatune.errors import ModelError
from vtatune.escaping import shown
from vtatune.models import reader, shapes
from vtatune.models.shapes import NOT_FOLDABLE, ONNX_DOMAINS

#: Largest batch ``--batch`` takes.
MAX_BATCH = 4096

Shape = tuple[int | None, ...]


@dataclass(frozen=True)
class ModelGraph:
    """A loaded model: its nodes in execution order and what is known about every value."""

    path: Path
    model: Any  # onnx.ModelProto, shapes inferred, weights left out
    fingerprint: str  # sha256 of the model without its weight payloads (``reader``)
    file_bytes: int
    opset: int
    batch: int
    batch_note: str  # how the batch was decided, for the output
    nodes: tuple[Any, ...]  # onnx.NodeProto, topologically ordered
    shapes: Mapping[str, Shape | None]
    dtypes: Mapping[str, int]
    constants: frozenset[str]  # values known when the model is loaded
    initializers: frozenset[str]
    consumers: Mapping[str, tuple[int, ...]]  # value -> indices into ``nodes``
    producer: Mapping[str, int]
    external_files: int

    def node_name(self, i: int) -> str:
        node = self.nodes[i]
        return node.name or f"{node.op_type}#{i}"

    def shape(self, value: str) -> Shape | None:
        return self.shapes.get(value)


def load(path: str | Path, batch: int | None = None) -> ModelGraph:
    """Read, check and shape-infer the ONNX model at ``path`` (see the module docstring)."""
    path = Path(path)
    label = shown(str(path))
    stripped = reader.read(path)
    model = reader.parse(stripped, path)
    opset = _check_versions(model, label)
    graph = model.graph
    if not graph.node:
        raise ModelError(f"{label} has no graph nodes: not an ONNX model, or an empty one")
    order = _topological(graph, label)
    nodes = [graph.node[i] for i in order]
    used = {v for n in nodes for v in n.input if v} | {o.name for o in graph.output}
    external = _check_external(graph, path, used, label)
    batch, note = _fix_batch(graph, batch, label)
    inferred = shapes.infer(model, opset, order, label)
    model = inferred.model
    graph = model.graph
    if inferred.stale:
        name, was, now = inferred.stale[0]
        note += (f"; {len(inferred.stale)} inner shape(s) the model states differ from those "
                 f"computed from its input (e.g. {shown(name, 40)}: {was}, computed {now}) "
                 "and were recomputed")
    shape_of, dtypes = _shapes(graph)
    initializers = frozenset(t.name for t in graph.initializer) | frozenset(
        s.values.name for s in graph.sparse_initializer)
    consumers: dict[str, list[int]] = {}
    producer: dict[str, int] = {}
    for i, n in enumerate(nodes):
        for v in n.input:
            if v:
                consumers.setdefault(v, []).append(i)
        for v in n.output:
            if v:
                producer[v] = i
    constants = set(initializers)
    for n in nodes:
        if n.op_type == "Constant" or (
                n.input and n.op_type not in NOT_FOLDABLE
                and all(not v or v in constants for v in n.input)
                and not any(a.g.node or a.graphs for a in n.attribute)):
            constants.update(v for v in n.output if v)
    constants.update(inferred.values)  # shape arithmetic folded: values known at load
    # a graph input is never constant, even with an initializer of its name (a default value)
    constants -= {i.name for i in graph.input if i.name not in initializers}
    return ModelGraph(
        path=path, model=model, fingerprint=stripped.fingerprint,
        file_bytes=stripped.file_bytes, opset=opset, batch=batch, batch_note=note,
        nodes=tuple(nodes), shapes=shape_of, dtypes=dtypes, constants=frozenset(constants),
        initializers=initializers,
        consumers={k: tuple(v) for k, v in consumers.items()}, producer=producer,
        external_files=external)


def _check_versions(model: Any, label: str) -> int:
    import onnx

    if model.ir_version <= 0 or not model.HasField("graph"):
        raise ModelError(f"{label} is not an ONNX model (no IR version or no graph)")
    if model.ir_version > onnx.IR_VERSION:
        raise ModelError(f"{label} has IR version {model.ir_version}, newer than the installed "
                         f"onnx {onnx.__version__} reads (up to {onnx.IR_VERSION}); upgrade "
                         "onnx or export the model for an older IR version")
    newest = onnx.defs.onnx_opset_version()
    opsets = [o.version for o in model.opset_import if o.domain in ONNX_DOMAINS]
    if not opsets:
        if model.ir_version >= 3:
            raise ModelError(f"{label} imports no opset of the ONNX operators (opset_import "
                             "has no entry for domain ''): its operators cannot be read")
        return 1  # IR 1-2 predate opset_import: opset 1
    opset = max(opsets)
    if not 1 <= opset <= newest:
        raise ModelError(f"{label} uses opset {opset} of the ONNX operators; the installed "
                         f"onnx {onnx.__version__} reads opsets 1 to {newest}")
    return opset


def _topological(graph: Any, label: str) -> list[int]:
    """The graph's nodes (indices) in an order where every value is produced before it is
    read; ``ModelError`` for a value nothing produces, a value produced twice, or a cycle."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {
        s.values.name for s in graph.sparse_initializer} | {""}
    producer: dict[str, int] = {}
    for i, n in enumerate(graph.node):
        for v in n.output:
            if not v:
                continue
            if v in producer or v in defined - {""}:
                raise ModelError(f"{label}: value {shown(v, 60)} is produced twice (by node "
                                 f"{shown(_name(n, i), 60)} and before it): not a valid graph")
            producer[v] = i
    waiting = [0] * len(graph.node)
    readers: dict[int, list[int]] = {}
    for i, n in enumerate(graph.node):
        for v in set(n.input):
            if v in defined:
                continue
            if v not in producer:
                raise ModelError(f"{label}: node {shown(_name(n, i), 60)} reads "
                                 f"{shown(v, 60)}, which no node, input or initializer "
                                 "produces: not a valid graph")
            waiting[i] += 1
            readers.setdefault(producer[v], []).append(i)
    ready = [i for i, w in enumerate(waiting) if w == 0]
    order: list[int] = []
    while ready:
        i = ready.pop()
        order.append(i)
        for j in readers.get(i, ()):
            waiting[j] -= 1
            if waiting[j] == 0:
                ready.append(j)
    if len(order) != len(graph.node):
        stuck = next(i for i, w in enumerate(waiting) if w > 0)
        raise ModelError(f"{label}: the graph has a cycle (node "
                         f"{shown(_name(graph.node[stuck], stuck), 60)} waits on its own "
                         "output): not a valid ONNX graph")
    # graph order when it is topological (as ONNX requires), else the order found
    seen: set[str] = set()
    for n in graph.node:
        if any(v in producer and v not in seen for v in n.input):
            return order
        seen.update(n.output)
    return list(range(len(graph.node)))


def _name(node: Any, i: int) -> str:
    return node.name or f"{node.op_type}#{i}"


def _check_external(graph: Any, path: Path, used: set[str], label: str) -> int:
    """Check the external data files of the tensors the graph uses (``stat`` only); read the
    values of the small ones. Returns how many distinct files the model points to."""
    import onnx

    folder = path.resolve().parent
    files: set[Path] = set()
    for t in graph.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        where = f"{label}: initializer {shown(t.name, 60)}"
        location = info.get("location", "")
        rel = Path(location)
        if not location or rel.is_absolute() or ".." in rel.parts:
            raise ModelError(f"{where} points to external data {shown(location, 80)}: "
                             "not a file name inside the model's folder")
        target = (folder / rel)
        try:
            offset = int(info.get("offset", "0"))
            length = int(info["length"]) if "length" in info else None
        except ValueError:
            raise ModelError(f"{where}: external data offset or length is not a number"
                             ) from None
        if offset < 0 or (length is not None and length < 0):
            raise ModelError(f"{where}: external data offset or length is negative")
        if t.name not in used:
            continue  # not needed: nothing reads it
        try:
            st = os.stat(target)
            resolved = target.resolve()
        except (OSError, ValueError):
            raise ModelError(f"{where} keeps its data in {shown(location, 80)}, which is "
                             f"missing (expected at {shown(str(target), 200)})") from None
        if not stat.S_ISREG(st.st_mode):
            raise ModelError(f"{where}: external data {shown(location, 80)} is not a regular "
                             "file")
        if folder not in resolved.parents:
            raise ModelError(f"{where}: external data {shown(location, 80)} leads outside the "
                             "model's folder")
        need = _nbytes(t)
        if length is None:
            length = need if need is not None else st.st_size - offset
        if offset + length > st.st_size:
            raise ModelError(f"{where}: external data {shown(location, 80)} holds "
                             f"{st.st_size:,} bytes, the tensor needs bytes {offset:,} to "
                             f"{offset + length:,}: the file is truncated or not this model's")
        files.add(resolved)
        if need is not None and need <= reader.KEEP_BYTES and length == need:
            with open(resolved, "rb") as f:
                f.seek(offset)
                t.raw_data = f.read(length)
            t.data_location = onnx.TensorProto.DEFAULT
            del t.external_data[:]
    return len(files)


def _nbytes(t: Any) -> int | None:
    import onnx

    try:
        size = onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    except (KeyError, TypeError, ValueError):
        return None
    if t.data_type == onnx.TensorProto.STRING:
        return None
    n = 1
    for d in t.dims:
        n *= d
    return n * size


def _fix_batch(graph: Any, batch: int | None, label: str) -> tuple[int, str]:
    """Set the first dimension of every graph input that is not fixed to ``batch`` (default
    1); refuse any other dimension that is not fixed."""
    inits = {t.name for t in graph.initializer}
    free: list[str] = []
    fixed: list[tuple[str, int]] = []
    for inp in graph.input:
        if inp.name in inits or not inp.type.HasField("tensor_type"):
            continue
        tt = inp.type.tensor_type
        if not tt.HasField("shape"):
            raise ModelError(f"{label}: input {shown(inp.name, 60)} has no shape: vtatune "
                             "needs every input's rank and sizes (only the batch may be "
                             "free)")
        for axis, dim in enumerate(tt.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                if axis == 0:
                    fixed.append((inp.name, dim.dim_value))
                continue
            what = shown(dim.dim_param, 40) if dim.dim_param else "unnamed"
            if axis != 0:
                raise ModelError(f"{label}: input {shown(inp.name, 60)} axis {axis} ({what}) "
                                 "is not fixed; only the batch (axis 0) takes --batch: export "
                                 "the model with fixed input sizes")
            free.append(f"{shown(inp.name, 60)} axis 0 ({what})")
            dim.Clear()
            dim.dim_value = batch or 1
    if free:
        n = batch or 1
        return n, (f"batch {n}" + (" (--batch)" if batch else " (the default; --batch N)")
                   + f": {', '.join(free)} not fixed in the model")
    sizes = sorted({b for _, b in fixed})
    if batch is not None and sizes and sizes != [batch]:
        raise ModelError(f"{label} has a fixed batch of {', '.join(map(str, sizes))} "
                         f"(input {shown(fixed[0][0], 60)}); --batch {batch} applies to a "
                         "model whose batch is not fixed")
    n = sizes[0] if len(sizes) == 1 else 1
    return n, f"batch {n} (fixed in the model)"


def _shapes(graph: Any) -> tuple[dict[str, Shape | None], dict[str, int]]:
    shapes: dict[str, Shape | None] = {}
    dtypes: dict[str, int] = {}
    for vi in (*graph.input, *graph.value_info, *graph.output):
        if not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        dtypes[vi.name] = tt.elem_type
        if tt.HasField("shape"):
            shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else None
                                    for d in tt.shape.dim)
        else:
            shapes.setdefault(vi.name, None)
    for t in graph.initializer:
        shapes[t.name] = tuple(t.dims)
        dtypes[t.name] = t.data_type
    return shapes, dtypes


def dims_of(shape: Sequence[int | None] | None) -> tuple[int, ...] | None:
    """``shape`` when every dimension is known and positive, else None."""
    if shape is None or any(d is None or d <= 0 for d in shape):
        return None
    return tuple(int(d) for d in shape)  # type: ignore[arg-type]
