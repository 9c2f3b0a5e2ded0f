"""Rows of network studies <-> frozen records (``Store`` holds the methods that use them).

A network trial is one hardware design with every layer tuned. It is written when the design
starts (status ``running``) and again when it is done; every layer candidate it evaluates is a
shared ``vt_candidates`` row (the same candidate a per-layer study would store) linked to the
trial in ``vt_network_evals``, so an interrupted design resumes with what it had.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, func, select

from vtatune.store.models import NetworkTrialRow
from vtatune.store.records import LayerResult, NetworkTrialRecord

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def network_trial_values(rec: NetworkTrialRecord, study_id: int) -> dict[str, Any]:
    """Column values of ``rec`` (JSON columns still to be made plain by the caller)."""
    return {
        "study_id": study_id, "number": int(rec.number), "hw_key": rec.hw_key,
        "hw": {k: int(v) for k, v in rec.hw.items()}, "hw_name": rec.hw_name,
        "status": rec.status, "reason": rec.reason,
        "area_mm2": None if rec.area_mm2 is None else float(rec.area_mm2),
        "cycles": None if rec.cycles is None else int(rec.cycles),
        "seconds": None if rec.seconds is None else float(rec.seconds),
        "accelerator_seconds": _float(rec.accelerator_seconds),
        "host_seconds": _float(rec.host_seconds),
        "bound_cycles": None if rec.bound_cycles is None else float(rec.bound_cycles),
        "layers": {"layers": [la.as_dict() for la in rec.layers]},
        "resources": rec.resources, "params": rec.params, "sampler": rec.sampler,
        "evaluated": int(rec.evaluated), "cached": int(rec.cached),
    }


def network_trial_record(study: str, m: Any, created_at: datetime | None) -> NetworkTrialRecord:
    """The record of a ``vt_network_trials`` row mapping."""
    layers = tuple(_layer(d) for d in (m["layers"] or {}).get("layers", []))
    return NetworkTrialRecord(
        study=study, number=m["number"], hw_key=m["hw_key"], hw=dict(m["hw"]),
        hw_name=m["hw_name"], status=m["status"], reason=m["reason"] or "",
        area_mm2=m["area_mm2"], cycles=m["cycles"], seconds=m["seconds"],
        accelerator_seconds=m.get("accelerator_seconds"), host_seconds=m.get("host_seconds"),
        bound_cycles=m["bound_cycles"], layers=layers, resources=dict(m["resources"] or {}),
        params=dict(m["params"] or {}), sampler=m["sampler"], evaluated=m["evaluated"] or 0,
        cached=m["cached"] or 0, created_at=created_at)


def network_study_stats(s: Session, ids: list[int] | None
                        ) -> dict[int, tuple[int, int, int | None]]:
    """study id -> (finished network trials, feasible ones, best feasible network cycles)."""
    t = NetworkTrialRow.__table__
    ok = t.c.status == "ok"
    q = (select(t.c.study_id, func.count(t.c.id), func.sum(case((ok, 1), else_=0)),
                func.min(case((ok, t.c.cycles), else_=None)))
         .where(t.c.status != "running").group_by(t.c.study_id))
    if ids is not None:
        q = q.where(t.c.study_id.in_(ids))
    return {sid: (int(n), int(f or 0), None if b is None else int(b))
            for sid, n, f, b in s.execute(q)}


def _layer(d: dict[str, Any]) -> LayerResult:
    return LayerResult(name=d["name"], workload=d["workload"], count=int(d["count"]),
                       key=d.get("key"), knobs={k: int(v) for k, v in d.get("knobs", {}).items()},
                       cycles=d.get("cycles"), seconds=d.get("seconds"),
                       accelerator_seconds=d.get("accelerator_seconds"),
                       host_seconds=d.get("host_seconds"),
                       bound_cycles=d.get("bound_cycles"), trials=int(d.get("trials", 0)),
                       status=d.get("status", "ok"))


def _float(x: float | None) -> float | None:
    return None if x is None else float(x)
