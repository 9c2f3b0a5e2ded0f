"""Options shared by several commands, declared once."""

from __future__ import annotations

from typing import Annotated

import typer

HwOption = Annotated[
    str,
    typer.Option("--hw", help="vta_config.json path or shipped config name (see `vtatune hw --list`)."),
]
BoardOption = Annotated[str, typer.Option("--board", help="Board name (see `vtatune boards`).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
