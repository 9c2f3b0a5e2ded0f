"""An imported model as a network space: the network file ``import --out`` writes, and the
space ``search MODEL.onnx`` searches.

Both take every section but ``[network]`` from ``TEMPLATE`` (``spaces/resnet18.toml``: the
board, the hardware choices of ``conv2d.toml``, the knobs, objective, constraints and inner
tuning), so an imported model is searched exactly as the shipped networks are.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from vtatune.models.importer import ImportedModel, import_model, shape_text
from vtatune.networks import space as nspace
from vtatune.networks.space import read_toml, resolve

#: The network space whose settings (all but ``[network]``) imported models use.
TEMPLATE = "resnet18"
#: Model files ``search`` takes in place of a network name.
SUFFIXES = (".onnx",)


def is_model_path(text: str | None) -> bool:
    """True when ``text`` names an ONNX model (by its suffix; the file need not exist)."""
    return text is not None and Path(text).suffix.lower() in SUFFIXES


def template() -> dict[str, Any]:
    """``TEMPLATE``'s sections other than ``[network]``."""

    raw = read_toml(resolve(TEMPLATE))
    return {k: v for k, v in raw.items() if k != "network"}


def network_table(m: ImportedModel) -> dict[str, Any]:
    return {"name": m.name, "description": m.description,
            "layers": [{"name": la.name, "kind": la.workload.kind,
                        "shape": shape_text(la.workload), "count": la.count}
                       for la in m.layers],
            **({"host_ops": host_ops_table(m)} if m.host_ops else {})}


def host_ops_table(m: ImportedModel) -> list[dict[str, Any]]:
    """``[[network.host_ops]]`` of ``m``: per host operator its count, the distinct sizes
    of its nodes' first input where shape inference fixed them, and the reason a node of a
    kind VTA runs stays on the host."""
    from vtatune.escaping import terminal

    g = m.graph
    index = {g.node_name(i): i for i in range(len(g.nodes))}
    out = []
    for h in m.host_ops:
        sizes: list[str] = []
        for name in h.nodes:
            node = g.nodes[index[name]] if name in index else None
            shape = g.shape(node.input[0]) if node is not None and node.input else None
            if shape and all(isinstance(d, int) and d >= 0 for d in shape):
                text = "x".join(str(d) for d in shape)
                if text not in sizes and len(sizes) < 64:
                    sizes.append(text)
        out.append({"op": h.op, "count": h.count, "shapes": sizes,
                    **({"reason": terminal(h.reason)[:300]} if h.reason else {})})
    return out


def network_space(path: str | Path, *, batch: int | None = None, name: str | None = None,
                  hw: str | None = None, board: str | None = None,
                  objective: str | None = None, inner_trials: int | None = None,
                  inner_sampler: str | None = None, stock_vta: bool | None = None
                  ) -> tuple[Any, ImportedModel]:
    """The network space of the model at ``path`` (``networks.space.NetworkSpace``; its
    network carries the model's fingerprint, part of a study's identity) and the import."""

    m = import_model(path, batch=batch, name=name)
    raw = {**template(), "network": network_table(m)}
    raw["study"] = {**raw.get("study", {}), "name": m.name}
    sp = nspace.from_dict(raw, str(path), hw=hw, board=board, objective=objective,
                          inner_trials=inner_trials, inner_sampler=inner_sampler,
                          stock_vta=stock_vta)
    return replace(sp, network=replace(sp.network, fingerprint=m.fingerprint)), m


def toml_text(m: ImportedModel) -> str:
    """The network file of ``m``: a comment per layer naming its ONNX nodes, the host
    operators in the header, ``TEMPLATE``'s other sections after the network."""
    g = m.graph
    lines = [f"# {m.name}: imported by `vtatune import` from {_safe(g.path.name)}",
             f"# ONNX opset {g.opset}, {len(g.nodes)} nodes; {_safe(g.batch_note)}",
             f"# model sha256 (graph and shapes, without the weights): {m.fingerprint}",
             "# Host operators (not run on VTA; their time is not in the network latency):"]
    plain = [h for h in m.host_ops if h.reason is None]
    lines += _wrapped(", ".join(f"{h.op} x{h.count}" for h in plain) or "none", "#   ")
    for h in m.host_ops:
        if h.reason is not None:
            lines += _wrapped(f"{h.op} x{h.count} stays on the host: {h.reason} (nodes: "
                              f"{', '.join(h.nodes)})", "#   ")
    if m.folded:
        lines += _wrapped("Folded into layers or computed once at load: "
                          + ", ".join(f"{op} x{n}" for op, n in m.folded), "# ")
    body: dict[str, Any] = template()
    lines += ["", *_table("study", {**body.get("study", {})}), "", "[network]",
              f"name = {_str(m.name)}", f"description = {_str(m.description)}"]
    for la in m.layers:
        lines += ["", "[[network.layers]]"]
        lines += _wrapped(f"from ONNX node{'s' if la.count > 1 else ''}: "
                          + ", ".join(la.nodes)
                          + (f" (with {', '.join(la.folded)})" if la.folded else ""), "# ")
        lines += [f"name = {_str(la.name)}", f"kind = {_str(la.workload.kind)}",
                  f"shape = {_str(shape_text(la.workload))}   # {la.workload.SHAPE}",
                  f"count = {la.count}"]
    for h in (host_ops_table(m) if m.host_ops else []):
        lines += ["", "[[network.host_ops]]", f"op = {_str(h['op'])}", f"count = {h['count']}",
                  "shapes = [" + ", ".join(_str(v) for v in h["shapes"]) + "]"]
        if "reason" in h:
            lines.append(f"reason = {_str(h['reason'])}")
    for section, values in body.items():
        if section != "study":
            lines += ["", *_table(section, values)]
    return "\n".join(lines) + "\n"


def _table(section: str, values: dict[str, Any]) -> list[str]:
    return [f"[{section}]", *(f"{k} = {_value(v)}" for k, v in values.items())]


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def _safe(text: str) -> str:
    """Text for a comment or a string: ASCII, no control character (a node name holding a
    newline must not end the comment)."""
    return "".join(c if " " <= c <= "~" else f"\\u{ord(c):04x}" for c in text)


def _str(text: str) -> str:
    return json.dumps(_safe(text))


def _wrapped(text: str, prefix: str, width: int = 96) -> list[str]:
    import textwrap

    return [prefix + ln for ln in textwrap.wrap(_safe(text), width - len(prefix),
                                                break_on_hyphens=False)] or [prefix.rstrip()]
