"""Run a workload's program on plain-layout inputs through the functional simulator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vtatune.program.program import Program
from vtatune.simulator.functional import FunctionalResult, run
from vtatune.workloads.base import Workload

#: int8 range of random inputs.
INT8_MIN, INT8_MAX = -128, 127


@dataclass(frozen=True, eq=False)
class Execution:
    """The unpacked result (plain layout, int8) and the simulator's full result."""

    output: np.ndarray
    result: FunctionalResult


def random_inputs(wl: Workload, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Uniform random int8 ``data`` and ``kernel`` in plain layouts."""
    rng = np.random.default_rng(seed)
    shapes = wl.plain_shapes()
    data = rng.integers(INT8_MIN, INT8_MAX + 1, size=shapes["data"], dtype=np.int8)
    kernel = rng.integers(INT8_MIN, INT8_MAX + 1, size=shapes["kernel"], dtype=np.int8)
    return data, kernel


def execute(program: Program, wl: Workload, data: np.ndarray, kernel: np.ndarray) -> Execution:
    """Pack ``data``/``kernel`` (plain layouts), run ``program``, unpack ``res``."""
    hw = program.hw
    d, k = wl.pack_inputs(data, kernel, hw)
    result = run(program, {"data": d, "kernel": k})
    res = result.region("res", np.dtype(hw.out_dtype), wl.packed_shapes(hw)["res"])
    return Execution(wl.unpack_output(res, hw), result)
