"""Options shared by several commands, declared once."""

from __future__ import annotations

from typing import Annotated

import typer

HwOption = Annotated[
    str,
    typer.Option("--hw", help="vta_config.json path or shipped config name "
                 "(see `vtatune hw --list`)."),
]
BoardOption = Annotated[str, typer.Option("--board", help="Board name (see `vtatune boards`).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
WorkloadArg = Annotated[str, typer.Argument(help="Workload kind: conv2d or dense.")]
LayerOption = Annotated[
    str | None,
    typer.Option("--layer", help="ResNet-18 conv2d layer C1..C11 (default C8)."),
]
ShapeOption = Annotated[
    str | None,
    typer.Option("--shape", help="conv2d: N,CIN,H,W,COUT,KH,KW,PAD,STRIDE; dense: M,K,N."),
]
KnobsOption = Annotated[
    str | None,
    typer.Option("--knobs", help="Schedule knobs, e.g. tile_h=7,tile_co=8 (others: suggested)."),
]
DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Results database: SQLAlchemy URL (sqlite:///..., "
                 "postgresql://...) or a .sqlite path (default db/vtatune.sqlite)."),
]
