"""Shared helpers: compile a candidate, build its program, run it against numpy."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

from vtatune.hardware import config
from vtatune.workloads.base import DEFAULT_SHIFT

#: The conv2d tutorial's schedule of ResNet-18 C8.
TUTORIAL = dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=1, tile_co=8, h_nthread=1, oc_nthread=2)


@cache
def hw_named(name: str) -> Any:
    return config.load(name)


def shipped_names() -> list[str]:
    return sorted(p.stem for p in config.shipped())


def build(wl: Any, hw: Any, knobs: dict[str, int], shift: int = DEFAULT_SHIFT) -> Any:
    """The Program of a candidate that must compile to a valid module."""
    from vtatune.compiler import compile_candidate
    from vtatune.runtime import build_program

    res = compile_candidate(wl, hw, knobs, shift=shift)
    if res.status == "invalid":
        pytest.skip(f"candidate does not fit: {res.reason}")
    assert res.ok, res.reason
    return build_program(res, wl, hw)


def assert_bit_exact(wl: Any, hw: Any, knobs: dict[str, int], seed: int = 0,
                     shift: int = DEFAULT_SHIFT) -> Any:
    """Compile, build, simulate and compare with ``wl.reference``; returns the Execution."""
    from vtatune.runtime import execute, program_counters, random_inputs

    program = build(wl, hw, knobs, shift)
    data, kernel = random_inputs(wl, seed)
    run = execute(program, wl, data, kernel)
    expected = wl.reference(data, kernel, shift)
    assert run.output.dtype == np.int8 and run.output.shape == expected.shape
    np.testing.assert_array_equal(run.output, expected)
    # every token is popped, but those VTA's runtime pops in the next call (VTA's lowered code
    # pops the last store's token after VTASynchronize when there are no virtual threads)
    carried = program.meta["build"]["carried_tokens"]
    assert {k: v for k, v in run.result.leftover_tokens.items() if v} == {
        t: 1 for t in carried}, run.result.leftover_tokens
    assert program_counters(program) == run.result.counters
    return run
