"""An ONNX model as a vtatune network: its VTA layers (identical ones merged, with counts) and
everything that stays on the host.

Every node of the model is one of:

- a **layer** VTA runs (``rules``): layers of one shape are one network layer whose ``count``
  is how many nodes have that shape (each node runs once per inference);
- **folded** into a layer: the ``QuantizeLinear``/``DequantizeLinear`` of an int8 model in
  ONNX's QDQ form around a layer (a ``DequantizeLinear`` all of whose readers are layers, a
  ``QuantizeLinear`` of a layer's output: VTA takes int8 in and requantizes its accumulator
  with its shift and clip), and nodes computed from constants only (a weight's
  ``DequantizeLinear``, a ``Constant``): they run once, when the model is loaded;
- a **host operator**: everything else (pooling, additions, activations, normalization,
  reshapes, ...), and a node of a kind VTA runs that this one cannot, with the reason.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtatune.errors import ModelError
from vtatune.escaping import shown
from vtatune.models import rules
from vtatune.models.graph import MAX_BATCH, ModelGraph, load
from vtatune.networks.network import NAME_PATTERN, Layer, Network
from vtatune.workloads.base import Workload
from vtatune.workloads.registry import shape_text  # noqa: F401 - its home was here

QUANTIZE, DEQUANTIZE = "QuantizeLinear", "DequantizeLinear"
#: Longest layer or network name (``networks.network.NAME_PATTERN``).
NAME_CHARS = 64


@dataclass(frozen=True)
class ImportedLayer:
    """A network layer and the ONNX nodes it came from (one per run)."""

    name: str
    workload: Workload
    nodes: tuple[str, ...]
    folded: tuple[str, ...]  # Q/DQ nodes folded into it

    @property
    def count(self) -> int:
        return len(self.nodes)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.workload.kind,
                "shape": shape_text(self.workload), "count": self.count}


@dataclass(frozen=True)
class HostOp:
    """Nodes of one operator (and one reason) that stay on the host."""

    op: str
    nodes: tuple[str, ...]
    reason: str | None = None  # set when VTA runs this kind of node but not this one

    @property
    def count(self) -> int:
        return len(self.nodes)

    def describe(self) -> dict[str, Any]:
        return {"op": self.op, "count": self.count, "reason": self.reason,
                "nodes": list(self.nodes)}


@dataclass(frozen=True)
class ImportedModel:
    """What ``import_model`` read: the layers, the host operators, the folded nodes."""

    name: str
    graph: ModelGraph
    layers: tuple[ImportedLayer, ...]
    host_ops: tuple[HostOp, ...]
    folded: tuple[tuple[str, int], ...]  # (op, count) folded into layers or constants

    @property
    def fingerprint(self) -> str:
        return self.graph.fingerprint

    @property
    def network(self) -> Network:
        return Network(name=self.name, description=self.description,
                       layers=tuple(Layer(la.name, la.workload, la.count)
                                    for la in self.layers))

    @property
    def description(self) -> str:
        return (f"imported from {self.graph.path.name} (ONNX opset {self.graph.opset}, "
                f"{self.graph.batch_note}; model sha256 {self.fingerprint[:16]})")

    def describe(self) -> dict[str, Any]:
        """The ``--json`` object of ``vtatune import``."""
        g = self.graph
        return {"network": self.name, "model": str(g.path), "fingerprint": self.fingerprint,
                "opset": g.opset, "batch": g.batch, "batch_note": g.batch_note,
                "nodes": len(g.nodes), "file_bytes": g.file_bytes,
                "external_files": g.external_files,
                "layers": [la.describe() for la in self.layers],
                "invocations": sum(la.count for la in self.layers),
                "macs": sum(la.count * la.workload.macs for la in self.layers),
                "host_ops": [h.describe() for h in self.host_ops],
                "folded": [{"op": op, "count": n} for op, n in self.folded]}


def import_model(path: str | Path, *, batch: int | None = None, name: str | None = None
                 ) -> ImportedModel:
    """Read the ONNX model at ``path`` as a network (see the module docstring); ``ModelError``
    (one line) for a model that cannot be read or that has no layer VTA can run."""

    if batch is not None and not 1 <= batch <= MAX_BATCH:
        raise ModelError(f"--batch must be from 1 to {MAX_BATCH:,}, got {batch}")
    path = Path(path)
    if name is not None and not NAME_PATTERN.fullmatch(name):
        raise ModelError(f"--name {shown(name, 80)} must be 1-64 letters, digits, '_', '.' or "
                         "'-' (starting with a letter or digit)")
    g = load(path, batch)
    found: dict[int, Workload] = {}
    refused: dict[int, str] = {}
    for i, node in enumerate(g.nodes):
        r = rules.read(node, g)
        if isinstance(r, rules.Refusal):
            refused[i] = r.reason
        elif r is not None:
            found[i] = r
    if not found:
        why = ""
        if refused:
            i, reason = next(iter(refused.items()))
            why = (f"; {len(refused)} node(s) of a kind VTA runs cannot run there, e.g. "
                   f"{shown(g.node_name(i), 60)}: {reason}")
        raise ModelError(f"{shown(str(path))} has no layer VTA can run (VTA runs "
                         f"{', '.join(rules.recognized())}){why}")
    folded_into = _fold_qdq(g, set(found))
    by_sig: dict[str, list[int]] = {}
    for i, wl in found.items():
        by_sig.setdefault(wl.signature, []).append(i)
    names = _Names()
    layers = []
    for idx in by_sig.values():
        wl = found[idx[0]]
        nodes = tuple(g.node_name(i) for i in idx)
        folded = tuple(g.node_name(j) for j, owner in folded_into.items() if owner in idx)
        layers.append(ImportedLayer(names.take(nodes[0], wl.kind), wl, nodes, folded))
    host: dict[tuple[str, str | None], list[str]] = {}
    const: Counter[str] = Counter()
    for i, node in enumerate(g.nodes):
        if i in found:
            continue
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        if i in folded_into:
            const[op] += 1
        elif i not in refused and node.output and all(
                not v or v in g.constants for v in node.output):
            const[op] += 1
        else:
            host.setdefault((op, refused.get(i)), []).append(g.node_name(i))
    host_ops = sorted((HostOp(op, tuple(nodes), reason) for (op, reason), nodes in host.items()),
                      key=lambda h: (h.reason is None, -h.count, h.op))
    net_name = name or _network_name(path)
    return ImportedModel(name=net_name, graph=g, layers=tuple(layers),
                         host_ops=tuple(host_ops), folded=tuple(sorted(const.items())))


def _fold_qdq(g: ModelGraph, layers: set[int]) -> dict[int, int]:
    """Q/DQ nodes folded into a layer: node index -> the layer's index."""
    out: dict[int, int] = {}
    for i in layers:
        node = g.nodes[i]
        for v in node.input:  # DequantizeLinear read only by layers
            j = g.producer.get(v)
            if j is None or g.nodes[j].op_type != DEQUANTIZE or v in g.constants:
                continue
            readers = g.consumers.get(g.nodes[j].output[0], ())
            if readers and all(r in layers for r in readers):
                out.setdefault(j, i)
                q = g.producer.get(g.nodes[j].input[0])
                if q is not None and g.nodes[q].op_type == QUANTIZE and all(
                        r in out or r == j for r in g.consumers.get(g.nodes[q].output[0], ())):
                    out.setdefault(q, i)
        for v in node.output:  # QuantizeLinear of the layer's output
            for j in g.consumers.get(v, ()):
                if g.nodes[j].op_type == QUANTIZE:
                    out.setdefault(j, i)
    return out


class _Names:
    """Layer names from ONNX node names: valid (``NAME_PATTERN``) and unique."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, node_name: str, kind: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.\-]+", "_", node_name).strip("_.-")
        if not base or not base[0].isalnum():
            base = kind
        base = base[:NAME_CHARS]
        name, k = base, 2
        while name in self.used:
            tail = f"-{k}"
            name = base[:NAME_CHARS - len(tail)] + tail
            k += 1
        self.used.add(name)
        return name


def _network_name(path: Path) -> str:
    base = re.sub(r"[^A-Za-z0-9_.\-]+", "_", path.stem).strip("_.-")[:NAME_CHARS]
    return base if base and NAME_PATTERN.fullmatch(base) else "model"
