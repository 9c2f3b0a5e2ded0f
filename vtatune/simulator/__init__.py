"""Simulators of VTA programs: bit-exact functional (``functional``) and cycle timing
(``timing``)."""

from __future__ import annotations

from vtatune.simulator.functional import Counters, FunctionalResult, Srams, run
from vtatune.simulator.timing import (
    Bounds,
    ModuleTiming,
    TimingParams,
    TimingResult,
    bounds,
    load_params,
    simulate,
)

__all__ = [
    "Bounds",
    "Counters",
    "FunctionalResult",
    "ModuleTiming",
    "Srams",
    "TimingParams",
    "TimingResult",
    "bounds",
    "load_params",
    "run",
    "simulate",
]
