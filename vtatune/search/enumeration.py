"""Every candidate of a finite search space, once each.

A sampler sees tile knobs as log-positions in [0, 1], which map many-to-one onto legal tiles,
so random or grid proposals reach some candidates rarely or never. The search loop therefore
falls back on this enumeration when proposals stop finding unseen candidates: with it every
candidate is reachable, and "the space is exhausted" is a fact, not a guess.

The candidates of a space are its hardware configs (a config that cannot be built is one
candidate: its ``hw_invalid`` record) times the searched knobs' legal values on each buildable
config (the knobs not searched take the template's suggestion); two settings that realize to
the same candidate (two virtual threads that do not divide fall back to one) count once.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from vtatune.search.space import U_PREFIX, SearchSpace, log_position

#: Candidates beyond which a space is not enumerated (realizing one costs ~20-50 us).
ENUMERATE_LIMIT = 200_000

Params = dict[str, Any]


def candidates(space: SearchSpace, limit: int = ENUMERATE_LIMIT
               ) -> list[tuple[str, Params]] | None:
    """``(record key, canonical parameters)`` of every candidate of ``space``, in a fixed
    order; None when there are more than ``limit`` settings to realize."""
    from vtatune import schedules
    from vtatune.hardware import config
    from vtatune.search.evaluate import hw_invalid_record

    wl = space.workload
    names = list(space.hw_choices)
    searched = list(space.searched_hw)
    combos = list(itertools.product(*(space.hw_choices[k] for k in names)))
    if len(combos) > limit:
        return None
    plans: list[tuple[dict[str, Any], Any, list[tuple[int, ...]]]] = []
    total = 0
    for combo in combos:
        logs = dict(zip(names, combo, strict=True))
        hw = space.hardware(logs)
        if config.problems_of(hw):
            plans.append((logs, hw, []))
            total += 1
        else:
            ks = schedules.knob_space(wl, hw, space.stock_vta)
            axes = [ks.axes[k] for k in space.knobs]
            total += math.prod(len(a) for a in axes)
            plans.append((logs, hw, axes))
        if total > limit:
            return None
    out: dict[str, Params] = {}
    for logs, hw, axes in plans:
        base = {k: logs[k] for k in searched}
        if not axes:  # hardware that cannot be built: one record, whatever the knobs
            params = {**base, **_lowest_knobs(space)}
            out.setdefault(hw_invalid_record(wl, hw, "").key, params)
            continue
        ks = schedules.knob_space(wl, hw, space.stock_vta)
        for values in itertools.product(*axes):
            params = dict(base)
            for knob, v in zip(space.knobs, values, strict=True):
                if knob in space.thread_knobs:
                    params[knob] = v
                else:
                    params[U_PREFIX + knob] = log_position(ks.axes[knob], v, ks.elements[knob])
            cand, _ = space.realize(params)
            if cand is not None and cand.key not in out:
                out[cand.key] = space.params_of(cand)
    return list(out.items())


def _lowest_knobs(space: SearchSpace) -> Params:
    """Knob parameters of a candidate whose hardware cannot be built (they do not matter)."""
    return {name: values[0] if kind == "categorical" else 0.0
            for name, (kind, values) in space.param_space().items()
            if name not in space.hw_choices}
