"""``xgb``: AutoTVM's XGBoost recipe on the joint hardware x schedule space.

Each plan (``plan_size`` proposals, 64 by default, served across ``ask`` calls):

1. Until ``min_feasible`` feasible results are known (or 2 among ``4 * min_feasible``),
   each proposal is the analytically fastest (``cost_model.analytic``) of ``initial_pool``
   random unseen candidates with buildable hardware, or (``initial_eps`` of them) a random
   one: a model-informed initial design. For ``area-latency`` it stays uniform random. With
   32 trials this took the best found on ResNet-18's C7/C10 from 1.17x/1.61x (median of 3
   seeds) to 1.00x the best any run found (the tuning set; ``make bench`` measures held-out
   layers).
2. Otherwise a latency model (XGBoost, pairwise rank loss on log cycles) is fit on the
   feasible results and a feasibility classifier on all of them, over the features of
   ``vtatune.search.cost_model.features`` (raw parameters, realized knobs, analytic SRAM
   fill, DRAM traffic, bounds, area). Infeasible results train only the classifier.
3. Simulated annealing runs ``sa_chains`` parallel chains for ``sa_steps`` steps over the
   parameter space (a move changes one parameter: a hardware choice or thread count to a
   neighbouring value, a tile knob to the next legal tile on that hardware), guided by the
   models; every new candidate visited joins the pool (~2000 per plan).
4. The plan takes the pool's best ``(1 - eps)`` share and ends with ``eps`` random picks.
   The models are refit once ``plan_size`` new results arrived (or the plan ran out).

Cost of a point (lower is better): ``g + infeasible_penalty * doubt`` (the cost model's doubt
penalty, ``cost_model.base``) where ``g`` is the
predicted latency normalized over the training points (0 = best seen, 1 = worst) and
``doubt`` grows linearly from 0 at P(feasible) >= ``feasible_threshold`` to 1 at P = 0, so a
design near an SRAM or board limit is not punished for the classifier's mild uncertainty.
For ``area-latency`` (two objectives: area, cycles) area is exact (``vtatune.area``, cached per
hardware config, the same figure the search loop stores) and ``g`` is an augmented Tchebycheff
scalarization of normalized log area and predicted latency with a weight per chain and per
plan slot (ParEGO-style), so one plan spreads along the front.

Objectives with energy (``search.objectives``): the model learns one quantity, the product
of the objective's values but area: energy for ``area-energy``, energy x latency for ``edp``,
``latency-energy`` and ``area-latency-energy`` (with area traded against it as above). The
product is monotone in each value, so the plan heads for the low-EDP part of a
``latency-energy`` front rather than spreading along it (its random share and the front's
other trials still cover the ends); the samplers of Optuna (``nsga2``, ``tpe``, ...) see
every objective.

Proposals are canonical (``space.params_of`` of the candidate they realize), never name
impossible hardware, and never repeat a candidate told or proposed before; when the space is
exhausted ``ask`` returns fewer.
"""

from __future__ import annotations

import math
from collections.abc import Hashable

import numpy as np

from vtatune.search import cost_model as cost_models
from vtatune.search import objectives
from vtatune.search.cost_model.analytic import INITIAL_EPS, INITIAL_POOL, estimate
from vtatune.search.cost_model.base import CostModel, TrainingSet
from vtatune.search.cost_model.features import Featurizer, Point
from vtatune.search.samplers._base import Observation, Params, Sampler
from vtatune.search.space import U_PREFIX, Candidate, SearchSpace

#: Weight of the plain sum in the augmented Tchebycheff scalarization (keeps it strictly
#: monotone in every objective; 0.05 as in ParEGO).
TCHEBYCHEFF_RHO = 0.05
#: Random draws per wanted proposal before the sampler checks whether the space is exhausted.
RANDOM_TRIES = 30
#: Spaces with at most this many candidates (and hardware configs) are enumerated once random
#: draws stop finding new ones, so exhaustion is exact.
ENUMERATE_LIMIT = 200_000
ENUMERATE_HW_LIMIT = 4096


class XGBSampler(Sampler):
    """XGBoost-ranked simulated annealing with a random share (AutoTVM's XGBTuner).

    Keywords (defaults measured in tests/search/test_xgb_sampler.py): ``plan_size``,
    ``eps`` (random share), ``min_feasible``, ``sa_chains``, ``sa_steps``,
    ``sa_temperature`` (on the normalized cost), ``infeasible_penalty``,
    ``feasible_threshold``, ``objective`` ("rank" or "reg"), ``initial_pool`` (1: a random
    initial design), ``initial_eps``.
    """

    name = "xgb"

    def __init__(self, space: SearchSpace, n_objectives: int, seed: int | None = None, *,
                 plan_size: int = 64, eps: float = 0.05, min_feasible: int = 16,
                 sa_chains: int = 128, sa_steps: int = 16, sa_temperature: float = 0.1,
                 infeasible_penalty: float = 1.0, feasible_threshold: float = 0.5,
                 objective: str = "rank", initial_pool: int = INITIAL_POOL,
                 initial_eps: float = INITIAL_EPS):
        super().__init__(space, n_objectives, seed)
        self.plan_size = plan_size
        self.eps = eps
        self.min_feasible = min_feasible
        self.sa_chains = sa_chains
        self.sa_steps = sa_steps
        self.sa_temperature = sa_temperature
        self.initial_pool = initial_pool
        self.initial_eps = initial_eps
        self.features = Featurizer(space)
        self.rng = np.random.default_rng(seed)
        # observations in tell order: points, feasible, log cycles (nan when infeasible)
        self.train = TrainingSet(cost_models.make(
            "xgb", objective, infeasible_penalty=infeasible_penalty,
            feasible_threshold=feasible_threshold))
        self._seen: set[Hashable] = set()  # told or proposed candidates
        self._plan: list[Point] = []
        self._norm: dict[str, float] = {}
        self._all: list[Point] | None = None  # every candidate, once enumerated
        self._movable = [n for n, (kind, values) in self.features.param_space.items()
                         if kind == "float" or len(values) > 1]
        terms = objectives.terms(space.objective)
        # area is the exact objective beside the learned one (a Tchebycheff trade-off)
        self._area_first = terms[0] == "area" and n_objectives > 1
        self._multi = self._area_first

    # ---- Sampler ----------------------------------------------------------------------------
    def ask(self, n: int) -> list[Params]:
        out: list[Params] = []
        if n <= 0:
            return out
        if not self._model_ready():
            return [p.params for p in self._initial(n)]
        if self._stale():
            self._fit()
            self._plan = []
        while len(out) < n:
            if not self._plan:
                self._plan = self._make_plan(max(n - len(out), self.plan_size))
                if not self._plan:
                    break
            p = self._plan.pop(0)
            if p.key in self._seen:
                continue
            self._seen.add(p.key)
            out.append(p.params)
        return out

    def tell(self, params: Params, obs: Observation) -> None:
        self._seen.add(self._learn(params, obs).key)

    def warm_start(self, history: list[tuple[Params, Observation]]) -> None:
        """Learn from earlier results without barring their candidates: in a new study they
        may be proposed again (and are then served from the store)."""
        for params, obs in history:
            self._learn(params, obs)

    @property
    def model(self) -> CostModel:
        return self.train.model

    def _learn(self, params: Params, obs: Observation) -> Point:
        p = self.features.point(params)
        # the one quantity the model learns: the objective's values but area (exact),
        # multiplied (latency; energy; edp; latency x energy for latency-energy and
        # area-latency-energy)
        learned = (obs.values[1:] if self._area_first else obs.values) if obs.values else ()
        cycles = math.prod(float(v) for v in learned) if obs.feasible and learned else math.nan
        usable = math.isfinite(cycles) and cycles > 0
        # no usable latency: learn it as a failure
        self.train.add(p, obs.feasible and usable, math.log(cycles) if usable else math.nan)
        return p

    # ---- models --------------------------------------------------------------------------------
    def _model_ready(self) -> bool:
        """Enough feasible results to rank, or (in a mostly infeasible space) enough failures
        that the feasibility classifier alone is worth following."""
        n_ok = sum(self.train.feasible)
        return n_ok >= self.min_feasible or (
            n_ok >= 2 and len(self.train) >= 4 * self.min_feasible)

    def _stale(self) -> bool:
        new = self.train.new
        return self.train.version == 0 or new >= self.plan_size or (not self._plan and new > 0)

    def _fit(self) -> None:
        x = self.features.matrix(self.train.items)
        ok = np.asarray(self.train.feasible, dtype=bool)
        y = np.asarray(self.train.y, dtype=np.float64)
        self.train.fit(x, self.rng)
        # normalization of the scalarized objectives: the training points span [0, 1]
        pred = self.model.predict_latency(x[ok])
        area = np.array([p.hw.log2_area_mm2 for p, f in zip(self.train.items, ok, strict=True)
                         if f])
        self._norm = {"c0": float(pred.min()), "c1": float(pred.max()),
                      "a0": float(area.min()), "a1": float(area.max()),
                      "y0": float(y[ok].min()), "y1": float(y[ok].max())}

    def _predict(self, points: list[Point]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Normalized predicted latency, normalized log area and P(feasible) of ``points``."""
        x = self.features.matrix(points)
        lat, p_ok = self.model.predict(x)
        c = _scale(lat, self._norm["c0"], self._norm["c1"])
        a = _scale(np.array([p.hw.log2_area_mm2 for p in points]), self._norm["a0"],
                   self._norm["a1"])
        return c, a, p_ok

    def _cost(self, c: np.ndarray, a: np.ndarray, p: np.ndarray, w: np.ndarray | float
              ) -> np.ndarray:
        """Lower is better; ``w`` weighs area (0 for latency-only)."""
        if not self._multi:
            g = c
        else:
            g = np.maximum(w * a, (1 - w) * c) + TCHEBYCHEFF_RHO * (w * a + (1 - w) * c)
        return g + self.model.penalty(p)

    # ---- plans ---------------------------------------------------------------------------------
    def _make_plan(self, size: int) -> list[Point]:
        n_random = int(round(self.eps * size))
        pool, c, a, p = self._anneal()
        picked: list[Point] = []
        taken = np.zeros(len(pool), dtype=bool)
        n_model = min(size - n_random, len(pool))
        if n_model > 0 and not self._multi:
            order = np.argsort(self._cost(c, a, p, 0.0), kind="stable")[:n_model]
            picked = [pool[i] for i in order]
        elif n_model > 0:
            weights = (np.arange(n_model) + self.rng.random()) / n_model
            for w in self.rng.permutation(weights):
                cost = np.where(taken, np.inf, self._cost(c, a, p, w))
                i = int(np.argmin(cost))
                taken[i] = True
                picked.append(pool[i])
        keys = {q.key for q in picked}
        picked += self._take_random(size - len(picked), exclude=keys, mark=False)
        return picked

    def _anneal(self) -> tuple[list[Point], np.ndarray, np.ndarray, np.ndarray]:
        """Parallel simulated annealing; returns every unseen candidate visited with its
        normalized latency, area and feasibility predictions."""
        n_chains = self.sa_chains
        multi = self._multi
        w = (np.arange(n_chains) + self.rng.random()) / n_chains if multi else np.zeros(
            n_chains)
        chains = self._starts(w)
        c, a, p = self._predict(chains)
        cost = self._cost(c, a, p, w)
        pool: dict[Hashable, int] = {}
        rows: list[tuple[Point, float, float, float]] = []

        def visit(q: Point, ci: float, ai: float, pi: float) -> None:
            if q.key not in self._seen and q.key not in pool:
                pool[q.key] = len(rows)
                rows.append((q, ci, ai, pi))

        for i, q in enumerate(chains):
            visit(q, c[i], a[i], p[i])
        for step in range(self.sa_steps):
            temp = self.sa_temperature * (1 - step / self.sa_steps)
            moved = [self._neighbour(q) for q in chains]
            ok = [i for i, q in enumerate(moved) if q.valid]
            if not ok:
                continue
            cand = [moved[i] for i in ok]
            c2, a2, p2 = self._predict(cand)
            new = self._cost(c2, a2, p2, w[ok])
            old = cost[ok]
            accept = (new <= old) | (self.rng.random(len(ok)) <
                                     np.exp(-(new - old) / max(temp, 1e-9)))
            for j, i in enumerate(ok):
                visit(cand[j], c2[j], a2[j], p2[j])
                if accept[j]:
                    chains[i] = cand[j]
                    cost[i] = new[j]
        points = [r[0] for r in rows]
        return (points, np.array([r[1] for r in rows]), np.array([r[2] for r in rows]),
                np.array([r[3] for r in rows]))

    def _starts(self, w: np.ndarray) -> list[Point]:
        """Even chains start at the best observations (the k-th best for latency, the best
        under the chain's weight for area-latency), odd chains at random valid points."""
        ok = [i for i, f in enumerate(self.train.feasible) if f]
        y = _scale(np.array([self.train.y[i] for i in ok]), self._norm["y0"],
                   self._norm["y1"])
        ar = _scale(np.array([self.train.items[i].hw.log2_area_mm2 for i in ok]),
                    self._norm["a0"], self._norm["a1"])
        randoms = iter(self._random_valid(len(w) // 2))
        starts: list[Point] = []
        for k in range(len(w)):
            q = next(randoms, None) if k % 2 else None
            if q is None:
                order = np.argsort(self._cost(y, ar, np.ones(len(ok)), w[k]), kind="stable")
                rank = (k // 2) % len(ok) if not self._multi else 0
                q = self.train.items[ok[int(order[rank])]]
            starts.append(q)
        return starts

    def _neighbour(self, q: Point) -> Point:
        """``q`` with one parameter moved to a neighbouring value."""
        params = dict(q.params)
        name = self._movable[int(self.rng.integers(len(self._movable)))]
        kind, values = self.features.param_space[name]
        if kind == "categorical":
            values = tuple(values)
            cur = values.index(params[name]) if params.get(name) in values else 0
            if self.rng.random() < 0.25 or name in self.space.thread_knobs:
                j = (cur + 1 + int(self.rng.integers(len(values) - 1))) % len(values)
            else:
                j = _step(cur, len(values), self.rng)
            params[name] = values[j]
        else:
            knob = name[len(U_PREFIX):]
            ks = q.hw.knob_space
            axis = ks.axes[knob] if ks is not None else ()
            if len(axis) > 1 and q.knobs is not None:
                j = _step(axis.index(q.knobs[knob]), len(axis), self.rng)
                params[name] = self.features.u_of(q.hw, knob, axis[j])
            else:
                params[name] = float(np.clip(params[name] + self.rng.normal(0, 0.2), 0, 1))
        return self.features.point(params)

    # ---- the initial design ----------------------------------------------------------------------
    def _initial(self, n: int) -> list[Point]:
        """Proposals before the models are ready: each the analytically fastest of
        ``initial_pool`` random unseen candidates (``cost_model.analytic``: tiles, traffic,
        SRAM fit), or with probability ``initial_eps`` a random one. ``initial_pool`` 1, or
        two objectives (where the estimate alone would favour large hardware): uniform random.
        """
        if self.initial_pool <= 1 or self.n_objectives > 1:
            return self._take_random(n)
        out: list[Point] = []
        for _ in range(n):
            k = 1 if self.rng.random() < self.initial_eps else self.initial_pool
            pool = self._take_random(k, exclude={q.key for q in out}, mark=False)
            if not pool:
                break
            out.append(min(pool, key=self._analytic_score))
        self._seen.update(q.key for q in out)
        return out

    def _analytic_score(self, q: Point) -> tuple[float, float]:
        """(0, estimated cycles) when the estimate finds ``q`` feasible, else (1, violation)."""

        assert q.knobs is not None
        est = estimate(Candidate(self.space.workload, q.hw.hw, dict(q.knobs)), self.space.board,
                       self.space.fit_board)
        return (0.0, est.cycles) if est.cycles is not None else (1.0, est.violation)

    # ---- random proposals ------------------------------------------------------------------------
    def _random_valid(self, n: int) -> list[Point]:
        """``n`` random points with possible hardware (seen or not; for chain starts)."""
        out: list[Point] = []
        for _ in range(RANDOM_TRIES * max(n, 1)):
            if len(out) >= n:
                break
            q = self.features.point(self.features.random_params(self.rng))
            if q.valid:
                out.append(q)
        return out

    def _take_random(self, n: int, exclude: set[Hashable] | None = None, mark: bool = True
                     ) -> list[Point]:
        """Up to ``n`` distinct unseen random candidates (fewer only when exhausted);
        ``mark`` records them as proposed."""
        exclude = set(exclude or ())
        out: list[Point] = []
        tries = RANDOM_TRIES * max(n, 1)
        while len(out) < n and tries > 0:
            tries -= 1
            q = self.features.point(self.features.random_params(self.rng))
            if q.valid and q.key not in self._seen and q.key not in exclude:
                exclude.add(q.key)
                out.append(q)
        if len(out) < n:  # draws keep hitting seen candidates: maybe the space is exhausted
            if self._all is None:
                self._all = self.features.enumerate(ENUMERATE_LIMIT, ENUMERATE_HW_LIMIT) or []
            rest = [q for q in self._all if q.key not in self._seen and q.key not in exclude]
            for i in self.rng.permutation(len(rest))[:n - len(out)]:
                out.append(rest[int(i)])
        if mark:
            self._seen.update(q.key for q in out)
        return out


def _scale(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return (v - lo) / (hi - lo) if hi > lo else v - lo


def _step(i: int, n: int, rng: np.random.Generator) -> int:
    """A neighbouring index of ``i`` in ``range(n)``: one step (two with probability 1/5),
    reflected at the ends."""
    d = 2 if rng.random() < 0.2 and n > 2 else 1
    d = d if rng.random() < 0.5 else -d
    j = i + d
    if j < 0 or j >= n:
        j = i - d
    return min(max(j, 0), n - 1)
