"""CPU seconds per step of a candidate's evaluation, added up per process.

The compile path and the build record the process's CPU time (``time.process_time``: one clock
read per step, ~1 µs) of each step into this module's totals: ``schedule`` (the template's
schedule primitives), ``lower`` (stock TVM passes and VTA task formation up to virtual threads
and StorageRewrite), ``lower_hw`` (hardware indices, ALU micro-ops, micro-op loop folding),
``measure`` (the lowered program's SRAM, kernel and operation counts), ``verify`` (the checks
against one design's buffers and ISA fields), ``codegen`` (the runtime's host program),
``build`` (running it into instructions) and ``simulate`` (the timing model).

A search's worker writes its totals when it is told to stop if the environment names a folder
(``VTATUNE_STEP_CPU``); ``collect`` adds up the files found there. The bench reads them to give
each step's share of the workers' CPU time (``vtatune.bench.ab``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

#: The steps, in the order a candidate goes through them.
STEPS = ("schedule", "lower", "lower_hw", "measure", "verify", "codegen", "build", "simulate")
#: The environment variable naming the folder a worker writes its totals to at its end.
ENV = "VTATUNE_STEP_CPU"

_totals: dict[str, float] = dict.fromkeys(STEPS, 0.0)


class Laps:
    """The CPU time between successive ``lap`` calls, each added to a step's total."""

    __slots__ = ("t",)

    def __init__(self) -> None:
        self.t = time.process_time()

    def lap(self, step: str) -> None:
        now = time.process_time()
        _totals[step] += now - self.t
        self.t = now


def totals() -> dict[str, float]:
    """This process's CPU seconds per step so far."""
    return dict(_totals)


def reset() -> None:
    for step in STEPS:
        _totals[step] = 0.0


def dump() -> None:
    """Write this process's totals to ``$VTATUNE_STEP_CPU/steps-PID.json`` (nothing when the
    variable is unset; a folder that cannot be written loses the figures, not the search)."""
    folder = os.environ.get(ENV)
    if not folder:
        return
    try:
        Path(folder, f"steps-{os.getpid()}.json").write_text(json.dumps(_totals))
    except OSError:
        pass


def collect(folder: str | Path) -> dict[str, float]:
    """The sum of the totals written to ``folder`` (every step, 0 when none was written)."""
    out = dict.fromkeys(STEPS, 0.0)
    for path in Path(folder).glob("steps-*.json"):
        for step, seconds in json.loads(path.read_text()).items():
            if step in out:
                out[step] += float(seconds)
    return out
