"""Fit a board's timing constants to latencies measured on that board.

Input: a JSON list of records in the format of ``vta_pynq_measured.json`` (each a conv2d
``shape``, the schedule's ``knobs`` and the measured ``ms`` per call, end to end). Every
record's schedule is compiled and its program built with the real pipeline; the constants in
``FIT_KEYS`` (the accelerator's DMA, per-instruction and pipeline-refill costs and the host's
per-call and per-instruction costs) are then fitted; the II and pad constants stay as VTA's
source fixes them.

The fit: least squares on log(simulated / measured) over the log of the constants, inside
physical bounds (``BOUNDS``), regularized towards the board file's ``prior`` (source-derived
estimates), with a Cauchy loss, then reweighted least trimmed squares: the constants that
best explain half the records (plus one) are searched from the prior and from fits to random
halves, and records far from them are left out of the final fit and listed. So a minority of
records the model cannot explain together with the rest cannot drag the constants, and the
result does not depend on where the search starts. Simulated time is piecewise linear in the
accelerator constants; the Jacobian is exact (the cost rows summed along each program's
critical path), so a fit needs one simulation per record per step. scipy's
``least_squares`` (trust region reflective) is used when scipy is installed, else a small
numpy Levenberg-Marquardt with the same loss, bounds and Jacobian.

Reported: per-record error (simulated / measured - 1), median and worst absolute error,
leave-one-out median (each record predicted by constants fitted without it) and the rank
agreement of record pairs (fraction ordered as on the board), all also for pairs of
schedules of the same layer when the file has them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from vtatune.errors import UserError
from vtatune.hardware.boards import Board
from vtatune.hardware.config import HwConfig
from vtatune.simulator.timing import (
    ACCEL_KEYS,
    FIT_KEYS,
    MODEL_VERSION,
    CostRows,
    TimingParams,
    cost_rows,
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
#: Required keys of a measured record and their types.
RECORD_KEYS = {"shape": dict, "knobs": dict, "ms": (int, float)}
SHAPE_KEYS = ("n", "cin", "h", "w", "cout", "kh", "kw", "stride", "pad")
#: Short knob names for record labels.
_SHORT = {"tile_b": "b", "tile_h": "h", "tile_w": "w", "tile_ci": "ci", "tile_co": "co",
          "h_nthread": "ht", "oc_nthread": "ot"}
#: VTA's bitstream names (TopHub ``model``): pynq_1x16_i8w8a32_15_15_18_17.
_MODEL = re.compile(r"^(?:\w+?_)?(\d+)x(\d+)_i(\d+)w(\d+)a(\d+)_(\d+)_(\d+)_(\d+)_(\d+)$")


@dataclass(frozen=True)
class MeasuredRecord:
    """One measured call: record ``index`` of the file, the layer, its schedule, the design."""

    index: int
    workload: Any  # vtatune.workloads.Conv2d
    knobs: dict[str, int]
    hw: HwConfig
    ms: float
    label: str
    session: str = ""


@dataclass(frozen=True)
class RecordFit:
    """A record's measured and simulated time (ms) and error (simulated / measured - 1);
    ``loo_error`` with constants fitted without it; ``trimmed``: left out of the final
    trimmed fit (the model cannot explain it together with the majority)."""

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

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "label": self.label, "measured_ms": self.measured_ms,
                "simulated_ms": self.simulated_ms, "accelerator_ms": self.accelerator_ms,
                "host_ms": self.host_ms, "error": self.error, "loo_error": self.loo_error,
                "trimmed": self.trimmed, "session": self.session}  # fmt: skip


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
    """The fitted constants and how well they explain the records."""

    board: str
    params: TimingParams
    records: tuple[RecordFit, ...]
    solver: str
    pairs_all: PairAgreement
    pairs_same_layer: PairAgreement
    source: str
    fit_keys: tuple[str, ...] = FIT_KEYS
    notes: tuple[str, ...] = field(default=())
    per_session: dict[str, dict[str, float]] = field(default_factory=dict)
    session: str | None = None

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

    def as_dict(self) -> dict[str, Any]:
        return {"board": self.board, "source": self.source, "solver": self.solver,
                "model_version": MODEL_VERSION,
                "params": {k: getattr(self.params, k) for k in self.fit_keys},
                "median_error": self.median_error, "worst_error": self.worst_error,
                "loo_median_error": self.loo_median_error,
                "rank_agreement": self.pairs_all.as_dict(),
                "rank_agreement_same_layer": self.pairs_same_layer.as_dict(),
                "per_session": self.per_session, "session": self.session,
                "records": [r.as_dict() for r in self.records],
                "notes": list(self.notes)}  # fmt: skip


# ---- reading measured records -------------------------------------------------------------


def read_records(path: str | Path, default_hw: HwConfig, board: str,
                 max_bytes: int = 32 << 20) -> list[MeasuredRecord]:
    """Parse and check a measured-records file (read as every user file is: a regular file of
    at most ``max_bytes``, UTF-8, nesting and numbers bounded, see ``vtatune.readers``);
    raises ``UserError`` listing the problems."""
    from vtatune.readers import read_json

    raw = read_json(path, "measured records", limit=max_bytes)
    return records_from_list(raw, str(path), default_hw, board)


def records_from_list(raw: Any, source: str, default_hw: HwConfig,
                      board: str) -> list[MeasuredRecord]:
    from vtatune.errors import VtatuneError
    from vtatune.workloads import Conv2d

    if not isinstance(raw, list):
        raise UserError(f"{source}: expected a JSON list of measured records, "
                        f"got {type(raw).__name__}")
    if not raw:
        raise UserError(f"{source}: no measured records")
    problems: list[str] = []
    out: list[MeasuredRecord] = []
    for i, rec in enumerate(raw):
        where = f"record {i}"
        if not isinstance(rec, dict):
            problems.append(f"{where}: expected an object")
            continue
        bad = [k for k, t in RECORD_KEYS.items()
               if not isinstance(rec.get(k), t) or isinstance(rec.get(k), bool)]
        if bad:
            problems.append(f"{where}: missing or wrong-typed {', '.join(bad)}")
            continue
        ms = float(rec["ms"])
        if not math.isfinite(ms) or ms <= 0:
            problems.append(f"{where}: ms must be a positive number, got {rec['ms']!r}")
        if rec.get("board") not in (None, board):
            problems.append(f"{where}: measured on board {rec['board']!r}, not {board!r}")
        shape = rec["shape"]
        op = shape.get("op", "conv2d")
        if op != "conv2d" or shape.get("groups", 1) != 1:
            problems.append(f"{where}: only conv2d with groups 1 can be calibrated on, got "
                            f"{op!r} groups {shape.get('groups', 1)!r}")
            continue
        vals = {k: shape.get(k) for k in SHAPE_KEYS}
        wrong = [k for k, v in vals.items() if isinstance(v, bool) or not isinstance(v, int)]
        if wrong:
            problems.append(f"{where}: shape needs integer {', '.join(wrong)}")
            continue
        knobs = rec["knobs"]
        if any(isinstance(v, bool) or not isinstance(v, int) for v in knobs.values()):
            problems.append(f"{where}: knobs must be integers")
            continue
        try:
            hw = _record_hw(rec, default_hw)
            wl = Conv2d(**vals)
        except VtatuneError as exc:
            problems.append(f"{where}: {exc}")
            continue
        label = (f"{wl.cin}x{wl.h}x{wl.w}->{wl.cout} k{wl.kh}x{wl.kw} s{wl.stride} | "
                 + " ".join(f"{_SHORT.get(k, k)}{v}" for k, v in sorted(knobs.items())))
        measured = rec.get("measured")
        session = measured[:7] if isinstance(measured, str) else ""  # YYYY-MM
        out.append(MeasuredRecord(i, wl, dict(knobs), hw, ms, label, session))
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UserError(f"{source}: " + "; ".join(problems[:3]) + more)
    return out


def _record_hw(rec: dict[str, Any], default_hw: HwConfig) -> HwConfig:
    """The design a record was measured on: a ``vta_config.json`` object under ``hw``, a
    VTA bitstream name under ``model`` (e.g. pynq_1x16_i8w8a32_15_15_18_17), else the
    default."""
    from vtatune.hardware import config

    if isinstance(rec.get("hw"), dict):
        return config.from_dict(rec["hw"], source="record hw")
    m = _MODEL.match(str(rec.get("model", "")))
    if m:
        b, blk, i, w, a, uop, inp, wgt, acc = (int(v) for v in m.groups())
        logs = [_log2(v) for v in (b, blk, i, w, a)]
        if None not in logs:
            return config.validate(replace(
                default_hw, log_batch=logs[0], log_block_in=logs[1], log_block_out=logs[1],
                log_inp_width=logs[2], log_wgt_width=logs[3], log_acc_width=logs[4],
                log_uop_buff_size=uop, log_inp_buff_size=inp, log_wgt_buff_size=wgt,
                log_acc_buff_size=acc, name=str(rec["model"])), f"model {rec['model']}")
    return default_hw


def _log2(v: int) -> int | None:
    return v.bit_length() - 1 if v > 0 and v & (v - 1) == 0 else None


# ---- compiling ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Prepared:
    """A record's program as cost rows, ready to be timed with any constants."""

    record: MeasuredRecord
    rows: CostRows


def prepare(records: Sequence[MeasuredRecord], board: Board, prior: TimingParams,
            progress: Callable[[int, int], None] | None = None) -> list[Prepared]:
    """Compile every record's schedule and build its program; ``UserError`` names the first
    record that does not compile (a calibration needs every record)."""
    from vtatune import schedules
    from vtatune.compiler import compile_candidate
    from vtatune.errors import VtatuneError
    from vtatune.runtime import build_program

    out = []
    for n, rec in enumerate(records):
        try:
            space = schedules.knob_space(rec.workload, rec.hw)
            knobs = space.check({**schedules.suggest(rec.workload, rec.hw), **rec.knobs})
        except VtatuneError as exc:
            raise UserError(f"record {rec.index}: {exc}") from None
        res = compile_candidate(rec.workload, rec.hw, knobs)
        if not res.ok:
            raise UserError(f"record {rec.index} ({rec.label}): schedule is {res.status}: "
                            f"{res.reason}")
        program = build_program(res, rec.workload, rec.hw)
        out.append(Prepared(rec, cost_rows(program, board, prior)))
        if progress:
            progress(n + 1, len(records))
    return out


# ---- the fit ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Where each fitted constant sits in the parameter vector: the shared constants, then
    each per-session constant once per measurement session (``sessions`` in order)."""

    per_session: tuple[str, ...]
    sessions: tuple[str, ...]

    @property
    def shared(self) -> tuple[str, ...]:
        return tuple(k for k in FIT_KEYS if k not in self.per_session)

    @property
    def size(self) -> int:
        return len(self.shared) + len(self.per_session) * len(self.sessions)

    def column(self, key: str, session: str) -> int:
        if key in self.shared:
            return self.shared.index(key)
        return (len(self.shared) + self.per_session.index(key) * len(self.sessions)
                + self.sessions.index(session))

    def keys(self) -> list[str]:
        """The constant each column holds."""
        return [*self.shared, *(k for k in self.per_session for _ in self.sessions)]

    def params(self, prior: TimingParams, theta: np.ndarray, session: str) -> TimingParams:
        return replace(prior, **{k: float(theta[self.column(k, session)]) for k in FIT_KEYS})

    def vector(self, p: TimingParams) -> np.ndarray:
        return np.array([getattr(p, k) for k in self.keys()])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.log([BOUNDS[k][0] for k in self.keys()]),
                np.log([BOUNDS[k][1] for k in self.keys()]))


def _predict(items: Sequence[Prepared], layout: _Layout, prior: TimingParams,
             theta: np.ndarray, clock_hz: float,
             jac: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Accelerator and host seconds of each item with the constants of its session; with
    ``jac``, d(total seconds)/d(theta)."""
    acc = np.empty(len(items))
    host = np.empty(len(items))
    J = np.zeros((len(items), layout.size)) if jac else None
    by_session = {s: layout.params(prior, theta, s) for s in layout.sessions}
    for i, it in enumerate(items):
        s = it.record.session
        p = by_session[s]
        if J is not None:
            end, g = end_and_gradient(it.rows, p)
            for j, key in enumerate(ACCEL_KEYS):
                J[i, layout.column(key, s)] = g[j] / clock_hz
            J[i, layout.column("host_call_us", s)] = 1e-6
            J[i, layout.column("host_insn_us", s)] = 1e-6 * it.rows.n
        else:
            end = end_cycles(it.rows, p)
        acc[i] = math.ceil(end) / clock_hz
        host[i] = (p.host_call_us + p.host_insn_us * it.rows.n) * 1e-6
    return acc, host, J


class _Problem:
    """log(simulated / measured) of a set of records, and the priors, as a function of
    log(constants)."""

    def __init__(self, items: Sequence[Prepared], layout: _Layout, prior: TimingParams,
                 clock_hz: float) -> None:
        self.items = list(items)
        self.layout = layout
        self.prior = prior
        self.clock_hz = clock_hz
        self.meas = np.array([it.record.ms * 1e-3 for it in self.items])
        self.phi_prior = np.log(layout.vector(prior))
        self._w_prior = LOSS_SCALE / math.log(PRIOR_FACTOR)
        self._cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def _eval(self, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = phi.tobytes()
        hit = self._cache.get(key)
        if hit is None:
            theta = np.exp(phi)
            acc, host, J = _predict(self.items, self.layout, self.prior, theta, self.clock_hz,
                                    True)
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


def _cauchy(r: np.ndarray, scale: float) -> tuple[float, np.ndarray]:
    """Cauchy loss sum and IRLS weights (sqrt) of residuals ``r``."""
    z = (r / scale) ** 2
    return float(0.5 * scale**2 * np.log1p(z).sum()), 1.0 / np.sqrt(1.0 + z)


def _solve(problem: _Problem, phi0: np.ndarray, lo: np.ndarray, hi: np.ndarray,
           use_scipy: bool) -> np.ndarray:
    if use_scipy:
        from scipy.optimize import least_squares

        res = least_squares(problem.residuals, np.clip(phi0, lo, hi), jac=problem.jacobian,
                            bounds=(lo, hi), loss="cauchy", f_scale=LOSS_SCALE, x_scale=1.0,
                            max_nfev=200)
        return np.asarray(res.x)
    return _numpy_lm(problem, phi0, lo, hi)


def _numpy_lm(problem: _Problem, phi0: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              iters: int = 200) -> np.ndarray:
    """Levenberg-Marquardt with iteratively reweighted (Cauchy) residuals, projected onto the
    bounds: the fallback when scipy is not installed."""
    phi = np.clip(phi0, lo, hi)
    r = problem.residuals(phi)
    cost, w = _cauchy(r, LOSS_SCALE)
    lam = 1e-2
    for _ in range(iters):
        J = problem.jacobian(phi)
        Jw = J * w[:, None]
        rw = r * w
        A = Jw.T @ Jw
        g = Jw.T @ rw
        improved = False
        while lam < 1e8:
            step = np.linalg.solve(A + lam * np.diag(np.diag(A) + 1e-12), -g)
            cand = np.clip(phi + step, lo, hi)
            rc = problem.residuals(cand)
            cc, wc = _cauchy(rc, LOSS_SCALE)
            if cc < cost - 1e-15:
                shift = float(np.max(np.abs(cand - phi)))
                phi, r, cost, w = cand, rc, cc, wc
                lam = max(lam / 3, 1e-9)
                improved = True
                if shift < 1e-7:
                    return phi
                break
            lam *= 4
        if not improved:
            break
    return phi


#: Random half-sized subsets the trimmed fit starts from (besides the prior), and the seed.
STARTS = 8
SEED = 0
#: Records further than this many robust sigmas from the trimmed fit are left out; sigma is
#: at least NOISE_FLOOR: measured records are the best of noisy runs and drift between
#: sessions (the same C11 schedule: 7.35 and 8.35 ms a month apart), so only a record more
#: than ~30% off the model that explains the majority counts as inconsistent.
CUTOFF_SIGMAS = 3.0
NOISE_FLOOR = 0.1


def _fit(items: Sequence[Prepared], layout: _Layout, prior: TimingParams, clock_hz: float,
         phi0: np.ndarray, use_scipy: bool, starts: int = STARTS) -> tuple[np.ndarray, list[int]]:
    """Reweighted least trimmed squares: find the constants that explain the best
    h = max(floor(n / 2) + 1, len(FIT_KEYS) + 1) records (concentration steps from the prior
    and from fits to random half-sized subsets), then refit on every record within
    CUTOFF_SIGMAS robust sigmas of them. Returns log-constants and the positions of the
    records left out."""
    lo, hi = layout.bounds()
    n = len(items)
    full = _Problem(items, layout, prior, clock_hz)

    def solve(subset: Sequence[int], start: np.ndarray) -> np.ndarray:
        return _solve(_Problem([items[i] for i in subset], layout, prior, clock_hz), start, lo,
                      hi, use_scipy)

    h = max(n // 2 + 1, len(FIT_KEYS) + 1)
    if n <= h + 1:  # too few records to trim any: a plain robust fit
        return _solve(full, phi0, lo, hi, use_scipy), []

    def csteps(phi: np.ndarray, rounds: int) -> tuple[float, np.ndarray]:
        cost = math.inf
        for _ in range(rounds):
            r = full.record_residuals(phi)
            new_cost = float(np.sort(r**2)[:h].sum())
            if new_cost >= cost - 1e-12:
                break
            cost = new_cost
            phi = solve(sorted(np.argsort(np.abs(r))[:h].tolist()), phi)
        return float(np.sort(full.record_residuals(phi) ** 2)[:h].sum()), phi

    rng = np.random.default_rng(SEED)
    candidates = [csteps(_solve(full, phi0, lo, hi, use_scipy), 2)]
    for _ in range(starts):
        subset = sorted(rng.choice(n, size=h, replace=False).tolist())
        candidates.append(csteps(solve(subset, phi0), 2))
    _, phi = csteps(min(candidates, key=lambda c: c[0])[1], 10)
    r = full.record_residuals(phi)
    sigma = max(1.4826 * float(np.median(np.sort(np.abs(r))[:h])), NOISE_FLOOR)
    out = [i for i in range(n) if abs(r[i]) > CUTOFF_SIGMAS * sigma]
    keep = [i for i in range(n) if i not in out]
    return solve(keep, phi), out


def calibrate(records: Sequence[MeasuredRecord], board: Board, prior: TimingParams,
              source: str, loo: bool = True, use_scipy: bool | None = None,
              progress: Callable[[str, int, int], None] | None = None,
              per_session: Sequence[str] = (), session: str | None = None) -> Calibration:
    """Fit ``FIT_KEYS`` of ``board`` to ``records``; see the module docstring."""
    items = prepare(records, board, prior,
                    (lambda d, t: progress("compile", d, t)) if progress else None)
    return calibrate_prepared(items, board, prior, source, loo, use_scipy, progress,
                              per_session, session)


def calibrate_prepared(items: Sequence[Prepared], board: Board, prior: TimingParams,
                       source: str, loo: bool = True, use_scipy: bool | None = None,
                       progress: Callable[[str, int, int], None] | None = None,
                       per_session: Sequence[str] = (),
                       session: str | None = None) -> Calibration:
    """``calibrate`` on records already compiled (``prepare``). ``per_session`` names
    constants fitted once per measurement session (records grouped by the month of their
    ``measured`` date) instead of once for all; ``session`` picks whose values the returned
    constants carry (default: the latest)."""
    items = list(items)
    bad = [k for k in per_session if k not in FIT_KEYS]
    if bad:
        raise UserError(f"--per-session: {', '.join(bad)} not among the fitted constants "
                        f"({', '.join(FIT_KEYS)})")
    sessions = tuple(sorted({it.record.session for it in items}))
    if not per_session:
        sessions = ("",)
        items = [replace(it, record=replace(it.record, session="")) for it in items]
    if session is None:
        session = sessions[-1]
    elif session not in sessions:
        raise UserError(f"--session {session!r}: the records' sessions are "
                        f"{', '.join(s or '(undated)' for s in sessions)}")
    layout = _Layout(tuple(k for k in FIT_KEYS if k in per_session), sessions)
    if use_scipy is None:
        use_scipy = _have_scipy()
    solver = ("scipy.optimize.least_squares (trf, Cauchy loss) + trimmed refits" if use_scipy
              else "numpy Levenberg-Marquardt (Cauchy IRLS) + trimmed refits")
    clock = board.clock_hz
    lo, hi = layout.bounds()
    phi0 = np.clip(np.log(layout.vector(prior)), lo, hi)
    phi, out = _fit(items, layout, prior, clock, phi0, use_scipy)
    theta = np.exp(phi)
    acc, host, _ = _predict(items, layout, prior, theta, clock)
    loo_err: list[float | None] = [None] * len(items)
    if loo and len(items) > len(FIT_KEYS) + 1:
        # Each record predicted by the constants refitted without it on the records the final
        # fit used (the trimming is not redone); a left-out record is predicted as it is.
        kept = [i for i in range(len(items)) if i not in out]
        for n_done, i in enumerate(range(len(items))):
            if i in out:
                phi_i = phi
            else:
                rest = [items[j] for j in kept if j != i]
                phi_i = _solve(_Problem(rest, layout, prior, clock), phi, lo, hi, use_scipy)
            a, h, _ = _predict([items[i]], layout, prior, np.exp(phi_i), clock)
            loo_err[i] = float((a[0] + h[0]) / (items[i].record.ms * 1e-3) - 1)
            if progress:
                progress("leave-one-out", n_done + 1, len(items))
    fits = tuple(RecordFit(it.record.index, it.record.label, it.record.ms,
                           float((a + h) * 1e3), float(a * 1e3), float(h * 1e3),
                           float((a + h) / (it.record.ms * 1e-3) - 1), loo_err[i], i in out,
                           it.record.session)
                 for i, (it, a, h) in enumerate(zip(items, acc, host, strict=True)))
    sim = np.array([f.simulated_ms for f in fits])
    meas = np.array([f.measured_ms for f in fits])
    layers = [it.record.workload.signature + "|" + it.record.hw.key for it in items]
    notes = []
    if out:
        notes.append(f"{len(out)} of {len(items)} records are inconsistent with the constants "
                     "that explain the others and were left out of the final fit: records "
                     + ", ".join(str(items[i].record.index) for i in out))
    by_session = {s: {k: float(theta[layout.column(k, s)]) for k in layout.per_session}
                  for s in sessions} if layout.per_session else {}
    if by_session:
        notes.append("per measurement session: " + "; ".join(
            f"{s or '(undated)'}: " + ", ".join(f"{k} {v:.4g}" for k, v in vals.items())
            for s, vals in by_session.items()) + f"; the constants returned are {session}'s")
    params = layout.params(prior, theta, session)
    params = replace(params, calibration=_calibration_note(fits, source, solver, by_session,
                                                           session))
    return Calibration(board.name, params, fits, solver, rank_agreement(meas, sim),
                       rank_agreement(meas, sim, layers), source, FIT_KEYS, tuple(notes),
                       by_session, session if by_session else None)


def errors_with(items: Sequence[Prepared], board: Board, params: TimingParams) -> np.ndarray:
    """simulated / measured - 1 of each item with one set of constants for all (what
    ``vtatune simulate`` gives with ``params``, whatever session a record is of)."""
    layout = _Layout((), ("",))
    items = [replace(it, record=replace(it.record, session="")) for it in items]
    acc, host, _ = _predict(items, layout, params, layout.vector(params), board.clock_hz)
    return (acc + host) / np.array([it.record.ms * 1e-3 for it in items]) - 1


def _calibration_note(fits: Sequence[RecordFit], source: str, solver: str,
                      by_session: dict[str, dict[str, float]], session: str) -> dict[str, Any]:
    note: dict[str, Any] = {"records": _display_path(source), "n_records": len(fits),
                            "fitted": [f.index for f in fits if not f.trimmed],
                            "left_out": [f.index for f in fits if f.trimmed],
                            "solver": solver, "model_version": MODEL_VERSION}
    if by_session:
        note["per_session"] = {s or "(undated)": {k: round(v, 4) for k, v in vals.items()}
                               for s, vals in by_session.items()}
        note["session"] = session
    return note


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


def _have_scipy() -> bool:
    try:
        import scipy.optimize  # noqa: F401
    except ImportError:
        return False
    return True


def timing_file(cal: Calibration, prior: dict[str, Any]) -> dict[str, Any]:
    """The content of hwconfigs/timing/<board>.json for ``cal``: the prior file's structure
    and sources, with the fitted constants and a calibration entry."""
    out = dict(prior)
    params = dict(out.get("params", {}))
    sources = dict(out.get("sources", {}))
    fitted = ", ".join(str(r.index) for r in cal.records if not r.trimmed)
    for k in cal.fit_keys:
        params[k] = round(float(getattr(cal.params, k)), 4)
        base = sources.get(k, "").split(" | fitted: ")[0]
        sources[k] = (f"{base} | fitted: vtatune calibrate on records {fitted} of "
                      f"{_display_path(cal.source)} (median error {cal.median_error:.1%}, "
                      f"leave-one-out median "
                      + (f"{cal.loo_median_error:.1%}" if cal.loo_median_error is not None
                         else "n/a") + ")")
    out["params"] = params
    out["sources"] = sources
    out["calibration"] = dict(cal.params.calibration,
                              median_error=round(cal.median_error, 4),
                              worst_error=round(cal.worst_error, 4),
                              loo_median_error=None if cal.loo_median_error is None
                              else round(cal.loo_median_error, 4))
    return out


def _display_path(path: str) -> str:
    """``path`` relative to the project when it lies inside it, else its file name (a
    committed timing file must not carry a path of the machine it was fitted on)."""
    from vtatune.paths import project_root

    try:
        return str(Path(path).resolve().relative_to(project_root().resolve()))
    except ValueError:
        return Path(path).name


def read_timing_file(path: str | Path) -> dict[str, Any]:
    """The raw JSON of a timing file (already validated by ``load_params``)."""
    return json.loads(Path(path).read_text())


def prior_params(base: TimingParams, raw: dict[str, Any]) -> TimingParams:
    """``base`` with the fitted constants set to the file's ``prior`` block (the physical
    estimates the fit starts from and is regularized towards); without one, ``base``."""
    prior = raw.get("prior") or {}
    return replace(base, **{k: float(prior[k]) for k in FIT_KEYS if k in prior})


def dump_timing_file(content: dict[str, Any]) -> str:
    """JSON with two-space indents and lists of numbers on one line."""
    text = json.dumps(content, indent=2)
    return re.sub(r"\[\s*([-\d.,\s]*?)\s*\]",
                  lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",") if v.strip())
                  + "]", text) + "\n"


#: Constants a derived board scales with its clock (latencies in time carry over) or with its
#: host (the ARM's per-call work); the rest (IIs, pad writes, cycles per beat) carry over.
_CLOCK_SCALED = ("dma_row_cycles", "insn_cycles", "gemm_refill_cycles", "alu_refill_cycles")
_HOST_SCALED = ("host_call_us", "host_insn_us")


def derive(reference: dict[str, Any], derived: dict[str, Any]) -> dict[str, Any]:
    """``derived`` (a timing file with a ``derivation`` block: ``from``, ``clock_scale``,
    ``host_scale``) with its parameters recomputed from the reference board's file: the
    constants of a board that has no measurements, from one that has (SOURCES.md#D1)."""
    rule = derived["derivation"]
    params = dict(reference["params"])
    for k in _CLOCK_SCALED:
        params[k] = round(float(params[k]) * float(rule["clock_scale"]), 4)
    for k in _HOST_SCALED:
        params[k] = round(float(params[k]) * float(rule["host_scale"]), 4)
    return {**derived, "params": params}
