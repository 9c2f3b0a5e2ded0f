"""Fit a board's power to measurements: its baseline and the scale of the accelerator's
dynamic energy.

A power record is what a meter on the board's supply gives for one program run in a loop:
``idle_w`` (the board with the bitstream loaded and the accelerator idle), ``running_w`` (while
the program runs back to back) and ``ms`` (its time per call). The model says::

    running_w = baseline_w + scale x dynamic_w(record)

where ``dynamic_w`` is the model's energy of the call's events (SRAM, MACs, ALU, DRAM, clocked
logic: everything but static and baseline power) over the measured time, and ``baseline_w`` is
everything that does not scale with the events (processor system, board, the fabric's static
power). The fit is least squares regularised toward the priors: ``baseline_w`` toward the
records' median idle power (the meter's own reading of what does not run), ``scale`` toward 1
(the shipped constants), each prior with the spread the constants' ranges give. Each fitted
value comes with its standard error from the fit's Jacobian; a value whose data-only error is
larger than its prior's spread is reported as held at its prior (the data cannot pin it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from vtatune.energy.model import DYNAMIC_COMPONENTS as DYNAMIC


@dataclass(frozen=True)
class PowerRecord:
    """One measurement: the model's dynamic energy of one call (joules, central constants and
    both ends), the measured time per call and the meter's idle and running power."""

    name: str
    dynamic_j: float
    dynamic_low_j: float
    dynamic_high_j: float
    seconds: float
    idle_w: float
    running_w: float

    @property
    def dynamic_w(self) -> float:
        return self.dynamic_j / self.seconds


@dataclass(frozen=True)
class Fitted:
    """A fitted value with its standard error and whether the data pinned it."""

    value: float
    stderr: float
    prior: float
    prior_spread: float
    pinned: bool


@dataclass(frozen=True)
class PowerFit:
    """The fit and how well it explains each record (``errors``: predicted / measured - 1)."""

    baseline_w: Fitted
    scale: Fitted
    correlation: float
    errors: tuple[float, ...]
    records: int

    @property
    def median_abs_error(self) -> float:
        return statistics.median(abs(e) for e in self.errors)

    def as_dict(self) -> dict[str, Any]:
        return {"baseline_w": asdict(self.baseline_w), "scale": asdict(self.scale),
                "correlation": self.correlation, "errors": list(self.errors),
                "records": self.records, "median_abs_error": self.median_abs_error}


def fit(records: Sequence[PowerRecord]) -> PowerFit:
    """Fit ``baseline_w`` and ``scale`` to ``records`` (at least one)."""
    if not records:
        raise ValueError("no power records to fit")
    for r in records:
        if not (r.seconds > 0 and r.running_w > 0 and r.idle_w >= 0 and r.dynamic_j >= 0):
            raise ValueError(f"record {r.name}: needs seconds > 0, running_w > 0, idle_w >= 0")
    d = np.array([r.dynamic_w for r in records])
    y = np.array([r.running_w for r in records])
    # priors: the meter's idle reading, and the shipped constants (scale 1) with the spread
    # their ranges give (half the log-range of the dynamic energy, as a relative error)
    b0 = statistics.median(r.idle_w for r in records)
    b_spread = max(0.05 * b0, statistics.pstdev([r.idle_w for r in records]) or 0.0, 1e-3)
    spreads = [math.log(r.dynamic_high_j / r.dynamic_low_j) / 2 for r in records
               if r.dynamic_low_j > 0]
    s_spread = statistics.median(spreads) if spreads else 1.0
    noise = max(0.02 * float(np.median(y)), 1e-3)  # a meter's ~2% reading
    # weighted linear least squares with the two prior rows
    a = np.vstack([np.column_stack([np.ones_like(d), d]) / noise,
                   [[1.0 / b_spread, 0.0], [0.0, 1.0 / s_spread]]])
    rhs = np.concatenate([y / noise, [b0 / b_spread, 1.0 / s_spread]])
    sol, *_ = np.linalg.lstsq(a, rhs, rcond=None)
    cov = np.linalg.inv(a.T @ a)
    se = np.sqrt(np.diag(cov))
    data = np.column_stack([np.ones_like(d), d]) / noise
    info = data.T @ data  # what the records alone say
    data_se = np.full(2, math.inf)
    if np.linalg.matrix_rank(info) == 2:
        data_se = np.sqrt(np.diag(np.linalg.inv(info)))
    elif info[0, 0] > 0:  # one direction only: the baseline given the scale
        data_se[0] = 1.0 / math.sqrt(info[0, 0])
    corr = float(cov[0, 1] / (se[0] * se[1]))
    scale_pinned = bool(data_se[1] < s_spread)
    if scale_pinned:
        b, b_se, s, s_se = float(sol[0]), float(se[0]), float(sol[1]), float(se[1])
    else:  # held at the prior: the baseline alone, given scale 1
        w = np.concatenate([np.full(len(y), 1.0 / noise**2), [1.0 / b_spread**2]])
        vals = np.concatenate([y - d, [b0]])
        b, b_se = float(np.sum(w * vals) / np.sum(w)), float(1.0 / math.sqrt(np.sum(w)))
        s, s_se, corr = 1.0, s_spread, 0.0
    baseline = Fitted(b, b_se, b0, b_spread, bool(data_se[0] < b_spread))
    scale = Fitted(s, s_se, 1.0, s_spread, scale_pinned)
    pred = baseline.value + scale.value * d
    errors = tuple(float(p / m - 1) for p, m in zip(pred, y, strict=True))
    return PowerFit(baseline, scale, corr, errors, len(records))


def power_record(name: str, program: Any, cycles: int, seconds: float, board: Any,
                 idle_w: float, running_w: float) -> PowerRecord:
    """The record of ``program`` (``cycles`` accelerator cycles, measured ``seconds`` per call)
    on ``board`` with the meter's readings: its dynamic energy from the shipped constants."""
    from vtatune.energy.model import estimate

    e = estimate(program, cycles, seconds, board)
    dyn = {case: sum(e.components[c].pick(case) for c in DYNAMIC)
           for case in ("value", "low", "high")}
    return PowerRecord(name, dyn["value"], dyn["low"], dyn["high"], seconds, idle_w, running_w)


def profile_of(fitted: PowerFit, board: str, name: str) -> Any:
    """The power profile ``name`` of ``board`` that ``fitted`` makes (``energy.profiles``)."""
    from vtatune.energy.profiles import PowerProfile

    return PowerProfile(board, name, fitted.baseline_w.value, fitted.baseline_w.stderr,
                        fitted.scale.value, fitted.scale.stderr, fitted.scale.pinned,
                        fitted.records, fitted.median_abs_error)


# ---- records with power readings ---------------------------------------------------------

#: A measured record's power readings: watts idle (bitstream loaded, accelerator idle) and
#: while the record's program runs back to back.
POWER_KEYS = ("idle_w", "running_w")
#: Largest power reading taken as real (a meter's typo beyond any board supply).
MAX_WATTS = 1000.0


def power_readings(raw: Any, source: str) -> dict[int, tuple[float, float]] | None:
    """Each record's ``(idle_w, running_w)`` by its index in a JSON list of measured records,
    or None when no record carries power readings. Every record must carry both when one
    does; a reading must be a finite number in [0, MAX_WATTS] W, running above 0. Raises
    ``UserError`` naming every problem."""
    from vtatune.errors import UserError

    if not isinstance(raw, list) or not any(
            isinstance(r, dict) and any(k in r for k in POWER_KEYS) for r in raw):
        return None
    out: dict[int, tuple[float, float]] = {}
    problems = []
    for i, rec in enumerate(raw):
        vals = [rec.get(k) if isinstance(rec, dict) else None for k in POWER_KEYS]
        bad = [k for k, v in zip(POWER_KEYS, vals, strict=True)
               if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v)
               or not 0 <= v <= MAX_WATTS]
        if not bad and vals[1] <= 0:
            bad = ["running_w"]
        if bad:
            problems.append(f"record {i}: {' and '.join(bad)} must be watts in [0, "
                            f"{MAX_WATTS:g}] (running above 0)")
            continue
        out[i] = (float(vals[0]), float(vals[1]))
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UserError(f"{source}: power readings: " + "; ".join(problems[:3]) + more)
    return out


def fit_measured(records: Sequence[Any], readings: dict[int, tuple[float, float]],
                 board: Any) -> tuple[PowerFit, list[PowerRecord]]:
    """Compile each measured record's schedule (``MeasuredRecord``: workload, hw, knobs, ms),
    price its program over the measured time and fit the board's power to the readings."""
    from vtatune import schedules
    from vtatune.compiler import compile_candidate
    from vtatune.errors import UserError
    from vtatune.runtime import build_program
    from vtatune.simulator import simulate

    prs = []
    for r in records:
        # the knobs a record does not give are the suggested schedule's (as calibrate's)
        knobs = schedules.knob_space(r.workload, r.hw).check(
            {**schedules.suggest(r.workload, r.hw), **r.knobs})
        res = compile_candidate(r.workload, r.hw, knobs)
        if not res.ok:
            raise UserError(f"record {r.index} ({r.label}): its schedule does not compile "
                            f"({res.status}: {res.reason})")
        program = build_program(res, r.workload, r.hw)
        t = simulate(program, board)
        idle, running = readings[r.index]
        prs.append(power_record(f"record {r.index} ({r.label})", program, t.cycles,
                                r.ms / 1e3, board, idle, running))
    return fit(prs), prs
