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
