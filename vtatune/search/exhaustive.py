"""The exhaustive reference: every candidate of a (workload, hardware) schedule space evaluated.

``reference`` compiles, verifies, builds and times every legal knob setting of a workload on
one hardware config, in isolated worker processes (``search.workers``, as a search does: a
crash or a hang is a ``failed`` or ``timeout`` record, not a stopped run), and returns every
record in knob-space order. It is what search quality is measured against (``vtatune space
--simulate``, the benchmarks): the best record is the schedule space's optimum.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from vtatune.hardware.config import HwConfig
from vtatune.search.space import Candidate
from vtatune.store.records import CandidateRecord
from vtatune.workloads.base import Workload


@dataclass(frozen=True)
class Reference:
    """Every candidate of a schedule space with its record (knob-space order)."""

    workload: Workload
    hw: HwConfig
    board: str
    records: tuple[CandidateRecord, ...]

    @property
    def best(self) -> CandidateRecord | None:
        """The fastest feasible record (fewest cycles; the first in knob-space order on a
        tie), or None when no candidate is feasible."""
        ok = [r for r in self.records if r.feasible and r.cycles is not None]
        return min(ok, key=lambda r: r.cycles) if ok else None  # type: ignore[arg-type,return-value]

    @property
    def statuses(self) -> Counter:
        return Counter(r.status for r in self.records)


def schedule_candidates(wl: Workload, hw: HwConfig) -> list[Candidate]:
    """Every legal knob setting of ``wl`` on ``hw``, in knob-space order."""
    from vtatune import schedules

    return [Candidate(wl, hw, k) for k in schedules.knob_space(wl, hw)]


def evaluate_all(cands: Iterable[Candidate], board: str, *, fit_board: bool = True,
                 max_area_mm2: float | None = None, workers: int = 1, timeout: float = 120.0,
                 on_record: Callable[[int, CandidateRecord], None] | None = None
                 ) -> list[CandidateRecord]:
    """Records of ``cands`` (in their order), evaluated by ``workers`` isolated processes;
    ``on_record(i, rec)`` is called as each one finishes."""
    from vtatune.search.workers import WorkerPool

    todo = list(cands)
    out: list[CandidateRecord | None] = [None] * len(todo)
    if not todo:
        return []
    pending = list(range(len(todo) - 1, -1, -1))  # popped from the end: first one first
    busy = 0
    with WorkerPool(max(1, min(workers, len(todo))), board, fit_board, max_area_mm2,
                    timeout) as pool:
        while pending or busy:
            while pending and pool.room:  # a worker's next candidate waits in its pipe
                i = pending.pop()
                pool.submit(i, todo[i])
                busy += 1
            for i, rec in pool.poll(0.05):
                out[i] = rec
                busy -= 1
                if on_record is not None:
                    on_record(i, rec)
    return [r for r in out if r is not None]


def reference(wl: Workload, hw: HwConfig, board: str, *, fit_board: bool = True,
              workers: int = 1, timeout: float = 120.0,
              known: Callable[[list[Candidate]], dict[str, CandidateRecord]] | None = None,
              on_record: Callable[[CandidateRecord, bool], None] | None = None) -> Reference:
    """Evaluate the whole schedule space of ``wl`` on ``hw`` (see the module docstring).

    ``known(cands)`` may serve records already measured (by candidate key); only the others
    are evaluated. ``on_record(rec, new)`` sees every record as it becomes available (``new``:
    evaluated now, not served).
    """
    cands = schedule_candidates(wl, hw)
    served = known(cands) if known is not None else {}
    records: dict[str, CandidateRecord] = {}
    for c in cands:
        if c.key in served:
            records[c.key] = served[c.key]
            if on_record is not None:
                on_record(served[c.key], False)
    todo = [c for c in cands if c.key not in records]

    def got(i: int, rec: CandidateRecord) -> None:
        records[todo[i].key] = rec
        if on_record is not None:
            on_record(rec, True)

    evaluate_all(todo, board, fit_board=fit_board, workers=workers, timeout=timeout,
                 on_record=got)
    return Reference(wl, hw, board, tuple(records[c.key] for c in cands))
