"""The search loop: trials stored, dedupe across studies, resume, isolation, safety."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from vtatune.search import runner
from vtatune.search import space as spaces
from vtatune.store import Store

SHAPE = "16,64,64"  # a small dense layer: evaluations take tens of ms


@pytest.fixture()
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'search.sqlite'}"


def _space():
    return spaces.load("dense", shape=SHAPE)


def test_trials_are_stored_with_results(db) -> None:
    r = runner.run(_space(), sampler="random", trials=10, study="s1", db=db, workers=1, seed=0)
    assert r.trials == 10 and r.new_trials == 10 and r.evaluated + r.cached == 10
    trials = Store(db).trials("s1")
    assert [t.number for t in trials] == list(range(10))
    keys = [t.candidate.key for t in trials]
    assert len(set(keys)) == 10  # a trial is a candidate new to the study
    for t in trials:
        c = t.candidate
        assert c.status in ("ok", "invalid", "no_fit", "failed", "hw_invalid")
        if c.status == "ok":
            assert c.cycles and c.cycles >= max(c.bounds["compute_cycles"],
                                                c.bounds["memory_cycles"])
            assert 0 < c.efficiency <= 1 and c.area_mm2 > 0 and c.counters["gemm_counter"] > 0
        else:
            assert c.reason and c.cycles is None


def test_identical_candidates_are_served_from_the_store_across_studies(db) -> None:
    a = runner.run(_space(), sampler="random", trials=8, study="a", db=db, workers=1, seed=3)
    b = runner.run(_space(), sampler="random", trials=8, study="b", db=db, workers=1, seed=3)
    assert a.evaluated + a.cached == 8
    assert b.evaluated == 0 and b.cached == 8  # same seed, same proposals: nothing recompiled
    ta, tb = Store(db).trials("a"), Store(db).trials("b")
    assert [t.candidate.key for t in ta] == [t.candidate.key for t in tb]
    assert all(t.cached for t in tb)



def test_a_search_served_from_the_store_starts_no_worker(db, monkeypatch) -> None:
    from vtatune.search.workers import WorkerPool

    runner.run(_space(), sampler="random", trials=6, study="a", db=db, workers=1, seed=3)
    started = []
    start = WorkerPool._start
    monkeypatch.setattr(WorkerPool, "_start", lambda self: started.append(1) or start(self))
    b = runner.run(_space(), sampler="random", trials=6, study="b", db=db, workers=2, seed=3)
    assert b.cached == 6 and started == []
    c = runner.run(_space(), sampler="random", trials=8, study="b", db=db, workers=2, seed=3)
    assert c.evaluated > 0 and 1 <= len(started) <= 2  # started with the first evaluation


def test_resume_continues_to_the_requested_count(db) -> None:
    runner.run(_space(), sampler="tpe", trials=6, study="r", db=db, workers=1, seed=1)
    r = runner.run(_space(), sampler="tpe", trials=11, study="r", db=db, workers=1, seed=1)
    assert r.trials == 11 and r.new_trials == 5
    numbers = [t.number for t in Store(db).trials("r")]
    assert numbers == list(range(11))
    again = runner.run(_space(), sampler="tpe", trials=11, study="r", db=db, workers=1, seed=1)
    assert again.new_trials == 0


def test_optuna_dashboard_study_mirrors_the_trials(db) -> None:
    import optuna

    runner.run(_space(), sampler="random", trials=7, study="dash", db=db, workers=1, seed=2)
    study = optuna.load_study(study_name="dash", storage=db)
    assert len(study.trials) == 7
    assert sorted(t.user_attrs["vtatune_trial"] for t in study.trials) == list(range(7))


def test_timeouts_become_results_and_the_search_goes_on(db) -> None:
    r = runner.run(_space(), sampler="random", trials=3, study="slow", db=db, workers=1,
                   seed=4, timeout=1e-6)  # below any evaluation, even one its worker has
    # measured before (a retry on the worker that finished it late is served from its memo)
    statuses = {t.candidate.status for t in Store(db).trials("slow")}
    assert r.trials == 3 and "timeout" in statuses
    assert all("longer than 1e-06 s" in t.candidate.reason
               for t in Store(db).trials("slow") if t.candidate.status == "timeout")


def test_impossible_hardware_is_screened_with_a_reason_not_stored(db, tmp_path) -> None:
    # a 1 KiB wgt buffer holds a single 32x32 weight tile: every point with BLOCK_IN 32 is
    # impossible hardware, screened with its reason before it becomes a trial
    p = tmp_path / "tiny.toml"
    p.write_text('[workload]\nkind = "dense"\nshape = "16,64,64"\n[hardware]\n'
                 'LOG_BLOCK_IN = [4, 5]\nLOG_BLOCK_OUT = [5]\nLOG_WGT_BUFF_SIZE = [10]\n'
                 '[schedule]\nknobs = ["tile_co"]\n[constraints]\nfit_board = false\n')
    r = runner.run(spaces.load(p), sampler="grid", trials=6, study="g", db=db, workers=1,
                   seed=0)
    recs = [t.candidate for t in Store(db).trials("g")]
    assert r.trials == len(recs) <= 6 and recs
    assert all(c.hw["LOG_BLOCK_IN"] == 4 and c.status != "hw_invalid" for c in recs)
    assert r.screened["designs"] == 1 and r.screened["by_reason"] == {"hw_invalid": 1}
    assert "wgt buffer" in r.screened["examples"]["hw_invalid"]


def test_killed_search_leaves_a_consistent_store(tmp_path) -> None:
    path = tmp_path / "kill.sqlite"
    url = f"sqlite:///{path}"
    cmd = [sys.executable, "-m", "vtatune", "search", "dense", "--shape", SHAPE,
           "--trials", "400", "--sampler", "random", "--seed", "5", "--db", url,
           "--workers", "2", "--study", "k", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 90
    stored = 0
    while time.monotonic() < deadline and stored < 8:
        time.sleep(0.5)
        if path.exists():
            try:
                con = sqlite3.connect(path, timeout=5)
                stored = con.execute("select count(*) from vt_trials").fetchone()[0]
                con.close()
            except sqlite3.Error:
                pass
    os.killpg(proc.pid, signal.SIGKILL)  # the search and its workers, mid-flight
    proc.wait(10)
    assert stored >= 8, "the search did not store trials in time"
    con = sqlite3.connect(path)
    assert con.execute("pragma integrity_check").fetchone()[0] == "ok"
    n = con.execute("select count(*) from vt_trials").fetchone()[0]
    con.close()
    # every stored trial is readable and the study resumes from where it stopped; only the
    # trials in flight were lost (their numbers may leave gaps)
    trials = Store(url).trials("k")
    numbers = [t.number for t in trials]
    assert len(trials) == n and numbers == sorted(set(numbers))
    r = runner.run(_space(), sampler="random", trials=n + 3, study="k", db=url, workers=1,
                   seed=5)
    assert r.trials == n + 3 and r.new_trials == 3
