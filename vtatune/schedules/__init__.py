"""Schedule templates (``tvm.s_tir``) and their knob spaces, one module per workload kind."""

from __future__ import annotations

from typing import Any

from vtatune.hardware.config import HwConfig
from vtatune.schedules.knobs import Knobs, KnobSpace, parse_knobs
from vtatune.workloads.base import Workload

__all__ = ["KnobSpace", "Knobs", "apply", "knob_space", "parse_knobs"]


def _template(wl: Workload) -> Any:
    from vtatune.schedules import conv2d, dense

    return {"conv2d": conv2d, "dense": dense}[wl.kind]


def knob_space(wl: Workload, hw: HwConfig) -> KnobSpace:
    """The enumerable knob space of ``wl`` on ``hw``."""
    return _template(wl).knob_space(wl, hw)


def apply(sch: Any, wl: Workload, hw: HwConfig, knobs: Knobs) -> None:
    """Apply ``wl``'s schedule template with ``knobs`` to ``sch`` (an ``s_tir.Schedule``)."""
    _template(wl).apply(sch, hw, knobs)
