"""The cost-model contract shared by the per-layer ``xgb`` sampler and the network tuner.

A cost model learns, from feature rows of evaluated candidates, how slow a feasible candidate
is (``latency``: lower is faster; a score or log latency, its scale the model's own) and how
likely a candidate is feasible (``p_feasible``). Its users rank candidates by
``latency + penalty(p_feasible)``: the one *doubt penalty*, which leaves a candidate alone at
P(feasible) >= ``feasible_threshold`` and grows linearly to ``infeasible_penalty`` at P = 0, so
a design near an SRAM or board limit is not punished for the classifier's mild uncertainty.

Models are deterministic for a given seed and training set, and not thread-safe.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np

#: P(feasible) at and above which a candidate is not penalized.
FEASIBLE_THRESHOLD = 0.5
#: Weight of "surely infeasible" in a candidate's cost, in the latency's units.
INFEASIBLE_PENALTY = 1.0


class CostModel(ABC):
    """Fit on feature rows, predict (latency, P(feasible)), save and load."""

    def __init__(self, *, infeasible_penalty: float = INFEASIBLE_PENALTY,
                 feasible_threshold: float = FEASIBLE_THRESHOLD):
        self.infeasible_penalty = infeasible_penalty
        self.feasible_threshold = feasible_threshold

    @abstractmethod
    def fit(self, x: np.ndarray, y: np.ndarray, feasible: np.ndarray, seed: int = 0) -> None:
        """Train on rows ``x`` of every observation: ``y`` (the latency target; read only where
        ``feasible``) and ``feasible`` (bool per row)."""

    @abstractmethod
    def predict_latency(self, x: np.ndarray) -> np.ndarray:
        """How slow each row is predicted to be if feasible (lower is faster)."""

    @abstractmethod
    def predict_feasible(self, x: np.ndarray) -> np.ndarray:
        """P(feasible) of each row."""

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(latency, P(feasible)) of each row."""
        return self.predict_latency(x), self.predict_feasible(x)

    def penalty(self, p_feasible: np.ndarray) -> np.ndarray:
        """The doubt penalty (module docstring) of candidates with these P(feasible)."""
        doubt = np.clip((self.feasible_threshold - p_feasible) / self.feasible_threshold,
                        0.0, 1.0)
        return self.infeasible_penalty * doubt

    @abstractmethod
    def save(self, path: str | Path) -> None:
        """Write the fitted model to ``path`` (one file)."""

    @classmethod
    @abstractmethod
    def load(cls, path: str | Path) -> CostModel:
        """The model ``save`` wrote to ``path``."""


class TrainingSet:
    """What a cost model learns from, as its users collect it: one entry per observation
    (``items``: feature rows or points, the user's), whether it was feasible and its latency
    target (read only where feasible), and when it was last fit (``new``: observations
    since; ``version``: fits so far). The per-layer ``xgb`` sampler and the network tuner's
    model both keep theirs here; each decides when a refit is due."""

    def __init__(self, model: CostModel):
        self.model = model
        self.items: list[Any] = []
        self.feasible: list[bool] = []
        self.y: list[float] = []
        self.fitted_at = 0  # observations at the last fit
        self.version = 0  # fits so far

    def add(self, item: Any, feasible: bool, y: float) -> None:
        self.items.append(item)
        self.feasible.append(feasible)
        self.y.append(y)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def new(self) -> int:
        """Observations since the last fit."""
        return len(self.items) - self.fitted_at

    def fit(self, x: np.ndarray, rng: np.random.Generator) -> None:
        """Fit the model on ``x`` (the rows of ``items``), seeded from ``rng``."""
        seed = int(rng.integers(2**31))
        self.model.fit(x, np.asarray(self.y, dtype=np.float64),
                       np.asarray(self.feasible, dtype=bool), seed=seed)
        self.fitted_at = len(self.items)
        self.version += 1
