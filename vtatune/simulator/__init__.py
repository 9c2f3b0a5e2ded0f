"""Simulators of VTA programs: bit-exact functional (``functional``) and cycle timing
(``timing``)."""

from __future__ import annotations

from vtatune.simulator.functional import Counters, FunctionalResult, Srams, run
from vtatune.simulator.timing import (
    MODEL_VERSION,
    Bounds,
    ModuleTiming,
    TimingParams,
    TimingResult,
    bounds,
    host_seconds,
    load_params,
    simulate,
)

__all__ = [
    "MODEL_VERSION",
    "Bounds",
    "Counters",
    "FunctionalResult",
    "ModuleTiming",
    "Srams",
    "TimingParams",
    "TimingResult",
    "bounds",
    "host_seconds",
    "load_params",
    "run",
    "simulate",
]
