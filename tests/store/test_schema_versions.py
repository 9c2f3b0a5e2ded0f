"""The store's schema revisions (Alembic, ``vtatune.store.migrations``): a database of the
previous vtatune reads the same after the upgrade, on SQLite and PostgreSQL; the models and the
revisions agree; a database of a later vtatune is refused in one line naming its version."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Column, Float, MetaData, create_engine, inspect, text

from vtatune import __version__
from vtatune.errors import StoreError
from vtatune.store import Store, migrations
from vtatune.store.migrations.__main__ import differences, new_revision

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parents[2]


def _read_studies() -> Any:
    spec = importlib.util.spec_from_file_location("read_studies", DATA / "read_studies.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _revision(path: Path) -> str | None:
    conn = sqlite3.connect(path)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if migrations.VERSION_TABLE not in names:
            return None
        return conn.execute(f"SELECT version_num FROM {migrations.VERSION_TABLE}").fetchone()[0]
    finally:
        conn.close()


def test_alembic_reads_the_chain_opening_a_database_reads() -> None:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(migrations.VERSIONS.parent),
                             version_locations=[str(migrations.VERSIONS)])
    assert script.get_heads() == [migrations.head()]
    walked = [s.revision for s in script.walk_revisions()]
    assert walked[::-1] == list(migrations.known())
    for rev in migrations.known():  # every id names the release that first writes it
        assert migrations.written_by(rev), rev


def test_the_models_are_the_head_revision() -> None:
    """A change of ``store/models.py`` without its revision file fails here (the fix:
    ``python -m vtatune.store.migrations new "what changed"``)."""
    ops = differences()
    assert ops.is_empty(), ops.as_diffs()


def test_a_database_of_vtatune_0_1_reads_the_same(tmp_path: Path) -> None:
    """pre_alembic.sqlite: an operator, a network and a two-network study written by the code
    before schema versions (tests/store/data/read_studies.py says how); every record, API
    frame and `show --json` reads back as that code read them."""
    expected = _without_later_fields(json.loads((DATA / "pre_alembic.json").read_text()))
    db = tmp_path / "old.sqlite"
    shutil.copy(DATA / "pre_alembic.sqlite", db)
    before = db.read_bytes()
    reader = _read_studies().read

    def read(url: str, readonly: bool) -> Any:
        return _without_later_fields(reader(url, readonly=readonly))

    assert read(str(db), readonly=True) == expected  # a reader reads it as it is
    assert db.read_bytes() == before and _revision(db) is None
    store = Store(f"sqlite:///{db}")  # a writer upgrades it in place
    store.studies()
    store.close()
    assert _revision(db) == migrations.head()
    assert read(str(db), readonly=False) == expected  # (`show` in it opens it read-only)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # Optuna's own version table is untouched beside ours
        assert conn.execute("SELECT count(*) FROM alembic_version").fetchone()[0] == 1


#: Fields added after pre_alembic.json was written (revision 0002: energy); in what the
#: old database reads back they must be empty (None), and are then left out.
LATER_FIELDS = {"accelerator_energy_j", "board_energy_j", "energy",
                "best_accelerator_energy_j"}
#: Keys added after it that read a value from the old rows, left out on both sides (each named
#: in CHANGELOG): ``show --json``'s ``best_seconds`` of an operator study (issue 32: the same
#: keys as a network's) and ``best_trial`` of a network study (issue 34: the best line names
#: its design), and each front or top row's ``timing_domain`` (issue 35: whether its time is
#: extrapolated).
LATER_KEYS = {"best_seconds", "best_trial"}
LATER_ROW_KEYS = {"timing_domain"}


def _without_later_fields(obj: Any, path: str = "") -> Any:
    if isinstance(obj, dict):
        row = path.endswith(("show_json/pareto", "show_json/top"))
        return {k: _without_later_fields(v, f"{path}/{k}") for k, v in obj.items()
                if not (k in LATER_FIELDS and v in (None, {}))
                and not (k in LATER_KEYS and path.endswith("show_json"))
                and not (k in LATER_ROW_KEYS and row)}
    if isinstance(obj, list):
        return [_without_later_fields(v, path) for v in obj]
    return obj


def _as_vtatune_0_1(url: str) -> None:
    """Make the database at ``url`` look like one an earlier vtatune 0.1 wrote: no version
    table, and no ``host_seconds`` columns (added late in 0.1): the baseline's frozen tables
    (later revisions' columns are not there)."""
    spec = importlib.util.spec_from_file_location(
        "baseline_0001", migrations.VERSIONS / "0001_baseline.py")
    assert spec is not None and spec.loader is not None
    baseline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(baseline)
    if url.startswith("sqlite:///"):
        Path(url[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url)
    baseline.metadata.create_all(engine)
    with engine.begin() as conn:
        for table in ("vt_candidates", "vt_network_trials"):
            conn.execute(text(f"ALTER TABLE {table} DROP COLUMN host_seconds"))
    engine.dispose()


def _state(url: str) -> tuple[str | None, set[str]]:
    engine = create_engine(url)
    with engine.connect() as conn:
        state = (migrations.current(conn),
                 {c["name"] for c in inspect(conn).get_columns("vt_candidates")})
    engine.dispose()
    return state


def test_an_earlier_database_is_upgraded_in_place(url: str, make_record: Any) -> None:
    """On SQLite and on PostgreSQL: readers leave it be, the first writer upgrades it."""
    _as_vtatune_0_1(url)
    assert _state(url) == (None, _state(url)[1]) and "host_seconds" not in _state(url)[1]
    assert Store(url, readonly=True).studies() == []  # readers cope without the columns
    assert _state(url)[0] is None
    store = Store(url)
    store.save(make_record(1))
    revision, columns = _state(url)
    assert revision == migrations.head() and "host_seconds" in columns
    assert {"accelerator_energy_j", "board_energy_j", "energy"} <= columns  # revision 0002
    got = store.lookup(make_record(1).key)
    assert got is not None and replace(got, created_at=None) == make_record(1)
    assert (got.accelerator_energy_j, got.board_energy_j, got.energy) == (None, None, {})
    store.close()
    Store(url).close()  # at the head: nothing more to do
    assert _state(url)[0] == migrations.head()


def _later_versions(tmp_path: Path) -> Path:
    """The shipped revisions plus one of a later vtatune (9.9.0) adding a column."""
    versions = tmp_path / "versions"
    shutil.copytree(migrations.VERSIONS, versions,
                    ignore=shutil.ignore_patterns("__pycache__"))
    models = MetaData()
    from vtatune.store.models import TABLES

    for table in TABLES:
        table.to_metadata(models)
    models.tables["vt_candidates"].append_column(Column("energy_j", Float, nullable=True))
    path = new_revision("energy per call", models, versions)
    assert path is not None and path.parent == versions
    text_ = path.read_text()
    assert "op.add_column('vt_candidates', sa.Column('energy_j'" in text_
    number = len(migrations.known()) + 1  # the new revision's own id only (not its parent's)
    later = text_.replace(f"{number:04d}_vtatune_{__version__}",
                          f"{number:04d}_vtatune_9.9.0")
    assert later.count("_vtatune_9.9.0") == 2  # revision = "..." and the docstring's id
    path.write_text(later)
    migrations._chain.cache_clear()
    return versions


def test_a_new_revision_is_one_file_and_reaches_existing_databases(
        url: str, tmp_path: Path) -> None:
    """The one-file step: the generated revision adds the column to a database at the head;
    this vtatune then refuses the database, naming the version that reads it."""
    Store(url).close()
    versions = _later_versions(tmp_path)
    assert migrations.head(versions).endswith("_vtatune_9.9.0")
    engine = create_engine(url)
    with engine.begin() as conn:
        assert migrations.upgrade(conn, versions) == [migrations.head(versions)]
    engine.dispose()
    revision, columns = _state(url)
    assert revision == migrations.head(versions) and "energy_j" in columns
    for readonly in (True, False):
        with pytest.raises(StoreError) as err:
            Store(url, readonly=readonly).studies()
        msg = str(err.value)
        assert "was written by vtatune 9.9.0 or later" in msg and "\n" not in msg
        assert f"this is vtatune {__version__}" in msg
    assert _state(url)[0] == migrations.head(versions)  # nothing written


def test_the_cli_on_a_database_of_a_later_vtatune(tmp_path: Path) -> None:
    db = tmp_path / "later.sqlite"
    Store(f"sqlite:///{db}").close()
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE {migrations.VERSION_TABLE} SET version_num = '0007_vtatune_1.4.0'")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args in (["studies"], ["search", "dense", "--shape", "16,64,64", "--trials", "1",
                               "--workers", "1"]):
        res = subprocess.run([sys.executable, "-m", "vtatune", *args, "--db", str(db)],
                             capture_output=True, text=True, env=env, timeout=120)
        assert res.returncode == 2 and not res.stdout, res.stderr
        assert res.stderr.startswith(f"vtatune: error: database 'sqlite:///{db}' was written "
                                     "by vtatune 1.4.0 or later (schema 0007_vtatune_1.4.0)")
        assert len(res.stderr.splitlines()) == 1


def test_energy_columns_round_trip_and_rows_stored_before_read_none(
        url: str, make_record: Any) -> None:
    """Revision 0002 (energy) on SQLite and PostgreSQL: a candidate's and a network design's
    energy are stored and read back exactly; a row stored without them reads None (not
    recomputed), and a database at revision 0001 reaches the head with its rows intact."""
    from vtatune.store import LayerResult, NetworkTrialRecord

    energy = {"accelerator_j": {"value": 2e-3, "low": 1e-3, "high": 4e-3},
              "board_j": {"value": 9e-3, "low": 7e-3, "high": 1.2e-2},
              "components_j": {"gemm": 1e-3, "base": 7e-3}, "note": "estimate"}
    with_energy = make_record(2, accelerator_energy_j=2e-3, board_energy_j=9e-3, energy=energy)
    store = Store(url)
    store.save_many([make_record(1), with_energy])
    old, new = store.lookup(make_record(1).key), store.lookup(with_energy.key)
    assert old is not None and old.accelerator_energy_j is None and old.energy == {}
    assert new is not None and replace(new, created_at=None) == with_energy
    store.create_or_load_study("net", "network:x", {"network": {"name": "x"}}, "tpe",
                               "area-energy", "pynq-z1", 0)
    layer = LayerResult("C1", "w1", 3, key="k", cycles=10, seconds=1e-3,
                        accelerator_energy_j=1e-4, board_energy_j=2e-3)
    trial = NetworkTrialRecord(study="net", number=0, hw_key="h", hw={}, hw_name="h",
                               status="ok", area_mm2=1.0, cycles=30, seconds=3e-3,
                               layers=(layer, LayerResult("C2", "w2", 1)),
                               accelerator_energy_j=3e-4, board_energy_j=6e-3)
    store.save_network_trial(trial)
    (got,) = store.network_trials("net")
    assert (got.accelerator_energy_j, got.board_energy_j) == (3e-4, 6e-3)
    assert got.layers == trial.layers  # a layer's energy in the JSON; absent reads None
    store.close()

    # back to revision 0001: the energy columns gone, as an older vtatune left them
    engine = create_engine(url)
    with engine.begin() as conn:
        for table, cols in (("vt_candidates", ("accelerator_energy_j", "board_energy_j",
                                               "energy")),
                            ("vt_network_trials", ("accelerator_energy_j", "board_energy_j"))):
            for col in cols:
                conn.execute(text(f"ALTER TABLE {table} DROP COLUMN {col}"))
        conn.execute(text(f"UPDATE {migrations.VERSION_TABLE} SET version_num = "
                          f"'{migrations.known()[0]}'"))
    engine.dispose()
    reader = Store(url, readonly=True)
    read = reader.lookup(with_energy.key)
    assert read is not None and read.accelerator_energy_j is None  # readers cope
    reader.close()
    store = Store(url)  # a writer upgrades it to the head
    assert _state(url)[0] == migrations.head()
    again = store.lookup(with_energy.key)
    assert again is not None and again.accelerator_energy_j is None and again.cycles == \
        with_energy.cycles
    store.save(with_energy)
    again = store.lookup(with_energy.key)
    assert again is not None and replace(again, created_at=None) == with_energy
    store.close()
