"""A network: named layers (any registered operator shape), each with how often it runs.

A network is what an accelerator is built for: it runs every layer, so its latency is the
count-weighted sum of the layers' latencies. Layers are read from a ``[network]`` table::

    [network]
    name = "resnet18"

    [[network.layers]]
    name = "C2"                      # unique; letters, digits, ``_ . -`` (used in file names)
    kind = "conv2d"                  # any workload kind ``vtatune.workloads.parse`` knows
    shape = "1,64,56,56,64,3,3,1,1"  # as ``--shape`` (or a list of integers)
    count = 4                        # times the network runs this layer (>= 1)

Operators that do not run on VTA (pooling, residual additions, activations, ...) may be
listed as host operators; their time is not in the network's latency, and ``show`` and
``report`` say so::

    [[network.host_ops]]
    op = "MaxPool"                   # an operator name (the same characters as a layer name)
    count = 1                        # times the network runs it (>= 1)
    shapes = ["1x64x112x112"]        # optional: its input tensor sizes, where known
    reason = "..."                   # optional: why a node of a kind VTA runs stays on the host

``layer = "C2"`` may replace ``shape`` for kinds with named layers (``conv2d``: ResNet-18's
C1..C11 from VTA's benchmark table). Layers are parsed through the workload registry, so any
operator it knows can appear in a network file. Validation lists every problem at once.

Two layers of the same shape are the same tuning problem: ``units`` groups them, and both
get the best schedule found for that shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vtatune.errors import ConfigError, UserError
from vtatune.workloads.base import Workload

#: A layer name: used in file names of export bundles and in report labels.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")
#: Most layers a network file may list (ResNet-152 has 155 convolutions).
MAX_LAYERS = 1000
#: Largest count of one layer (a network running a layer more often is a loop, not a file).
MAX_COUNT = 1_000_000
#: Keys of one ``[[network.layers]]`` entry.
LAYER_KEYS = ("name", "kind", "shape", "layer", "count")
#: Keys of the ``[network]`` table.
NETWORK_KEYS = ("name", "description", "layers", "host_ops")
#: Keys of one ``[[network.host_ops]]`` entry.
HOST_OP_KEYS = ("op", "count", "shapes", "reason")
#: A host operator's tensor size: dimensions joined by ``x`` (``1x64x56x56``).
TENSOR_PATTERN = re.compile(r"[0-9]{1,9}(x[0-9]{1,9}){0,7}")
#: Longest reason a host operator's entry may give (characters).
MAX_REASON = 300


@dataclass(frozen=True)
class Layer:
    """One layer of a network: its operator shape and how many times the network runs it."""

    name: str
    workload: Workload
    count: int

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.workload.kind,
                "signature": self.workload.signature, "count": self.count}


@dataclass(frozen=True)
class HostOp:
    """Operators of one kind the network runs on the host, not on VTA: their time is not in
    the network's latency."""

    op: str
    count: int
    shapes: tuple[str, ...] = ()  # tensor sizes, where known
    reason: str = ""

    def describe(self) -> dict[str, Any]:
        return {"op": self.op, "count": self.count, "shapes": list(self.shapes),
                **({"reason": self.reason} if self.reason else {})}

    def text(self) -> str:
        """``MaxPool x1 (1x64x112x112)``: for ``show`` and reports (escape it for a
        terminal or HTML)."""
        sizes = f" ({', '.join(self.shapes)})" if self.shapes else ""
        return f"{self.op} x{self.count}{sizes}" + (f": {self.reason}" if self.reason else "")


@dataclass(frozen=True)
class Unit:
    """Layers of one shape: tuned once (``signature``), counted ``count`` times in all."""

    workload: Workload
    layers: tuple[Layer, ...]

    @property
    def signature(self) -> str:
        return self.workload.signature

    @property
    def count(self) -> int:
        return sum(layer.count for layer in self.layers)

    @property
    def name(self) -> str:
        """The first layer's name (units are reported under it)."""
        return self.layers[0].name


@dataclass(frozen=True)
class Network:
    """A validated network (see the module docstring)."""

    name: str
    layers: tuple[Layer, ...]
    description: str = ""
    #: sha256 of the model the network was imported from (``vtatune.models``), or "".
    fingerprint: str = ""
    #: operators run on the host (not on VTA; not in the latency)
    host_ops: tuple[HostOp, ...] = ()

    @property
    def invocations(self) -> int:
        """Layer runs per inference (the sum of counts)."""
        return sum(layer.count for layer in self.layers)

    @property
    def macs(self) -> int:
        """Multiply-accumulates per inference (count-weighted)."""
        return sum(layer.count * layer.workload.macs for layer in self.layers)

    def units(self) -> tuple[Unit, ...]:
        """Distinct shapes, in order of first appearance."""
        groups: dict[str, list[Layer]] = {}
        for layer in self.layers:
            groups.setdefault(layer.workload.signature, []).append(layer)
        return tuple(Unit(ls[0].workload, tuple(ls)) for ls in groups.values())

    def layer(self, name: str) -> Layer:
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise UserError(f"network {self.name} has no layer {_show(name)} (layers: "
                        f"{', '.join(la.name for la in self.layers)})")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "layers": [layer.describe() for layer in self.layers],
                "invocations": self.invocations, "macs": self.macs,
                **({"fingerprint": self.fingerprint} if self.fingerprint else {}),
                "host_ops": [h.describe() for h in self.host_ops]}


def host_ops_of(network: dict[str, Any] | None) -> list[HostOp]:
    """The host operators a study's stored network (``Network.describe()``) lists; entries
    that do not read as one are left out (a stored study is read, never refused)."""
    out = []
    for h in (network or {}).get("host_ops") or []:
        if isinstance(h, dict) and not _host_op_problems(h):
            out.append(HostOp(h["op"], int(h["count"]), tuple(h.get("shapes") or ()),
                              str(h.get("reason") or "")))
    return out


def from_table(raw: Any, source: str, default_name: str = "network") -> Network:
    """Validate a ``[network]`` table; ``ConfigError`` listing every problem otherwise."""
    problems = table_problems(raw)
    if problems:
        raise ConfigError(source, problems)
    return _build(raw, default_name)


def table_problems(raw: Any) -> list[str]:
    """Every problem of a ``[network]`` table (empty when it is valid)."""
    if not isinstance(raw, dict):
        return ["[network] must be a table with a list of [[network.layers]]"]
    problems = [f"[network] unknown key {k!r} (known: {', '.join(NETWORK_KEYS)})"
                for k in raw if k not in NETWORK_KEYS]
    name = raw.get("name")
    if name is not None and name_problem(name):
        problems.append(f"[network] {name_problem(name)}")
    if not isinstance(raw.get("description", ""), str):
        problems.append("[network] description must be a string")
    layers = raw.get("layers")
    if layers is None or layers == []:
        return problems + ["[network] has no layers (add [[network.layers]] entries with "
                           "name, kind, shape and count)"]
    if not isinstance(layers, list) or not all(isinstance(e, dict) for e in layers):
        return problems + ["[network] layers must be a list of tables ([[network.layers]])"]
    if len(layers) > MAX_LAYERS:
        return problems + [f"[network] has {len(layers)} layers; at most {MAX_LAYERS}"]
    seen: dict[str, int] = {}
    for i, entry in enumerate(layers, 1):
        where = f"layer {i}" + (f" ({_show(entry['name'])})"
                                if isinstance(entry.get("name"), str) else "")
        problems += [f"{where}: {p}" for p in _entry_problems(entry)]
        n = entry.get("name")
        if isinstance(n, str):
            if n in seen:
                problems.append(f"{where}: duplicate name (also layer {seen[n]})")
            else:
                seen[n] = i
    host = raw.get("host_ops", [])
    if not isinstance(host, list) or not all(isinstance(e, dict) for e in host):
        return problems + ["[network] host_ops must be a list of tables ([[network.host_ops]])"]
    if len(host) > MAX_LAYERS:
        return problems + [f"[network] has {len(host)} host_ops; at most {MAX_LAYERS}"]
    for i, entry in enumerate(host, 1):
        problems += [f"host op {i}: {p}" for p in _host_op_problems(entry)]
    return problems


def _host_op_problems(entry: dict[str, Any]) -> list[str]:
    out = [f"unknown key {_show(k)} (known: {', '.join(HOST_OP_KEYS)})"
           for k in entry if k not in HOST_OP_KEYS]
    op = entry.get("op")
    if op is None:
        out.append("no op (e.g. op = \"MaxPool\")")
    elif not (isinstance(op, str) and NAME_PATTERN.fullmatch(op)):
        out.append(f"op {_show(op)} must be 1-64 letters, digits, '_', '.' or '-'")
    out += [p for p in (count_problem(entry.get("count")),) if p]
    shapes = entry.get("shapes", [])
    if not isinstance(shapes, list) or len(shapes) > 64 or not all(
            isinstance(v, str) and TENSOR_PATTERN.fullmatch(v) for v in shapes):
        out.append(f"shapes {_show(shapes)} must be a list of at most 64 tensor sizes such "
                   "as \"1x64x56x56\"")
    reason = entry.get("reason", "")
    if not isinstance(reason, str) or len(reason) > MAX_REASON or not reason.isprintable():
        out.append(f"reason must be a line of at most {MAX_REASON} printable characters")
    return out


def _entry_problems(entry: dict[str, Any]) -> list[str]:
    from vtatune.workloads import parse

    out = [f"unknown key {k!r} (known: {', '.join(LAYER_KEYS)})"
           for k in entry if k not in LAYER_KEYS]
    name = entry.get("name")
    if name is None:
        out.append("no name")
    else:
        out += [p for p in (name_problem(name),) if p]
    out += [p for p in (count_problem(entry.get("count", 1)),) if p]
    kind = entry.get("kind")
    if not isinstance(kind, str) or not kind:
        out.append("no kind (e.g. kind = \"conv2d\")" if kind is None
                   else f"kind {_show(kind)} must be a string")
        return out
    shape, named = entry.get("shape"), entry.get("layer")
    if (shape is None) == (named is None):
        out.append("give either shape or layer" + ("" if shape is None else ", not both"))
        return out
    if named is not None and not isinstance(named, str):
        out.append(f"layer {_show(named)} must be a string")
        return out
    text = None
    if shape is not None:
        text = shape_text(shape)
        if text is None:
            out.append(f"shape {_show(shape)} must be a string of comma-separated integers "
                       "or a list of integers")
            return out
    try:
        parse(kind, named, text)
    except UserError as exc:
        out.append(str(exc))
    return out


def name_problem(value: Any) -> str | None:
    """Why ``value`` is not a network or layer name (``NAME_PATTERN``), or None. Network
    files and network bundles (``export.network``) both apply it."""
    if isinstance(value, str) and NAME_PATTERN.fullmatch(value):
        return None
    return (f"name {_show(value)} must be 1-64 letters, digits, '_', '.' or '-' (starting "
            "with a letter or digit)")


def count_problem(value: Any) -> str | None:
    """Why ``value`` is not a layer count (an integer in 1..``MAX_COUNT``), or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"count {_show(value)} must be an integer"
    if not 1 <= value <= MAX_COUNT:
        return f"count {value} must be between 1 and {MAX_COUNT:,}"
    return None


def _build(raw: dict[str, Any], default_name: str) -> Network:
    from vtatune.workloads import parse

    layers = []
    for entry in raw["layers"]:
        named = entry.get("layer")
        text = shape_text(entry["shape"]) if "shape" in entry else None
        layers.append(Layer(entry["name"], parse(entry["kind"], named, text),
                            int(entry.get("count", 1))))
    return Network(name=raw.get("name", default_name), layers=tuple(layers),
                   description=raw.get("description", ""),
                   host_ops=tuple(host_ops_of(raw)))


def shape_text(shape: Any) -> str | None:
    if isinstance(shape, str):
        return shape
    if isinstance(shape, list) and shape and all(
            isinstance(v, int) and not isinstance(v, bool) for v in shape):
        return ",".join(str(v) for v in shape)
    return None


def _show(value: Any, limit: int = 40) -> str:
    """A value for an error message, cut so a hostile file cannot flood the terminal."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
