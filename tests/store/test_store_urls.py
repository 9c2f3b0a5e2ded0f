"""Opening databases: the default location, paths, pragmas, and one-line errors for bad URLs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from vtatune.store import Store, StoreError, database_exists, default_url, normalize_url


def test_default_url_is_db_folder_of_the_project(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VTATUNE_HOME", str(tmp_path))
    assert default_url() == f"sqlite:///{tmp_path}/db/vtatune.sqlite"
    assert normalize_url(None) == default_url()
    assert not database_exists(None)
    store = Store()
    assert (tmp_path / "db" / "vtatune.sqlite").is_file() and database_exists(None)
    assert store.url == default_url() and store.dialect == "sqlite"


def test_a_sqlite_path_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = Store("results/run.sqlite")
    assert store.url == f"sqlite:///{tmp_path}/results/run.sqlite"
    assert (tmp_path / "results" / "run.sqlite").is_file()


def test_sqlite_runs_in_wal_mode(sqlite_url: str) -> None:
    store = Store(sqlite_url)
    reader, _ = store._engines()
    with reader.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 60_000
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:  # WAL is a property of the file: every client gets it
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"vt_studies", "vt_candidates", "vt_trials"} <= tables


def test_in_memory_sqlite_works() -> None:
    store = Store("sqlite://")
    assert store.studies() == []


@pytest.mark.parametrize(("url", "message"), [
    ("foo://x", "unsupported database 'foo://x': SQLAlchemy has no dialect 'foo'"),
    ("not a url", "malformed database 'not a url' (expected e.g. sqlite:///"),
    ("postgresql://user:secret@host:port/db", "malformed database 'postgresql://user:***@host"),
    ("mysql+nosuchdriver://h/x", "unsupported database 'mysql+nosuchdriver://h/x'"),
    ("postgresql+psycopg2://u:secret@h/x", "cannot open database 'postgresql+psycopg2://u:***@h/x"
     "': its driver is not installed (No module named 'psycopg2'; pip install psycopg2-binary)"),
])
def test_bad_urls_are_one_line(url: str, message: str) -> None:
    if "psycopg2" in url:
        try:
            import psycopg2  # noqa: F401
            pytest.skip("psycopg2 is installed")
        except ImportError:
            pass
    with pytest.raises(StoreError) as info:
        Store(url)
    msg = str(info.value)
    assert msg.startswith(message) and "\n" not in msg and "secret" not in msg


def test_unreachable_postgresql_is_one_line() -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(StoreError) as info:
        Store("postgresql+psycopg://vt@127.0.0.1:1/vtatune")
    msg = str(info.value)
    assert msg.startswith("cannot open database 'postgresql+psycopg://vt@127.0.0.1:1/vtatune': ")
    assert "refused" in msg and "\n" not in msg


def test_unwritable_path_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StoreError, match=r"^cannot open database 'sqlite:///.*afile/db\.sqlite'"):
        Store(f"sqlite:///{tmp_path}/afile/db.sqlite")


def test_a_file_that_is_not_a_database_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "notes.sqlite"
    bad.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(StoreError, match=r"cannot open database .*: file is not a database$"):
        Store(str(bad))


def test_a_read_only_database_can_be_read(sqlite_url: str, tmp_path: Path) -> None:
    Store(sqlite_url).create_or_load_study("s", "w", {}, "tpe", "latency", "pynq-z1", None)
    path = sqlite_url.removeprefix("sqlite:///")
    ro = Store(f"sqlite:///file:{path}?mode=ro&uri=true")
    assert [s.name for s in ro.studies()] == ["s"]
    with pytest.raises(StoreError, match=r"^database .*: attempt to write a readonly database$"):
        ro.create_or_load_study("t", "w", {}, "tpe", "latency", "pynq-z1", None)
