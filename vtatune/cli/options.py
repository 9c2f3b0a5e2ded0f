"""Options shared by several commands, declared once."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated

import typer

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


# ---- numeric options: finite, in range, the option named --------------------------------------
# Typer parses the number; these callbacks check it, so a bad value ends as one usage line
# ("Invalid value for '--seed': ...", exit 2) before any work starts.

#: Seeds numpy's and Optuna's generators accept: 0 .. 2^32 - 1.
SEED_MAX = 2**32 - 1
#: Most worker processes a command starts (more is a fork bomb, not a speed-up).
WORKERS_MAX = 256
#: Most trials one study may ask for (a million trials is days of evaluation).
TRIALS_MAX = 10**6
#: Longest evaluation timeout (seconds): one week.
TIMEOUT_MAX_S = 7 * 24 * 3600.0


def int_in(lo: int, hi: int) -> Callable[[int | None], int | None]:
    """A Typer callback refusing integers outside ``lo..hi``."""

    def check(value: int | None) -> int | None:
        if value is not None and not lo <= value <= hi:
            raise typer.BadParameter(f"must be in {lo:,}..{hi:,}, got {_num(value)}")
        return value

    return check


def finite_in(lo: float, hi: float, low_open: bool = True) -> Callable[[float | None],
                                                                        float | None]:
    """A Typer callback refusing NaN, infinities and numbers outside ``(lo, hi]`` (``[lo,
    hi]`` when ``low_open`` is False)."""

    def check(value: float | None) -> float | None:
        if value is None:
            return value
        if not math.isfinite(value):
            raise typer.BadParameter(f"must be a finite number, got {value}")
        if value < lo or (low_open and value == lo) or value > hi:
            side = "(" if low_open else "["
            raise typer.BadParameter(f"must be in {side}{lo:g}, {hi:g}], got {value:g}")
        return value

    return check


def _num(value: int) -> str:
    text = str(value) if abs(value) < 10**30 else f"an integer of {len(str(abs(value)))} digits"
    return text


def refuse_memory_db(db: str | None) -> None:
    """``UserError`` for a ``--db`` that names an in-memory database: a search would run to
    the end and its results vanish with the process."""
    from vtatune.errors import UserError

    if db is None:
        return
    text = db.strip()
    try:
        from sqlalchemy.engine import make_url

        url = make_url(text) if "://" in text else None
    except Exception:  # noqa: BLE001 - a malformed URL is reported by the store
        url = None
    memory = text == ":memory:" or (
        url is not None and url.get_backend_name() == "sqlite"
        and (url.database in (None, "", ":memory:") or "mode=memory" in text
             or ":memory:" in (url.database or "")))
    if memory:
        raise UserError("--db names an in-memory database: the results would be lost when "
                        "the search ends; give a file (e.g. --db db/vtatune.sqlite)")


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
                 "optionally VERIFIERS (see README, User passes; `vtatune compile "
                 "--list-phases`)."),
]
