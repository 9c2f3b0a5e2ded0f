"""The results store: every evaluated candidate, every trial of every study, in one database.

``Store(url)`` opens any SQLAlchemy URL (SQLite by default, PostgreSQL for many hosts) and
creates the ``vt_*`` tables if needed. It hands out frozen records (``records.py``), never a
session. Database errors are translated in one place, ``Store._session``, into ``StoreError``:
one line naming the database, shown by the CLI without a traceback.

**Identity.** A record is stored once per (candidate key, evaluation context): the context
holds the board, the constraints and the model fingerprint (``store.identity``), so a result is
served only where every input it depends on is the same. Only deterministic outcomes are served
(``records.DETERMINISTIC``); a ``failed``/``timeout`` record is kept but evaluated again, and a
transient outcome never overwrites a deterministic one. Rows of older versions (no context)
stay readable and are never served.

**Schema.** A writer brings any older database up to the models (``migrate``: missing tables,
nullable columns and indexes are added; nothing is dropped or rewritten), so adding a column is
one line in ``models.py``. Readers cope with missing columns (their fields read as empty).

**Read-only.** ``Store(url, readonly=True)`` never writes, migrates or creates a file. On SQLite
it opens the file with ``mode=ro``; when no ``-wal`` file is beside it (no writer has it open)
it also sets ``immutable=1``, since a WAL database opened otherwise makes ``-wal``/``-shm``
files (and fails in a read-only folder). A writer that starts during such a read may make that
read fail (one line); it never corrupts anything.

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
import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Engine,
    Table,
    case,
    create_engine,
    event,
    func,
    inspect,
    or_,
    select,
)
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.pool import NullPool
from sqlalchemy.schema import CreateColumn

from vtatune.errors import StoreError
from vtatune.store.models import (
    TABLES,
    CandidateRow,
    ClaimRow,
    MirrorLeaseRow,
    NetworkEvalRow,
    NetworkTrialRow,
    OwnerRow,
    StudyRow,
    TrialRow,
    utcnow,
)
from vtatune.store.network import (
    network_study_stats,
    network_trial_record,
    network_trial_values,
)
from vtatune.store.records import (
    DETERMINISTIC,
    TRANSIENT,
    CandidateRecord,
    NetworkEval,
    NetworkTrialRecord,
    Slot,
    StudyInfo,
    TrialRecord,
)

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

#: States of a trial slot (``vt_claims``): being evaluated, or stored as a trial.
RUNNING, DONE = "running", "done"

#: PostgreSQL advisory lock held while a writer migrates the schema (any constant will do).
_MIGRATION_LOCK = 0x7674_756E


#: One lock per SQLite file for the write transactions of this process's threads (the search
#: loop, its Optuna mirror and heartbeat): a waiter wakes the moment the holder commits, where
#: SQLite's busy handler polls with sleeps of up to 100 ms (seconds of a search's wall time).
#: Other processes still meet at SQLite's lock.
_SQLITE_WRITERS: dict[str, threading.RLock] = {}
_SQLITE_WRITERS_GUARD = threading.Lock()
os.register_at_fork(after_in_child=_SQLITE_WRITERS.clear)  # a lock held by another thread


def _file_of(url: str) -> str:
    """The resolved path of a SQLite database (its writers' lock), else ""."""
    path = sqlite_path(url)
    return str(path.resolve()) if path is not None else ""


def _writer_lock(key: str) -> threading.RLock:
    """The lock of the SQLite file ``key`` (its resolved path)."""
    with _SQLITE_WRITERS_GUARD:
        lock = _SQLITE_WRITERS.get(key)
        if lock is None:
            lock = _SQLITE_WRITERS[key] = threading.RLock()
        return lock


def row_key(key: str, context: str) -> str:
    """The stored row's identity of candidate ``key`` measured in ``context``."""
    return f"{key}@{context}" if context else key


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

    def __init__(self, url: str | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 readonly: bool = False):
        self.url = normalize_url(url)
        self.timeout_s = timeout_s
        self.readonly = readonly
        self._engine: Engine | None = None
        self._writer: Engine | None = None
        self._pid = 0
        self._columns: dict[str, set[str]] | None = None
        self._file = _file_of(self.url)
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
            self._engine = _create_engine(self.url, self.timeout_s, self.readonly)
            self._writer = self._engine.execution_options(vt_write=True)
            self._pid = os.getpid()
        assert self._writer is not None
        if self._columns is None:
            with self._engine.connect() as conn:  # a read-only database can still be read
                columns = _existing_columns(conn)
            foreign = _foreign(columns)
            if foreign:
                raise StoreError(f"database '{self.display_url}' is not a vtatune database of "
                                 f"a version this vtatune can read ({foreign})")
            if not self.readonly and _missing(columns):
                with self._writer.begin() as conn:  # one migrator at a time
                    migrate(conn)
                with self._engine.connect() as conn:
                    columns = _existing_columns(conn)
            self._columns = columns
        return self._engine, self._writer

    def _before_fork(self) -> None:
        # SQLite keeps per-process lock state in memory: a child forked while this process
        # has the file open inherits state its own connections must not trust. Closing the
        # idle pooled connections first makes the child start clean (both reconnect lazily).
        if self._engine is not None and self._pid == os.getpid() and self.dialect == "sqlite":
            self._engine.dispose()

    @contextmanager
    def _session(self, write: bool = False) -> Iterator[Connection]:
        """One transaction; the only place database errors become ``StoreError``."""
        if write and self.readonly:
            raise StoreError(f"database '{self.display_url}' is open read-only")
        opening = self._columns is None
        connecting = True
        try:
            reader, writer = self._engines()
            connecting = False
            lock = _writer_lock(self._file) if write and self._file else nullcontext()
            # Core statements only: a Connection, without the ORM Session's bookkeeping
            with lock, (writer if write else reader).begin() as conn:
                yield conn
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

    def transaction(self, write: bool = True) -> Any:
        """A transaction (a context manager yielding a SQLAlchemy ``Connection``) for tables the
        store shares a database with but does not own (the Optuna mirror): a write one on
        SQLite holds the write lock from its start; errors become ``StoreError`` as
        everywhere."""
        return self._session(write=write)

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
        return {"url": self.url, "timeout_s": self.timeout_s, "readonly": self.readonly}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.url, self.timeout_s = state["url"], state["timeout_s"]
        self.readonly = state.get("readonly", False)
        self._engine = self._writer = None
        self._pid, self._columns = 0, None
        self._file = _file_of(self.url)

    def __repr__(self) -> str:
        return f"Store({self.display_url!r})"

    # ---- columns that exist (older databases opened read-only may lack some) ----------------
    def _cols(self, table: Table, prefix: str = "") -> list[Any]:
        """The columns of ``table`` this database has (labelled ``prefix + name``)."""
        have = (self._columns or {}).get(table.name, set())
        return [c.label(prefix + c.name) if prefix else c for c in table.columns
                if c.name in have]

    def _has(self, table: Table) -> bool:
        return bool((self._columns or {}).get(table.name))

    def _stats(self, s: Connection, ids: list[int] | None
               ) -> dict[int, tuple[int, int, int | None]]:
        return _study_stats(s, ids, set(self._columns or {}))

    # ---- candidates --------------------------------------------------------------------------
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

    def _columns_of(self, table: Table) -> set[str]:
        return (self._columns or {}).get(table.name, set())

    # ---- studies and trials ------------------------------------------------------------------
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
            stats = self._stats(s, [row["id"]]).get(row["id"], (0, 0, None))
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
            return _study_info(row, *self._stats(s, [row["id"]]).get(row["id"], (0, 0, None)))

    def studies(self) -> list[StudyInfo]:
        """Every study, oldest first."""
        table = StudyRow.__table__
        with self._session() as s:
            if not self._has(table):
                return []
            rows = list(s.execute(select(*self._cols(table)).order_by(table.c.id)).mappings())
            stats = self._stats(s, None)
            return [_study_info(r, *stats.get(r["id"], (0, 0, None))) for r in rows]

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

    # ---- several processes on one study ------------------------------------------------------
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

    def trial_count(self, study: str) -> int:
        """How many trials ``study`` holds."""
        t = TrialRow.__table__
        with self._session() as s:
            sid = self._study_row(s, study)["id"]
            return int(s.scalar(select(func.count(t.c.id)).where(t.c.study_id == sid)) or 0)

    # ---- network studies (trials are hardware designs; store/network.py) ---------------------
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
                running = m["status"] == "running"
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

    def _lock_study(self, s: Connection, study: str) -> int:
        """The study's id, its row locked for this transaction (PostgreSQL; SQLite's write
        transaction already excludes every other writer)."""
        table = StudyRow.__table__
        sid = s.scalar(select(table.c.id).where(table.c.name == study).with_for_update())
        if sid is None:
            self._study_row(s, study)  # raises, naming the known studies
        return int(sid)

    def _study_row(self, s: Connection, name: str) -> Any:
        table = StudyRow.__table__
        row = None
        if self._has(table):
            row = s.execute(select(*self._cols(table)).where(table.c.name == name)
                            ).mappings().first()
        if row is None:
            known = (list(s.scalars(select(table.c.name).order_by(table.c.id)))
                     if self._has(table) else [])
            listed = ", ".join(known) if known else "none yet"
            raise StoreError(f"no study '{name}' in {self.display_url} (studies: {listed})")
        return row


# ---- schema ----------------------------------------------------------------------------------

def _existing_columns(conn: Any) -> dict[str, set[str]]:
    """Table name -> its column names, for the store's tables present in the database."""
    insp = inspect(conn)
    names = set(insp.get_table_names())
    return {t.name: {c["name"] for c in insp.get_columns(t.name)} for t in TABLES
            if t.name in names}


def _foreign(columns: dict[str, set[str]]) -> str:
    """What makes tables named like vtatune's not vtatune's, or "" when nothing does.

    Every column a migration cannot add (not nullable, no server default: ``migrate``) has
    been in its table since the table was made (tests/store/test_store_migration.py checks
    it against the first schema), so a table of that name without one is another program's,
    or a future vtatune's that renamed it: nothing this version can read or migrate.
    """
    for table in TABLES:
        have = columns.get(table.name)
        if have is None:
            continue
        lacking = [c.name for c in table.columns
                   if c.name not in have and not c.nullable and c.server_default is None]
        if lacking:
            return (f"table {table.name} has no column{'s' if len(lacking) > 1 else ''} "
                    + ", ".join(lacking[:4]) + (", ..." if len(lacking) > 4 else ""))
    return ""


def _missing(columns: dict[str, set[str]]) -> bool:
    return any(t.name not in columns or any(c.name not in columns[t.name] for c in t.columns)
               for t in TABLES)


def migrate(conn: Any) -> list[str]:
    """Bring the database on ``conn`` (inside a write transaction) up to the models: create
    missing tables, add missing columns and indexes. Never drops or rewrites anything.
    Returns what it did (``"table.column"`` names), for tests and logs.

    New columns must be nullable or carry a server default (a ``RuntimeError`` says so: that
    is a bug in the models, not the user's database). Concurrent migrators are serialized by
    the write lock (SQLite) or an advisory lock (PostgreSQL).
    """
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
    insp = inspect(conn)
    names = set(insp.get_table_names())
    done: list[str] = []
    for table in TABLES:
        if table.name not in names:
            table.create(conn)
            done.append(table.name)
            continue
        have = {c["name"] for c in insp.get_columns(table.name)}
        for col in table.columns:
            if col.name in have:
                continue
            if not col.nullable and col.server_default is None:
                raise RuntimeError(f"column {table.name}.{col.name} cannot be added to existing "
                                   "databases: new columns must be nullable")
            ddl = CreateColumn(col).compile(dialect=conn.dialect)
            quoted = conn.dialect.identifier_preparer.quote(table.name)
            conn.exec_driver_sql(f"ALTER TABLE {quoted} ADD COLUMN {ddl}")
            done.append(f"{table.name}.{col.name}")
        indexes = {ix["name"] for ix in insp.get_indexes(table.name)}
        for ix in table.indexes:
            if ix.name not in indexes:
                ix.create(conn)
    return done


# ---- engines ---------------------------------------------------------------------------------

#: Every open store of this process (for the fork hook).
_LIVE: weakref.WeakSet[Store] = weakref.WeakSet()


def _before_fork() -> None:
    for store in list(_LIVE):
        store._before_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork)


def _create_engine(url: str, timeout_s: float, readonly: bool = False) -> Engine:
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":  # a host that drops packets fails in seconds, not minutes
        return create_engine(parsed, pool_pre_ping=True,
                             connect_args={"connect_timeout": PG_CONNECT_TIMEOUT_S})
    if backend != "sqlite":
        return create_engine(parsed, pool_pre_ping=True)
    path = sqlite_path(url)
    busy_ms = int(timeout_s * 1000)
    if readonly and path is not None:
        engine = create_engine("sqlite://", creator=lambda: _connect_readonly(path, timeout_s),
                               poolclass=NullPool)
    else:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": timeout_s})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # We emit BEGIN ourselves (below): pysqlite's implicit BEGIN is DEFERRED, and a
        # deferred transaction that reads, then writes can fail at once with SQLITE_BUSY when
        # another process committed in between; BEGIN IMMEDIATE waits for the lock instead.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={busy_ms}")
        if not readonly:
            cur.execute("PRAGMA journal_mode=WAL")  # readers and one writer at once; kill-safe
            cur.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit survives a killed process
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        write = conn.get_execution_options().get("vt_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _connect_readonly(path: Path, timeout_s: float) -> Any:
    """A read-only SQLite connection that creates no file beside the database.

    ``mode=ro`` alone still creates ``-wal``/``-shm`` for a WAL database (and fails where the
    folder is read-only). When no ``-wal`` file exists no connection has the database open,
    so it is read as ``immutable`` (no locks, no shared memory, no files); otherwise the
    existing ``-shm``/``-wal`` are used, and ``immutable`` is the fallback when they cannot be.
    """
    import sqlite3
    from urllib.parse import quote

    base = f"file:{quote(str(path.resolve()))}?mode=ro"
    tries = [base] if Path(f"{path}-wal").exists() else []
    tries.append(base + "&immutable=1")
    if not path.exists():
        raise sqlite3.OperationalError(f"unable to open database file: {path}")
    for i, uri in enumerate(tries):
        conn = sqlite3.connect(uri, uri=True, timeout=timeout_s, check_same_thread=False)
        try:
            conn.execute("PRAGMA schema_version").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
            if i == len(tries) - 1:
                raise
    raise AssertionError("unreachable")


def _upsert(s: Connection, model: type[Any], rows: list[dict[str, Any]], unique: tuple[str, ...],
            keep: tuple[str, ...], where: Any = None) -> None:
    """Insert ``rows`` or update the rows they collide with on ``unique`` (``keep`` untouched).

    ``where(excluded)``: a condition on the stored row and the new values (``excluded``) that
    must hold for an update; rows failing it are left as they are.
    """
    table = model.__table__
    dialect = s.dialect.name
    if dialect in _UPSERT_DIALECTS:
        cols = tuple(c.name for c in table.columns if c.name not in keep and c.name in rows[0])
        s.execute(_upsert_statement(dialect, table, cols, unique, where), rows)
        return
    for values in rows:  # other backends: look up, then insert or update
        cond = [table.c[k] == values[k] for k in unique]
        old = s.execute(select(table).where(*cond)).mappings().first()
        if old is None:
            s.execute(table.insert().values(**values))
        elif where is None or _where_holds(old, values, keep):
            s.execute(table.update().where(*cond).values(
                **{k: v for k, v in values.items() if k not in keep}))


@lru_cache(maxsize=64)
def _upsert_statement(dialect: str, table: Table, cols: tuple[str, ...], unique: tuple[str, ...],
                      where: Any) -> Any:
    """``_upsert``'s statement (built once: its ``excluded`` alias copies every column)."""
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:
        from sqlalchemy.dialects.postgresql import insert
    stmt = insert(table)
    excluded = stmt.excluded  # a new alias at each access
    return stmt.on_conflict_do_update(
        index_elements=list(unique), set_={c: excluded[c] for c in cols},
        where=None if where is None else where(excluded))


def _replaceable(excluded: Any) -> Any:
    """The candidates' upsert condition: a stored transient outcome is replaced by anything,
    a stored deterministic one only by a deterministic one."""
    c = CandidateRow.__table__
    return or_(*(c.c.status == t for t in TRANSIENT),
               *(excluded.status == d for d in DETERMINISTIC))


def _where_holds(old: Any, new: dict[str, Any], keep: tuple[str, ...]) -> bool:
    # the generic fallback knows one condition: the candidates' "never replace a
    # deterministic outcome with a transient one"
    return old.get("status") in TRANSIENT or new.get("status") not in TRANSIENT


def _insert_if_absent(s: Connection, table: Table, values: dict[str, Any],
                      unique: tuple[str, ...], any_conflict: bool = False) -> bool:
    """Insert ``values`` unless a row with the same ``unique`` columns exists (also when
    another process inserts it at the same moment); True when this call inserted it.
    ``any_conflict``: also skip it when it collides on any other unique constraint."""
    dialect = s.dialect.name
    if dialect in _UPSERT_DIALECTS:
        if dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        stmt = insert(table).values(**values)
        stmt = (stmt.on_conflict_do_nothing() if any_conflict
                else stmt.on_conflict_do_nothing(index_elements=list(unique)))
        # rowcount is not reliable here (PostgreSQL drivers report -1 with RETURNING)
        return s.execute(stmt.returning(table.c.id)).first() is not None
    cond = [table.c[k] == values[k] for k in unique]
    if s.execute(select(table.c.id).where(*cond)).first() is not None:
        return False
    try:
        with s.begin_nested():
            s.execute(table.insert().values(**values))
    except sa_exc.IntegrityError:
        return False
    return True


def _db_now(s: Connection) -> float:
    """Seconds since the epoch on the database server's clock (one clock for every host)."""
    if s.dialect.name == "postgresql":
        return float(s.scalar(select(func.extract("epoch", func.clock_timestamp()))))
    if s.dialect.name == "sqlite":
        return float(s.scalar(select((func.julianday("now") - 2440587.5) * 86400.0)))
    return datetime.now(UTC).timestamp()


# ---- rows <-> records ------------------------------------------------------------------------

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
        board=g("board") or "",
    )


def _study_stats(s: Connection, ids: list[int] | None, have: set[str]
                 ) -> dict[int, tuple[int, int, int | None]]:
    """study id -> (trials, feasible trials, best feasible cycles), for the tables ``have``
    (a read-only older database may lack some); a network study's trials are its finished
    designs and its cycles network totals."""
    stats = _candidate_study_stats(s, ids, have)
    if NetworkTrialRow.__tablename__ in have:
        stats.update(network_study_stats(s, ids))
    return stats


def _candidate_study_stats(s: Connection, ids: list[int] | None, have: set[str]
                           ) -> dict[int, tuple[int, int, int | None]]:
    t, c = TrialRow.__table__, CandidateRow.__table__
    if t.name not in have or c.name not in have:  # a read-only database with studies only
        return {}
    ok = c.c.status == "ok"
    q = (select(t.c.study_id, func.count(t.c.id), func.sum(case((ok, 1), else_=0)),
                func.min(case((ok, c.c.cycles), else_=None)))
         .select_from(t.join(c, t.c.candidate_id == c.c.id)).group_by(t.c.study_id))
    if ids is not None:
        q = q.where(t.c.study_id.in_(ids))
    return {sid: (int(n), int(f or 0), None if b is None else int(b))
            for sid, n, f, b in s.execute(q)}


def _study_info(row: Any, n_trials: int, n_feasible: int, best: int | None) -> StudyInfo:
    g = row.get
    return StudyInfo(name=row["name"], workload=row["workload"], space=dict(g("space") or {}),
                     sampler=row["sampler"], objective=row["objective"], board=row["board"],
                     seed=g("seed"), n_trials=n_trials, n_feasible=n_feasible,
                     created_at=_utc(g("created_at")),
                     optuna_study_name=g("optuna_study_name") or row["name"],
                     best_cycles=best, identity=g("identity"))


def _utc(dt: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; the store writes UTC."""
    if dt is None:
        return dt
    if dt.tzinfo is not None:  # PostgreSQL's session zone (e.g. Etc/UTC): the same instant
        return dt.astimezone(UTC)
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
