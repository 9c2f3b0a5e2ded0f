"""Preparing measured records for a fit: every record's schedule compiled with the real
pipeline and its program built, kept as linear cost rows that any constants can time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vtatune import schedules
from vtatune.calibration.records import MeasuredRecord
from vtatune.compiler import compile_candidate
from vtatune.errors import UserError, VtatuneError
from vtatune.hardware.boards import Board
from vtatune.runtime import build_program
from vtatune.simulator.timing import CostRows, TimingParams, cost_rows


@dataclass(frozen=True, eq=False)
class Prepared:
    """A record's program as cost rows, ready to be timed with any constants."""

    record: MeasuredRecord
    rows: CostRows


def prepare(records: Sequence[MeasuredRecord], board: Board, prior: TimingParams,
            progress: Callable[[int, int], None] | None = None,
            skip_failing: bool = False) -> list[Prepared]:
    """Compile every record's schedule and build its program; ``UserError`` names the first
    record that does not compile (a calibration needs every record), unless
    ``skip_failing``: then such records are dropped (``prepare_counting`` counts them)."""
    return prepare_counting(records, board, prior, progress, skip_failing)[0]


def record_knobs(rec: MeasuredRecord) -> dict[str, int]:
    """A record's full schedule: the knobs it does not give are the suggested schedule's,
    checked against the knob space (``VtatuneError`` when it cannot be expressed)."""
    space = schedules.knob_space(rec.workload, rec.hw)
    return space.check({**schedules.suggest(rec.workload, rec.hw), **rec.knobs})


def prepare_counting(records: Sequence[MeasuredRecord], board: Board, prior: TimingParams,
                     progress: Callable[[int, int], None] | None = None,
                     skip_failing: bool = False) -> tuple[list[Prepared], dict[str, int]]:
    """``prepare``, with the records it dropped counted by reason."""
    out = []
    dropped: Counter[str] = Counter()
    for n, rec in enumerate(records):
        if progress:
            progress(n, len(records))
        try:
            knobs = record_knobs(rec)
        except VtatuneError as exc:
            if skip_failing:
                dropped[f"whose schedule vtatune cannot express ({rec.workload.kind})"] += 1
                continue
            raise UserError(f"record {rec.index}: {exc}") from None
        res = compile_candidate(rec.workload, rec.hw, knobs)
        if not res.ok:
            if skip_failing:
                dropped[f"whose schedule is {res.status} in vtatune"] += 1
                continue
            raise UserError(f"record {rec.index} ({rec.label}): schedule is {res.status}: "
                            f"{res.reason}")
        program = build_program(res, rec.workload, rec.hw)
        out.append(Prepared(rec, cost_rows(program, board, prior)))
    if progress:
        progress(len(records), len(records))
    return out, dict(dropped)


def only_session(items: Sequence[Prepared], session: str) -> list[Prepared]:
    """The items measured in ``session`` (YYYY-MM: one build of the board); ``UserError``
    naming the sessions there are when none is."""
    out = [it for it in items if it.record.session == session]
    if not out:
        known = sorted({it.record.session or "(undated)" for it in items})
        raise UserError(f"--build {session}: no record was measured then (the records' "
                        f"months: {', '.join(known)})")
    return out
