"""The ``xgb`` sampler on analytic stand-in objectives (no compiler): proposals stay inside the
space and never repeat, runs are reproducible, infeasible regions are avoided, and it reaches
the optimum in far fewer trials than random search."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from vtatune.search import space as spaces
from vtatune.search.cost_model.analytic import estimate
from vtatune.search.cost_model.features import Featurizer
from vtatune.search.samplers import Observation, make
from vtatune.search.samplers._xgb import XGBSampler
from vtatune.search.space import Candidate, SearchSpace

#: A joint space small enough to enumerate in a test (14k candidates, 29% feasible).
REDUCED_JOINT = {
    "study": {"board": "pynq-z1"},
    "workload": {"kind": "conv2d", "layer": "C8"},
    "hardware": {"LOG_BLOCK_IN": [3, 4, 5], "LOG_BLOCK_OUT": [4, 5],
                 "LOG_INP_BUFF_SIZE": [14, 15, 16], "LOG_WGT_BUFF_SIZE": [17, 18],
                 "LOG_ACC_BUFF_SIZE": [16, 17]},
    "schedule": {"knobs": ["tile_h", "tile_ci", "tile_co", "h_nthread", "oc_nthread"]},
    "objective": {"kind": "latency"},
}
SEEDS = range(5)
WITHIN = 1.02


@dataclass
class Problem:
    """A space with an analytic objective, enumerated once: every candidate's canonical
    parameters and cycles (inf: infeasible), the optimum, and how many candidates are within
    2% of it."""

    space: SearchSpace
    observe: Callable[[dict], tuple[Observation, float | None]]
    params: list[dict]
    cycles: np.ndarray
    best: float
    size: int
    near: int

    def random_median(self) -> float:
        """Median trials uniform sampling without repetition needs to hit a near-optimal
        candidate: P(T > t) ~= (1 - t/N)^K."""
        return self.size * (1 - 0.5 ** (1 / self.near))


def analytic(space: SearchSpace) -> Callable[[dict], tuple[Observation, float | None]]:
    """The analytic estimate as the search loop would observe it: (area, cycles) or (cycles,).

    Realizes through a ``Featurizer`` (``space.realize`` with per-hardware caches; the two are
    checked equal in test_xgb_features.py) to keep the tests fast."""
    f = Featurizer(space)

    def observe(params: dict) -> tuple[Observation, float | None]:
        point = f.point(params)
        if point.knobs is None:
            return Observation(None, 1.0, "hw_invalid"), None
        est = estimate(Candidate(space.workload, point.hw.hw, point.knobs), space.board,
                       space.fit_board)
        if est.cycles is None:
            return Observation(None, est.violation, "infeasible"), None
        area = 2.0 ** point.hw.log2_area_mm2
        values = (area, est.cycles) if space.objective == "area-latency" else (est.cycles,)
        return Observation(values), est.cycles

    return observe


def _problem(space: SearchSpace) -> Problem:
    observe = analytic(space)
    params = [p.params for p in Featurizer(space).enumerate(10**6) or []]
    c = np.array([observe(p)[1] or math.inf for p in params])
    best = float(c.min())
    return Problem(space, observe, params, c, best, len(c), int((c <= best * WITHIN).sum()))


@pytest.fixture(scope="module")
def schedule_problem() -> Problem:
    # a 1x1 layer: VTA's DMA rules leave C8 (the space file's layer, padded) 207 schedules,
    # too few to tell learning from luck; this one keeps 939
    # timed with one fixed build's constants (pynq-z1@2019-08, whose ALU refill makes the
    # epilogue's share matter), so the problem does not move when the default profile is refit
    return _problem(spaces.load("conv2d_schedule", shape="1,256,14,14,256,1,1,0,1",
                                board="pynq-z1@2019-08"))


@pytest.fixture(scope="module")
def joint_problem() -> Problem:
    return _problem(spaces.from_dict(REDUCED_JOINT, "reduced joint"))


def _run(sampler: XGBSampler, observe: Callable, trials: int, batch: int = 8,
         target: float | None = None) -> tuple[list[dict], list[float | None], int | None]:
    """Ask/tell like the search loop; returns proposals, cycles (None: infeasible) and the
    trial that first came within 2% of ``target``."""
    props: list[dict] = []
    cycles: list[float | None] = []
    hit = None
    while len(props) < trials:
        batch_props = sampler.ask(min(batch, trials - len(props)))
        if not batch_props:
            break
        for p in batch_props:
            obs, c = observe(p)
            sampler.tell(p, obs)
            props.append(p)
            cycles.append(c)
            if hit is None and target is not None and c is not None and c <= target * WITHIN:
                hit = len(props)
                return props, cycles, hit
    return props, cycles, hit


def _inside(space: SearchSpace, params: dict) -> bool:
    ps = space.param_space()
    if set(params) != set(ps):
        return False
    for name, (kind, values) in ps.items():
        v = params[name]
        if kind == "categorical" and v not in values:
            return False
        if kind == "float" and not 0.0 <= v <= 1.0:
            return False
    return True


# ---- contract --------------------------------------------------------------------------------

def test_proposals_are_inside_new_and_buildable() -> None:
    sp = spaces.load("conv2d")
    s = make("xgb", sp, 2, seed=0)
    props, _, _ = _run(s, analytic(sp), 160, batch=64)
    assert len(props) == 160 and all(_inside(sp, p) for p in props)
    f = Featurizer(sp)
    points = [f.point(p) for p in props]
    assert all(q.valid for q in points)  # impossible hardware is never proposed
    assert len({q.key for q in points}) == len(props)  # never the same candidate twice
    for p, q in list(zip(props, points, strict=True))[::8]:  # as the search loop realizes
        cand, _ = sp.realize(p)
        assert cand is not None and (cand.hw, cand.knobs) == (q.hw.hw, q.knobs)
        assert sp.params_of(cand) == p  # proposals are canonical


def test_deterministic_under_a_seed() -> None:
    sp = spaces.load("conv2d")
    runs = [_run(XGBSampler(sp, 2, seed=3), analytic(sp), 96, batch=32)[0] for _ in range(2)]
    assert runs[0] == runs[1]
    assert XGBSampler(sp, 2, seed=4).ask(8) != runs[0][:8]


def test_small_space_is_exhausted_exactly() -> None:
    sp = spaces.load("conv2d_schedule", layer="C11")  # 7x7 output: few knob values
    size = len(Featurizer(sp).enumerate(10**6) or [])
    s = XGBSampler(sp, 1, seed=0, min_feasible=4)
    props, _, _ = _run(s, analytic(sp), 10 * size, batch=16)
    keys = {sp.realize(p)[0].key for p in props}  # type: ignore[union-attr]
    assert len(props) == len(keys) == size
    assert s.ask(4) == []


def test_warm_start_accepts_foreign_and_infeasible_history() -> None:
    sp = spaces.load("conv2d")
    observe = analytic(sp)
    rng = np.random.default_rng(0)
    f = Featurizer(sp)
    history = [(p, observe(p)[0]) for p in (f.random_params(rng) for _ in range(80))]
    history.append(({"LOG_BLOCK_IN": 6, "u_tile_h": 0.3}, Observation(None, 1.0, "failed")))
    history.append(({"LOG_BLOCK_IN": 4}, Observation((1.0, math.inf))))  # unusable latency
    s = XGBSampler(sp, 2, seed=0)
    s.warm_start(history)
    props = s.ask(8)
    assert len(props) == 8 and all(_inside(sp, p) for p in props)


# ---- behaviour ---------------------------------------------------------------------------------

def test_half_infeasible_space_is_learned(schedule_problem: Problem) -> None:
    """Declare every candidate whose analytic SRAM footprint uses more than the median share
    of the buffers infeasible: later proposals must be mostly feasible."""
    from vtatune import schedules

    sp = schedule_problem.space
    hw = sp.base_hw

    f = Featurizer(sp)

    def fill(params: dict) -> float:
        knobs = f.point(params).knobs
        assert knobs is not None
        fp = schedules.footprint(sp.workload, hw, knobs)
        return max(fp["inp"] / hw.inp_buff_bytes, fp["wgt"] / hw.wgt_buff_bytes,
                   fp["acc"] / hw.acc_buff_bytes)

    limit = float(np.median([fill(p.params) for p in f.enumerate(10**6) or []]))

    def observe(params: dict) -> tuple[Observation, float | None]:
        over = fill(params) - limit
        if over > 0:
            return Observation(None, over / limit, "sram_overflow"), None
        return schedule_problem.observe(params)

    feasible = []
    for seed in range(3):
        _, cycles, _ = _run(XGBSampler(sp, 1, seed=seed, initial_pool=1), observe, 160,
                            batch=8)
        feasible.append(np.mean([c is not None for c in cycles[-64:]]))
    assert np.median(feasible) >= 0.85


@pytest.mark.parametrize("which", ["schedule", "joint"])
def test_reaches_the_optimum_much_faster_than_random(which: str, request: pytest.FixtureRequest
                                                     ) -> None:
    prob: Problem = request.getfixturevalue(f"{which}_problem")
    hits = []
    for seed in SEEDS:
        # a random initial design: these objectives are the analytic estimate itself, which
        # the default initial design ranks by (tested below); this checks the models
        s = XGBSampler(prob.space, 1, seed=seed, initial_pool=1)
        _, _, hit = _run(s, prob.observe, prob.size, batch=8, target=prob.best)
        hits.append(hit or prob.size)
    # measured (10 seeds): schedule 33 vs random 172, joint ~100 vs random 507
    assert np.median(hits) < 0.5 * prob.random_median(), (hits, prob.random_median())


def test_warm_start_reduces_trials(schedule_problem: Problem) -> None:
    """History of an earlier study that did not get within 5% of the optimum."""
    prob = schedule_problem
    f = Featurizer(prob.space)
    rng = np.random.default_rng(100)
    history = []
    while len(history) < 128:
        p = f.point(f.random_params(rng)).params
        obs, c = prob.observe(p)
        if c is None or c > prob.best * 1.05:
            history.append((p, obs))
    cold, warm = [], []
    for seed in SEEDS:
        for hits, hist in ((cold, []), (warm, history)):
            s = XGBSampler(prob.space, 1, seed=seed, initial_pool=1)  # as above
            s.warm_start(hist)
            _, _, hit = _run(s, prob.observe, prob.size, batch=8, target=prob.best)
            hits.append(hit or prob.size)
    assert np.median(warm) < np.median(cold), (warm, cold)


def test_area_latency_front_beats_random(joint_problem: Problem) -> None:
    """Two objectives: the hypervolume (log area x log cycles) the sampler's front misses
    after 120 trials is under half of what random search misses (median of 3 seeds)."""
    from vtatune.search.pareto import hypervolume_2d

    raw = {**REDUCED_JOINT, "objective": {"kind": "area-latency"}}
    sp = spaces.from_dict(raw, "reduced joint, area-latency")
    observe = analytic(sp)
    f = Featurizer(sp)
    log_area = np.array([f.point(p).hw.log2_area_mm2 for p in joint_problem.params])
    log_cycles = np.log2(joint_problem.cycles)
    ok = np.isfinite(log_cycles)
    ref = (log_area[ok].max() + 0.01, log_cycles[ok].max() + 0.01)

    def hv(idx: list[int]) -> float:
        return hypervolume_2d([(log_area[i], log_cycles[i]) for i in idx if ok[i]], ref)

    full = hv(list(range(len(ok))))
    index = {f.point(p).key: i for i, p in enumerate(joint_problem.params)}
    trials = 120
    gaps: dict[str, list[float]] = {"xgb": [], "random": []}
    for seed in range(3):
        s = XGBSampler(sp, 2, seed=seed)
        seen: list[int] = []
        while len(seen) < trials:
            for p in s.ask(8):
                s.tell(p, observe(p)[0])
                seen.append(index[f.point(p).key])
        rand = np.random.default_rng(seed).permutation(len(ok))[:trials]
        gaps["xgb"].append(1 - hv(seen) / full)
        gaps["random"].append(1 - hv(list(rand)) / full)
    # measured (5 seeds, 100 trials): missing 2.2% vs 6.6% of the true front's hypervolume
    assert np.median(gaps["xgb"]) < 0.5 * np.median(gaps["random"]), gaps


def test_the_initial_design_is_ranked_by_the_analytic_estimate(schedule_problem: Problem
                                                              ) -> None:
    """Before the models are ready each proposal is the analytically fastest of a random pool
    (a random one now and then): far faster by the estimate than uniform random proposals."""
    prob = schedule_problem
    first = XGBSampler(prob.space, 1, seed=0).ask(16)
    uniform = XGBSampler(prob.space, 1, seed=0, initial_pool=1).ask(16)
    est = [[prob.observe(p)[1] or math.inf for p in props] for props in (first, uniform)]
    assert len(set(map(str, first))) == 16 and all(_inside(prob.space, p) for p in first)
    assert np.median(est[0]) < 0.8 * np.median(est[1]), est
