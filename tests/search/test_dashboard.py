"""The Optuna mirror equals the store: numbers, real parameter values, objective names,
infeasible trials marked as constraint violations."""

from __future__ import annotations

import math

import pytest

from vtatune.search import runner
from vtatune.search import space as spaces
from vtatune.store import Store


@pytest.fixture()
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'dash.sqlite'}"


def test_the_mirror_equals_the_store(db) -> None:
    import optuna

    sp = spaces.load("dense", shape="16,64,64")
    runner.run(sp, sampler="random", trials=20, study="dash", db=db, workers=1, seed=2)
    study = optuna.load_study(study_name="dash", storage=db)
    assert study.metric_names == ["area_mm2", "cycles"]
    mirrored = study.get_trials(deepcopy=False)
    stored = {t.number: t for t in Store(db).trials("dash")}
    assert [t.number for t in mirrored] == sorted(stored)
    states = set()
    for t in mirrored:
        cand = stored[t.number].candidate
        assert t.user_attrs["vtatune_trial"] == t.number
        assert t.user_attrs["status"] == cand.status
        assert not any(k.startswith("u_") for k in t.params)  # real values, not positions
        for k, v in t.params.items():
            assert v == (cand.hw[k] if k.startswith("LOG_") else cand.knobs[k])
            assert t.distributions[k]._contains(t.distributions[k].to_internal_repr(v))
        assert set(sp.searched_hw) <= set(t.params)
        violation = t.system_attrs["constraints:violation"]
        if cand.feasible:
            assert t.state == optuna.trial.TrialState.COMPLETE and violation == 0
            assert t.values == [cand.area_mm2, cand.cycles]
        else:
            assert t.state == optuna.trial.TrialState.FAIL and violation > 0
            assert t.values is None
        assert all(math.isfinite(v) for v in t.values or [])
        states.add(t.state)
    assert len(states) == 2  # the space has both kinds: both were checked


def test_a_resumed_study_mirrors_every_trial_once(db) -> None:
    import optuna

    sp = spaces.load("dense", shape="16,64,64")
    runner.run(sp, sampler="random", trials=5, study="r", db=db, workers=1, seed=1)
    runner.run(sp, sampler="random", trials=9, study="r", db=db, workers=1, seed=1)
    trials = optuna.load_study(study_name="r", storage=db).get_trials(deepcopy=False)
    assert [t.user_attrs["vtatune_trial"] for t in trials] == list(range(9))
    assert [t.number for t in trials] == list(range(9))
