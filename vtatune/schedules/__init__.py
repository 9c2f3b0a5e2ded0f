"""Schedule templates (``tvm.s_tir``) and their knob spaces, one module per workload kind."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from vtatune.hardware.config import HwConfig
from vtatune.schedules.knobs import Knobs, KnobSpace, parse_knobs
from vtatune.workloads.base import Workload

__all__ = ["KnobSpace", "Knobs", "apply", "footprint", "knob_space", "parse_knobs", "suggest",
           "traffic"]


def _template(wl: Workload) -> Any:
    from vtatune.schedules import conv2d, dense

    return {"conv2d": conv2d, "dense": dense}[wl.kind]


@lru_cache(maxsize=512)
def knob_space(wl: Workload, hw: HwConfig) -> KnobSpace:
    """The enumerable knob space of ``wl`` on ``hw`` (cached; treat it as read-only)."""
    return _template(wl).knob_space(wl, hw)


def suggest(wl: Workload, hw: HwConfig) -> Knobs:
    """A good starting knob setting (least analytic DRAM traffic that fits the SRAMs)."""
    return dict(_suggest(wl, hw))


@lru_cache(maxsize=512)
def _suggest(wl: Workload, hw: HwConfig) -> tuple[tuple[str, int], ...]:
    # enumerates the whole knob space: cached, the search calls it for every proposal
    return tuple(_template(wl).suggest(wl, hw).items())


def footprint(wl: Workload, hw: HwConfig, knobs: Knobs) -> dict[str, int]:
    """Analytic SRAM bytes per scope and largest micro-op kernel of ``knobs``."""
    return _template(wl).footprint(wl, hw, knobs)


def traffic(wl: Workload, hw: HwConfig, knobs: Knobs) -> int:
    """Analytic DRAM bytes moved by ``knobs`` (inputs and weights per output tile, output once)."""
    return _template(wl).traffic(wl, hw, knobs)


def apply(sch: Any, wl: Workload, hw: HwConfig, knobs: Knobs) -> None:
    """Apply ``wl``'s schedule template with ``knobs`` to ``sch`` (an ``s_tir.Schedule``)."""
    _template(wl).apply(sch, hw, knobs)
