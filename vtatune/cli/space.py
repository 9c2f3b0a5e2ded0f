"""``vtatune compile``: placeholder until the compile path lands."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    pass
