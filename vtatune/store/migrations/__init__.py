"""The store's schema versions: Alembic revisions, one file each in ``versions/``.

The store's tables (``store.models``) carry a schema revision in the table
``vt_alembic_version`` (not Alembic's default ``alembic_version``: Optuna keeps its own in the
same database). A writer (``Store(url)``) brings an older database up to ``head()`` in place,
in one transaction, one migrator at a time; a reader (``Store(url, readonly=True)``) changes
nothing and reads older schemas as they are (missing columns read as empty). A database whose
revision this code does not know was written by a later vtatune: both refuse it in one line
naming the version that reads it (``newer_than_code``).

**Revision ids** are ``NNNN_vtatune_X.Y.Z``: a sequence number and the first vtatune release
that writes the schema, so an older vtatune can name the version a newer database needs.

**The baseline** (``0001_vtatune_0.2.0``) is the schema of vtatune 0.1.0's last tables, frozen
in its file. Databases of vtatune 0.1.x have no version table; the baseline creates what they
lack (tables, nullable columns, indexes: 0.1.x migrated that way) and stamps them.

**Adding a column** (or any change) is one new file in ``versions/``, beside the models' change
in ``store/models.py``:

    python -m vtatune.store.migrations new "energy columns"

writes ``versions/NNNN_<slug>.py`` with Alembic's operations for the difference between the
models and the schema at ``head()`` (e.g. ``op.add_column("vt_candidates", sa.Column(
"energy_j", sa.Float(), nullable=True))``); read it, adjust it (data moves, SQLite's
``op.batch_alter_table`` for more than adding), and commit it. A new column must be nullable
or carry a ``server_default`` so existing rows stay valid. ``tests/store/test_schema_versions.py``
fails while the models and the revisions disagree. See docs/development.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

#: Alembic's version table for the store (Optuna's ``alembic_version`` is in the same database).
VERSION_TABLE = "vt_alembic_version"

#: The revision scripts (shipped inside the package: a wheel carries them).
VERSIONS = Path(__file__).resolve().parent / "versions"

_REVISION = re.compile(r"^revision\s*(?::\s*str\s*)?=\s*['\"]([^'\"]+)['\"]", re.M)
_DOWN = re.compile(r"^down_revision\s*(?::[^=]*)?=\s*(None|['\"]([^'\"]+)['\"])", re.M)
_WRITTEN_BY = re.compile(r"_vtatune_(\d+(?:\.\d+)*)")


@lru_cache(maxsize=8)
def _chain(versions: Path = VERSIONS) -> tuple[str, ...]:
    """The revision ids of ``versions``, oldest first (read from the files' text: opening a
    database does not import Alembic; ``test_schema_versions`` checks Alembic agrees)."""
    down: dict[str, str | None] = {}
    for path in sorted(versions.glob("*.py")):
        if path.name.startswith("_"):
            continue
        text = path.read_text()
        found, parent = _REVISION.search(text), _DOWN.search(text)
        if found is None or parent is None:
            raise RuntimeError(f"{path}: no revision/down_revision line")
        down[found.group(1)] = parent.group(2)
    order: list[str] = []
    nxt = {parent: rev for rev, parent in down.items()}
    if len(nxt) != len(down):
        raise RuntimeError(f"{versions}: the revisions branch ({sorted(down)})")
    rev = nxt.get(None)
    while rev is not None:
        order.append(rev)
        rev = nxt.get(rev)
    if len(order) != len(down):
        raise RuntimeError(f"{versions}: revisions not in one chain ({sorted(down)})")
    return tuple(order)


def head(versions: Path = VERSIONS) -> str:
    """The newest revision: the schema of ``store.models``."""
    return _chain(versions)[-1]


def known(versions: Path = VERSIONS) -> tuple[str, ...]:
    """Every revision this code can read or upgrade, oldest first."""
    return _chain(versions)


def current(conn: Any) -> str | None:
    """The database's revision; None where it has no version table (empty, or vtatune 0.1)."""
    from sqlalchemy import inspect, text

    if VERSION_TABLE not in inspect(conn).get_table_names():
        return None
    revision = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
    return None if revision is None else str(revision)


def written_by(revision: str) -> str | None:
    """The vtatune version a revision id names (``0002_vtatune_0.3.0`` -> ``0.3.0``)."""
    m = _WRITTEN_BY.search(revision)
    return m.group(1) if m else None


def newer_than_code(where: str, revision: str) -> str:
    """One line for a database of a revision this code does not know."""
    from vtatune import __version__

    later = written_by(revision)
    reads = f"vtatune {later} or later" if later else "a later vtatune"
    return (f"{where} was written by {reads} (schema {revision}); this is vtatune "
            f"{__version__}, which reads schemas up to {head()}: open it with {reads}")


def upgrade(conn: Any, versions: Path = VERSIONS, target: str = "head") -> list[str]:
    """Run the revisions from the database's own to ``target`` on ``conn`` (inside the
    caller's transaction, which holds the write lock). Returns the revisions applied."""
    from alembic.operations import Operations
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(versions.parent), version_locations=[str(versions)])
    applied: list[str] = []

    def steps(rev: Any, context: Any) -> Any:
        revs = script._upgrade_revs(target, rev)  # what alembic.command.upgrade runs
        applied.extend(step.revision.revision for step in revs)
        return revs

    ctx = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE, "fn": steps,
                                                 "script": script})
    with Operations.context(ctx):
        ctx.run_migrations()
    return applied


def ensure(conn: Any, tables: Iterable[Any]) -> list[str]:
    """Create the missing ``tables``, add their missing columns and indexes on ``conn``; never
    drop or rewrite anything (the baseline's way with a vtatune 0.1 database). Returns what
    it added (``table`` or ``table.column``)."""
    from sqlalchemy import inspect
    from sqlalchemy.schema import CreateColumn

    insp = inspect(conn)
    names = set(insp.get_table_names())
    done: list[str] = []
    for table in tables:
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
