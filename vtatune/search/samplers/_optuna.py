"""Samplers backed by Optuna: TPE, NSGA-II, GP, random and grid.

Each wraps an in-memory Optuna study and uses Optuna's ask/tell interface. (Optuna's
database storage costs 40-100 ms per ask/tell on SQLite, in-memory 0.3-4 ms; vtatune's own store
holds every trial, so a resumed search replays them, and ``search.dashboard`` mirrors the
study into the database for ``optuna-dashboard``.) Infeasible results are told as constraint
violations (``Trial.set_constraint("violation", v)``) with infinite
objective values: Optuna's constrained samplers rank infeasible trials by violation only, so
no latency is made up for them. (Optuna 5 reads constraints stored with
``Trial.set_constraint``; ``constraints_func`` is deprecated.)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from vtatune.errors import UserError
from vtatune.search.samplers._base import Observation, Params, Sampler
from vtatune.search.space import SearchSpace

if TYPE_CHECKING:
    import optuna

#: Grid levels of each tile-knob log-position in ``grid``.
GRID_LEVELS = 5


#: Name of the one constraint told to Optuna (<= 0 is feasible).
CONSTRAINT = "violation"


def distributions(space: SearchSpace) -> dict[str, Any]:
    import optuna

    out: dict[str, Any] = {}
    for name, (kind, values) in space.param_space().items():
        if kind == "categorical":
            out[name] = optuna.distributions.CategoricalDistribution(list(values))
        else:
            out[name] = optuna.distributions.FloatDistribution(values[0], values[1])
    return out


def finished_trial(dists: dict[str, Any], params: Params, obs: Observation, n_objectives: int,
                   user_attrs: dict[str, Any] | None = None) -> optuna.trial.FrozenTrial:
    """An Optuna ``FrozenTrial`` recording ``params`` and what they gave."""
    import optuna

    return optuna.trial.create_trial(
        params=params, distributions={k: dists[k] for k in params},
        values=values_of(obs, n_objectives), user_attrs=user_attrs or {},
        constraints={CONSTRAINT: max(obs.violation, 0.0)})


def values_of(obs: Observation, n_objectives: int) -> list[float]:
    """Objective values for Optuna: infinite when infeasible (ranked by violation only)."""
    if obs.values is None:
        return [math.inf] * n_objectives
    return [float(v) for v in obs.values]


def _key(params: Params) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, round(v, 9) if isinstance(v, float) else v)
                        for k, v in params.items()))


class OptunaSampler(Sampler):
    """Common ask/tell plumbing over an in-memory ``optuna.Study``."""

    #: The study is the sampler's state: it learns from this study's trials only.
    warm_starts = False

    def __init__(self, space: SearchSpace, n_objectives: int, seed: int | None = None):
        import optuna

        super().__init__(space, n_objectives, seed)
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.distributions = distributions(space)
        self.study = optuna.create_study(directions=["minimize"] * n_objectives,
                                         sampler=self._make_sampler())
        self._pending: dict[tuple[tuple[str, Any], ...], list[optuna.trial.Trial]] = {}

    def _make_sampler(self) -> optuna.samplers.BaseSampler:
        raise NotImplementedError

    def ask(self, n: int) -> list[Params]:
        out = []
        for _ in range(n):
            trial = self.study.ask(self.distributions)
            params = dict(trial.params)
            self._pending.setdefault(_key(params), []).append(trial)
            out.append(params)
        return out

    def tell(self, params: Params, obs: Observation) -> None:
        trials = self._pending.get(_key(params))
        if not trials:  # not asked here (e.g. replayed): record it as a finished trial
            self._add(params, obs)
            return
        trial = trials.pop(0)
        trial.set_constraint(CONSTRAINT, max(obs.violation, 0.0))
        self.study.tell(trial, values_of(obs, self.n_objectives))

    def discard(self, params: Params) -> None:
        import optuna

        trials = self._pending.get(_key(params))
        if trials:  # finished as failed: Optuna's models ignore failed trials
            self.study.tell(trials.pop(0), state=optuna.trial.TrialState.FAIL)

    def warm_start(self, history: list[tuple[Params, Observation]]) -> None:
        for params, obs in history:
            self._add(params, obs)

    def _add(self, params: Params, obs: Observation) -> None:
        if any(k not in self.distributions for k in params):
            return
        self.study.add_trial(finished_trial(self.distributions, params, obs,
                                            self.n_objectives))


class TPESampler(OptunaSampler):
    """Tree-structured Parzen estimator (multivariate, constant liar for parallel asks)."""

    name = "tpe"

    def _make_sampler(self) -> optuna.samplers.BaseSampler:
        import optuna

        return optuna.samplers.TPESampler(seed=self.seed, multivariate=True,
                                          constant_liar=True, n_startup_trials=10)


class NSGA2Sampler(OptunaSampler):
    """NSGA-II genetic algorithm (population 32)."""

    name = "nsga2"

    def _make_sampler(self) -> optuna.samplers.BaseSampler:
        import optuna

        return optuna.samplers.NSGAIISampler(seed=self.seed, population_size=32)


#: What ``--sampler gp`` says when torch (an opt-in extra: ~750 MB) is not installed.
GP_MISSING = ("sampler 'gp' needs torch, which the default install leaves out ({missing} is "
              "missing): pip install 'vtatune[gp]' (in a checkout: make setup GP=1)")


class GPSampler(OptunaSampler):
    """Gaussian-process Bayesian optimization (Optuna's GPSampler; needs torch and scipy)."""

    name = "gp"

    @classmethod
    def check_available(cls) -> None:
        import importlib.util


        for module in ("torch", "scipy"):
            if importlib.util.find_spec(module) is None:
                raise UserError(GP_MISSING.format(missing=module))

    def _make_sampler(self) -> optuna.samplers.BaseSampler:
        import optuna

        self.check_available()
        return optuna.samplers.GPSampler(seed=self.seed, n_startup_trials=10)


class RandomSampler(OptunaSampler):
    """Uniform random proposals."""

    name = "random"

    def _make_sampler(self) -> optuna.samplers.BaseSampler:
        import optuna

        return optuna.samplers.RandomSampler(seed=self.seed)


class GridSampler(OptunaSampler):
    """Every point of ``space.grid(GRID_LEVELS)`` once, in a seeded random order.

    Optuna's own GridSampler stops the study from inside ``tell`` when the grid is done, which
    only works inside ``study.optimize``; this one walks the grid itself and records each
    finished point in the Optuna study like the other samplers.
    """

    name = "grid"

    def _make_sampler(self) -> optuna.samplers.BaseSampler:
        import numpy as np
        import optuna

        self._grid = self.space.grid(GRID_LEVELS)
        self._axes = list(self._grid.items())
        self._size = math.prod(len(v) for _, v in self._axes)
        self._rng = np.random.default_rng(self.seed)
        self._order = self._rng.permutation(self._size) if self._size <= 1_000_000 else None
        self._next = 0
        self._seen: set[int] = set()
        return optuna.samplers.RandomSampler(seed=self.seed)

    def _point(self, index: int) -> Params:
        out = {}
        for name, values in reversed(self._axes):
            index, r = divmod(index, len(values))
            out[name] = values[r]
        return dict(sorted(out.items(), key=lambda kv: list(self._grid).index(kv[0])))

    def ask(self, n: int) -> list[Params]:
        out = []
        while len(out) < n and self._next < self._size:
            if self._order is not None:
                index = int(self._order[self._next])
            else:  # huge grid: draw without replacement
                index = int(self._rng.integers(self._size))
                while index in self._seen:
                    index = int(self._rng.integers(self._size))
                self._seen.add(index)
            self._next += 1
            out.append(self._point(index))
        return out

    def tell(self, params: Params, obs: Observation) -> None:
        self._add(params, obs)

    def warm_start(self, history: list[tuple[Params, Observation]]) -> None:
        """Nothing to learn: the grid is walked in full."""
