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

**Schema.** The tables carry a schema revision (Alembic, ``store.migrations``). A writer brings
an older database up to the head revision in place (a vtatune 0.1 database, which has none, is
completed and stamped); readers change nothing and cope with missing columns (their fields
read as empty). A database of a later vtatune (a revision this code does not know) is refused
in one line naming the version that reads it. A change of tables is one revision file
(``python -m vtatune.store.migrations new "..."``).

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

from vtatune.errors import StoreError
from vtatune.store.candidates import Candidates, row_key
from vtatune.store.engine import (
    DEFAULT_TIMEOUT_S,
    PG_CONNECT_TIMEOUT_S,
    SQLITE_SUFFIXES,
    database_exists,
    default_url,
    migrate,
    normalize_url,
    sqlite_path,
)
from vtatune.store.network import NetworkTrials
from vtatune.store.slots import DONE, RUNNING, Slots
from vtatune.store.studies import Studies

__all__ = ["DEFAULT_TIMEOUT_S", "DONE", "PG_CONNECT_TIMEOUT_S", "RUNNING", "SQLITE_SUFFIXES",
           "Store", "StoreError", "database_exists", "default_url", "migrate", "normalize_url",
           "row_key", "sqlite_path"]


class Store(Candidates, Studies, Slots, NetworkTrials):
    """Candidates, trials and studies in one SQLAlchemy database (see the module docstring).

    The parts, one module each: the database (``store.engine``: URLs, engines, sessions,
    schema and migrations), the candidate cache (``store.candidates``), studies and trials
    (``store.studies``), trial slots, owners and leases (``store.slots``) and network trials
    (``store.network``).
    """
