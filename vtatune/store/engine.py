"""The store's database: URLs, engines and sessions, the schema and its migrations, and the
SQL helpers the store's parts share (``store.Store`` is the one way in)."""

from __future__ import annotations

import os
import re
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Self

from sqlalchemy import Engine, Table, create_engine, event, func, inspect, or_, select
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.pool import NullPool

from vtatune.errors import StoreError
from vtatune.store import migrations
from vtatune.store.models import TABLES, CandidateRow, StudyRow
from vtatune.store.records import DETERMINISTIC, TRANSIENT

#: File suffixes accepted as a bare SQLite path instead of a URL (``--db results.sqlite``).
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")

#: How long a writer waits for another process's write lock before giving up (seconds).
DEFAULT_TIMEOUT_S = 60.0

#: How long opening a PostgreSQL connection may take (seconds).
PG_CONNECT_TIMEOUT_S = 10

#: Dialects with ``INSERT ... ON CONFLICT DO UPDATE``; others look up, then insert or update.
_UPSERT_DIALECTS = ("sqlite", "postgresql")

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


def _existing_columns(conn: Any) -> dict[str, set[str]]:
    """Table name -> its column names, for the store's tables present in the database."""
    insp = inspect(conn)
    names = set(insp.get_table_names())
    return {t.name: {c["name"] for c in insp.get_columns(t.name)} for t in TABLES
            if t.name in names}


def _baseline_tables() -> list[Table]:
    """The tables of the baseline revision (vtatune 0.1.0's last schema, frozen)."""
    import importlib

    base = importlib.import_module("vtatune.store.migrations.versions.0001_baseline")
    return list(base.metadata.sorted_tables)


def _foreign(columns: dict[str, set[str]]) -> str:
    """What makes tables named like vtatune's in a database without a schema revision (empty,
    or vtatune 0.1's) not vtatune's, or "" when nothing does.

    Every column the baseline cannot add (not nullable, no server default:
    ``migrations.ensure``) has been in its table since the table was made
    (tests/store/test_store_migration.py checks it against the first schema), so a table of
    that name without one is another program's: nothing this version can read or migrate.
    """
    if not columns:
        return ""
    for table in _baseline_tables():
        have = columns.get(table.name)
        if have is None:
            continue
        lacking = [c.name for c in table.columns
                   if c.name not in have and not c.nullable and c.server_default is None]
        if lacking:
            return (f"table {table.name} has no column{'s' if len(lacking) > 1 else ''} "
                    + ", ".join(lacking[:4]) + (", ..." if len(lacking) > 4 else ""))
    return ""


def migrate(conn: Any) -> list[str]:
    """Bring the database on ``conn`` (inside a write transaction) up to the models: the
    schema revisions it lacks (``store.migrations``: a database of vtatune 0.1 gets the
    baseline's missing tables, columns and indexes, and is stamped). Returns the revisions
    applied, for tests and logs.

    Concurrent migrators are serialized by the write lock (SQLite) or an advisory lock
    (PostgreSQL); the second finds the database at the head and does nothing.
    """
    from vtatune.store import migrations

    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
    return migrations.upgrade(conn)


#: Every open store of this process (for the fork hook).
_LIVE: weakref.WeakSet[Database] = weakref.WeakSet()


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


class Database:
    """The database a ``Store`` opens: engines, sessions and transactions (the schema is
    migrated on first use), shared by the parts below."""

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
                revision = migrations.current(conn)
            where = f"database '{self.display_url}'"
            if revision is not None and revision not in migrations.known():
                raise StoreError(migrations.newer_than_code(where, revision))
            foreign = _foreign(columns) if revision is None else ""
            if foreign:
                raise StoreError(f"{where} is not a vtatune database of a version this "
                                 f"vtatune can read ({foreign})")
            if not self.readonly and revision != migrations.head():
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

    def __enter__(self) -> Self:
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

    def _cols(self, table: Table, prefix: str = "") -> list[Any]:
        """The columns of ``table`` this database has (labelled ``prefix + name``)."""
        have = (self._columns or {}).get(table.name, set())
        return [c.label(prefix + c.name) if prefix else c for c in table.columns
                if c.name in have]

    def _has(self, table: Table) -> bool:
        return bool((self._columns or {}).get(table.name))

    def _columns_of(self, table: Table) -> set[str]:
        return (self._columns or {}).get(table.name, set())

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
