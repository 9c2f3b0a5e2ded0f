"""Fit a board's timing constants to latencies measured on that board.

Input: measured records, either a JSON list in the format of ``vta_pynq_measured.json`` (each
the operator's ``shape``, the schedule's ``knobs`` and the measured ``ms`` per call, end to
end) or an AutoTVM log as VTA's tuning writes it (TopHub's format: one JSON record a line, ``#``
lines naming the network of the section that follows; ``read_measured`` keeps the records of
the board's VTA designs and counts what it skips). Every record's schedule is compiled and its
program built with the real pipeline; the constants in ``FIT_KEYS`` (the accelerator's DMA,
per-instruction and pipeline-refill costs and the host's per-call and per-instruction costs)
are then fitted; the II and pad constants stay as VTA's source fixes them.

The fit: least squares on log(simulated / measured) over the log of the constants, inside
physical bounds (``BOUNDS``), regularized towards the board file's ``prior`` (source-derived
estimates), with a Cauchy loss (scipy's ``least_squares``, trust region reflective), then
reweighted least trimmed squares: the constants that best explain half the records (plus one)
are searched from the prior, from the board's current constants (as they are and scaled to
the records' median) and from fits to random halves, preferring the constants that leave the
fewest records unexplained; records far from them are left out of the final fit and listed
with the reason. A record the current constants explain within the noise (``NOISE_FLOOR``) is
never left out: constants that explain it exist. Simulated time is piecewise linear in the
accelerator constants; the Jacobian is exact (the cost rows summed along each program's
critical path), so a fit needs one simulation per record per step.

Reported, over every record given (left-out ones included): per-record error (simulated /
measured - 1), median and worst absolute error, leave-one-out median (each record predicted
by constants fitted without it), leave-one-network-out median (each network's records
predicted by constants fitted without that network: the records' ``network``, an AutoTVM
log's section) and the rank agreement of record pairs (fraction ordered as on the board),
also for pairs of schedules of the same layer when the file has them.
"""


from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from vtatune.calibration.prepare import Prepared, prepare
from vtatune.calibration.records import MeasuredRecord, display_path
from vtatune.errors import UserError
from vtatune.hardware.boards import Board
from vtatune.simulator.timing import (
    ACCEL_KEYS,
    FIT_KEYS,
    MODEL_VERSION,
    TimingParams,
    end_and_gradient,
    end_cycles,
)

#: Physical bounds of the fitted constants (see SOURCES.md#F1): a DMA row costs at least the
#: AXI round trip of a handful of cycles; a beat at least one cycle (the port's width); every
#: HLS module invocation and non-pipelined loop iteration at least one cycle; the ARM at
#: least a few microseconds per call (register writes, polling) and 50 ns per instruction.
BOUNDS: dict[str, tuple[float, float]] = {
    "dma_row_cycles": (4.0, 1000.0),
    "dma_beat_cycles": (1.0, 16.0),
    "insn_cycles": (1.0, 500.0),
    "gemm_refill_cycles": (1.0, 200.0),
    "alu_refill_cycles": (1.0, 200.0),
    "host_call_us": (2.0, 20000.0),
    "host_insn_us": (0.05, 100.0),
}
#: Scale of the Cauchy loss on log ratios: residuals beyond ~5% count less and less.
LOSS_SCALE = 0.05
#: Spread of the priors (a factor): a constant 3x away from its source-derived prior costs as
#: much as one record simulated LOSS_SCALE off. Keeps constants the records cannot pin down
#: (e.g. the DMA latency when every record is compute-bound) at their physical estimate.
PRIOR_FACTOR = 3.0

@dataclass(frozen=True)
class RecordFit:
    """A record's measured and simulated time (ms) and error (simulated / measured - 1);
    ``loo_error`` with constants fitted without it, ``lono_error`` without its network's
    records; ``trimmed``: left out of the final fit, ``reason`` says why; ``protected``: the
    current constants explain it within the noise, so it could not be left out."""

    index: int
    label: str
    measured_ms: float
    simulated_ms: float
    accelerator_ms: float
    host_ms: float
    error: float
    loo_error: float | None = None
    trimmed: bool = False
    session: str = ""
    network: str = ""
    lono_error: float | None = None
    reason: str = ""
    protected: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "label": self.label, "measured_ms": self.measured_ms,
                "simulated_ms": self.simulated_ms, "accelerator_ms": self.accelerator_ms,
                "host_ms": self.host_ms, "error": self.error, "loo_error": self.loo_error,
                "lono_error": self.lono_error, "trimmed": self.trimmed, "reason": self.reason,
                "protected": self.protected, "session": self.session,
                "network": self.network}  # fmt: skip


@dataclass(frozen=True)
class PairAgreement:
    """Rank agreement of record pairs: ``agree`` of ``pairs`` ordered as measured; ``worst``:
    the pair (i, j) whose simulated order is most wrong, with measured and simulated ratios."""

    pairs: int
    agree: int
    worst: tuple[int, int, float, float] | None

    @property
    def fraction(self) -> float | None:
        return self.agree / self.pairs if self.pairs else None

    def as_dict(self) -> dict[str, Any]:
        w = self.worst
        return {"pairs": self.pairs, "agree": self.agree, "fraction": self.fraction,
                "worst": None if w is None else {"records": [w[0], w[1]],
                                                 "measured_ratio": w[2],
                                                 "simulated_ratio": w[3]}}  # fmt: skip


@dataclass(frozen=True)
class Calibration:
    """The fitted constants and how well they explain the records (every figure over every
    record, the left-out ones included)."""

    board: str
    params: TimingParams
    records: tuple[RecordFit, ...]
    solver: str
    pairs_all: PairAgreement
    pairs_same_layer: PairAgreement
    source: str
    fit_keys: tuple[str, ...] = FIT_KEYS
    notes: tuple[str, ...] = field(default=())
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def median_error(self) -> float:
        return float(np.median([abs(r.error) for r in self.records]))

    @property
    def worst_error(self) -> float:
        return float(max(abs(r.error) for r in self.records))

    @property
    def loo_median_error(self) -> float | None:
        loo = [abs(r.loo_error) for r in self.records if r.loo_error is not None]
        return float(np.median(loo)) if loo else None

    @property
    def lono_median_error(self) -> float | None:
        lono = [abs(r.lono_error) for r in self.records if r.lono_error is not None]
        return float(np.median(lono)) if lono else None

    def by_network(self) -> dict[str, float]:
        """Median |error| of each network's records (networks in file order)."""
        nets: dict[str, list[float]] = {}
        for r in self.records:
            nets.setdefault(r.network or "(none)", []).append(abs(r.error))
        return {k: float(np.median(v)) for k, v in nets.items()}

    def as_dict(self) -> dict[str, Any]:
        return {"board": self.board, "source": self.source, "solver": self.solver,
                "model_version": MODEL_VERSION,
                "params": {k: getattr(self.params, k) for k in self.fit_keys},
                "median_error": self.median_error, "worst_error": self.worst_error,
                "loo_median_error": self.loo_median_error,
                "lono_median_error": self.lono_median_error,
                "by_network": self.by_network(),
                "left_out": [r.index for r in self.records if r.trimmed],
                "rank_agreement": self.pairs_all.as_dict(),
                "rank_agreement_same_layer": self.pairs_same_layer.as_dict(),
                "skipped": dict(self.skipped),
                "records": [r.as_dict() for r in self.records],
                "notes": list(self.notes)}  # fmt: skip

# ---- the fit ------------------------------------------------------------------------------

_LO = np.log([BOUNDS[k][0] for k in FIT_KEYS])
_HI = np.log([BOUNDS[k][1] for k in FIT_KEYS])


def _vector(p: TimingParams) -> np.ndarray:
    return np.array([getattr(p, k) for k in FIT_KEYS], dtype=float)


def _with(prior: TimingParams, theta: np.ndarray) -> TimingParams:
    return replace(prior, **{k: float(v) for k, v in zip(FIT_KEYS, theta, strict=True)})


def _predict(items: Sequence[Prepared], prior: TimingParams, theta: np.ndarray,
             clock_hz: float,
             jac: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Accelerator and host seconds of each item with constants ``theta`` (FIT_KEYS order);
    with ``jac``, d(total seconds)/d(theta)."""
    acc = np.empty(len(items))
    host = np.empty(len(items))
    J = np.zeros((len(items), len(FIT_KEYS))) if jac else None
    p = _with(prior, theta)
    for i, it in enumerate(items):
        if J is not None:
            end, g = end_and_gradient(it.rows, p)
            for j in range(len(ACCEL_KEYS)):
                J[i, j] = g[j] / clock_hz
            J[i, FIT_KEYS.index("host_call_us")] = 1e-6
            J[i, FIT_KEYS.index("host_insn_us")] = 1e-6 * it.rows.n
        else:
            end = end_cycles(it.rows, p)
        acc[i] = math.ceil(end) / clock_hz
        host[i] = (p.host_call_us + p.host_insn_us * it.rows.n) * 1e-6
    return acc, host, J


class _Problem:
    """log(simulated / measured) of a set of records, and the priors, as a function of
    log(constants)."""

    def __init__(self, items: Sequence[Prepared], prior: TimingParams,
                 clock_hz: float) -> None:
        self.items = list(items)
        self.prior = prior
        self.clock_hz = clock_hz
        self.meas = np.array([it.record.ms * 1e-3 for it in self.items])
        self.phi_prior = np.log(_vector(prior))
        self._w_prior = LOSS_SCALE / math.log(PRIOR_FACTOR)
        self._cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def _eval(self, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = phi.tobytes()
        hit = self._cache.get(key)
        if hit is None:
            theta = np.exp(phi)
            acc, host, J = _predict(self.items, self.prior, theta, self.clock_hz, True)
            total = acc + host
            assert J is not None
            # the data residuals, then one prior residual per constant; d log(total) / d phi_j
            # = (d total / d theta_j) * theta_j / total
            r = np.concatenate([np.log(total / self.meas),
                                self._w_prior * (phi - self.phi_prior)])
            jr = np.vstack([J * theta[None, :] / total[:, None],
                            self._w_prior * np.eye(len(phi))])
            hit = (r, jr)
            self._cache = {key: hit}
        return hit

    def record_residuals(self, phi: np.ndarray) -> np.ndarray:
        return self._eval(phi)[0][:len(self.items)]

    def residuals(self, phi: np.ndarray) -> np.ndarray:
        return self._eval(phi)[0]

    def jacobian(self, phi: np.ndarray) -> np.ndarray:
        return self._eval(phi)[1]


def _solve(problem: _Problem, phi0: np.ndarray) -> np.ndarray:
    from scipy.optimize import least_squares

    res = least_squares(problem.residuals, np.clip(phi0, _LO, _HI), jac=problem.jacobian,
                        bounds=(_LO, _HI), loss="cauchy", f_scale=LOSS_SCALE, x_scale=1.0,
                        max_nfev=200)
    return np.asarray(res.x)


SOLVER = "scipy.optimize.least_squares (trf, Cauchy loss) + trimmed refits"
#: Random half-sized subsets the trimmed fit starts from (besides the prior and the current
#: constants), and the seed.
STARTS = 8
SEED = 0
#: Records further than this many robust sigmas from the trimmed fit are left out; sigma is
#: at least NOISE_FLOOR: measured records are the best of noisy runs and drift between
#: sessions (the same C11 schedule: 7.35 and 8.35 ms a month apart), so only a record more
#: than ~30% off the model that explains the majority counts as inconsistent. A record the
#: current constants time within NOISE_FLOOR is never left out.
CUTOFF_SIGMAS = 3.0
NOISE_FLOOR = 0.1


@dataclass(frozen=True)
class _Trim:
    """The trimmed fit: log-constants, the positions left out, and what decided it: the
    residuals and robust sigma of the fit to the majority, the protected positions."""

    phi: np.ndarray
    out: list[int]
    residuals: np.ndarray
    sigma: float
    protected: frozenset[int]


def _fit(items: Sequence[Prepared], prior: TimingParams, clock_hz: float,
         starts_from: Sequence[np.ndarray], protected: frozenset[int] = frozenset(),
         starts: int = STARTS) -> _Trim:
    """Reweighted least trimmed squares: find the constants that explain the best
    h = max(floor(n / 2) + 1, len(FIT_KEYS) + 1) records, the ``protected`` ones always among
    them (concentration steps from each of ``starts_from`` and from fits to random half-sized
    subsets; of the results, the one leaving the fewest records beyond the cutoff, then the
    smallest trimmed cost), then refit on every record within CUTOFF_SIGMAS robust sigmas of
    them and every protected one."""
    n = len(items)
    full = _Problem(items, prior, clock_hz)

    def solve(subset: Sequence[int], start: np.ndarray) -> np.ndarray:
        return _solve(_Problem([items[i] for i in subset], prior, clock_hz), start)

    h = max(n // 2 + 1, len(FIT_KEYS) + 1)
    if n <= h + 1:  # too few records to trim any: a plain robust fit
        best = min((_solve(full, s) for s in starts_from),
                   key=lambda phi: _cauchy_cost(full.residuals(phi)))
        return _Trim(best, [], full.record_residuals(best), NOISE_FLOOR, protected)

    def chosen(r: np.ndarray) -> list[int]:
        rest = [int(i) for i in np.argsort(np.abs(r)) if int(i) not in protected]
        return sorted([*protected, *rest[:max(h - len(protected), 0)]])

    def cost(phi: np.ndarray) -> tuple[int, float]:
        r = full.record_residuals(phi)
        sub = chosen(r)
        sigma = _sigma(r[sub])
        beyond = sum(1 for i in range(n) if i not in protected
                     and abs(r[i]) > CUTOFF_SIGMAS * sigma)
        return beyond, float((r[sub] ** 2).sum())

    def csteps(phi: np.ndarray, rounds: int) -> tuple[tuple[int, float], np.ndarray]:
        best = math.inf
        for _ in range(rounds):
            r = full.record_residuals(phi)
            sub = chosen(r)
            new = float((r[sub] ** 2).sum())
            if new >= best - 1e-12:
                break
            best = new
            phi = solve(sub, phi)
        return cost(phi), phi

    rng = np.random.default_rng(SEED)
    candidates = [csteps(_solve(full, s), 2) for s in starts_from]
    for _ in range(starts):
        subset = sorted(rng.choice(n, size=h, replace=False).tolist())
        candidates.append(csteps(solve(subset, starts_from[0]), 2))
    _, phi = csteps(min(candidates, key=lambda c: c[0])[1], 10)
    r = full.record_residuals(phi)
    sigma = _sigma(r[chosen(r)])
    out = [i for i in range(n) if i not in protected and abs(r[i]) > CUTOFF_SIGMAS * sigma]
    keep = [i for i in range(n) if i not in out]
    return _Trim(solve(keep, phi), out, r, sigma, protected)


def _sigma(r: np.ndarray) -> float:
    """Robust sigma of residuals (1.4826 x the median absolute), at least NOISE_FLOOR."""
    return max(1.4826 * float(np.median(np.abs(r))), NOISE_FLOOR)


def _cauchy_cost(r: np.ndarray) -> float:
    return float(np.log1p((r / LOSS_SCALE) ** 2).sum())


def _starts(items: Sequence[Prepared], prior: TimingParams, current: TimingParams | None,
            clock_hz: float) -> list[np.ndarray]:
    """Where the fit starts: the prior; the current constants as they are and scaled (every
    time constant by one factor) to the records' median ratio, so a uniformly slower or
    faster board starts from the current explanation of its records."""
    out = [np.clip(np.log(_vector(prior)), _LO, _HI)]
    if current is not None:
        phi = np.clip(np.log(_vector(current)), _LO, _HI)
        r = _Problem(items, prior, clock_hz).record_residuals(phi)
        out += [phi, np.clip(phi - float(np.median(r)), _LO, _HI)]
    return out


def calibrate(records: Sequence[MeasuredRecord], board: Board, prior: TimingParams,
              source: str, loo: bool = True,
              progress: Callable[[str, int, int], None] | None = None,
              current: TimingParams | None = None, lono: bool = True) -> Calibration:
    """Fit ``FIT_KEYS`` of ``board`` to ``records``; see the module docstring."""
    items = prepare(records, board, prior,
                    (lambda d, t: progress("compile", d, t)) if progress else None)
    return calibrate_prepared(items, board, prior, source, loo, progress, current, lono)


def calibrate_prepared(items: Sequence[Prepared], board: Board, prior: TimingParams,
                       source: str, loo: bool = True,
                       progress: Callable[[str, int, int], None] | None = None,
                       current: TimingParams | None = None, lono: bool = True,
                       skipped: dict[str, int] | None = None) -> Calibration:
    """``calibrate`` on records already compiled (``prepare``). ``current``: the board's
    constants before this fit (the records they time within NOISE_FLOOR are never left out);
    ``lono``: also the leave-one-network-out errors (when the records are of two networks or
    more)."""
    items = list(items)
    if not items:
        raise UserError(f"{source}: no records to fit")
    clock = board.clock_hz
    protected = frozenset()
    if current is not None:
        cur = errors_with(items, board, current)
        protected = frozenset(i for i, e in enumerate(cur)
                              if abs(math.log1p(e)) <= NOISE_FLOOR)
    starts = _starts(items, prior, current, clock)
    trim = _fit(items, prior, clock, starts, protected)
    phi, out = trim.phi, trim.out
    theta = np.exp(phi)
    acc, host, _ = _predict(items, prior, theta, clock)
    n = len(items)
    loo_err: list[float | None] = [None] * n
    if loo and n > len(FIT_KEYS) + 1:
        # Each record predicted by the constants refitted without it on the records the final
        # fit used (the trimming is not redone); a left-out record is predicted as it is.
        kept = [i for i in range(n) if i not in out]
        for i in range(n):
            if i in out:
                phi_i = phi
            else:
                phi_i = _solve(_Problem([items[j] for j in kept if j != i], prior, clock), phi)
            a, h, _ = _predict([items[i]], prior, np.exp(phi_i), clock)
            loo_err[i] = float((a[0] + h[0]) / (items[i].record.ms * 1e-3) - 1)
            if progress:
                progress("leave-one-out", i + 1, n)
    lono_err = _leave_networks_out(items, prior, clock, starts, protected, progress) \
        if lono else [None] * n
    cur_err = errors_with(items, board, current) if current is not None else None
    reasons = {i: _reason(trim, i, None if cur_err is None else float(cur_err[i]))
               for i in out}
    fits = tuple(RecordFit(it.record.index, it.record.label, it.record.ms,
                           float((a + h) * 1e3), float(a * 1e3), float(h * 1e3),
                           float((a + h) / (it.record.ms * 1e-3) - 1), loo_err[i], i in out,
                           it.record.session, it.record.network, lono_err[i],
                           reasons.get(i, ""), bool(i in protected and abs(trim.residuals[i])
                                                    > CUTOFF_SIGMAS * trim.sigma))
                 for i, (it, a, h) in enumerate(zip(items, acc, host, strict=True)))
    sim = np.array([f.simulated_ms for f in fits])
    meas = np.array([f.measured_ms for f in fits])
    layers = [it.record.workload.signature + "|" + it.record.hw.key for it in items]
    notes = []
    if out:
        notes.append(f"{len(out)} of {n} records are inconsistent with the constants that "
                     "explain the others and were left out of the final fit (their errors "
                     "count in every figure): records "
                     + ", ".join(str(items[i].record.index) for i in out))
    kept_by_current = [f.index for f in fits if f.protected]
    if kept_by_current:
        notes.append("kept although far from the fit to the majority, because the current "
                     "constants time them within the noise "
                     f"({NOISE_FLOOR:.0%}): records " + ", ".join(map(str, kept_by_current)))
    params = _with(prior, theta)
    params = replace(params, calibration=_calibration_note(fits, source))
    return Calibration(board.name, params, fits, SOLVER, rank_agreement(meas, sim),
                       rank_agreement(meas, sim, layers), source, FIT_KEYS, tuple(notes),
                       dict(skipped or {}))


def _reason(trim: _Trim, i: int, current_error: float | None) -> str:
    """Why record ``i`` was left out, in numbers."""
    text = (f"{math.expm1(trim.residuals[i]):+.1%} with the constants that explain the "
            f"majority, beyond {CUTOFF_SIGMAS:g} robust sigmas (log ratio "
            f"{CUTOFF_SIGMAS * trim.sigma:.2f})")
    if current_error is not None:
        text += (f"; the current constants time it {current_error:+.1%}, outside the noise "
                 f"({NOISE_FLOOR:.0%})")
    return text


def _leave_networks_out(items: Sequence[Prepared], prior: TimingParams, clock: float,
                        starts: Sequence[np.ndarray], protected: frozenset[int],
                        progress: Callable[[str, int, int], None] | None
                        ) -> list[float | None]:
    """Each record's error when its network's records are left out of the whole fit (the
    trimmed fit redone on the other networks' records); None for records of no network or
    when there is one network only."""
    nets = list(dict.fromkeys(it.record.network for it in items if it.record.network))
    out: list[float | None] = [None] * len(items)
    if len(nets) < 2:
        return out
    for k, net in enumerate(nets):
        rest = [i for i, it in enumerate(items) if it.record.network != net]
        mine = [i for i, it in enumerate(items) if it.record.network == net]
        keep = frozenset(rest.index(i) for i in protected if i in rest)
        trim = _fit([items[i] for i in rest], prior, clock, starts, keep)
        a, h, _ = _predict([items[i] for i in mine], prior, np.exp(trim.phi), clock)
        for j, i in enumerate(mine):
            out[i] = float((a[j] + h[j]) / (items[i].record.ms * 1e-3) - 1)
        if progress:
            progress("leave-one-network-out", k + 1, len(nets))
    return out


def errors_with(items: Sequence[Prepared], board: Board, params: TimingParams) -> np.ndarray:
    """simulated / measured - 1 of each item with ``params`` (what ``vtatune simulate``
    gives with them)."""
    acc, host, _ = _predict(items, params, _vector(params), board.clock_hz)
    return (acc + host) / np.array([it.record.ms * 1e-3 for it in items]) - 1


def _calibration_note(fits: Sequence[RecordFit], source: str) -> dict[str, Any]:
    return {"records": display_path(source), "n_records": len(fits),
            "fitted": [f.index for f in fits if not f.trimmed],
            "left_out": [f.index for f in fits if f.trimmed],
            "solver": SOLVER, "model_version": MODEL_VERSION}


def rank_agreement(measured: np.ndarray, simulated: np.ndarray,
                   groups: Sequence[str] | None = None) -> PairAgreement:
    """How many record pairs (of the same group, if given) the simulation orders as the
    board did; the worst pair is the one whose simulated ratio is furthest on the wrong side."""
    n = len(measured)
    pairs = agree = 0
    worst: tuple[int, int, float, float] | None = None
    worst_gap = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            if groups is not None and groups[i] != groups[j]:
                continue
            pairs += 1
            mr = measured[i] / measured[j]
            sr = simulated[i] / simulated[j]
            if (mr > 1) == (sr > 1) or mr == 1:
                agree += 1
            gap = abs(math.log(mr)) if (mr > 1) != (sr > 1) else 0.0
            gap += 0 if (mr > 1) == (sr > 1) else abs(math.log(sr))
            if worst is None or gap > worst_gap:
                worst, worst_gap = (i, j, float(mr), float(sr)), gap
    return PairAgreement(pairs, agree, worst)
