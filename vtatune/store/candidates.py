"""The candidate cache of the store (a part of ``store.Store``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from vtatune.store.engine import Database, _float, _jsonable, _replaceable, _upsert, _utc
from vtatune.store.models import CandidateRow, utcnow
from vtatune.store.records import DETERMINISTIC, CandidateRecord

#: Keys per ``IN (...)`` query in ``lookup_many`` (below every backend's parameter limit).
_CHUNK = 500


def row_key(key: str, context: str) -> str:
    """The stored row's identity of candidate ``key`` measured in ``context``."""
    return f"{key}@{context}" if context else key


def _candidate_values(r: CandidateRecord) -> dict[str, Any]:
    return {
        "key": row_key(r.key, r.context), "candidate_key": r.key,
        "context": r.context or None, "model": r.model or None, "board": r.board or None,
        "workload": r.workload, "hw_key": r.hw_key,
        "hw": {k: int(v) for k, v in r.hw.items()}, "hw_name": r.hw_name,
        "knobs": {k: int(v) for k, v in r.knobs.items()}, "status": r.status,
        "reason": r.reason, "cycles": None if r.cycles is None else int(r.cycles),
        "seconds": _float(r.seconds), "accelerator_seconds": _float(r.accelerator_seconds),
        "host_seconds": _float(r.host_seconds), "counters": _jsonable(r.counters),
        "bounds": _jsonable(r.bounds), "efficiency": _float(r.efficiency),
        "area_mm2": _float(r.area_mm2), "resources": _jsonable(r.resources),
        "compile_ms": _float(r.compile_ms), "sim_ms": _float(r.sim_ms),
        "created_at": r.created_at or utcnow(),
        "accelerator_energy_j": _float(r.accelerator_energy_j),
        "board_energy_j": _float(r.board_energy_j),
        "energy": _jsonable(r.energy) if r.energy else None,
    }


def _candidate(m: Any) -> CandidateRecord:
    """A record from a row mapping (columns an older database lacks read as empty)."""
    g = m.get
    return CandidateRecord(
        key=g("candidate_key") or m["key"], workload=m["workload"], hw_key=m["hw_key"],
        hw=dict(m["hw"] or {}), hw_name=m["hw_name"], knobs=dict(m["knobs"] or {}),
        status=m["status"], reason=g("reason") or "", cycles=g("cycles"),
        seconds=g("seconds"), accelerator_seconds=g("accelerator_seconds"),
        host_seconds=g("host_seconds"), counters=dict(g("counters") or {}),
        bounds=dict(g("bounds") or {}), efficiency=g("efficiency"), area_mm2=g("area_mm2"),
        resources=dict(g("resources") or {}), compile_ms=g("compile_ms"), sim_ms=g("sim_ms"),
        created_at=_utc(g("created_at")), context=g("context") or "", model=g("model") or "",
        board=g("board") or "", accelerator_energy_j=g("accelerator_energy_j"),
        board_energy_j=g("board_energy_j"), energy=dict(g("energy") or {}),
    )


class Candidates(Database):
    """The candidate cache: records keyed by candidate and evaluation context, shared by
    every study."""

    def lookup(self, key: str, context: str = "") -> CandidateRecord | None:
        """The record of candidate ``key`` measured in ``context`` (an ``EvalContext.key``),
        from any study, if its outcome may be reused (``DETERMINISTIC``); None otherwise."""
        return self.lookup_many([key], context).get(key)

    def lookup_many(self, keys: Iterable[str], context: str = "") -> dict[str, CandidateRecord]:
        """``lookup`` for several keys: key -> reusable record; others are absent."""
        wanted = {row_key(k, context): k for k in dict.fromkeys(keys)}
        out: dict[str, CandidateRecord] = {}
        table = CandidateRow.__table__
        with self._session() as s:
            if not self._has(table):
                return out
            ids = list(wanted)
            for i in range(0, len(ids), _CHUNK):
                q = (select(*self._cols(table)).where(table.c.key.in_(ids[i:i + _CHUNK]))
                     .where(table.c.status.in_(DETERMINISTIC)))
                for m in s.execute(q).mappings():
                    rec = _candidate(m)
                    if rec.context == context:
                        out[wanted[m["key"]]] = rec
        return out

    def save(self, record: CandidateRecord) -> None:
        """Insert the record, or update the one with the same (key, context); a transient
        outcome (``failed``/``timeout``) never replaces a deterministic one."""
        self.save_many([record])

    def save_many(self, records: Iterable[CandidateRecord]) -> None:
        """``save`` for several records in one transaction."""
        rows = [_candidate_values(r) for r in records]
        if not rows:
            return
        with self._session(write=True) as s:
            _upsert(s, CandidateRow, rows, ("key",), keep=("id", "key", "created_at"),
                    where=_replaceable)

    def history(self, workload: str, model: str | None = None) -> list[CandidateRecord]:
        """Every stored record of a workload signature, from any study, oldest first; with
        ``model`` (an ``EvalContext.model_key``) only those measured with that board and
        models (rows of older versions have none and are left out)."""
        table = CandidateRow.__table__
        with self._session() as s:
            if not self._has(table):
                return []
            q = select(*self._cols(table)).where(table.c.workload == workload)
            if model is not None:
                if "model" not in self._columns_of(table):
                    return []
                q = q.where(table.c.model == model)
            return [_candidate(m) for m in s.execute(q.order_by(table.c.id)).mappings()]
