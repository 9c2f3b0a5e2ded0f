"""A tiny network and its space, small enough that a search takes seconds (the ``tiny``
fixture of tests/conftest.py; not a conftest of its own: store tests import ``conftest`` by
name)."""

from __future__ import annotations

from typing import Any

#: Two conv2d shapes (one used twice) and a dense layer, all small.
TINY: dict[str, Any] = {
    "network": {"name": "tiny", "layers": [
        {"name": "a", "kind": "conv2d", "shape": "1,16,8,8,16,3,3,1,1", "count": 2},
        {"name": "b", "kind": "conv2d", "shape": "1,16,8,8,32,1,1,0,2", "count": 1},
        {"name": "a2", "kind": "conv2d", "shape": "1,16,8,8,16,3,3,1,1", "count": 1},
        {"name": "fc", "kind": "dense", "shape": "1,32,16", "count": 3},
    ]},
    "hardware": {"LOG_BLOCK_IN": [3, 4], "LOG_BLOCK_OUT": [3, 4], "LOG_ACC_BUFF_SIZE": [15],
                 "LOG_WGT_BUFF_SIZE": [15, 16]},
    "objective": {"kind": "area-latency"},
    "inner": {"trials": 7, "min_per_layer": 2},
}

#: A second tiny network: shares TINY's 3x3 conv2d shape (``a``/``a2`` = ``x``) and has a
#: dense shape of its own.
OTHER: dict[str, Any] = {
    **TINY,
    "network": {"name": "other", "layers": [
        {"name": "x", "kind": "conv2d", "shape": "1,16,8,8,16,3,3,1,1", "count": 3},
        {"name": "y", "kind": "dense", "shape": "1,16,32", "count": 2},
    ]},
}


def toml_text(raw: dict[str, Any]) -> str:
    """``raw`` (tables of strings, numbers, booleans and lists of them; ``[network]``'s
    ``layers``/``host_ops`` as arrays of tables) as TOML text, for tests that need files."""
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + "}"
        return repr(v)

    lines: list[str] = []
    for section, table in raw.items():
        lines.append(f"[{section}]")
        arrays = {k: v for k, v in table.items()
                  if isinstance(v, list) and v and all(isinstance(e, dict) for e in v)
                  and section == "network"}
        lines += [f"{k} = {value(v)}" for k, v in table.items() if k not in arrays]
        for k, entries in arrays.items():
            for e in entries:
                lines += ["", f"[[{section}.{k}]]", *(f"{a} = {value(b)}" for a, b in e.items())]
        lines.append("")
    return "\n".join(lines)
