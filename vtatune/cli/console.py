"""All terminal output of the CLI goes through here (rich on stderr/stdout)."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def error(message: str) -> None:
    """One line on stderr, prefixed ``vtatune: error:``."""
    err.print(f"vtatune: error: {message}", markup=False)


def print_json(obj: Any) -> None:
    """One JSON object on stdout (no rich formatting, so it pipes into jq)."""
    sys.stdout.write(json.dumps(obj, indent=2, default=_json_default) + "\n")
    sys.stdout.flush()


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def table(title: str | None, columns: list[str], rows: list[list[Any]]) -> None:
    """A plain table on stdout; numeric columns right-aligned."""
    t = Table(title=title, title_justify="left", show_lines=False)
    for i, col in enumerate(columns):
        numeric = bool(rows) and all(isinstance(r[i], int | float) for r in rows)
        t.add_column(col, justify="right" if numeric else "left", overflow="fold")
    for r in rows:
        t.add_row(*[_fmt(v) for v in r])
    out.print(t)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def line(text: str = "") -> None:
    out.print(text, markup=False)
