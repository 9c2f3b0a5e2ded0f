"""One physical timing model for every build, design and board, fitted jointly.

Each fitted constant of the timing model (``vtatune.simulator.timing.FIT_KEYS``) is a physical
quantity of VTA's hardware or of the board, with a prior value and a spread taken from VTA's
sources and the board's datasheet (``TERMS``; the facts quoted in
``hwconfigs/timing/SOURCES.md``). Most are **shared** by every build, design and board (the DMA
set-up and per-beat costs, the per-instruction cost, the host's costs); the few that a new
synthesis of the same ``vta.cc`` changes (``BUILD_KEYS``: the depths of the two pipelined
micro-op loops, which HLS schedules anew each run) have a value per **build** (a bitstream: a
design measured in one month), drawn towards the population value shared by all builds.

The fit (``fit_joint``): weighted least squares on log(simulated / measured) of every record
with its build's constants, plus one prior residual per constant (``scipy.optimize.
least_squares``, trust region reflective, soft-L1 loss, inside physical bounds): a shared
constant towards its prior, a build's value towards the population value. Records are
weighted by the data's robust spread (``sigma``), priors by their spread, so the Jacobian of
the whole residual vector gives the constants' covariance directly.

Identifiability is enforced: a constant whose posterior spread is not at most ``PIN_RATIO``
of its prior spread is not pinned by the records; it is held at its prior (a build's value at
the population value) and the fit is redone without it. ``JointFit`` reports each constant's
value, its uncertainty (one sigma, as a factor), whether it is pinned, and the correlations.

Transfer (``transfer``): each record predicted by a fit that did not see it (leave one out),
its network, its design (GEMM shape) or its build; a record of a build the fit did not see is
timed with the population values of ``BUILD_KEYS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from vtatune.calibration.prepare import Prepared
from vtatune.hardware.boards import Board
from vtatune.simulator.timing import (
    ACCEL_KEYS,
    FIT_KEYS,
    TimingParams,
    end_and_gradient,
    end_cycles,
    host_seconds,
)


@dataclass(frozen=True)
class Term:
    """A physical constant of the model: its prior value, the factor one prior sigma spans,
    its physical bounds, whether a new build changes it, and where the numbers come from."""

    key: str
    prior: float
    factor: float
    lo: float
    hi: float
    build: bool
    source: str


#: The model's constants (Pynq-Z1 values; another board's priors follow from its datasheet
#: terms, ``board_priors``). Sources: hwconfigs/timing/SOURCES.md, the section named.
TERMS: dict[str, Term] = {t.key: t for t in (
    Term("dma_row_cycles", 32.0, 3.0, 4.0, 1000.0, False,
         "V3, V4, V6: one memcpy burst per DMA row, each paying the AXI round trip through "
         "the SmartConnect, the PS slave port and the DDR controller (tens of cycles)"),
    Term("dma_beat_cycles", 1.0, 1.5, 1.0, 16.0, False,
         "V6, V7, B1: one bus word per cycle on the one shared port (64 bits at 100 MHz = "
         "0.8 GB/s on the Pynq-Z1's ACP, below its DDR3's 2.1 GB/s peak)"),
    Term("insn_cycles", 16.0, 3.0, 1.0, 500.0, False,
         "V2: each module is an HLS function called once per instruction (queue read, decode, "
         "token pops and pushes); vta_cost.py gives 38-50 cycles for a NOP on the OpenCL VTA"),
    Term("gemm_refill_cycles", 10.0, 3.0, 1.0, 200.0, True,
         "V5, V8: only READ_GEMM_UOP is pipelined; each inner iteration drains and refills a "
         "pipeline whose depth HLS picks for the clock target of each synthesis run"),
    Term("alu_refill_cycles", 10.0, 3.0, 1.0, 200.0, True,
         "V5, V8: only READ_ALU_UOP is pipelined (II 2); its depth is HLS's choice per run"),
    Term("host_call_us", 30.0, 3.0, 2.0, 20000.0, False,
         "H2, H3: per call the runtime copies the stream and kernels into DMA buffers, "
         "writes eleven registers and polls for FINISH (Cortex-A9 at 650 MHz)"),
    Term("host_insn_us", 0.7, 3.0, 0.05, 100.0, False,
         "H1: the host code calls the runtime once per instruction (hundreds of ARM "
         "instructions each)"),
)}
#: What a new bitstream of the same source changes: the depths of the two pipelined loops.
BUILD_KEYS: tuple[str, ...] = tuple(k for k in FIT_KEYS if TERMS[k].build)
#: Spread of a build's value around the population value (a factor per sigma): a new
#: synthesis may move a pipeline depth by a few-fold.
BUILD_FACTOR = 4.0
#: A constant is pinned by the records when its posterior sigma is at most this fraction of
#: its prior sigma: the records carry at least as much information about it as the prior.
PIN_RATIO = 1 / math.sqrt(2)
#: Least robust spread of the records' log ratios (records are the best of noisy runs).
SIGMA_FLOOR = 0.05
SOLVER = ("scipy.optimize.least_squares (trf, soft-L1 loss), priors as residuals, "
          "unpinned constants held at their priors")


def build_of(item: Prepared) -> str:
    """The build a record was measured on: its design and the month (``1x16x16 2019-07``)."""
    hw = item.record.hw
    return f"{hw.batch}x{hw.block_in}x{hw.block_out} {item.record.session or 'undated'}"


def design_of(item: Prepared) -> str:
    """The record's GEMM shape (BATCH x BLOCK_IN x BLOCK_OUT)."""
    hw = item.record.hw
    return f"{hw.batch}x{hw.block_in}x{hw.block_out}"


@dataclass(frozen=True)
class Estimate:
    """A fitted (or held) constant: ``value``, one-sigma ``factor`` (value x/÷ factor),
    ``pinned``: the records determine it; else it is held at ``held_at`` (its prior, or the
    population value for a build's term)."""

    key: str
    value: float
    factor: float | None
    pinned: bool
    prior: float
    build: str = ""

    @property
    def name(self) -> str:
        return f"{self.key}[{self.build}]" if self.build else self.key

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "build": self.build or None, "value": round(self.value, 4),
                "sigma_factor": None if self.factor is None else round(self.factor, 4),
                "pinned": self.pinned, "prior": round(self.prior, 4)}


@dataclass(frozen=True)
class JointFit:
    """The joint fit: the shared constants and each build's ``BUILD_KEYS`` values, with
    their uncertainty and correlations, and each record's error with its build's values."""

    shared: dict[str, Estimate]
    builds: dict[str, dict[str, Estimate]]
    correlations: dict[tuple[str, str], float]
    errors: np.ndarray  # simulated / measured - 1 per record, its build's constants
    accelerator_s: np.ndarray
    host_s: np.ndarray
    sigma: float
    record_builds: tuple[str, ...]
    logs: dict[str, float] = field(default_factory=dict)  # log values by name (warm starts)
    held: tuple[str, ...] = ()  # the constants held at their priors

    def values(self, build: str | None = None) -> dict[str, float]:
        """The constants of ``build`` (the population values for None or an unseen build)."""
        out = {k: e.value for k, e in self.shared.items()}
        if build is not None and build in self.builds:
            out.update({k: e.value for k, e in self.builds[build].items()})
        return out

    def params(self, base: TimingParams, build: str | None = None) -> TimingParams:
        return replace(base, **self.values(build))

    @property
    def estimates(self) -> list[Estimate]:
        return [*self.shared.values(), *(e for b in self.builds.values() for e in b.values())]

    @property
    def unpinned(self) -> list[str]:
        return [e.name for e in self.estimates if not e.pinned]

    def strong_correlations(self, limit: float = 0.7) -> list[tuple[str, str, float]]:
        return sorted(((a, b, c) for (a, b), c in self.correlations.items() if abs(c) >= limit),
                      key=lambda t: -abs(t[2]))

    def as_dict(self) -> dict[str, Any]:
        return {"solver": SOLVER, "sigma": round(self.sigma, 4),
                "shared": {k: e.as_dict() for k, e in self.shared.items()},
                "builds": {b: {k: e.as_dict() for k, e in v.items()}
                           for b, v in self.builds.items()},
                "unpinned": self.unpinned,
                "correlations": [{"a": a, "b": b, "r": round(c, 3)}
                                 for a, b, c in self.strong_correlations()]}


def board_priors(board: Board) -> dict[str, float]:
    """The priors of ``board``: Pynq-Z1's (``TERMS``) with the latencies that are times kept
    in nanoseconds at the board's clock (the AXI round trip, a module call, a pipeline
    depth scale with the clock: HLS pipelines deeper at a shorter period) and the beat cost
    from the port and DRAM widths of its datasheet (``dram_gbps`` in the board's timing
    derivation, see ``derived_priors``)."""
    scale = board.clock_mhz / 100.0
    out = {k: t.prior for k, t in TERMS.items()}
    for k in ("dma_row_cycles", "insn_cycles", "gemm_refill_cycles", "alu_refill_cycles"):
        out[k] = min(max(TERMS[k].prior * scale, TERMS[k].lo), TERMS[k].hi)
    return out


# ---- the problem --------------------------------------------------------------------------


class _Layout:
    """Which entries of the parameter vector (log constants) are free: the shared constants
    not held, then (build, key) pairs not held."""

    def __init__(self, builds: Sequence[str], held: frozenset[str]) -> None:
        self.builds = list(builds)
        self.shared = [k for k in FIT_KEYS if k not in held]
        self.per_build = [(b, k) for b in self.builds for k in BUILD_KEYS
                          if f"{k}[{b}]" not in held]
        self.per_build_set = set(self.per_build)
        self.names = [*self.shared, *(f"{k}[{b}]" for b, k in self.per_build)]


@dataclass
class _Problem:
    items: Sequence[Prepared]
    base: TimingParams
    clock_hz: float
    priors: dict[str, float]
    layout: _Layout
    fixed: dict[str, float]  # log values of the held shared constants
    sigma: float
    cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.meas = np.array([it.record.ms * 1e-3 for it in self.items])
        self.rb = [self.layout.builds.index(build_of(it)) if build_of(it) in self.layout.builds
                   else -1 for it in self.items]

    def unpack(self, x: np.ndarray) -> tuple[dict[str, float], dict[tuple[int, str], float]]:
        """Log shared values and log per-build values (held ones from ``fixed``)."""
        lay = self.layout
        shared = {k: self.fixed[k] for k in FIT_KEYS if k not in lay.shared}
        shared.update(zip(lay.shared, x[:len(lay.shared)], strict=True))
        per = {(b_i, k): shared[k] for b_i in range(len(lay.builds)) for k in BUILD_KEYS}
        for (b, k), v in zip(lay.per_build, x[len(lay.shared):], strict=True):
            per[(lay.builds.index(b), k)] = v
        return shared, per

    def record_logs(self, shared: dict[str, float], per: dict[tuple[int, str], float],
                    i: int) -> np.ndarray:
        v = np.array([shared[k] for k in FIT_KEYS])
        if self.rb[i] >= 0:
            for k in BUILD_KEYS:
                v[FIT_KEYS.index(k)] = per[(self.rb[i], k)]
        return v

    def eval(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = x.tobytes()
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        lay = self.layout
        shared, per = self.unpack(x)
        n, m = len(self.items), len(x)
        r = np.empty(n)
        jac = np.zeros((n, m))
        for i, it in enumerate(self.items):
            logs = self.record_logs(shared, per, i)
            theta = np.exp(logs)
            total, grad = _time(it, self.base, theta, self.clock_hz)
            r[i] = math.log(total / self.meas[i]) / self.sigma
            dlog = grad * theta / total / self.sigma  # d r / d log(theta_j)
            own = lay.builds[self.rb[i]] if self.rb[i] >= 0 else None
            for j, k in enumerate(lay.shared):
                # a build term counts here for a record whose build's value is held at the
                # population value (or whose build the fit does not know)
                if not TERMS[k].build or (own, k) not in lay.per_build_set:
                    jac[i, j] += dlog[FIT_KEYS.index(k)]
            for j, (b, k) in enumerate(lay.per_build, len(lay.shared)):
                if self.rb[i] >= 0 and lay.builds[self.rb[i]] == b:
                    jac[i, j] += dlog[FIT_KEYS.index(k)]
        # priors: a shared constant towards its prior, a build's value towards the population
        pr = np.zeros(m)
        pj = np.zeros((m, m))
        for j, k in enumerate(lay.shared):
            w = 1 / math.log(TERMS[k].factor)
            pr[j] = w * (shared[k] - math.log(self.priors[k]))
            pj[j, j] = w
        wb = 1 / math.log(BUILD_FACTOR)
        for j, (_b, k) in enumerate(lay.per_build, len(lay.shared)):
            pr[j] = wb * (x[j] - shared[k])
            pj[j, j] = wb
            if k in lay.shared:
                pj[j, lay.shared.index(k)] = -wb
        hit = (np.concatenate([r, pr]), np.vstack([jac, pj]))
        self.cache = {key: hit}
        return hit

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        keys = [*self.layout.shared, *(k for _b, k in self.layout.per_build)]
        return (np.log([TERMS[k].lo for k in keys]), np.log([TERMS[k].hi for k in keys]))


def _time(item: Prepared, base: TimingParams, theta: np.ndarray,
          clock_hz: float) -> tuple[float, np.ndarray]:
    """Seconds of one call with constants ``theta`` (FIT_KEYS order) and d seconds / d theta."""
    p = replace(base, **dict(zip(FIT_KEYS, theta.tolist(), strict=True)))
    end, g = end_and_gradient(item.rows, p)
    grad = np.zeros(len(FIT_KEYS))
    grad[:len(ACCEL_KEYS)] = g / clock_hz
    grad[FIT_KEYS.index("host_call_us")] = 1e-6
    grad[FIT_KEYS.index("host_insn_us")] = 1e-6 * item.rows.n
    return math.ceil(end) / clock_hz + (p.host_call_us + p.host_insn_us * item.rows.n) * 1e-6, \
        grad


def _solve(prob: _Problem, x0: np.ndarray) -> np.ndarray:
    from scipy.optimize import least_squares

    lo, hi = prob.bounds()
    x0 = np.clip(x0, lo + 1e-9, hi - 1e-9)
    res = least_squares(lambda x: prob.eval(x)[0], x0, jac=lambda x: prob.eval(x)[1],
                        bounds=(lo, hi), loss="soft_l1", f_scale=2.0, max_nfev=100,
                        ftol=1e-6, xtol=1e-6)
    return np.asarray(res.x)


def _start(prob: _Problem, prev: dict[str, float] | None) -> np.ndarray:
    lay = prob.layout
    start = {k: math.log(prob.priors[k]) for k in FIT_KEYS}
    if prev:
        start.update({k: v for k, v in prev.items() if k in start})
    per = [prev.get(f"{k}[{b}]", start[k]) if prev else start[k] for b, k in lay.per_build]
    return np.array([start[k] for k in lay.shared] + per)


def fit_joint(items: Sequence[Prepared], board: Board, base: TimingParams,
              priors: dict[str, float] | None = None,
              hold: Sequence[str] = (), start: dict[str, float] | None = None,
              sigma: float | None = None) -> JointFit:
    """The joint fit of ``items`` (module docstring); ``base`` gives the constants that are
    not fitted (IIs, pad cost); ``priors`` default to ``board_priors(board)``; ``hold``:
    constants held at their priors from the start; ``start``: log constants to start from
    (``JointFit.logs``); ``sigma``: the records' spread, else estimated."""
    items = list(items)
    priors = dict(priors or board_priors(board))
    builds = sorted({build_of(it) for it in items})
    held: set[str] = set(hold)
    fixed: dict[str, float] = {k: math.log(priors[k]) for k in held if k in FIT_KEYS}
    prev: dict[str, float] | None = dict(start or {}) or None

    def solve(sig: float) -> tuple[_Problem, np.ndarray]:
        prob = _Problem(items, base, board.clock_hz, priors, _Layout(builds, frozenset(held)),
                        fixed, sig)
        return prob, _solve(prob, _start(prob, prev))

    if sigma is None:  # the records' own spread, every constant free but those held
        sigma = 0.1
        for _ in range(4):
            prob, x = solve(sigma)
            prev = _named(prob, x)
            r = prob.eval(x)[0][:len(items)] * sigma
            new = max(1.4826 * float(np.median(np.abs(r))), SIGMA_FLOOR)
            if abs(new - sigma) <= 0.2 * sigma:
                break
            sigma = new
    for _round in range(len(FIT_KEYS) + len(builds) * len(BUILD_KEYS) + 1):
        prob, x = solve(sigma)
        prev = _named(prob, x)
        post = _posterior(prob, x)
        loose = [name for name, sd in post.items() if not _pinned(name, sd)]
        if not loose:
            break
        # hold the least determined constant (relative to its prior) and refit
        worst = max(loose, key=lambda nm: post[nm] / _prior_sd(nm))
        held.add(worst)
        if worst in FIT_KEYS:
            fixed[worst] = math.log(priors[worst])
    else:  # every round held one more: the fit with the last one held
        prob, x = solve(sigma)
    return _result(prob, x, _posterior(prob, x), priors, held, sigma)


def _pinned(name: str, sd: float) -> bool:
    return sd <= PIN_RATIO * _prior_sd(name)


def _prior_sd(name: str) -> float:
    return math.log(BUILD_FACTOR) if "[" in name else math.log(TERMS[name].factor)


def _named(prob: _Problem, x: np.ndarray) -> dict[str, float]:
    shared, per = prob.unpack(x)
    out = dict(shared)
    for (b_i, k), v in per.items():
        out[f"{k}[{prob.layout.builds[b_i]}]"] = v
    return out


def _covariance(prob: _Problem, x: np.ndarray) -> np.ndarray:
    jac = prob.eval(x)[1]
    return np.linalg.pinv(jac.T @ jac)


def _posterior(prob: _Problem, x: np.ndarray) -> dict[str, float]:
    """Posterior sigma of each free log constant."""
    cov = _covariance(prob, x)
    return {n: float(math.sqrt(max(cov[j, j], 0.0)))
            for j, n in enumerate(prob.layout.names)}


def _result(prob: _Problem, x: np.ndarray, post: dict[str, float], priors: dict[str, float],
            held: set[str], sigma: float) -> JointFit:
    named = _named(prob, x)

    def est(key: str, name: str, prior: float, build: str = "") -> Estimate:
        sd = post.get(name)
        return Estimate(key, math.exp(named[name]), None if sd is None else math.exp(sd),
                        sd is not None and _pinned(name, sd), prior, build)

    shared = {k: est(k, k, priors[k]) for k in FIT_KEYS}
    builds = {b: {k: est(k, f"{k}[{b}]", math.exp(named[k]), b)
                  for k in BUILD_KEYS} for b in prob.layout.builds}
    cov = _covariance(prob, x)
    sd = np.sqrt(np.maximum(np.diag(cov), 1e-30))
    corr = cov / np.outer(sd, sd)
    names = prob.layout.names
    correlations = {(names[a], names[b]): float(corr[a, b])
                    for a in range(len(names)) for b in range(a + 1, len(names))}
    acc, host = _predict_named(prob.items, prob.base, prob.clock_hz, named)
    meas = np.array([it.record.ms * 1e-3 for it in prob.items])
    return JointFit(shared, builds, correlations, (acc + host) / meas - 1, acc, host, sigma,
                    tuple(build_of(it) for it in prob.items), named, tuple(sorted(held)))


def _predict_named(items: Sequence[Prepared], base: TimingParams, clock_hz: float,
                   named: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    acc, host = np.empty(len(items)), np.empty(len(items))
    for i, it in enumerate(items):
        b = build_of(it)
        theta = np.exp([named.get(f"{k}[{b}]", named[k]) for k in FIT_KEYS])
        p = replace(base, **dict(zip(FIT_KEYS, theta.tolist(), strict=True)))
        acc[i] = math.ceil(end_cycles(it.rows, p)) / clock_hz
        host[i] = host_seconds(it.rows.n, p)
    return acc, host


def predict(fit: JointFit, items: Sequence[Prepared], base: TimingParams,
            clock_hz: float) -> np.ndarray:
    """simulated / measured - 1 of ``items`` with ``fit``'s constants (a record of a build
    the fit did not see is timed with the population values)."""
    named = {k: math.log(e.value) for k, e in fit.shared.items()}
    for b, ests in fit.builds.items():
        named.update({f"{k}[{b}]": math.log(e.value) for k, e in ests.items()})
    acc, host = _predict_named(items, base, clock_hz, named)
    return (acc + host) / np.array([it.record.ms * 1e-3 for it in items]) - 1


# ---- transfer -----------------------------------------------------------------------------

#: The groupings a transfer figure leaves out, and what each record's group is.
GROUPINGS: dict[str, Callable[[Prepared], str]] = {
    "loo": lambda it: str(it.record.index),
    "lono": lambda it: it.record.network or "(none)",
    "lodo": design_of,
    "lobo": build_of,
}
GROUPING_NAMES = {"loo": "leave-one-out", "lono": "leave-one-network-out",
                  "lodo": "leave-one-design-out", "lobo": "leave-one-build-out"}


def held_out_errors(items: Sequence[Prepared], board: Board, base: TimingParams,
                    grouping: str, priors: dict[str, float] | None = None,
                    progress: Callable[[str, int, int], None] | None = None
                    ) -> list[float | None]:
    """Each record's error predicted by a joint fit without its group (``GROUPINGS``);
    None for every record when there is one group only."""
    key = GROUPINGS[grouping]
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(key(it), []).append(i)
    out: list[float | None] = [None] * len(items)
    if len(groups) < 2:
        return out
    full = fit_joint(items, board, base, priors) if grouping == "loo" else None
    for n, (_g, idx) in enumerate(groups.items()):
        rest = [it for i, it in enumerate(items) if i not in idx]
        if full is not None:  # one record out: the full fit's held set, start and spread
            fit = fit_joint(rest, board, base, priors, full.held, full.logs, full.sigma)
        else:
            fit = fit_joint(rest, board, base, priors)
        errs = predict(fit, [items[i] for i in idx], base, board.clock_hz)
        for i, e in zip(idx, errs, strict=True):
            out[i] = float(e)
        if progress:
            progress(GROUPING_NAMES[grouping], n + 1, len(groups))
    return out


@dataclass(frozen=True)
class Transfer:
    """Held-out errors of every record per grouping (``GROUPINGS``)."""

    errors: dict[str, list[float | None]]

    def median(self, grouping: str) -> float | None:
        v = [abs(e) for e in self.errors.get(grouping, []) if e is not None]
        return float(np.median(v)) if v else None

    def worst(self, grouping: str) -> float | None:
        v = [abs(e) for e in self.errors.get(grouping, []) if e is not None]
        return float(max(v)) if v else None

    def summary(self) -> dict[str, dict[str, float | None]]:
        def r4(v: float | None) -> float | None:
            return None if v is None else round(v, 4)

        return {g: {"median": r4(self.median(g)), "worst": r4(self.worst(g)),
                    "records": sum(e is not None for e in self.errors[g])}
                for g in self.errors}


def transfer(items: Sequence[Prepared], board: Board, base: TimingParams,
             groupings: Sequence[str] = tuple(GROUPINGS), priors: dict[str, float] | None = None,
             progress: Callable[[str, int, int], None] | None = None) -> Transfer:
    return Transfer({g: held_out_errors(items, board, base, g, priors, progress)
                     for g in groupings})
