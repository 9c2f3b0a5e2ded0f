"""The network search loop: designs with every layer tuned, shared candidates, resume, bounds."""

from __future__ import annotations

import sqlite3

import pytest

from vtatune.networks import runner
from vtatune.search.space import Candidate
from vtatune.store import NetworkTrialRecord, Store


@pytest.fixture(scope="module")
def searched(tiny, tmp_path_factory):
    """A 5-design search of the tiny network (serial, seeded), and its store."""
    db = f"sqlite:///{tmp_path_factory.mktemp('net') / 'net.sqlite'}"
    result = runner.run(tiny, sampler="random", trials=5, study="s", db=db, workers=1, seed=0,
                        warm_start=False)
    return result, db


def _ctx(space):
    from vtatune.store.identity import context

    return context(space.board, space.hw_space.constraints)


def test_every_design_is_a_trial_with_every_layer(tiny, searched) -> None:
    result, db = searched
    store = Store(db)
    ctx = _ctx(tiny)
    from vtatune.store.identity import context

    # a per-layer study of any layer measures in the same context: it is served the network's
    # layer candidates (and the network its), keyed alike
    for sp in tiny.unit_spaces.values():
        assert context(sp.board, sp.constraints).key == ctx.key
    trials = store.network_trials("s")
    assert result.trials == 5 and [t.number for t in trials] == list(range(5))
    assert len({t.hw_key for t in trials}) == 5  # a trial is a design new to the study
    ok = [t for t in trials if t.status == "ok"]
    assert ok, [t.reason for t in trials]
    names = [la.name for la in tiny.network.layers]
    for t in ok:
        assert [la.name for la in t.layers] == names
        total_cycles = total_s = 0.0
        for la in t.layers:
            rec = store.lookup(la.key, ctx.key)
            # the pick is a stored candidate of that layer on this design, the same key a
            # per-layer study would use
            wl = tiny.network.layer(la.name).workload
            assert la.key == Candidate(wl, tiny.hw_space.hardware(t.params), la.knobs).key
            assert rec.feasible and rec.cycles == la.cycles and rec.seconds == la.seconds
            assert rec.hw_key == t.hw_key and rec.context == ctx.key
            assert la.bound_cycles <= la.cycles  # the physical bound holds per layer
            total_cycles += la.count * la.cycles
            total_s += la.count * la.seconds
        assert t.cycles == total_cycles and t.seconds == pytest.approx(total_s)
        assert t.bound_cycles <= t.cycles
        # layers of one shape share one pick; a design's evaluations are its budget
        a, a2 = t.layers[0], t.layers[2]
        assert a.key == a2.key and a.trials == a2.trials
        assert t.evaluated + t.cached == len(Store(db).network_evals("s", t.number))
        assert t.evaluated + t.cached >= tiny.inner.trials
    info = store.study("s")
    assert info.is_network and info.n_trials == 5 and info.n_feasible == len(ok)
    assert info.best_cycles == min(t.cycles for t in ok)


def test_budget_follows_the_network_time(tiny, searched) -> None:
    _, db = searched
    for t in Store(db).network_trials("s"):
        if t.status != "ok":
            continue
        by_unit = {la.workload: la.trials for la in t.layers}
        assert min(by_unit.values()) >= tiny.inner.min_per_layer
        assert sum(by_unit.values()) == t.evaluated + t.cached


def test_layer_candidates_are_shared_with_other_studies(tiny, searched) -> None:
    _, db = searched
    again = runner.run(tiny, sampler="random", trials=5, study="again", db=db, workers=1,
                       seed=0, warm_start=False)
    # same seed, same designs (no warm start from the first study): layer candidates the
    # first study evaluated are served from the store, never compiled twice
    store = Store(db)
    before = {e.candidate.key for e in store.network_evals("s")}
    evals = store.network_evals("again")
    assert again.cached == sum(e.cached for e in evals) > len(evals) // 2
    for e in evals:
        assert e.cached == (e.candidate.key in before)
    first = {t.number: t.hw_key for t in store.network_trials("s")}
    assert {t.number: t.hw_key for t in store.network_trials("again")} == first


def test_a_continuation_for_something_else_is_refused(tiny, searched) -> None:
    from dataclasses import replace

    from vtatune.errors import StoreError
    from vtatune.networks.space import InnerSettings

    _, db = searched
    runner.check_study(tiny, "s", db)  # the same space continues
    other = replace(tiny, inner=InnerSettings(trials=9, min_per_layer=2))
    with pytest.raises(StoreError, match="study 's' is for inner trials 7, not 9"):
        runner.check_study(other, "s", db)
    with pytest.raises(StoreError, match="is for inner trials"):
        runner.run(other, sampler="random", trials=6, study="s", db=db, workers=1, seed=0)


def test_resume_continues_an_interrupted_design(tiny, tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    runner.run(tiny, sampler="random", trials=2, study="r", db=db, workers=1, seed=1)
    store = Store(db)
    done = store.network_trials("r")
    feasible = [t for t in done if t.status == "ok"]
    assert feasible
    # fake an interruption: the last feasible design becomes "running" with half its evals,
    # its slot held by a process that is gone
    t = feasible[-1]
    evals = store.network_evals("r", t.number)
    half = len(evals) // 2
    with sqlite3.connect(tmp_path / "r.sqlite") as conn:
        conn.execute("DELETE FROM vt_network_evals WHERE number = ? AND seq >= ?",
                     (t.number, half))
        conn.execute("UPDATE vt_claims SET state = 'running', owner = 'gone' "
                     "WHERE number = ?", (t.number,))
    store.save_network_trial(NetworkTrialRecord(
        study="r", number=t.number, hw_key=t.hw_key, hw=t.hw, hw_name=t.hw_name,
        status="running", params=t.params, sampler=t.sampler))
    stored = {r.key for u in tiny.units for r in store.history(u.signature)}
    r = runner.run(tiny, sampler="random", trials=2, study="r", db=db, workers=1, seed=1)
    assert r.trials == 2 and r.new_trials == 1
    again = {x.number: x for x in store.network_trials("r")}[t.number]
    assert again.status == "ok" and again.cycles is not None
    evals_after = store.network_evals("r", t.number)
    assert [e.candidate.key for e in evals_after[:half]] == [e.candidate.key
                                                             for e in evals[:half]]
    assert again.evaluated + again.cached == len(evals_after) >= tiny.inner.trials
    # what the first run stored is served, never compiled again
    for e in evals_after[half:]:
        assert e.cached == (e.candidate.key in stored)
    assert [e.seq for e in evals_after] == list(range(len(evals_after)))
    more = runner.run(tiny, sampler="random", trials=3, study="r", db=db, workers=1, seed=1)
    assert more.trials == 3 and more.new_trials == 1


def test_a_design_whose_bound_is_dominated_is_not_tuned(tiny, tmp_path) -> None:
    from vtatune.search.loop import Progress, StudyLoop
    from vtatune.store.records import Slot

    store = Store(f"sqlite:///{tmp_path / 'd.sqlite'}")
    owner = store.register_owner()
    ev = runner.DesignEvaluator(tiny, "random", "d", 0)
    loop = StudyLoop(store, "d", owner, 60.0, ev, Progress(total=2))
    ev.open(loop, warm_start=False)
    params = {"LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_WGT_BUFF_SIZE": 16}
    hw = tiny.hw_space.hardware(params)
    # a front point smaller and faster than this design's lower bound dominates it
    ev.front = [(1.0, 1e-9, 7)]
    job = ev.start(Slot("d", 0, hw.key, params, owner), hw)
    assert job.done and ev.complete(job.outcome())
    (t,) = store.network_trials("d")
    assert t.status == "dominated" and "trial 7" in t.reason and t.evaluated == 0
    assert t.bound_cycles > 0 and t.area_mm2 > 1.0
    assert store.network_evals("d") == []
    # with a front point that does not dominate it, the design is tuned
    ev.front = [(1.0, 1e3, 7)]
    job = ev.start(Slot("d", 1, hw.key, params, owner), hw)
    assert not job.done and job.next() is not None
    assert store.network_trials("d")[1].status == "running"
