"""Energy in the search (issue 33): every evaluated candidate stores its energy, the energy
objectives (area-energy, latency-energy, edp, area-latency-energy) for operator and network
studies, fronts of two and three objectives."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from sqlalchemy import create_engine, text

from vtatune.search import objectives, runner
from vtatune.search import space as spaces
from vtatune.search.evaluate import objective_values
from vtatune.search.pareto import pareto_front
from vtatune.store import Store

SHAPE = "16,64,64"  # a small dense layer: evaluations take tens of ms


@pytest.fixture()
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'search.sqlite'}"


def _brute_front(points: np.ndarray) -> set[int]:
    """Indices of the points no other point dominates (no worse everywhere, better somewhere)."""
    out = set()
    for i, p in enumerate(points):
        no_worse = (points <= p).all(axis=1)
        better = (points < p).any(axis=1)
        if not (no_worse & better).any():
            out.add(i)
    return out


@pytest.mark.parametrize("dims", [1, 2, 3, 4])
def test_a_front_of_any_number_of_objectives_is_the_brute_force_one(dims: int) -> None:
    rng = np.random.default_rng(dims)
    for _ in range(30):
        n = int(rng.integers(1, 60))
        # few distinct values: many ties and duplicates
        pts = rng.integers(0, 6, size=(n, dims)).astype(float)
        got = pareto_front([tuple(p) for p in pts])
        assert set(got) == _brute_front(pts)
        assert len(got) == len(set(got))
        keys = [(*pts[i], i) for i in got]
        assert keys == sorted(keys)  # by the first objective, then the next ones


def test_a_front_refuses_nan_and_mixed_lengths() -> None:
    with pytest.raises(ValueError):
        pareto_front([(1.0, 2.0, math.nan)])
    with pytest.raises(ValueError):
        pareto_front([(1.0, 2.0, 3.0), (1.0, 2.0)])


def test_the_objectives_name_their_values() -> None:
    assert objectives.values("area-latency", 2.0, 3.0, None) == (2.0, 3.0)
    assert objectives.values("latency", 2.0, 3.0, None) == (3.0,)
    assert objectives.values("area-energy", 2.0, 3.0, 5.0) == (2.0, 5.0)
    assert objectives.values("latency-energy", 2.0, 3.0, 5.0) == (3.0, 5.0)
    assert objectives.values("edp", 2.0, 3.0, 5.0) == (15.0,)
    assert objectives.values("area-latency-energy", 2.0, 3.0, 5.0) == (2.0, 3.0, 5.0)
    assert objectives.values("edp", 2.0, 3.0, None) is None  # stored before energy
    assert [objectives.count(o) for o in objectives.OBJECTIVES] == [2, 1, 2, 2, 1, 3]
    assert not objectives.uses_energy("area-latency") and objectives.uses_energy("edp")
    assert set(spaces.OBJECTIVES) == set(objectives.OBJECTIVES)


def _independent_energy(rec, board_name: str):
    """The candidate compiled, built and timed again outside the search (no compile cache,
    no shared measurement) and priced by ``energy.estimate`` from its own program."""
    from vtatune.compiler import compile_candidate
    from vtatune.energy import estimate
    from vtatune.hardware import boards
    from vtatune.hardware.config import HwConfig
    from vtatune.runtime import build_program
    from vtatune.simulator import simulate
    from vtatune.workloads.registry import parse

    wl = parse("dense", None, SHAPE)
    assert wl.signature == rec.workload
    hw = HwConfig.from_params(rec.hw)
    board = boards.load(board_name)
    res = compile_candidate(wl, hw, dict(rec.knobs))
    assert res.ok
    program = build_program(res, wl, hw)
    timing = simulate(program, board)
    assert timing.cycles == rec.cycles
    return estimate(program, timing.cycles, timing.seconds, board)


def test_an_energy_search_stores_each_candidates_energy_as_estimate_gives_it(db) -> None:
    sp = spaces.load("dense", shape=SHAPE, objective="area-energy")
    r = runner.run(sp, sampler="random", trials=6, study="e", db=db, workers=1, seed=0)
    assert r.trials == 6
    trials = Store(db).trials("e")
    ok = [t for t in trials if t.candidate.feasible]
    assert ok, "no feasible trial to check"
    for t in ok:
        c = t.candidate
        want = _independent_energy(c, sp.board)
        assert c.accelerator_energy_j == pytest.approx(want.accelerator_j.value, rel=1e-9)
        assert c.board_energy_j == pytest.approx(want.board_j.value, rel=1e-9)
        assert c.energy["accelerator_j"]["low"] == pytest.approx(want.accelerator_j.low,
                                                                  rel=1e-9)
        assert c.energy["board_j"]["high"] == pytest.approx(want.board_j.high, rel=1e-9)
        assert c.energy["note"] == want.note
        assert sum(c.energy["components_j"].values()) == pytest.approx(c.board_energy_j)
        # physical sense: the board's energy is the accelerator's plus a positive baseline
        assert 0 < c.accelerator_energy_j < c.board_energy_j
        assert objective_values(sp, c) == (c.area_mm2, c.accelerator_energy_j)
    for t in trials:
        if not t.candidate.feasible:
            assert t.candidate.accelerator_energy_j is None


def test_three_objectives_reach_the_sampler_the_mirror_and_the_front(db) -> None:
    import optuna

    from vtatune.search.summary import summarize

    sp = spaces.load("dense", shape=SHAPE, objective="area-latency-energy")
    r = runner.run(sp, sampler="nsga2", trials=8, study="three", db=db, workers=1, seed=2)
    assert r.trials == 8 and r.mirror_error is None
    store = Store(db)
    trials = store.trials("three")
    study = optuna.load_study(study_name="three", storage=db)
    assert len(study.directions) == 3
    assert study.metric_names == ["area_mm2", "seconds", "accelerator_energy_j"]
    mirrored = {t.user_attrs["vtatune_trial"]: t for t in study.trials}
    ok = [t for t in trials if t.candidate.feasible]
    for t in ok:
        c = t.candidate
        assert mirrored[t.number].values == [c.area_mm2, c.seconds, c.accelerator_energy_j]
    data = summarize(store.study("three"), trials)
    pts = np.array([[t.candidate.area_mm2, t.candidate.seconds, t.candidate.accelerator_energy_j]
                    for t in ok])
    front = {ok[i].number for i in _brute_front(pts)}
    listed = {row["trial"] for row in data["pareto"]} | {
        tie["trial"] for row in data["pareto"] for tie in row["ties"]}
    assert listed == front
    assert all(row["accelerator_energy_j"] is not None for row in data["pareto"])


def test_a_stored_candidate_without_energy_is_evaluated_again_for_an_energy_objective(
        db, tmp_path) -> None:
    lat = spaces.load("dense", shape=SHAPE, objective="latency")
    runner.run(lat, sampler="random", trials=5, study="old", db=db, workers=1, seed=4)
    engine = create_engine(db)  # as a vtatune before energy stored them
    with engine.begin() as conn:
        conn.execute(text("UPDATE vt_candidates SET accelerator_energy_j = NULL, "
                          "board_energy_j = NULL, energy = NULL"))
    engine.dispose()
    served = runner.run(lat, sampler="random", trials=5, study="old2", db=db, workers=1, seed=4)
    assert served.cached == 5 and served.evaluated == 0  # latency needs no energy: served
    old = {t.candidate.key: t.candidate for t in Store(db).trials("old")}
    sp = spaces.load("dense", shape=SHAPE, objective="edp")
    stored = list(old.values())
    # a warm start learns nothing from a feasible record without the energy it needs
    assert len(runner.history(sp, stored)) == sum(not c.feasible for c in stored)
    assert len(runner.history(lat, stored)) == len(stored)
    r = runner.run(sp, sampler="random", trials=5, study="new", db=db, workers=1, seed=4)
    n_ok = sum(c.feasible for c in old.values())
    assert r.evaluated == n_ok and r.cached == 5 - n_ok  # only feasible ones needed energy
    for t in Store(db).trials("new"):
        c = t.candidate
        if c.feasible:
            assert c.accelerator_energy_j is not None  # the row gained it
            assert objective_values(sp, c) == (c.seconds * c.accelerator_energy_j,)
            assert replace(c, accelerator_energy_j=None, board_energy_j=None, energy={},
                           created_at=None, compile_ms=None, sim_ms=None) == replace(
                old[c.key], created_at=None, compile_ms=None, sim_ms=None)


def test_an_energy_objective_on_a_board_without_energy_constants_is_refused(tmp_path) -> None:
    import json

    from vtatune.errors import ConfigError
    from vtatune.hardware import boards

    raw = json.loads((boards.boards_dir() / "pynq-z1.json").read_text())
    raw["name"] = "myboard"
    path = tmp_path / "myboard.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(ConfigError) as err:
        spaces.load("dense", shape=SHAPE, objective="edp", board=str(path))
    assert "needs the energy model's constants" in str(err.value)
    assert spaces.load("dense", shape=SHAPE, objective="latency", board=str(path))


def test_network_energy_is_the_count_weighted_sum_of_its_layers(tiny, tmp_path) -> None:
    from vtatune.networks import runner as nrunner

    db = f"sqlite:///{tmp_path / 'net.sqlite'}"
    sp = replace(tiny, objective="latency-energy")
    r = nrunner.run(sp, sampler="random", trials=3, study="n", db=db, workers=1, seed=0)
    assert r.trials == 3
    store = Store(db)
    designs = [t for t in store.network_trials("n") if t.feasible]
    assert designs, "no feasible design to check"
    for t in designs:
        total_acc = total_board = 0.0
        evals = {e.candidate.key: e.candidate for e in store.network_evals("n", t.number)}
        for la in t.layers:
            stored = evals[la.key]  # the layer's pick, as stored for the design
            assert stored.accelerator_energy_j is not None
            assert la.accelerator_energy_j == stored.accelerator_energy_j
            assert la.board_energy_j == stored.board_energy_j
            total_acc += la.count * stored.accelerator_energy_j
            total_board += la.count * stored.board_energy_j
        assert t.accelerator_energy_j == pytest.approx(total_acc, rel=1e-12)
        assert t.board_energy_j == pytest.approx(total_board, rel=1e-12)
    info = store.study("n")
    assert info.objective == "latency-energy"
    assert info.best_accelerator_energy_j == min(t.accelerator_energy_j for t in designs)
    # the Optuna mirror: the design's two values
    import optuna

    assert r.mirror_error is None
    study = optuna.load_study(study_name="n", storage=db)
    assert study.metric_names == ["seconds", "accelerator_energy_j"]
    mirrored = {t.user_attrs["vtatune_trial"]: t for t in study.trials}
    for t in designs:
        assert mirrored[t.number].values == [t.seconds, t.accelerator_energy_j]
