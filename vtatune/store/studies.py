"""Studies and trials in the store (a part of ``store.Store``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import case, func, null, select
from sqlalchemy.engine import Connection

from vtatune.errors import StoreError
from vtatune.statuses import Status
from vtatune.store.candidates import _CHUNK, _candidate, row_key
from vtatune.store.engine import Database, _insert_if_absent, _jsonable, _upsert, _utc
from vtatune.store.models import CandidateRow, NetworkTrialRow, StudyRow, TrialRow, utcnow
from vtatune.store.network import network_study_stats
from vtatune.store.records import StudyInfo, TrialRecord

#: The stats of a study without trials.
NO_STATS = (0, 0, None, None)


def _study_stats(s: Connection, ids: list[int] | None, have: dict[str, set[str]]
                 ) -> dict[int, tuple[int, int, int | None, float | None]]:
    """study id -> (trials, feasible trials, best feasible cycles, least feasible accelerator
    energy), for the tables and columns ``have`` (a read-only older database may lack some);
    a network study's trials are its finished designs and its cycles network totals."""
    stats = _candidate_study_stats(s, ids, have)
    if NetworkTrialRow.__tablename__ in have:
        stats.update(network_study_stats(s, ids, "accelerator_energy_j" in have[
            NetworkTrialRow.__tablename__]))
    return stats


def _candidate_study_stats(s: Connection, ids: list[int] | None, have: dict[str, set[str]]
                           ) -> dict[int, tuple[int, int, int | None, float | None]]:
    t, c = TrialRow.__table__, CandidateRow.__table__
    if t.name not in have or c.name not in have:  # a read-only database with studies only
        return {}
    ok = c.c.status == Status.OK
    energy = func.min(case((ok, c.c.accelerator_energy_j), else_=None)) \
        if "accelerator_energy_j" in have[CandidateRow.__tablename__] else null()
    q = (select(t.c.study_id, func.count(t.c.id), func.sum(case((ok, 1), else_=0)),
                func.min(case((ok, c.c.cycles), else_=None)), energy)
         .select_from(t.join(c, t.c.candidate_id == c.c.id)).group_by(t.c.study_id))
    if ids is not None:
        q = q.where(t.c.study_id.in_(ids))
    return {sid: (int(n), int(f or 0), None if b is None else int(b),
                  None if e is None else float(e))
            for sid, n, f, b, e in s.execute(q)}


def _study_info(row: Any, n_trials: int, n_feasible: int, best: int | None,
                best_energy: float | None = None) -> StudyInfo:
    g = row.get
    return StudyInfo(name=row["name"], workload=row["workload"], space=dict(g("space") or {}),
                     sampler=row["sampler"], objective=row["objective"], board=row["board"],
                     seed=g("seed"), n_trials=n_trials, n_feasible=n_feasible,
                     created_at=_utc(g("created_at")),
                     optuna_study_name=g("optuna_study_name") or row["name"],
                     best_cycles=best, identity=g("identity"),
                     best_accelerator_energy_j=best_energy)


class Studies(Database):
    """Studies and their trials."""

    def _stats(self, s: Connection, ids: list[int] | None
               ) -> dict[int, tuple[int, int, int | None, float | None]]:
        return _study_stats(s, ids, self._columns or {})

    def create_or_load_study(self, name: str, workload: str, space: dict[str, Any],
                             sampler: str, objective: str, board: str, seed: int | None,
                             optuna_study_name: str | None = None,
                             identity: dict[str, Any] | None = None) -> StudyInfo:
        """Create study ``name``, or continue it if it exists and is for the same thing.

        ``identity`` (``runner.study_identity``) says what the study is for: workload, board,
        objective, hardware, knobs, constraints and model fingerprint. A continuation whose
        identity differs is refused with ``StoreError`` naming the differences; so is the
        continuation of a study made before identities were recorded. Without ``identity``
        only workload and objective are checked. Creating the same study from several
        processes at once is safe: one creates it, the others continue it.

        Reopening records ``sampler`` as the one used last; space, board and seed stay as
        created. ``optuna_study_name`` defaults to ``name``.
        """
        values = {"name": name, "workload": workload, "space": _jsonable(dict(space)),
                  "sampler": sampler, "objective": objective, "board": board, "seed": seed,
                  "optuna_study_name": optuna_study_name or name, "created_at": utcnow(),
                  "identity": None if identity is None else _jsonable(identity)}
        table = StudyRow.__table__
        with self._session(write=True) as s:
            created = _insert_if_absent(s, table, values, ("name",))
            row = s.execute(select(*self._cols(table)).where(table.c.name == name)).mappings().one()
            if not created:
                self._check_continuation(name, row, workload, objective, identity)
                if row["sampler"] != sampler:
                    s.execute(table.update().where(table.c.id == row["id"])
                              .values(sampler=sampler))
            stats = self._stats(s, [row["id"]]).get(row["id"], NO_STATS)
            return _study_info({**row, "sampler": sampler}, *stats)

    def check_study(self, name: str, workload: str, objective: str,
                    identity: dict[str, Any] | None) -> bool:
        """What a search is about to do, checked before it prints anything: ``StoreError`` if
        the database cannot be written (``check_writable``) or study ``name`` exists for
        something else (as ``create_or_load_study`` would refuse it); True if it exists,
        False if not."""
        self.check_writable()
        table = StudyRow.__table__
        with self._session() as s:
            if not self._has(table):
                return False
            row = s.execute(select(*self._cols(table)).where(table.c.name == name)
                            ).mappings().first()
            if row is None:
                return False
            self._check_continuation(name, row, workload, objective, identity)
            return True

    def check_writable(self) -> None:
        """``StoreError`` (one line) if this store cannot write: opened read-only, or a SQLite
        file (or its folder) the process may not write. SQLite grants even ``BEGIN
        IMMEDIATE`` on a read-only file and refuses only the first page write, so one is
        made: ``user_version`` set to the value it has (vtatune and Optuna do not use it)."""
        if self.readonly:
            raise StoreError(f"database '{self.display_url}' is open read-only")
        if self.dialect != "sqlite":
            return  # a server grants or refuses writes per statement; the search reports it
        with self._session(write=True) as conn:
            version = int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)
            conn.exec_driver_sql(f"PRAGMA user_version = {version}")

    def _check_continuation(self, name: str, row: Any, workload: str, objective: str,
                            identity: dict[str, Any] | None) -> None:
        from vtatune.store.identity import differences

        hint = f"choose another --study name to start a new study ({self.display_url})"
        for what, old, new in (("workload", row["workload"], workload),
                               ("objective", row["objective"], objective)):
            if old != new:
                raise StoreError(f"study '{name}' is for {what} {old}, not {new}: {hint}")
        if identity is None:
            return
        old_identity = row.get("identity")
        if not old_identity:
            raise StoreError(
                f"study '{name}' was made by an earlier vtatune that did not record its board, "
                f"hardware and models, so it cannot be continued (its trials stay readable: "
                f"vtatune show {name}): {hint}")
        diff = differences(old_identity, _jsonable(identity))
        if diff:
            shown = "; ".join(diff[:4]) + ("; ..." if len(diff) > 4 else "")
            raise StoreError(f"study '{name}' is for {shown}: {hint}")

    def study(self, name: str) -> StudyInfo:
        """The study called ``name``; ``StoreError`` listing the known ones otherwise."""
        with self._session() as s:
            row = self._study_row(s, name)
            return _study_info(row, *self._stats(s, [row["id"]]).get(row["id"], NO_STATS))

    def studies(self) -> list[StudyInfo]:
        """Every study, oldest first."""
        table = StudyRow.__table__
        with self._session() as s:
            if not self._has(table):
                return []
            rows = list(s.execute(select(*self._cols(table)).order_by(table.c.id)).mappings())
            stats = self._stats(s, None)
            return [_study_info(r, *stats.get(r["id"], NO_STATS)) for r in rows]

    def add_trial(self, study: str, number: int, candidate_key: str, sampler: str,
                  params: dict[str, Any], cached: bool, context: str = "") -> None:
        """Record trial ``number`` of ``study``: it evaluated the saved record of
        ``candidate_key`` in ``context`` (without a context: the candidate's latest record).

        Adding the same (study, number) again replaces it (a retried write is harmless).
        """
        cands = CandidateRow.__table__
        with self._session(write=True) as s:
            study_id = self._study_row(s, study)["id"]
            cand_id = s.scalar(select(cands.c.id).where(
                cands.c.key == row_key(candidate_key, context)))
            if cand_id is None and not context:  # no context named: its latest record
                cand_id = s.scalar(select(cands.c.id).where(
                    cands.c.candidate_key == candidate_key).order_by(cands.c.id.desc()).limit(1))
            if cand_id is None:
                raise ValueError(f"candidate {candidate_key!r} is not in the store: save() it "
                                 "before add_trial()")
            values = {"study_id": study_id, "number": int(number), "candidate_id": cand_id,
                      "sampler": sampler, "params": _jsonable(params), "cached": bool(cached),
                      "created_at": utcnow()}
            _upsert(s, TrialRow, [values], ("study_id", "number"),
                    keep=("id", "study_id", "number"))

    def next_trial_number(self, study: str) -> int:
        """1 + the highest trial number of ``study`` (0 for a new study): where a rerun resumes."""
        trials = TrialRow.__table__
        with self._session() as s:
            study_id = self._study_row(s, study)["id"]
            top = s.scalar(select(func.max(trials.c.number)).where(trials.c.study_id == study_id))
            return 0 if top is None else int(top) + 1

    def trials(self, study: str, numbers: Iterable[int] | None = None) -> list[TrialRecord]:
        """Every trial of ``study`` (or those numbered ``numbers``) with its candidate, by
        number."""
        t, c = TrialRow.__table__, CandidateRow.__table__
        with self._session() as s:
            study_id = self._study_row(s, study)["id"]
            q = (select(*self._cols(t), *self._cols(c, "c_"))
                 .select_from(t.join(c, t.c.candidate_id == c.c.id))
                 .where(t.c.study_id == study_id).order_by(t.c.number))
            if numbers is not None:
                wanted = sorted(set(numbers))
                if not wanted:
                    return []
                if len(wanted) <= _CHUNK:
                    q = q.where(t.c.number.in_(wanted))
                else:
                    q = q.where(t.c.number >= wanted[0], t.c.number <= wanted[-1])
            out = []
            keep = None if numbers is None else set(numbers)
            for m in s.execute(q).mappings():
                if keep is not None and m["number"] not in keep:
                    continue
                cand = {k[2:]: v for k, v in m.items() if k.startswith("c_")}
                out.append(TrialRecord(study=study, number=m["number"],
                                       candidate=_candidate(cand), sampler=m["sampler"],
                                       params=dict(m["params"] or {}), cached=bool(m["cached"]),
                                       created_at=_utc(m["created_at"])))
            return out

    def trial_numbers(self, study: str) -> set[int]:
        """The numbers of ``study``'s stored trials."""
        t = TrialRow.__table__
        with self._session() as s:
            sid = self._study_row(s, study)["id"]
            return set(s.scalars(select(t.c.number).where(t.c.study_id == sid)))

    def trial_count(self, study: str) -> int:
        """How many trials ``study`` holds."""
        t = TrialRow.__table__
        with self._session() as s:
            sid = self._study_row(s, study)["id"]
            return int(s.scalar(select(func.count(t.c.id)).where(t.c.study_id == sid)) or 0)
