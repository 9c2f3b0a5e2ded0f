"""A compiled program to price: ResNet-18's C8 with the conv2d tutorial's schedule."""

from __future__ import annotations

from functools import cache
from typing import Any

TUTORIAL_C8 = dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=1, tile_co=8, h_nthread=1,
                   oc_nthread=2)


@cache
def c8_program() -> Any:
    from vtatune.compiler import compile_candidate
    from vtatune.hardware import config
    from vtatune.runtime import build_program
    from vtatune.workloads import RESNET18

    hw = config.default()
    res = compile_candidate(RESNET18["C8"], hw, TUTORIAL_C8)
    assert res.ok, res.reason
    return build_program(res, RESNET18["C8"], hw)


def timed(program: Any, board: str) -> tuple[int, float]:
    """Accelerator cycles and seconds per call (accelerator + host) on ``board``."""
    from vtatune.simulator import simulate

    t = simulate(program, board)
    return t.cycles, t.seconds
