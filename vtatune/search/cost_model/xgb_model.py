"""XGBoost models over proposal features: a latency ranker and a feasibility classifier.

The ranker follows AutoTVM's cost model: gradient-boosted trees with a pairwise rank loss,
trained on the feasible observations (only the order of latencies matters, so one badly
scaled measurement cannot dominate). ``objective="reg"`` trains a squared-error regressor on
log cycles instead (calibrated predictions; compared in the sampler's tests and benchmark).

The classifier learns which proposals are feasible (SRAM overflow, board fit, failed compile)
from every observation; infeasible results never enter the ranker.

Both train single-threaded with a fixed seed, so predictions are reproducible.
``XGBCostModel`` pairs them behind the ``CostModel`` interface (fit, predict, save/load).
"""

from __future__ import annotations

import base64
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import xgboost as xgb

from vtatune.search.cost_model.base import (
    FEASIBLE_THRESHOLD,
    INFEASIBLE_PENALTY,
    CostModel,
)

OBJECTIVES = ("rank", "reg")


@dataclass(frozen=True)
class TreeParams:
    """Boosting settings shared by both models (AutoTVM's XGBoost cost model uses depth 3,
    eta 0.3, gamma 1e-4, min_child_weight 1; more rounds fit the larger feature set)."""

    rounds: int = 60
    max_depth: int = 4
    eta: float = 0.3
    gamma: float = 1e-4
    min_child_weight: float = 1.0
    subsample: float = 1.0
    colsample_bytree: float = 1.0
    max_bin: int = 64  # a few hundred training rows need no finer histograms

    def xgb(self, seed: int) -> dict[str, Any]:
        return {"max_depth": self.max_depth, "eta": self.eta, "gamma": self.gamma,
                "min_child_weight": self.min_child_weight, "subsample": self.subsample,
                "colsample_bytree": self.colsample_bytree, "max_bin": self.max_bin,
                "tree_method": "hist", "nthread": 1, "seed": seed, "verbosity": 0}


class LatencyModel:
    """Predicts how slow a feasible proposal is: lower ``predict`` means fewer cycles.

    With ``objective="rank"`` the values are scores on an arbitrary scale (only their order is
    meaningful); with ``"reg"`` they estimate log cycles.
    """

    def __init__(self, objective: str = "rank", params: TreeParams | None = None):
        if objective not in OBJECTIVES:
            raise ValueError(f"objective {objective!r} is not one of {', '.join(OBJECTIVES)}")
        self.objective = objective
        self.params = params or TreeParams()
        self._booster: xgb.Booster | None = None

    @property
    def fitted(self) -> bool:
        return self._booster is not None

    def fit(self, x: np.ndarray, log_cycles: np.ndarray, seed: int = 0) -> None:
        """Train on feature rows ``x`` of feasible observations and their log cycles."""
        import xgboost as xgb

        if self.objective == "rank":
            dm = xgb.DMatrix(x, label=-log_cycles)  # relevance: higher is faster
            dm.set_group([len(log_cycles)])  # one query: every pair of observations counts
            extra = {"objective": "rank:pairwise", "lambdarank_pair_method": "mean",
                     "lambdarank_num_pair_per_sample": 16,
                     "lambdarank_normalization": False}
        else:
            dm = xgb.DMatrix(x, label=log_cycles)
            extra = {"objective": "reg:squarederror"}
        self._booster = xgb.train({**self.params.xgb(seed), **extra}, dm,
                                  num_boost_round=self.params.rounds)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Badness of each row (lower is faster); order-preserving w.r.t. predicted cycles."""
        if self._booster is None:
            raise RuntimeError("LatencyModel.predict before fit")
        out = self._booster.inplace_predict(x)
        return -out if self.objective == "rank" else out


class FeasibilityModel:
    """Probability that a proposal is feasible; 1 until both outcomes have been seen
    ``min_class`` times (no evidence of a constraint yet)."""

    def __init__(self, params: TreeParams | None = None, min_class: int = 2):
        self.params = params or TreeParams(rounds=30, max_depth=3)
        self.min_class = min_class
        self._booster: xgb.Booster | None = None
        self._prior = 1.0

    @property
    def fitted(self) -> bool:
        return self._booster is not None

    def fit(self, x: np.ndarray, feasible: np.ndarray, seed: int = 0) -> None:
        import xgboost as xgb

        n_ok = int(feasible.sum())
        n_bad = len(feasible) - n_ok
        self._booster = None
        self._prior = n_ok / len(feasible) if len(feasible) else 1.0
        if min(n_ok, n_bad) < self.min_class:
            if n_bad == 0:
                self._prior = 1.0
            return
        dm = xgb.DMatrix(x, label=feasible.astype(np.float32))
        self._booster = xgb.train({**self.params.xgb(seed), "objective": "binary:logistic"},
                                  dm, num_boost_round=self.params.rounds)

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self._booster is None:
            return np.full(len(x), self._prior, dtype=np.float64)
        return np.asarray(self._booster.inplace_predict(x), dtype=np.float64)


class XGBCostModel(CostModel):
    """A ``LatencyModel`` trained on the feasible rows and a ``FeasibilityModel`` on all."""

    #: Version of the file ``save`` writes.
    FORMAT = 1

    def __init__(self, objective: str = "rank", *,
                 infeasible_penalty: float = INFEASIBLE_PENALTY,
                 feasible_threshold: float = FEASIBLE_THRESHOLD):
        super().__init__(infeasible_penalty=infeasible_penalty,
                         feasible_threshold=feasible_threshold)
        self.latency = LatencyModel(objective)
        self.feasibility = FeasibilityModel()

    def fit(self, x: np.ndarray, y: np.ndarray, feasible: np.ndarray, seed: int = 0) -> None:
        ok = np.asarray(feasible, dtype=bool)
        self.latency.fit(x[ok], np.asarray(y)[ok], seed=seed)
        self.feasibility.fit(x, ok, seed=seed)

    def predict_latency(self, x: np.ndarray) -> np.ndarray:
        return self.latency.predict(x)

    def predict_feasible(self, x: np.ndarray) -> np.ndarray:
        return self.feasibility.predict(x)

    def save(self, path: str | Path) -> None:
        """One JSON file: settings, the feasibility prior and both boosters (UBJSON, base64)."""
        def raw(booster: xgb.Booster | None) -> str | None:
            return None if booster is None else base64.b64encode(
                bytes(booster.save_raw(raw_format="ubj"))).decode("ascii")

        doc = {"format": self.FORMAT, "objective": self.latency.objective,
               "infeasible_penalty": self.infeasible_penalty,
               "feasible_threshold": self.feasible_threshold,
               "latency_params": asdict(self.latency.params),
               "feasibility_params": asdict(self.feasibility.params),
               "min_class": self.feasibility.min_class, "prior": self.feasibility._prior,
               "latency": raw(self.latency._booster),
               "feasibility": raw(self.feasibility._booster)}
        Path(path).write_text(json.dumps(doc))

    @classmethod
    def load(cls, path: str | Path) -> XGBCostModel:
        import xgboost as xgb

        doc = json.loads(Path(path).read_text())
        if doc.get("format") != cls.FORMAT:
            raise ValueError(f"{path}: not a cost model file of format {cls.FORMAT}")

        def booster(text: str | None) -> xgb.Booster | None:
            if text is None:
                return None
            b = xgb.Booster()
            b.load_model(bytearray(base64.b64decode(text)))
            return b

        model = cls(doc["objective"], infeasible_penalty=doc["infeasible_penalty"],
                    feasible_threshold=doc["feasible_threshold"])
        model.latency.params = TreeParams(**doc["latency_params"])
        model.latency._booster = booster(doc["latency"])
        model.feasibility.params = TreeParams(**doc["feasibility_params"])
        model.feasibility.min_class = doc["min_class"]
        model.feasibility._prior = doc["prior"]
        model.feasibility._booster = booster(doc["feasibility"])
        return model
