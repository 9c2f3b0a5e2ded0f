"""The fuzz suite's scratch world: the corpus files, a database with studies whose names are
hostile, and a real exported bundle (built once per test process)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
from fuzz_cases import HOSTILE_NAMES, write_bundles, write_files, write_multi_bundles
from fuzz_harness import scratch_home, warm_up


@dataclass(frozen=True)
class FuzzWorld:
    ws: Path
    home: Path
    where: dict[str, str]


@pytest.fixture(scope="session")
def fuzz_world(tmp_path_factory: pytest.TempPathFactory, studies) -> FuzzWorld:
    from vtatune.cli.main import main
    from vtatune.store import Store

    warm_up()
    ws = tmp_path_factory.mktemp("fuzz")
    home = scratch_home(ws / "home")
    (ws / "db").mkdir()
    write_files(ws)
    # a copy of the shared studies plus studies named to attack every sink
    db_path = ws / "db" / "named.sqlite"
    with sqlite3.connect(studies.path) as src, sqlite3.connect(db_path) as dst:
        src.backup(dst)
    db = f"sqlite:///{db_path}"
    store = Store(db)
    info = store.study(studies.tpe)
    trials = store.trials(studies.tpe)
    for name in HOSTILE_NAMES.values():
        store.create_or_load_study(name, info.workload, info.space, info.sampler,
                                   info.objective, info.board, info.seed)
        for t in trials:
            store.add_trial(name, t.number, t.candidate.key, t.sampler, t.params, t.cached)
    store.close()
    bundle = ws / "bundle"
    rc = main(["export", studies.tpe, "--db", studies.db, "--pick", "fastest", "--out",
               str(bundle), "--json"])
    assert rc == 0
    write_bundles(ws, bundle)
    multi_bundle = _multi_bundle(ws)
    write_multi_bundles(ws, multi_bundle)
    where = {"ws": str(ws), "db": db, "bundle": str(bundle), "study": studies.tpe,
             "multi_bundle": str(multi_bundle),
             **{f"name_{tag}": name for tag, name in HOSTILE_NAMES.items()}}
    return FuzzWorld(ws=ws, home=home, where=where)


def _multi_bundle(ws: Path) -> Path:
    """A real bundle of a design for two networks (tests.reports.multi_study)."""
    from tests.reports.multi_study import make
    from vtatune.export.bundle import write_network_bundle
    from vtatune.store import Store

    (ws / "multi").mkdir()
    multi = make(ws / "multi", trials=2)
    store = Store(multi.db)
    folder = ws / "multi_bundle"
    write_network_bundle(store.study(multi.study), store.network_trials(multi.study), "knee",
                         folder, multi.db)
    store.close()
    return folder
