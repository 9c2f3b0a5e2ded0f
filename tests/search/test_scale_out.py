"""Several `vtatune search` processes on one study, on SQLite and on a real PostgreSQL server
(started by the test session): exactly N trials, no candidate twice, nothing lost when one is
killed, race-free creation, a server that goes away, and an Optuna mirror equal to the store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vtatune.store import Store

ROOT = Path(__file__).parents[2]
SHAPE = "16,64,64"


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return request.getfixturevalue("pg_url")
    return f"sqlite:///{tmp_path / 'shared.sqlite'}"


def _search(db: str, study: str, trials: int, seed: int, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "vtatune", "search", "dense", "--shape", SHAPE, "--trials",
         str(trials), "--sampler", "random", "--seed", str(seed), "--workers", "1", "--db", db,
         "--study", study, "--json", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True)


def _check_study(db: str, study: str, n: int) -> None:
    trials = Store(db).trials(study)
    assert [t.number for t in trials] == list(range(n))
    keys = [t.candidate.key for t in trials]
    assert len(set(keys)) == n, "a candidate was stored twice in the study"


def _summary(out: str) -> dict:
    d = json.loads(out)
    return {k: d[k] for k in ("study", "trials", "feasible", "best_cycles", "statuses",
                              "pareto")}


def _check_mirror(db: str, study: str, n: int) -> None:
    import optuna

    mirrored = optuna.load_study(study_name=study, storage=db).get_trials(deepcopy=False)
    assert len(mirrored) == n
    store = {t.number: t for t in Store(db).trials(study)}
    for t in mirrored:
        assert t.user_attrs["vtatune_trial"] == t.number  # same numbers
        cand = store[t.number].candidate
        for k, v in t.params.items():
            assert v == (cand.hw[k] if k.startswith("LOG_") else cand.knobs[k])


def test_four_processes_share_one_study(db: str) -> None:
    n = 24
    procs = [_search(db, "shared", n, seed) for seed in range(4)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    summaries = [_summary(out) for out, _ in outs]
    assert all(s == summaries[0] for s in summaries)  # every process: the same final summary
    assert summaries[0]["trials"] == n
    assert sum(json.loads(out)["new_trials"] for out, _ in outs) == n
    _check_study(db, "shared", n)
    _check_mirror(db, "shared", n)


def test_a_killed_process_loses_nothing(db: str) -> None:
    n = 30
    victim = _search(db, "k", n, 0)
    others = [_search(db, "k", n, seed) for seed in (1, 2)]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        time.sleep(0.5)
        try:
            if Store(db, readonly=True).slot_counts("k")[0] >= 6:
                break
        except Exception:  # noqa: BLE001 - the study is not there yet
            continue
    os.killpg(victim.pid, signal.SIGKILL)  # the process and its evaluation workers
    victim.wait(10)
    outs = [p.communicate(timeout=600) for p in others]
    for p, (out, err) in zip(others, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
        assert json.loads(out)["trials"] == n
    _check_study(db, "k", n)
    _check_mirror(db, "k", n)


def test_creating_one_study_from_many_processes_at_once(db: str, tmp_path: Path) -> None:
    code = """
import sys, time
from pathlib import Path
from vtatune.store import Store
url, go = sys.argv[1:]
store = Store(url)
while not Path(go).exists():
    time.sleep(0.002)
info = store.create_or_load_study("race", "w", {}, "random", "latency", "pynq-z1", 0,
                                  identity={"board": "pynq-z1"})
print(info.name)
"""
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", code, db, str(go)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(6)]
    time.sleep(3)
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "race", err
    assert [s.name for s in Store(db).studies()] == ["race"]


def test_a_server_that_goes_away(tmp_path: Path) -> None:
    from vtatune.store.pgserver import PgServer

    with PgServer() as pg:
        url = pg.create_database("away")
        n = 30
        proc = _search(url, "away", n, 0)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            time.sleep(0.3)
            try:
                if Store(url, readonly=True).trial_count("away") >= 3:
                    break
            except Exception:  # noqa: BLE001 - the study is not there yet
                continue
        pg.kill()
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 2, err[-3000:]
        lines = err.strip().splitlines()
        assert "Traceback" not in err and lines[-1].startswith("vtatune: error: ")
        assert "away" in lines[-1]
        pg.restart()
        stored = Store(url).trials("away")
        assert stored and len({t.candidate.key for t in stored}) == len(stored)
        again = _search(url, "away", n, 0)  # resumable: the same command finishes the study
        out, err = again.communicate(timeout=600)
        assert again.returncode == 0, err[-3000:]
        assert json.loads(out)["trials"] == n
        _check_study(url, "away", n)
