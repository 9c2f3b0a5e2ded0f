"""Network studies in the store (a part of ``store.Store``): their trials and the rows <->
frozen records.

A network trial is one hardware design with every layer tuned. It is written when the design
starts (status ``running``) and again when it is done; every layer candidate it evaluates is a
shared ``vt_candidates`` row (the same candidate a per-layer study would store) linked to the
trial in ``vt_network_evals``, so an interrupted design resumes with what it had.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, func, null, select

from vtatune.statuses import Status
from vtatune.store.candidates import _candidate, row_key
from vtatune.store.engine import Database, _insert_if_absent, _jsonable, _upsert, _utc
from vtatune.store.models import CandidateRow, ClaimRow, NetworkEvalRow, NetworkTrialRow, utcnow
from vtatune.store.records import (
    LayerResult,
    NetworkEval,
    NetworkResult,
    NetworkTrialRecord,
    Slot,
)
from vtatune.store.slots import DONE, RUNNING

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection
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
        "accelerator_energy_j": _float(rec.accelerator_energy_j),
        "board_energy_j": _float(rec.board_energy_j),
        "bound_cycles": None if rec.bound_cycles is None else float(rec.bound_cycles),
        "layers": {"layers": [la.as_dict() for la in rec.layers],
                   **({"networks": [n.as_dict() for n in rec.networks]}
                      if rec.networks is not None else {})},
        "resources": rec.resources, "params": rec.params, "sampler": rec.sampler,
        "evaluated": int(rec.evaluated), "cached": int(rec.cached),
    }


def network_trial_record(study: str, m: Any, created_at: datetime | None) -> NetworkTrialRecord:
    """The record of a ``vt_network_trials`` row mapping."""
    stored = m["layers"] or {}
    layers = tuple(_layer(d) for d in stored.get("layers", []))
    networks = stored.get("networks")
    return NetworkTrialRecord(
        study=study, number=m["number"], hw_key=m["hw_key"], hw=dict(m["hw"]),
        hw_name=m["hw_name"], status=m["status"], reason=m["reason"] or "",
        area_mm2=m["area_mm2"], cycles=m["cycles"], seconds=m["seconds"],
        accelerator_seconds=m.get("accelerator_seconds"), host_seconds=m.get("host_seconds"),
        bound_cycles=m["bound_cycles"], layers=layers, resources=dict(m["resources"] or {}),
        params=dict(m["params"] or {}), sampler=m["sampler"], evaluated=m["evaluated"] or 0,
        cached=m["cached"] or 0, created_at=created_at,
        networks=None if networks is None else tuple(_network(d) for d in networks),
        accelerator_energy_j=m.get("accelerator_energy_j"),
        board_energy_j=m.get("board_energy_j"))


def network_study_stats(s: Session, ids: list[int] | None, energy: bool = True
                        ) -> dict[int, tuple[int, int, int | None, float | None]]:
    """study id -> (finished network trials, feasible ones, best feasible network cycles,
    least feasible accelerator energy per inference; None when the table has no ``energy``
    column, a read-only older database)."""
    t = NetworkTrialRow.__table__
    ok = t.c.status == Status.OK
    least = func.min(case((ok, t.c.accelerator_energy_j), else_=None)) if energy else null()
    q = (select(t.c.study_id, func.count(t.c.id), func.sum(case((ok, 1), else_=0)),
                func.min(case((ok, t.c.cycles), else_=None)), least)
         .where(t.c.status != Status.RUNNING).group_by(t.c.study_id))
    if ids is not None:
        q = q.where(t.c.study_id.in_(ids))
    return {sid: (int(n), int(f or 0), None if b is None else int(b),
                  None if e is None else float(e))
            for sid, n, f, b, e in s.execute(q)}


def _layer(d: dict[str, Any]) -> LayerResult:
    return LayerResult(name=d["name"], workload=d["workload"], count=int(d["count"]),
                       key=d.get("key"), knobs={k: int(v) for k, v in d.get("knobs", {}).items()},
                       cycles=d.get("cycles"), seconds=d.get("seconds"),
                       accelerator_seconds=d.get("accelerator_seconds"),
                       host_seconds=d.get("host_seconds"),
                       bound_cycles=d.get("bound_cycles"), trials=int(d.get("trials", 0)),
                       status=d.get("status", Status.OK),
                       accelerator_energy_j=d.get("accelerator_energy_j"),
                       board_energy_j=d.get("board_energy_j"))


def _network(d: dict[str, Any]) -> NetworkResult:
    return NetworkResult(network=d["network"], weight=float(d["weight"]),
                         cycles=d.get("cycles"), seconds=d.get("seconds"),
                         accelerator_seconds=d.get("accelerator_seconds"),
                         host_seconds=d.get("host_seconds"),
                         bound_cycles=d.get("bound_cycles"),
                         layers=tuple(_layer(la) for la in d.get("layers", [])),
                         accelerator_energy_j=d.get("accelerator_energy_j"),
                         board_energy_j=d.get("board_energy_j"))


def _float(x: float | None) -> float | None:
    return None if x is None else float(x)


class NetworkTrials(Database):
    """Network studies' trials (hardware designs), their slots and layer evaluations."""

    def save_network_trial(self, rec: NetworkTrialRecord) -> None:
        """Insert network trial ``rec.number`` of ``rec.study``, or replace it."""
        with self._session(write=True) as s:
            self._put_network_trial(s, rec, self._study_row(s, rec.study)["id"])

    def _put_network_trial(self, s: Connection, rec: NetworkTrialRecord, sid: int) -> None:
        values = network_trial_values(rec, sid)
        for k in ("layers", "resources", "params"):
            values[k] = _jsonable(values[k])
        values["created_at"] = rec.created_at or utcnow()
        _upsert(s, NetworkTrialRow, [values], ("study_id", "number"),
                keep=("id", "study_id", "number"))

    def adopt_network_trials(self, study: str) -> int:
        """Give every stored network trial of ``study`` a slot (studies stored before network
        designs were claimed as slots): ``done`` for a finished design, ``running`` with no
        owner (so any process takes it over, with its layer results) for an interrupted one.
        Returns how many were added."""
        t, cl = NetworkTrialRow.__table__, ClaimRow.__table__
        with self._session(write=True) as s:
            sid = self._study_row(s, study)["id"]
            if not self._has(t):
                return 0
            have = set(s.scalars(select(cl.c.number).where(cl.c.study_id == sid)))
            added = 0
            for m in s.execute(select(t.c.number, t.c.hw_key, t.c.params, t.c.status)
                               .where(t.c.study_id == sid).order_by(t.c.number)).mappings():
                if m["number"] in have:
                    continue
                running = m["status"] == Status.RUNNING
                added += _insert_if_absent(s, cl, {
                    "study_id": sid, "number": m["number"], "candidate_key": m["hw_key"],
                    "params": m["params"] or {}, "owner": "",
                    "state": RUNNING if running else DONE, "created_at": utcnow()},
                    ("study_id", "number"), any_conflict=True)
            return added

    def finish_network_trial(self, slot: Slot, rec: NetworkTrialRecord) -> bool:
        """Store the finished design ``rec`` of ``slot`` and mark the slot ``done``, in one
        transaction. False (nothing written) when the slot is done already: another process
        took it over and finished it first."""
        cl = ClaimRow.__table__
        with self._session(write=True) as s:
            sid = self._lock_study(s, slot.study)
            state = s.scalar(select(cl.c.state).where(cl.c.study_id == sid,
                                                      cl.c.number == slot.number))
            if state == DONE:
                return False
            self._put_network_trial(s, rec, sid)
            if state is None:  # never claimed (a single-process caller)
                _insert_if_absent(s, cl, {"study_id": sid, "number": slot.number,
                                          "candidate_key": slot.key,
                                          "params": _jsonable(slot.params),
                                          "owner": slot.owner, "state": DONE,
                                          "created_at": utcnow()}, ("study_id", "number"),
                                  any_conflict=True)
            else:
                s.execute(cl.update().where(cl.c.study_id == sid, cl.c.number == slot.number)
                          .values(state=DONE))
            return True

    def add_network_eval(self, study: str, number: int, seq: int, candidate_key: str,
                         cached: bool, context: str = "") -> None:
        """Network trial ``number`` got the saved record of ``candidate_key`` in ``context``
        as its ``seq``-th layer evaluation (adding the same (number, seq) again replaces it)."""
        cands = CandidateRow.__table__
        with self._session(write=True) as s:
            study_id = self._study_row(s, study)["id"]
            cand_id = s.scalar(select(cands.c.id).where(
                cands.c.key == row_key(candidate_key, context)))
            if cand_id is None:
                raise ValueError(f"candidate {candidate_key!r} is not in the store: save() it "
                                 "before add_network_eval()")
            values = {"study_id": study_id, "number": int(number), "seq": int(seq),
                      "candidate_id": cand_id, "cached": bool(cached), "created_at": utcnow()}
            _upsert(s, NetworkEvalRow, [values], ("study_id", "number", "seq"),
                    keep=("id", "study_id", "number", "seq"))

    def network_trials(self, study: str) -> list[NetworkTrialRecord]:
        """Every network trial of ``study`` (running ones included), by number."""
        t = NetworkTrialRow.__table__
        with self._session() as s:
            study_id = self._study_row(s, study)["id"]
            if not self._has(t):
                return []
            q = select(*self._cols(t)).where(t.c.study_id == study_id).order_by(t.c.number)
            return [network_trial_record(study, m, _utc(m.get("created_at")))
                    for m in s.execute(q).mappings()]

    def network_evals(self, study: str, number: int | None = None) -> list[NetworkEval]:
        """The layer candidates the network trials of ``study`` got (only trial ``number``'s
        when given), by trial and order."""
        e, c = NetworkEvalRow.__table__, CandidateRow.__table__
        with self._session() as s:
            study_id = self._study_row(s, study)["id"]
            if not self._has(e):
                return []
            q = (select(*self._cols(e), *self._cols(c, "c_"))
                 .select_from(e.join(c, e.c.candidate_id == c.c.id))
                 .where(e.c.study_id == study_id))
            if number is not None:
                q = q.where(e.c.number == int(number))
            out = []
            for m in s.execute(q.order_by(e.c.number, e.c.seq)).mappings():
                cand = {k[2:]: v for k, v in m.items() if k.startswith("c_")}
                out.append(NetworkEval(number=m["number"], seq=m["seq"],
                                       candidate=_candidate(cand), cached=bool(m["cached"]),
                                       created_at=_utc(m.get("created_at"))))
            return out
