"""XGBoost latency ranker and feasibility classifier on synthetic data."""

from __future__ import annotations

import numpy as np
import pytest

from vtatune.search.cost_model.xgb_model import FeasibilityModel, LatencyModel


def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.random((n, 12)).astype(np.float32)
    log_cycles = np.log(1 + 3 * x[:, 0] + x[:, 1] ** 2 + 0.5 * x[:, 2] * x[:, 3])
    return x, log_cycles


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


@pytest.mark.parametrize("objective", ["rank", "reg"])
def test_latency_model_orders_unseen_points(objective: str) -> None:
    x, y = _data(300, 0)
    model = LatencyModel(objective)
    model.fit(x, y, seed=0)
    xt, yt = _data(500, 1)
    assert _spearman(model.predict(xt), yt) > 0.85  # lower prediction = fewer cycles


def test_latency_model_is_deterministic() -> None:
    x, y = _data(200, 2)
    a, b = LatencyModel(), LatencyModel()
    a.fit(x, y, seed=5)
    b.fit(x, y, seed=5)
    xt, _ = _data(50, 3)
    assert np.array_equal(a.predict(xt), b.predict(xt))


def test_latency_model_rejects_unknown_objective() -> None:
    with pytest.raises(ValueError, match="rank, reg"):
        LatencyModel("lambdamart")


def test_feasibility_model_learns_a_threshold() -> None:
    x, _ = _data(200, 4)
    ok = x[:, 5] < 0.5
    model = FeasibilityModel()
    model.fit(x, ok, seed=0)
    xt, _ = _data(200, 5)
    p = model.predict(xt)
    assert ((p > 0.5) == (xt[:, 5] < 0.5)).mean() > 0.9


def test_feasibility_model_without_evidence_is_a_constant() -> None:
    x, _ = _data(20, 6)
    model = FeasibilityModel()
    model.fit(x, np.ones(20, dtype=bool))
    assert not model.fitted and (model.predict(x) == 1.0).all()
    model.fit(x, np.arange(20) > 0)  # one failure: too little to learn a boundary from
    assert not model.fitted and np.allclose(model.predict(x), 19 / 20)


def test_cost_model_round_trips_through_a_file(tmp_path) -> None:
    from vtatune.search.cost_model.xgb_model import XGBCostModel

    x, y = _data(200, 6)
    ok = x[:, 5] < 0.7
    model = XGBCostModel("reg", infeasible_penalty=2.0, feasible_threshold=0.4)
    model.fit(x, np.where(ok, y, np.nan), ok, seed=3)
    model.save(tmp_path / "m.json")
    back = XGBCostModel.load(tmp_path / "m.json")
    xt, _ = _data(60, 7)
    lat, p = model.predict(xt)
    lat2, p2 = back.predict(xt)
    assert np.array_equal(lat, lat2) and np.array_equal(p, p2)
    assert (back.infeasible_penalty, back.feasible_threshold) == (2.0, 0.4)
    # the latency model learned on the feasible rows only: as a LatencyModel fit on them
    alone = LatencyModel("reg")
    alone.fit(x[ok], y[ok], seed=3)
    assert np.array_equal(alone.predict(xt), lat)


def test_an_unfitted_feasibility_prior_survives_saving(tmp_path) -> None:
    from vtatune.search.cost_model.xgb_model import XGBCostModel

    x, y = _data(30, 8)
    ok = np.ones(30, dtype=bool)
    ok[0] = False  # one failure: too few to train the classifier, the prior stays 29/30
    model = XGBCostModel()
    model.fit(x, y, ok, seed=0)
    model.save(tmp_path / "m.json")
    back = XGBCostModel.load(tmp_path / "m.json")
    assert np.allclose(back.predict_feasible(x[:3]), 29 / 30)


def test_doubt_penalty_is_zero_above_the_threshold_and_full_at_zero() -> None:
    from vtatune.search.cost_model.xgb_model import XGBCostModel

    m = XGBCostModel(infeasible_penalty=3.0, feasible_threshold=0.5)
    got = m.penalty(np.array([1.0, 0.5, 0.25, 0.0]))
    assert np.allclose(got, [0.0, 0.0, 1.5, 3.0])
