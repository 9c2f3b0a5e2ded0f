"""Databases made by the previous version keep working; their records are never served."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vtatune.errors import UserError
from vtatune.store import Store

V1 = Path(__file__).parent / "data" / "v1_database.sql"


@pytest.fixture()
def v1(tmp_path: Path) -> Path:
    """A database written by vtatune 0.1 (two studies: 'legacy' joint, 'legacy-sched')."""
    path = tmp_path / "old" / "v1.sqlite"
    path.parent.mkdir()
    conn = sqlite3.connect(path)
    conn.executescript(V1.read_text())
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    return path


def _columns(path: Path, table: str) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    finally:
        conn.close()


def test_reading_an_old_database_needs_no_migration(v1: Path) -> None:
    before = _columns(v1, "vt_candidates")
    store = Store(f"sqlite:///{v1}", readonly=True)
    assert [s.name for s in store.studies()] == ["legacy", "legacy-sched"]
    assert store.study("legacy-sched").identity is None
    trials = store.trials("legacy-sched")
    assert len(trials) == 3 and all(t.candidate.status == "ok" and t.candidate.cycles
                                    for t in trials)
    assert all(t.candidate.context == "" for t in trials)
    assert sorted(p.name for p in v1.parent.iterdir()) == ["v1.sqlite"]  # no -wal, no -shm
    assert _columns(v1, "vt_candidates") == before  # a reader changes nothing


def test_a_writer_migrates_and_old_records_are_never_served(v1: Path) -> None:
    url = f"sqlite:///{v1}"
    old = Store(url, readonly=True).trials("legacy-sched")
    store = Store(url)
    assert {"candidate_key", "context", "model", "board"} <= _columns(v1, "vt_candidates")
    assert "identity" in _columns(v1, "vt_studies")
    # every record is still there and readable
    assert [t.candidate for t in store.trials("legacy-sched")] == [t.candidate for t in old]
    # but none is served for a study: its identity lacks the board and models
    from vtatune.store.identity import context

    ctx = context("pynq-z1", {"fit_board": True, "max_area_mm2": None})
    assert store.lookup_many([t.candidate.key for t in old], ctx.key) == {}
    with sqlite3.connect(v1) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_searches_in_an_old_database(v1: Path) -> None:
    from vtatune.search import runner
    from vtatune.search import space as spaces

    url = f"sqlite:///{v1}"
    sp = spaces.load("dense", shape="16,64,64", hw="default", objective="latency")
    with pytest.raises(UserError, match="earlier vtatune .* cannot be continued"):
        runner.run(sp, sampler="random", trials=4, study="legacy-sched", db=url, workers=1,
                   seed=0)
    # the old study's candidates are evaluated again in a new study (seed 0 proposes them)
    r = runner.run(sp, sampler="random", trials=3, study="fresh", db=url, workers=1, seed=0)
    assert r.trials == 3 and r.cached == 0 and r.evaluated == 3
    old = {t.candidate.key: t.candidate for t in Store(url).trials("legacy-sched")}
    for t in Store(url).trials("fresh"):
        if t.candidate.key in old:  # same candidate: a new record beside the old one
            assert t.candidate.context and not old[t.candidate.key].context
    assert len(Store(url).trials("legacy-sched")) == 3


# a column added by a later revision: test_schema_versions.py


def test_every_new_column_is_nullable() -> None:
    from vtatune.store.models import TABLES

    v1 = V1.read_text()
    for table in TABLES:
        if f"CREATE TABLE {table.name} " not in v1:
            continue  # a new table is created whole
        for col in table.columns:
            if f"\t{col.name} " not in v1 and f'"{col.name}"' not in v1:
                assert col.nullable or col.server_default is not None, col


# ---- a database of another program (or another schema) -----------------------------------------

def _foreign_db(tmp_path: Path, ddl: str) -> Path:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(ddl)
    return path


#: Tables named like vtatune's with other columns: another program's, or another version's.
FOREIGN = [
    "CREATE TABLE vt_studies (id INTEGER PRIMARY KEY, title TEXT NOT NULL);",
    "CREATE TABLE vt_candidates (key TEXT PRIMARY KEY, value BLOB);"
    "INSERT INTO vt_candidates VALUES ('a', x'00');",
]


@pytest.mark.parametrize("ddl", FOREIGN)
def test_a_database_of_another_schema_is_one_error(tmp_path: Path, ddl: str) -> None:
    path = _foreign_db(tmp_path, ddl)
    before = _dump(path)
    for readonly in (False, True):
        with pytest.raises(UserError, match="is not a vtatune database of a version this "
                                            "vtatune can read .table vt_"):
            Store(f"sqlite:///{path}", readonly=readonly).studies()
    assert _dump(path) == before  # no table created, no column added, no row written


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


@pytest.mark.parametrize("args", [
    ["search", "dense", "--shape", "16,64,64", "--trials", "1", "--workers", "1"],
    ["studies"], ["show", "x"], ["report", "x"],
])
def test_the_cli_on_a_database_of_another_schema(tmp_path: Path, args: list[str]) -> None:
    import os
    import subprocess
    import sys

    path = _foreign_db(tmp_path, FOREIGN[0])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    res = subprocess.run([sys.executable, "-m", "vtatune", *args, "--db", str(path)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.startswith("vtatune: error: database ")
    assert "is not a vtatune database of a version this vtatune can read" in res.stderr
    assert len(res.stderr.splitlines()) == 1 and not res.stdout
