"""Several `vtatune search NETWORK` processes on one network study, on SQLite and on a real
PostgreSQL server (started by the test session): designs are claimed as slots, the study ends
with exactly N designs, none evaluated twice, and a killed process's design is finished by
another with the layer results it had stored (as tests/search/test_scale_out.py for operators).
"""

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
from vtatune.store.records import NetworkEval, NetworkTrialRecord

ROOT = Path(__file__).parents[2]


def _network_file(tmp_path: Path, inner_trials: int) -> Path:
    """tests/networks/tiny_space.py's network as a file, with ``inner_trials`` per design."""
    path = tmp_path / f"tiny{inner_trials}.toml"
    path.write_text(f'''[network]
name = "tiny"
layers = [
  {{name = "a", kind = "conv2d", shape = "1,16,8,8,16,3,3,1,1", count = 2}},
  {{name = "b", kind = "conv2d", shape = "1,16,8,8,32,1,1,0,2", count = 1}},
  {{name = "a2", kind = "conv2d", shape = "1,16,8,8,16,3,3,1,1", count = 1}},
  {{name = "fc", kind = "dense", shape = "1,32,16", count = 3}},
]
[hardware]
LOG_BLOCK_IN = [3, 4]
LOG_BLOCK_OUT = [3, 4]
LOG_ACC_BUFF_SIZE = [15]
LOG_WGT_BUFF_SIZE = [15, 16]
[objective]
kind = "area-latency"
[inner]
trials = {inner_trials}
min_per_layer = 2
''')
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return request.getfixturevalue("pg_url")
    return f"sqlite:///{tmp_path / 'shared.sqlite'}"


def _search(net: Path, db: str, study: str, trials: int, seed: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "vtatune", "search", str(net), "--trials", str(trials),
         "--sampler", "random", "--seed", str(seed), "--workers", "1", "--db", db,
         "--study", study, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True)


def _check_study(db: str, study: str, n: int) -> None:
    """Exactly designs 0..n-1, all finished, each design once, each layer candidate evaluated
    (not served) at most once in the study, and every design's layer results in order."""
    store = Store(db)
    trials = store.network_trials(study)
    assert [t.number for t in trials] == list(range(n))
    assert all(t.status != "running" for t in trials)
    assert len({t.hw_key for t in trials}) == n, "a design was stored twice in the study"
    evals = store.network_evals(study)
    fresh = [e.candidate.key for e in evals if not e.cached]
    assert len(fresh) == len(set(fresh)), "a layer candidate was evaluated twice"
    for t in trials:
        mine = [e for e in evals if e.number == t.number]
        assert [e.seq for e in mine] == list(range(len(mine)))
        assert t.evaluated + t.cached == len(mine)
    assert store.slot_counts(study) == (n, 0)


def test_two_processes_share_one_network_study(db: str, tmp_path: Path) -> None:
    n = 5
    net = _network_file(tmp_path, 7)
    procs = [_search(net, db, "shared", n, seed) for seed in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    results = [json.loads(out) for out, _ in outs]
    assert [r["trials"] for r in results] == [n, n]  # each sees the whole study at the end
    assert sum(r["new_trials"] for r in results) == n  # each design finished by one of them
    assert results[0]["pareto"] == results[1]["pareto"]
    assert not any("warning" in err for _, err in outs)  # the Optuna copy was updated
    _check_study(db, "shared", n)
    import optuna  # one Optuna trial per design, written by whichever process held the lease

    mirrored = optuna.load_study(study_name="shared", storage=db).get_trials(deepcopy=False)
    assert sorted(t.user_attrs["vtatune_trial"] for t in mirrored) == list(range(n))


def kill_mid_design(victim: subprocess.Popen[str], db: str, study: str
                    ) -> tuple[NetworkTrialRecord, list[NetworkEval]]:
    """Wait until ``victim`` (a ``vtatune search`` in its own session) has a design of
    ``study`` running with 3 layer results stored, kill it and its evaluation workers, and
    return that design and the layer results it stored before it died (not none)."""
    deadline = time.monotonic() + 300
    running = None
    while running is None and time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            store = Store(db, readonly=True)
            for t in store.network_trials(study):
                if t.status == "running" and len(store.network_evals(study, t.number)) >= 3:
                    running = t
        except Exception:  # noqa: BLE001 - the study is not there yet
            continue
    assert running is not None, victim.communicate(timeout=60)[1][-3000:]
    os.killpg(victim.pid, signal.SIGKILL)  # the process and its evaluation workers
    victim.wait(10)
    had = Store(db).network_evals(study, running.number)
    assert had  # what it stored before it died
    return running, had


def test_a_killed_process_design_is_finished_by_another(db: str, tmp_path: Path) -> None:
    n = 3
    net = _network_file(tmp_path, 60)  # designs long enough to be killed in the middle of
    victim = _search(net, db, "k", n, 0)
    running, had = kill_mid_design(victim, db, "k")
    other = _search(net, db, "k", n, 1)
    out, err = other.communicate(timeout=600)
    assert other.returncode == 0, err[-3000:]
    assert json.loads(out)["trials"] == n
    _check_study(db, "k", n)
    store = Store(db)
    done = {t.number: t for t in store.network_trials("k")}[running.number]
    assert done.hw_key == running.hw_key  # the same design, finished
    after = store.network_evals("k", running.number)
    # the layer results it had are kept, in their order, and none is evaluated again
    assert [(e.seq, e.candidate.key, e.cached) for e in after[:len(had)]] == [
        (e.seq, e.candidate.key, e.cached) for e in had]
    assert len(after) >= 60
