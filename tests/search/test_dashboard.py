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


#: A space whose small weight buffers make some schedules overflow (``invalid`` trials)
#: beside feasible ones (a search screens designs that do not fit: they are no trials).
MIXED = {"workload": {"kind": "dense", "shape": "16,256,256"},
         "hardware": {"LOG_BLOCK_IN": [3, 4], "LOG_BLOCK_OUT": [3, 4],
                      "LOG_WGT_BUFF_SIZE": [11, 12]},
         "objective": {"kind": "area-latency"}}


def test_the_mirror_equals_the_store(db) -> None:
    import optuna

    sp = spaces.from_dict(MIXED, "mixed.toml")
    runner.run(sp, sampler="random", trials=20, study="dash", db=db, workers=1, seed=2)
    study = optuna.load_study(study_name="dash", storage=db)
    assert study.metric_names == ["area_mm2", "seconds"]  # end-to-end latency by default
    mirrored = study.get_trials(deepcopy=False)
    stored = {t.number: t for t in Store(db).trials("dash")}
    assert [t.number for t in mirrored] == sorted(stored)
    states = set()
    durations: list[float] = []
    for t in mirrored:
        cand = stored[t.number].candidate
        assert t.user_attrs["vtatune_trial"] == t.number
        assert t.user_attrs["status"] == cand.status
        assert not any(k.startswith("u_") for k in t.params)  # real values, not positions
        for k, v in t.params.items():
            assert v == (cand.hw[k] if k.startswith("LOG_") else cand.knobs[k])
            assert t.distributions[k]._contains(t.distributions[k].to_internal_repr(v))
        assert set(sp.searched_hw) <= set(t.params)
        # optuna-dashboard 0.21 shows system_attrs["constraints"], a list (its
        # _serializer.py); Optuna reads the same list as the trial's constraints
        (violation,) = t.system_attrs["constraints"]
        assert t.constraints == {"0": violation}
        assert not any(k.startswith("constraints:") for k in t.system_attrs)
        # the trial ran from its evaluation's start to when it was stored
        record = stored[t.number]
        end = record.created_at.astimezone().replace(tzinfo=None)
        # (a design refused by the analytic checks before any compile has no such time)
        took = 0.0 if record.cached else ((cand.compile_ms or 0) + (cand.sim_ms or 0)) / 1e3
        assert t.datetime_complete == end
        assert (t.datetime_complete - t.datetime_start).total_seconds() == \
            pytest.approx(took, abs=1e-5)
        if cand.feasible:
            durations.append(took)
        if cand.feasible:
            assert t.state == optuna.trial.TrialState.COMPLETE and violation == 0
            assert t.values == [cand.area_mm2, cand.seconds]
        else:
            assert t.state == optuna.trial.TrialState.FAIL and violation > 0
            assert t.values is None
        assert all(math.isfinite(v) for v in t.values or [])
        states.add(t.state)
    assert len(states) == 2  # the space has both kinds: both were checked
    assert durations and min(durations) > 0  # compiled and simulated: it took time


def test_a_resumed_study_mirrors_every_trial_once(db) -> None:
    import optuna

    sp = spaces.load("dense", shape="16,64,64")
    runner.run(sp, sampler="random", trials=5, study="r", db=db, workers=1, seed=1)
    runner.run(sp, sampler="random", trials=9, study="r", db=db, workers=1, seed=1)
    trials = optuna.load_study(study_name="r", storage=db).get_trials(deepcopy=False)
    assert [t.user_attrs["vtatune_trial"] for t in trials] == list(range(9))
    assert [t.number for t in trials] == list(range(9))


def test_the_bulk_writer_writes_what_optuna_writes(tmp_path) -> None:
    import optuna
    from optuna.distributions import CategoricalDistribution, IntDistribution
    from optuna.trial import TrialState, create_trial

    from vtatune.search.dashboard import add_trials

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{tmp_path / 'bulk.sqlite'}"
    store = Store(url)
    dists = {"LOG_BLOCK_OUT": CategoricalDistribution([3, 4, 5]),
             "tile_co": IntDistribution(1, 64, log=True)}
    trials = [
        create_trial(params={"LOG_BLOCK_OUT": 4, "tile_co": 8}, distributions=dists,
                     values=[1.5, 2e5], user_attrs={"vtatune_trial": 0, "status": "ok"},
                     system_attrs={"constraints": [0.0]}, intermediate_values={0: 3.0}),
        create_trial(state=TrialState.FAIL, params={"LOG_BLOCK_OUT": 5, "tile_co": 1},
                     distributions=dists, user_attrs={"vtatune_trial": 1, "reason": "x"},
                     constraints={"violation": 0.25}),
        create_trial(params={"LOG_BLOCK_OUT": 3},
                     distributions={"LOG_BLOCK_OUT": dists["LOG_BLOCK_OUT"]},
                     values=[2.0, math.inf]),
    ]
    by_optuna = optuna.create_study(storage=url, study_name="a", directions=["minimize"] * 2)
    by_optuna.add_trials(trials)
    ours = optuna.create_study(storage=url, study_name="b", directions=["minimize"] * 2)
    add_trials(store, ours._study_id, trials[:1])
    add_trials(store, ours._study_id, trials[1:])  # numbering continues across batches
    fields = ("number", "state", "values", "params", "distributions", "user_attrs",
              "system_attrs", "intermediate_values", "datetime_start", "datetime_complete")
    a = optuna.load_study(study_name="a", storage=url).get_trials()
    b = optuna.load_study(study_name="b", storage=url).get_trials()
    assert [[getattr(t, f) for f in fields] for t in a] == \
        [[getattr(t, f) for f in fields] for t in b]
    assert [t.number for t in b] == [0, 1, 2]
    # a distribution Optuna would refuse for the study is refused, and nothing is written
    clash = create_trial(params={"LOG_BLOCK_OUT": 4},
                         distributions={"LOG_BLOCK_OUT": IntDistribution(3, 5)}, values=[1, 1])
    with pytest.raises(ValueError):
        by_optuna.add_trial(clash)
    with pytest.raises(ValueError):
        add_trials(store, ours._study_id, [clash])
    assert len(optuna.load_study(study_name="b", storage=url).trials) == 3


def test_a_trial_finishing_out_of_order_waits_for_the_ones_before_it(db) -> None:
    # Slot 3 still running while 4 and 5 are done: the mirror adds 0-2 only, then 3-5 once 3
    # is done, so Optuna's numbers stay vtatune's whichever order slots finish in.
    import optuna

    from vtatune.search.dashboard import OptunaMirror, _State

    sp = spaces.load("dense", shape="16,64,64")
    runner.run(sp, sampler="random", trials=6, study="o", db=db, workers=1, seed=4)
    optuna.delete_study(study_name="o", storage=db)  # the run's mirror: made again below
    store = Store(db)

    class Finished:  # the store as seen while slot 3 runs, then after
        hidden = {3}

        def trial_numbers(self, name):
            return store.trial_numbers(name) - self.hidden

        def trials(self, name, numbers=None):
            return store.trials(name, numbers=numbers)

        def __getattr__(self, name):
            return getattr(store, name)

    mirror = object.__new__(OptunaMirror)
    mirror.url, mirror.name, mirror.space, mirror.n_objectives = db, "o", sp, 2
    state, view = _State(), Finished()
    mirror._pass(view, state)
    study = optuna.load_study(study_name="o", storage=mirror.url)
    assert [t.user_attrs["vtatune_trial"] for t in study.get_trials()] == [0, 1, 2]
    view.hidden = set()
    mirror._pass(view, state)
    trials = study.get_trials()
    assert [t.number for t in trials] == [t.user_attrs["vtatune_trial"] for t in trials] \
        == list(range(6))


def test_a_network_study_is_mirrored_one_trial_per_design(db) -> None:
    import itertools

    import optuna

    from tests.networks.tiny_space import TINY
    from vtatune import studies
    from vtatune.networks import space as nspace
    from vtatune.store import NetworkTrialRecord

    # designs that do not fit are screened (no trials) since the screen came: the no_fit
    # design is one a study stored before it (as such studies hold), added to five tuned ones

    sp = nspace.from_dict({**TINY, "inner": {"trials": 5, "min_per_layer": 1}}, "tiny.toml")
    job = studies.NetworkSearch(space=sp, sampler="random", study="netdash")
    studies.run_network(job, trials=5, db=db, workers=1, seed=3, timeout=120,
                        warm_start=False)
    used = {t.hw_key for t in Store(db).network_trials("netdash")}
    kinds = sp.hw_space.param_space()
    params = next(p for p in (dict(zip(kinds, c, strict=True))
                              for c in itertools.product(*(v for _, v in kinds.values())))
                  if sp.hw_space.hardware(p).key not in used)
    hw = sp.hw_space.hardware(params)
    Store(db).save_network_trial(NetworkTrialRecord(
        study="netdash", number=5, hw_key=hw.key, hw=hw.log_params(), hw_name=hw.name,
        status="no_fit", reason="does not fit pynq-z1: lut 402%", area_mm2=9.0,
        resources={"fits": False, "over": ["lut"], "utilization": {"lut": 402.0}},
        params=params, sampler="random"))
    run = studies.run_network(job, trials=6, db=db, workers=1, seed=3, timeout=120,
                              warm_start=False)
    assert run.mirror_error is None and run.result.trials == 6
    study = optuna.load_study(study_name="netdash", storage=db)
    assert study.metric_names == ["area_mm2", "seconds"]
    mirrored = study.get_trials(deepcopy=False)
    store = Store(db)
    designs = {t.number: t for t in store.network_trials("netdash")}
    assert [t.number for t in mirrored] == sorted(designs) == list(range(6))
    statuses, tuned = set(), []
    for t in mirrored:
        d = designs[t.number]
        statuses.add(d.status)
        assert t.user_attrs["vtatune_trial"] == d.number
        assert (t.user_attrs["status"], t.user_attrs["hw_name"]) == (d.status, d.hw_name)
        # the searched hardware values, as they are (one parameter per searched key)
        assert t.params == {k: d.hw[k] for k in sp.searched_hw}
        (violation,) = t.system_attrs["constraints"]
        if d.feasible:
            assert t.state == optuna.trial.TrialState.COMPLETE and violation == 0
            assert t.values == [d.area_mm2, d.seconds]
            # every layer's pick, as show gives it
            for la in d.layers:
                attr = t.user_attrs[f"layer {la.name}"]
                assert (attr["count"], attr["cycles"], attr["trials"]) == \
                    (la.count, la.cycles, la.trials)
                assert attr["ms"] == pytest.approx(1e3 * la.seconds)
                assert t.user_attrs[f"layer {la.name} ms"] == attr["ms"]
                assert attr["knobs"] == la.knobs
            assert sum(t.user_attrs[f"layer {la.name}"]["share"] for la in d.layers) == \
                pytest.approx(1.0)
        else:
            assert t.state == optuna.trial.TrialState.FAIL and violation > 0
            assert t.values is None and t.user_attrs["reason"] == d.reason
        # from its first layer evaluation's start to when it was stored
        end = d.created_at.astimezone().replace(tzinfo=None)
        assert t.datetime_complete == end and t.datetime_start <= end
        evals = store.network_evals("netdash", d.number)
        if evals:
            first = min(e.created_at for e in evals).astimezone().replace(tzinfo=None)
            assert t.datetime_start <= first
            tuned.append((t.datetime_complete - t.datetime_start).total_seconds())
        else:  # refused by the analytic checks: no layer ran
            assert t.datetime_start == end
    assert statuses >= {"ok", "no_fit"} and tuned and min(tuned) > 0
