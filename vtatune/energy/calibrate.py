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

