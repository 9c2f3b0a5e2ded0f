"""Options shared by several commands, declared once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

import typer

# the limits and the in-memory check live in the library; commands import them from here too
from vtatune.studies import (
    SEED_MAX,
    TIMEOUT_MAX_S,
    TRIALS_MAX,
    WORKERS_MAX,
    refuse_memory_db,
)

__all__ = ["SEED_MAX", "TIMEOUT_MAX_S", "TRIALS_MAX", "WORKERS_MAX", "finite_in", "int_in",
           "refuse_memory_db", "valid_text"]

T = TypeVar("T")

HwOption = Annotated[
    str,
    typer.Option("--hw", help="vta_config.json path or shipped config name "
                 "(see `vtatune hw --list`)."),
]
BoardOption = Annotated[str, typer.Option(
    "--board", help="Board name, or NAME@PROFILE for one of its timing profiles, e.g. "
    "pynq-z1@2019-07 (`vtatune boards` lists both).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
WorkloadArg = Annotated[str, typer.Argument(
    help="Operator: conv2d, dense, ... (`vtatune operators` lists them); search also takes a "
    "network (resnet18).")]
LayerOption = Annotated[
    str | None,
    typer.Option("--layer", help="A named layer of the operator, e.g. ResNet-18's C1..C11 "
                 "for conv2d (default C8)."),
]
ShapeOption = Annotated[
    str | None,
    typer.Option("--shape", help="The operator's shape, e.g. conv2d "
                 "N,CIN,H,W,COUT,KH,KW,PAD,STRIDE; dense M,K,N (`vtatune operators`); a "
                 "convolution padded per axis: PAD as PAD_HxPAD_W, e.g. 0x3."),
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


# ---- numeric options: finite, in range, the option named --------------------------------------
# Typer parses the number; these callbacks check it against the library's ranges
# (``vtatune.studies``), so a bad value ends as one usage line ("Invalid value for '--seed':
# ...", exit 2) before any work starts.

def int_in(lo: int, hi: int) -> Callable[[int | None], int | None]:
    """A Typer callback refusing integers outside ``lo..hi`` (``studies.int_in``)."""
    from vtatune import studies

    return _as_callback(studies.int_in(lo, hi))


def finite_in(lo: float, hi: float, low_open: bool = True) -> Callable[[float | None],
                                                                        float | None]:
    """A Typer callback refusing NaN, infinities and numbers outside ``(lo, hi]`` (``[lo,
    hi]`` when ``low_open`` is False; ``studies.finite_in``)."""
    from vtatune import studies

    return _as_callback(studies.finite_in(lo, hi, low_open))


def _as_callback(check: Callable[[T], T]) -> Callable[[T], T]:
    """``check``'s ``UserError`` as Typer's ``BadParameter`` (Typer names the option)."""
    from vtatune.errors import UserError

    def callback(value: T) -> T:
        try:
            return check(value)
        except UserError as exc:
            raise typer.BadParameter(str(exc)) from None

    return callback


def valid_text(value: str | list[str] | None) -> str | list[str] | None:
    """A Typer callback for names (studies): bytes of the command line that are not UTF-8
    reach Python as lone surrogates, which no database can store or match."""
    from vtatune.escaping import shown

    for v in [value] if isinstance(value, str) else (value or []):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise typer.BadParameter(f"{shown(v)} is not valid UTF-8 text") from None
    return value


PassesOption = Annotated[
    str | None,
    typer.Option("--passes", help="A Python file defining PASSES [(phase, pass), ...] and "
                 "optionally VERIFIERS (see docs/methods/compile.md, User passes; `vtatune compile "
                 "--list-phases`)."),
]


def ms_of(seconds: float | None) -> str:
    """Seconds as ``formats.ms`` milliseconds (the units of every other table)."""
    from vtatune import formats

    return formats.ms(None if seconds is None else 1e3 * seconds)
