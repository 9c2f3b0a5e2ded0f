"""The results store: every evaluated candidate, every trial of every study, in one database.

``Store(url)`` opens any SQLAlchemy URL (SQLite by default, PostgreSQL for many hosts) and
creates the ``vt_*`` tables if needed. It hands out frozen records (``records.py``), never a
session. Database errors are translated in one place, ``Store._session``, into ``StoreError``:
one line naming the database, shown by the CLI without a traceback.

**Dedupe.** A candidate is stored once per ``key`` (workload | hardware | knobs), shared by
all studies; ``save`` inserts or updates by key, so saving twice is harmless.

**Safety.** Every method is one transaction. On SQLite the file runs in WAL mode with
``synchronous=NORMAL``: readers never block the writer, a process killed at any point (kill -9
included) loses at most its uncommitted transaction, and the file stays consistent (a power
cut may also lose the last few commits, never integrity). Write transactions take the write
lock up front (``BEGIN IMMEDIATE``) and wait up to ``timeout_s`` for it, so several worker
processes can write to one file.

**Processes.** A ``Store`` may be pickled to, or inherited by, worker processes: each process
opens its own connections (a forked child never reuses its parent's).
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, case, create_engine, event, func, inspect, select
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from vtatune.errors import StoreError
from vtatune.store.models import TABLES, CandidateRow, StudyRow, TrialRow, utcnow
from vtatune.store.records import CandidateRecord, StudyInfo, TrialRecord

#: File suffixes accepted as a bare SQLite path instead of a URL (``--db results.sqlite``).
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")

#: How long a writer waits for another process's write lock before giving up (seconds).
DEFAULT_TIMEOUT_S = 60.0

#: How long opening a PostgreSQL connection may take (seconds).
PG_CONNECT_TIMEOUT_S = 10

#: Dialects with ``INSERT ... ON CONFLICT DO UPDATE``; others look up, then insert or update.
_UPSERT_DIALECTS = ("sqlite", "postgresql")

#: Keys per ``IN (...)`` query in ``lookup_many`` (below every backend's parameter limit).
_CHUNK = 500


def default_url() -> str:
    """``sqlite:///<work root>/db/vtatune.sqlite`` (the checkout, or the current directory)."""
    from vtatune.paths import work_root

    return f"sqlite:///{work_root().resolve() / 'db' / 'vtatune.sqlite'}"


def normalize_url(url: str | None) -> str:
    """The SQLAlchemy URL for ``--db``: None is the default, a ``*.sqlite`` path is SQLite."""
    if url is None or url == "":
        return default_url()
    if "://" not in url and url.lower().endswith(SQLITE_SUFFIXES):
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    return url


def sqlite_path(url: str | None) -> Path | None:
    """The file of a SQLite ``--db`` (None for other databases, in-memory SQLite, bad URLs)."""
    try:
        parsed = make_url(normalize_url(url))
    except (sa_exc.ArgumentError, ValueError):
        return None
    db = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or db in ("", ":memory:") or db.startswith("file:"):
        return None
    return Path(db).expanduser()


def database_exists(url: str | None) -> bool:
    """False only for a SQLite file that is not there yet (read-only commands need not make it)."""
    path = sqlite_path(url)
    return path is None or path.exists()


class Store:
    """Candidates, trials and studies in one SQLAlchemy database (see the module docstring)."""

    def __init__(self, url: str | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.url = normalize_url(url)
        self.timeout_s = timeout_s
        self._engine: Engine | None = None
        self._writer: Engine | None = None
        self._pid = 0
        self._schema_ready = False
        _LIVE.add(self)
        with self._session():  # open now: a bad URL fails here, as one line
            pass

    # ---- connections -------------------------------------------------------------------------
    @property
    def display_url(self) -> str:
        """The URL with any password hidden."""
        try:
            return make_url(self.url).render_as_string(hide_password=True)
        except (sa_exc.ArgumentError, ValueError):
            return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", self.url)

    @property
    def dialect(self) -> str:
        """``sqlite``, ``postgresql``, ..."""
        return make_url(self.url).get_backend_name()

    def _engines(self) -> tuple[Engine, Engine]:
        """(reader, writer) engines of this process, created on first use."""
        if self._engine is None or self._pid != os.getpid():
            if self._engine is not None:
                self._engine.dispose(close=False)  # forked: leave the parent's connections be
            self._engine = _create_engine(self.url, self.timeout_s)
            self._writer = self._engine.execution_options(vt_write=True)
            self._pid = os.getpid()
        assert self._writer is not None
        if not self._schema_ready:
            with self._engine.connect() as conn:  # a read-only database can still be read
                names = set(inspect(conn).get_table_names())
            if any(t.name not in names for t in TABLES):
                try:
                    with self._writer.begin() as conn:  # one creator at a time (SQLite)
                        for table in TABLES:
                            table.create(conn, checkfirst=True)
                except sa_exc.DBAPIError:
                    with self._engine.connect() as conn:  # another process created them first?
                        names = set(inspect(conn).get_table_names())
                    if any(t.name not in names for t in TABLES):
                        raise
            self._schema_ready = True
        return self._engine, self._writer

    def _before_fork(self) -> None:
        # SQLite keeps per-process lock state in memory: a child forked while this process
        # has the file open inherits state its own connections must not trust. Closing the
        # idle pooled connections first makes the child start clean (both reconnect lazily).
        if self._engine is not None and self._pid == os.getpid() and self.dialect == "sqlite":
            self._engine.dispose()

    @contextmanager
    def _session(self, write: bool = False) -> Iterator[Session]:
        """One transaction; the only place database errors become ``StoreError``."""
        opening = not self._schema_ready
        connecting = True
        try:
            reader, writer = self._engines()
            connecting = False
            with Session(writer if write else reader, expire_on_commit=False) as session:
                with session.begin():
                    yield session
        except sa_exc.IntegrityError:
            raise  # a broken invariant in vtatune, not the user's database: keep the traceback
        except sa_exc.DBAPIError as exc:
            raise StoreError(self._explain(exc, opening)) from None
        except (sa_exc.ArgumentError, ImportError, ValueError, OSError) as exc:
            if not connecting:
                raise
            raise StoreError(self._explain(exc, opening)) from None

    def _explain(self, exc: BaseException, opening: bool) -> str:
        where = f"database '{self.display_url}'"
        if isinstance(exc, sa_exc.NoSuchModuleError):
            return (f"unsupported {where}: SQLAlchemy has no dialect "
                    f"'{self.url.split(':', 1)[0]}'")
        if isinstance(exc, sa_exc.ArgumentError | ValueError):
            return (f"malformed {where} (expected e.g. sqlite:///db/vtatune.sqlite, "
                    "postgresql://user@host/dbname, or a path ending in .sqlite)")
        if isinstance(exc, ImportError):
            pkg = "psycopg2-binary" if "psycopg2" in str(exc) else "'psycopg[binary]'"
            hint = f"; pip install {pkg}" if self.url.startswith("postgres") else ""
            return f"cannot open {where}: its driver is not installed ({exc}{hint})"
        if isinstance(exc, OSError):
            return f"cannot open {where}: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
        detail = _first_line(getattr(exc, "orig", None) or exc)
        if "locked" in detail or "busy" in detail:
            detail += f" (another process held the write lock for over {self.timeout_s:g} s)"
        return f"cannot open {where}: {detail}" if opening else f"{where}: {detail}"

    def close(self) -> None:
        """Release this process's connections (the store reopens on next use)."""
        if self._engine is not None and self._pid == os.getpid():
            self._engine.dispose()
        self._engine = self._writer = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        return {"url": self.url, "timeout_s": self.timeout_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.url, self.timeout_s = state["url"], state["timeout_s"]
        self._engine = self._writer = None
        self._pid, self._schema_ready = 0, False

    def __repr__(self) -> str:
        return f"Store({self.display_url!r})"

    # ---- candidates --------------------------------------------------------------------------
    def lookup(self, key: str) -> CandidateRecord | None:
        """The stored candidate with this key, from any study; None if never evaluated."""
        with self._session() as s:
            row = s.scalar(select(CandidateRow).where(CandidateRow.key == key))
            return None if row is None else _candidate(row)

    def lookup_many(self, keys: Iterable[str]) -> dict[str, CandidateRecord]:
        """Stored candidates by key; keys never evaluated are absent."""
        wanted = list(dict.fromkeys(keys))
        out: dict[str, CandidateRecord] = {}
        with self._session() as s:
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i:i + _CHUNK]
                for row in s.scalars(select(CandidateRow).where(CandidateRow.key.in_(chunk))):
                    out[row.key] = _candidate(row)
        return out

    def save(self, record: CandidateRecord) -> None:
        """Insert the candidate, or update the one with the same key (keeps its created_at)."""
        self.save_many([record])

    def save_many(self, records: Iterable[CandidateRecord]) -> None:
        """``save`` for several candidates in one transaction."""
        rows = [_candidate_values(r) for r in records]
        if not rows:
            return
        with self._session(write=True) as s:
            _upsert(s, CandidateRow, rows, ("key",), keep=("id", "key", "created_at"))

    def history(self, workload: str) -> list[CandidateRecord]:
        """Every stored candidate of a workload signature, from any study, oldest first."""
        with self._session() as s:
            rows = s.scalars(select(CandidateRow).where(CandidateRow.workload == workload)
                             .order_by(CandidateRow.id))
            return [_candidate(r) for r in rows]

    # ---- studies and trials ------------------------------------------------------------------
    def create_or_load_study(self, name: str, workload: str, space: dict[str, Any],
                             sampler: str, objective: str, board: str, seed: int | None,
                             optuna_study_name: str | None = None) -> StudyInfo:
        """Create study ``name``, or continue it if it exists (for the same workload/objective).

        Reopening records ``sampler`` as the one used last; space, board and seed stay as
        created. ``optuna_study_name`` defaults to ``name``.
        """
        with self._session(write=True) as s:
            row = s.scalar(select(StudyRow).where(StudyRow.name == name))
            if row is None:
                row = StudyRow(name=name, workload=workload, space=dict(space), sampler=sampler,
                               objective=objective, board=board, seed=seed,
                               optuna_study_name=optuna_study_name or name)
                s.add(row)
                s.flush()
            else:
                for what, old, new in (("workload", row.workload, workload),
                                       ("objective", row.objective, objective)):
                    if old != new:
                        raise StoreError(
                            f"study '{name}' is for {what} {old}, not {new}: choose another "
                            f"--study name to start a new study ({self.display_url})")
                row.sampler = sampler
            return _study_info(row, *_study_stats(s, [row.id]).get(row.id, (0, 0, None)))

    def study(self, name: str) -> StudyInfo:
        """The study called ``name``; ``StoreError`` listing the known ones otherwise."""
        with self._session() as s:
            row = self._study_row(s, name)
            return _study_info(row, *_study_stats(s, [row.id]).get(row.id, (0, 0, None)))

    def studies(self) -> list[StudyInfo]:
        """Every study, oldest first."""
        with self._session() as s:
            rows = list(s.scalars(select(StudyRow).order_by(StudyRow.id)))
            stats = _study_stats(s, None)
            return [_study_info(r, *stats.get(r.id, (0, 0, None))) for r in rows]

    def add_trial(self, study: str, number: int, candidate_key: str, sampler: str,
                  params: dict[str, Any], cached: bool) -> None:
        """Record trial ``number`` of ``study``: it evaluated the saved candidate ``candidate_key``.

        Adding the same (study, number) again replaces it (a retried write is harmless).
        """
        with self._session(write=True) as s:
            study_id = self._study_row(s, study).id
            cand_id = s.scalar(select(CandidateRow.id).where(CandidateRow.key == candidate_key))
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
        with self._session() as s:
            study_id = self._study_row(s, study).id
            top = s.scalar(select(func.max(TrialRow.number)).where(TrialRow.study_id == study_id))
            return 0 if top is None else int(top) + 1

    def trials(self, study: str) -> list[TrialRecord]:
        """Every trial of ``study`` with its candidate, by number."""
        with self._session() as s:
            study_id = self._study_row(s, study).id
            rows = s.scalars(select(TrialRow).where(TrialRow.study_id == study_id)
                             .order_by(TrialRow.number))
            return [TrialRecord(study=study, number=r.number, candidate=_candidate(r.candidate),
                                sampler=r.sampler, params=dict(r.params), cached=r.cached,
                                created_at=_utc(r.created_at)) for r in rows]

    def _study_row(self, s: Session, name: str) -> StudyRow:
        row = s.scalar(select(StudyRow).where(StudyRow.name == name))
        if row is None:
            known = list(s.scalars(select(StudyRow.name).order_by(StudyRow.id)))
            listed = ", ".join(known) if known else "none yet"
            raise StoreError(f"no study '{name}' in {self.display_url} (studies: {listed})")
        return row


# ---- engines ---------------------------------------------------------------------------------

#: Every open store of this process (for the fork hook).
_LIVE: weakref.WeakSet[Store] = weakref.WeakSet()


def _before_fork() -> None:
    for store in list(_LIVE):
        store._before_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork)


def _create_engine(url: str, timeout_s: float) -> Engine:
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":  # a host that drops packets fails in seconds, not minutes
        return create_engine(parsed, pool_pre_ping=True,
                             connect_args={"connect_timeout": PG_CONNECT_TIMEOUT_S})
    if backend != "sqlite":
        return create_engine(parsed, pool_pre_ping=True)
    path = sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(parsed, connect_args={"timeout": timeout_s})
    busy_ms = int(timeout_s * 1000)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # We emit BEGIN ourselves (below): pysqlite's implicit BEGIN is DEFERRED, and a
        # deferred transaction that reads, then writes can fail at once with SQLITE_BUSY when
        # another process committed in between; BEGIN IMMEDIATE waits for the lock instead.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={busy_ms}")
        cur.execute("PRAGMA journal_mode=WAL")  # readers and one writer at once; kill-safe
        cur.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit survives a killed process
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        write = conn.get_execution_options().get("vt_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _upsert(s: Session, model: type[Any], rows: list[dict[str, Any]], unique: tuple[str, ...],
            keep: tuple[str, ...]) -> None:
    """Insert ``rows`` or update the rows they collide with on ``unique`` (``keep`` untouched)."""
    table = model.__table__
    dialect = s.get_bind().dialect.name
    if dialect in _UPSERT_DIALECTS:
        if dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        stmt = insert(table)
        cols = [c.name for c in table.columns if c.name not in keep and c.name in rows[0]]
        stmt = stmt.on_conflict_do_update(index_elements=list(unique),
                                          set_={c: stmt.excluded[c] for c in cols})
        s.execute(stmt, rows)
        return
    for values in rows:  # other backends: look up, then insert or update
        cond = [getattr(model, k) == values[k] for k in unique]
        row = s.scalar(select(model).where(*cond))
        if row is None:
            s.add(model(**values))
        else:
            for k, v in values.items():
                if k not in keep:
                    setattr(row, k, v)
    s.flush()


# ---- rows <-> records ------------------------------------------------------------------------

def _candidate_values(r: CandidateRecord) -> dict[str, Any]:
    return {
        "key": r.key, "workload": r.workload, "hw_key": r.hw_key,
        "hw": {k: int(v) for k, v in r.hw.items()}, "hw_name": r.hw_name,
        "knobs": {k: int(v) for k, v in r.knobs.items()}, "status": r.status,
        "reason": r.reason, "cycles": None if r.cycles is None else int(r.cycles),
        "seconds": _float(r.seconds), "counters": _jsonable(r.counters),
        "bounds": _jsonable(r.bounds), "efficiency": _float(r.efficiency),
        "area_mm2": _float(r.area_mm2), "resources": _jsonable(r.resources),
        "compile_ms": _float(r.compile_ms), "sim_ms": _float(r.sim_ms),
        "created_at": r.created_at or utcnow(),
    }


def _candidate(row: CandidateRow) -> CandidateRecord:
    return CandidateRecord(
        key=row.key, workload=row.workload, hw_key=row.hw_key, hw=dict(row.hw),
        hw_name=row.hw_name, knobs=dict(row.knobs), status=row.status, reason=row.reason or "",
        cycles=row.cycles, seconds=row.seconds, counters=dict(row.counters or {}),
        bounds=dict(row.bounds or {}), efficiency=row.efficiency, area_mm2=row.area_mm2,
        resources=dict(row.resources or {}), compile_ms=row.compile_ms, sim_ms=row.sim_ms,
        created_at=_utc(row.created_at),
    )


def _study_stats(s: Session, ids: list[int] | None) -> dict[int, tuple[int, int, int | None]]:
    """study id -> (trials, feasible trials, best feasible cycles)."""
    ok = CandidateRow.status == "ok"
    q = (select(TrialRow.study_id, func.count(TrialRow.id),
                func.sum(case((ok, 1), else_=0)),
                func.min(case((ok, CandidateRow.cycles), else_=None)))
         .join(CandidateRow, TrialRow.candidate_id == CandidateRow.id)
         .group_by(TrialRow.study_id))
    if ids is not None:
        q = q.where(TrialRow.study_id.in_(ids))
    return {sid: (int(n), int(f or 0), None if b is None else int(b))
            for sid, n, f, b in s.execute(q)}


def _study_info(row: StudyRow, n_trials: int, n_feasible: int, best: int | None) -> StudyInfo:
    return StudyInfo(name=row.name, workload=row.workload, space=dict(row.space or {}),
                     sampler=row.sampler, objective=row.objective, board=row.board,
                     seed=row.seed, n_trials=n_trials, n_feasible=n_feasible,
                     created_at=_utc(row.created_at), optuna_study_name=row.optuna_study_name,
                     best_cycles=best)


def _utc(dt: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; the store writes UTC."""
    if dt is None or dt.tzinfo is not None:
        return dt
    return dt.replace(tzinfo=UTC)


def _float(v: Any) -> float | None:
    return None if v is None else float(v)


def _jsonable(obj: Any) -> Any:
    """Plain JSON types (numpy scalars and arrays, tuples, non-str keys converted)."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [_jsonable(v) for v in obj]
    if obj is None or isinstance(obj, bool | str):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if hasattr(obj, "tolist"):  # numpy scalar or array
        return _jsonable(obj.tolist())
    raise TypeError(f"cannot store {type(obj).__name__} as JSON: {obj!r}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__
