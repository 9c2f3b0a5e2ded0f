"""The timing model against latencies measured on a board (``bench_timing``, part of
``make bench``): how well one physical model (``vtatune.calibration.physical``) transfers.

Rows, over every measured record (``hwconfigs/timing/measured/vta_pynq_measured.log``, 31
records of three builds of two designs; none trimmed): per shipped pynq-z1 profile and the
default, the error as shipped over every record and over its own build's records; the
model's leave-one-out, leave-one-network-out, leave-one-design-out and leave-one-build-out
median and worst errors (refitted in a full run; a quick run reads the shipped profiles'
``transfer`` figures, which ``python -m vtatune.calibration.ship`` wrote); the fitted constants
with their uncertainty; the 1x1 layer ``simulate conv2d --shape 1,32,112,112,64,1,1,0,1``
under each profile; the simulated slowdown of narrow output tiles on the layers measured with
wide ones.
"""

from __future__ import annotations

import time

import numpy as np

#: The 1x1 layer of issue 35 (43.5 ms by the default of that time, 8.4 ms with @2019-07).
ONE_BY_ONE = "1,32,112,112,64,1,1,0,1"


def bench_timing(quick: bool = False) -> list[tuple[str, str]]:
    from vtatune import calibration as cal
    from vtatune.calibration import physical
    from vtatune.hardware import boards, timing_profiles
    from vtatune.hardware.config import default
    from vtatune.simulator.timing import load_params, timing_dir

    t0 = time.perf_counter()
    board = boards.load("pynq-z1")
    data = cal.read_measured(timing_dir() / "measured" / "vta_pynq_measured.log", default(),
                             board)
    profiles = timing_profiles.shipped("pynq-z1")
    base = load_params(board)
    items = cal.prepare(data.records, board, base)
    n = len(items)
    rows: list[tuple[str, str]] = []
    if quick:
        transfer = profiles[0].content["calibration"]["transfer"]
        how = "as shipped (python -m vtatune.calibration.ship)"
        fit = None
    else:
        fit = physical.fit_joint(items, board, base)
        transfer = physical.transfer(items, board, base).summary()
        how = "refitted"
    for g, name in physical.GROUPING_NAMES.items():
        t = transfer.get(g) or {}
        rows.append((f"timing model, {name} ({how}): median / worst |error| over all "
                     f"{t.get('records', n)} records",
                     "n/a" if t.get("median") is None else
                     f"{t['median']:.1%} / {t['worst']:.1%}"))
    own_err = np.full(n, np.nan)
    for prof in profiles:
        spec = prof.spec + (" (default)" if prof.default else "")
        params = load_params(prof.spec)
        errs = cal.errors_with(items, board, params)
        build = prof.content["calibration"].get("build")
        design = prof.content["calibration"].get("design")
        own = [i for i, it in enumerate(items) if build is None
               or (physical.build_of(it) == f"{design} {build}")]
        a = np.abs(errs)
        if build is not None:
            own_err[own] = a[own]
        rows.append((f"timing profile {spec} as shipped: median / worst |error| over all {n} "
                     "records; over " + (f"its build's {len(own)}" if build is not None
                                         else "them again (no build of its own)"),
                     f"{np.median(a):.1%} / {a.max():.1%}; "
                     f"{np.median(a[own]):.1%} / {a[own].max():.1%}"))
        rows.append((f"timing profile {spec}: `simulate conv2d --shape {ONE_BY_ONE}`",
                     f"{_one_by_one(prof.spec):.2f} ms"))
    if not np.isnan(own_err).any():
        rows.insert(0, (f"timing model, in-sample (each record with its build's profile, as "
                        f"shipped): median / worst |error| over all {n} records",
                        f"{np.median(own_err):.1%} / {own_err.max():.1%}"))
    ests = fit.estimates if fit is not None else None
    if ests is None:
        shipped = profiles[0].content["calibration"]["estimates"]
        text = [_est_text(e["key"] + (f"[{e['build']}]" if e.get("build") else ""),
                          e["value"], e["sigma_factor"], e["pinned"]) for e in shipped]
    else:
        text = [_est_text(e.name, e.value, e.factor, e.pinned) for e in ests]
    rows.append((f"timing model constants ({how}; value x/÷ one-sigma factor, or held at the "
                 "prior when the records do not pin it)", "; ".join(text)))
    from vtatune.bench.simulator import narrow_rows

    july = load_params("pynq-z1@2019-07")
    rows += narrow_rows(list(data.records), board, july, "2019-07")
    rows.insert(0, (f"timing vs measured: pynq-z1, {n} AutoTVM records, {len(profiles)} "
                    f"profiles (compile + {'refit + transfer' if not quick else 'as shipped'})",
                    f"{time.perf_counter() - t0:.1f} s"))
    return rows


def _est_text(name: str, value: float, factor: float | None, pinned: bool) -> str:
    if pinned and factor is not None:
        return f"{name} {value:.3g} x/÷ {factor:.2f}"
    return f"{name} {value:.3g} (held at prior)"


def _one_by_one(spec: str) -> float:
    """ms per call of the 1x1 layer with ``simulate``'s suggested knobs under ``spec``."""
    from vtatune import schedules
    from vtatune.compiler import compile_candidate
    from vtatune.hardware import boards
    from vtatune.hardware.config import default
    from vtatune.runtime import build_program
    from vtatune.simulator import simulate
    from vtatune.workloads import parse

    wl, cfg = parse("conv2d", None, ONE_BY_ONE), default()
    knobs = schedules.knob_space(wl, cfg).check(dict(schedules.suggest(wl, cfg)))
    res = compile_candidate(wl, cfg, knobs)
    return simulate(build_program(res, wl, cfg), boards.load(spec)).seconds * 1e3
