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
WorkloadArg = Annotated[str, typer.Argument(
    help="Operator: conv2d, dense, ... (`vtatune operators` lists them).")]
LayerOption = Annotated[
    str | None,
    typer.Option("--layer", help="A named layer of the operator, e.g. ResNet-18's C1..C11 "
                 "for conv2d (default C8)."),
]
ShapeOption = Annotated[
    str | None,
    typer.Option("--shape", help="The operator's shape, e.g. conv2d "
                 "N,CIN,H,W,COUT,KH,KW,PAD,STRIDE; dense M,K,N (`vtatune operators`)."),
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
