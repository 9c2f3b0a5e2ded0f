"""Trial slots, owners and leases in the store (a part of ``store.Store``): several
processes on one study."""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import case, func, or_, select

from vtatune.store.candidates import _candidate_values, row_key
from vtatune.store.engine import (
    Database,
    _db_now,
    _insert_if_absent,
    _jsonable,
    _replaceable,
    _upsert,
)
from vtatune.store.models import CandidateRow, ClaimRow, MirrorLeaseRow, OwnerRow, TrialRow, utcnow
from vtatune.store.records import TRANSIENT, CandidateRecord, Slot

#: States of a trial slot (``vt_claims``): being evaluated, or stored as a trial.
RUNNING, DONE = "running", "done"


class Slots(Database):
    """Trial slots and leases: several processes on one study (owners, heartbeats, claims,
    take-over of a dead process's slots)."""

    def acquire_mirror_lease(self, study: str, owner: str, ttl_s: float) -> bool:
        """Make ``owner`` the one writer of ``study``'s Optuna mirror for ``ttl_s`` seconds
        (database clock) unless another owner holds an unexpired lease; True if it holds it."""
        table = MirrorLeaseRow.__table__
        with self._session(write=True) as s:
            now = _db_now(s)
            _insert_if_absent(s, table, {"study": study, "owner": owner,
                                         "expires": now + ttl_s}, ("study",))
            res = s.execute(table.update().where(
                table.c.study == study,
                or_(table.c.owner == owner, table.c.expires < now)).values(
                owner=owner, expires=now + ttl_s))
            return bool(res.rowcount)

    def release_mirror_lease(self, study: str, owner: str) -> None:
        table = MirrorLeaseRow.__table__
        with self._session(write=True) as s:
            s.execute(table.delete().where(table.c.study == study, table.c.owner == owner))

    def register_owner(self) -> str:
        """A new owner id for this process (trial slots it claims carry it); its heartbeat
        starts now. Call ``heartbeat`` more often than the grace period others allow."""
        from vtatune.store import liveness

        owner = liveness.new_owner_id()
        self.heartbeat(owner)
        return owner

    def heartbeat(self, owner: str) -> None:
        """Mark ``owner`` alive now (database clock). An owner another process declared dead
        (its row deleted after a stall longer than the grace period) is registered again:
        the slots taken from it stay taken, but the ones it claims from now on are not."""
        from vtatune.store import liveness

        table = OwnerRow.__table__
        with self._session(write=True) as s:
            now = _db_now(s)
            if s.execute(table.update().where(table.c.owner == owner)
                         .values(heartbeat=now)).rowcount:
                return
            _insert_if_absent(s, table, {
                "owner": owner, "host": liveness.host_token(), "pid": os.getpid(),
                "proc_start": liveness.proc_start(os.getpid()), "heartbeat": now,
                "created_at": utcnow()}, ("owner",))

    def retire_owner(self, owner: str) -> None:
        """``owner`` stops: its row goes (slots it still holds are taken over at once)."""
        table = OwnerRow.__table__
        with self._session(write=True) as s:
            s.execute(table.delete().where(table.c.owner == owner))

    def adopt_trials(self, study: str) -> int:
        """Give every stored trial of ``study`` a ``done`` slot (studies stored before slots
        existed); returns how many were added."""
        t, c, cl = TrialRow.__table__, CandidateRow.__table__, ClaimRow.__table__
        with self._session(write=True) as s:
            sid = self._study_row(s, study)["id"]
            have = set(s.scalars(select(cl.c.number).where(cl.c.study_id == sid)))
            rows = s.execute(select(t.c.number, t.c.params, c.c.key, c.c.status,
                                    *([c.c.candidate_key] if "candidate_key"
                                      in self._columns_of(c) else []))
                             .select_from(t.join(c, t.c.candidate_id == c.c.id))
                             .where(t.c.study_id == sid).order_by(t.c.number)).mappings()
            added = 0
            for m in rows:
                if m["number"] in have:
                    continue
                key = m.get("candidate_key") or m["key"]
                if m["status"] in TRANSIENT:
                    key = f"{key}#{m['number']}"
                added += _insert_if_absent(s, cl, {
                    "study_id": sid, "number": m["number"], "candidate_key": key,
                    "params": m["params"] or {}, "owner": "", "state": DONE,
                    "created_at": utcnow()}, ("study_id", "number"), any_conflict=True)
            return added

    def claim(self, study: str, owner: str, wanted: list[tuple[str, dict[str, Any]]],
              limit: int) -> tuple[list[Slot], set[str]]:
        """Allocate trial slots of ``study`` to ``owner`` for candidate keys ``wanted`` (with
        their sampler params), atomically: numbers follow the highest slot, the study never
        gets more than ``limit`` slots, a key with a slot in the study is never given another.

        Returns (granted slots, keys refused because the study already has them).
        """
        cl = ClaimRow.__table__
        granted: list[Slot] = []
        taken: set[str] = set()
        if not wanted:
            return granted, taken
        with self._session(write=True) as s:
            sid = self._lock_study(s, study)
            count, top = s.execute(select(func.count(cl.c.id), func.max(cl.c.number))
                                   .where(cl.c.study_id == sid)).one()
            keys = [k for k, _ in wanted]
            taken = set(s.scalars(select(cl.c.candidate_key).where(
                cl.c.study_id == sid, cl.c.candidate_key.in_(keys))))
            number = -1 if top is None else int(top)
            for key, params in wanted:
                if count >= limit:
                    break
                if key in taken:
                    continue
                number += 1
                count += 1
                s.execute(cl.insert().values(study_id=sid, number=number, candidate_key=key,
                                             params=_jsonable(params), owner=owner,
                                             state=RUNNING, created_at=utcnow()))
                taken.add(key)
                granted.append(Slot(study, number, key, dict(params), owner))
        refused = {k for k, _ in wanted} & taken - {g.key for g in granted}
        return granted, refused

    def complete(self, slot: Slot, record: CandidateRecord | None, sampler: str,
                 cached: bool, context: str) -> bool:
        """Store ``slot``'s trial in one transaction: the record (unless served from the store:
        ``cached``), the trial, the slot ``done``. False (nothing written) when the slot was
        already completed by another owner (it took the slot over); a transient outcome frees
        the candidate for a later trial."""
        cl, c = ClaimRow.__table__, CandidateRow.__table__
        assert record is not None
        with self._session(write=True) as s:
            sid = self._lock_study(s, slot.study)
            state = s.scalar(select(cl.c.state).where(cl.c.study_id == sid,
                                                      cl.c.number == slot.number))
            if state == DONE:
                return False
            if not cached:
                values = _candidate_values(record)
                _upsert(s, CandidateRow, [values], ("key",), keep=("id", "key", "created_at"),
                        where=_replaceable)
            cand_id = s.scalar(select(c.c.id).where(c.c.key == row_key(record.key, context)))
            if cand_id is None:
                raise ValueError(f"candidate {record.key!r} is not in the store")
            _upsert(s, TrialRow, [{
                "study_id": sid, "number": slot.number, "candidate_id": cand_id,
                "sampler": sampler, "params": _jsonable(slot.params), "cached": bool(cached),
                "created_at": utcnow()}], ("study_id", "number"),
                keep=("id", "study_id", "number"))
            key = (f"{slot.key}#{slot.number}" if record.status in TRANSIENT and not cached
                   else slot.key)
            if state is None:  # the slot was never claimed (a single-process caller)
                _insert_if_absent(s, cl, {"study_id": sid, "number": slot.number,
                                          "candidate_key": key, "params": _jsonable(slot.params),
                                          "owner": slot.owner, "state": DONE,
                                          "created_at": utcnow()}, ("study_id", "number"),
                                  any_conflict=True)
            else:
                s.execute(cl.update().where(cl.c.study_id == sid, cl.c.number == slot.number)
                          .values(state=DONE, candidate_key=key))
            return True

    def take_over(self, study: str, owner: str, grace_s: float,
                  limit: int | None = None) -> list[Slot]:
        """Running slots of ``study`` whose owner is dead, now ``owner``'s to finish.

        An owner is dead when its heartbeat is older than ``grace_s`` (database clock), when
        its row is gone, or — seen from its own host — when its process no longer exists.
        ``limit``: the study's size for ``owner``; dead slots that would take it past that
        are released (the highest numbers first: gaps, like any trial lost in flight) instead
        of evaluated — a process that queued work ahead may die holding more than is left.
        """
        from vtatune.store import liveness

        cl, ow = ClaimRow.__table__, OwnerRow.__table__
        out: list[Slot] = []
        with self._session(write=True) as s:
            sid = self._lock_study(s, study)
            running = list(s.execute(select(cl.c.number, cl.c.candidate_key, cl.c.params,
                                            cl.c.owner).where(cl.c.study_id == sid,
                                                              cl.c.state == RUNNING,
                                                              cl.c.owner != owner)).mappings())
            if not running:
                return out
            now = _db_now(s)
            owners = {m["owner"]: m for m in s.execute(select(ow).where(
                ow.c.owner.in_({r["owner"] for r in running}))).mappings()}
            dead = {o for o in {r["owner"] for r in running}
                    if not liveness.alive(owners.get(o), now, grace_s)}
            orphans = sorted((r for r in running if r["owner"] in dead),
                             key=lambda r: r["number"])
            if limit is not None and orphans:
                count = s.scalar(select(func.count(cl.c.id)).where(cl.c.study_id == sid))
                excess = min(len(orphans), max(0, int(count) - limit))
                if excess:
                    s.execute(cl.delete().where(
                        cl.c.study_id == sid, cl.c.state == RUNNING,
                        cl.c.number.in_([r["number"] for r in orphans[-excess:]])))
                    orphans = orphans[:-excess]
            for r in orphans:
                res = s.execute(cl.update().where(
                    cl.c.study_id == sid, cl.c.number == r["number"],
                    cl.c.owner == r["owner"], cl.c.state == RUNNING).values(owner=owner))
                if res.rowcount:
                    out.append(Slot(study, r["number"], r["candidate_key"],
                                    dict(r["params"] or {}), owner))
            if dead:
                s.execute(ow.delete().where(ow.c.owner.in_(dead)))
        return out

    def slot_counts(self, study: str) -> tuple[int, int]:
        """(slots, running slots) of ``study``: how many trials it has or will have."""
        cl = ClaimRow.__table__
        with self._session() as s:
            sid = self._study_row(s, study)["id"]
            if not self._has(cl):
                return 0, 0
            n, running = s.execute(select(func.count(cl.c.id),
                                          func.sum(case((cl.c.state == RUNNING, 1), else_=0)))
                                   .where(cl.c.study_id == sid)).one()
            return int(n), int(running or 0)
