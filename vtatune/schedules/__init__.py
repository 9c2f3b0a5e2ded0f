"""Schedule templates' shared machinery (knob spaces, tensor intrinsics, staging) and the
entry points the compile path and the search use; each operator's own template lives with the
operator (``vtatune.workloads.<kind>``)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from vtatune.schedules.knobs import Knobs, KnobSpace, parse_knobs

if TYPE_CHECKING:
    from typing import Any

    from vtatune.hardware.config import HwConfig
    from vtatune.workloads.base import Workload

__all__ = ["KnobSpace", "Knobs", "apply", "footprint", "knob_space", "parse_knobs", "suggest",
           "traffic"]


@lru_cache(maxsize=512)
def knob_space(wl: Workload, hw: HwConfig) -> KnobSpace:
    """The enumerable knob space of ``wl`` on ``hw`` (cached; treat it as read-only), built
    from the operator's knob declarations."""
    return KnobSpace.build(wl.KNOBS, wl.tiles(hw), hw,
                           values=lambda knob, extent: wl.knob_values(hw, knob, extent),
                           extra=lambda k: wl.knob_constraint(hw, k),
                           legal=lambda knob, extent, v: wl.knob_legal(hw, knob, extent, v))


def suggest(wl: Workload, hw: HwConfig) -> Knobs:
    """A good starting knob setting: the least analytic DRAM traffic whose analytic footprint
    fits the SRAMs, preferring two virtual threads; the space's default when nothing fits."""
    return dict(_suggest(wl, hw))


@lru_cache(maxsize=512)
def _suggest(wl: Workload, hw: HwConfig) -> tuple[tuple[str, int], ...]:
    # enumerates the whole knob space: cached, the search calls it for every proposal
    space = knob_space(wl, hw)
    threads = space.names_of("thread")
    best, best_key = None, None
    for k in space:
        f = wl.footprint(hw, k)
        if (f["inp"] > hw.inp_buff_bytes or f["wgt"] > hw.wgt_buff_bytes
                or f["acc"] > hw.acc_buff_bytes or f["uops"] > hw.uop_depth):
            continue
        n = 1
        for t in threads:
            n *= k[t]
        key = (wl.traffic(hw, k), -min(n, 2), -n)
        if best_key is None or key < best_key:
            best, best_key = k, key
    return tuple((best if best is not None else space.default()).items())


def footprint(wl: Workload, hw: HwConfig, knobs: Knobs) -> dict[str, int]:
    """Analytic SRAM bytes per scope and largest micro-op kernel of ``knobs``."""
    return wl.footprint(hw, knobs)


def traffic(wl: Workload, hw: HwConfig, knobs: Knobs) -> int:
    """Analytic DRAM bytes moved by ``knobs`` (inputs and weights per output tile, output once)."""
    return wl.traffic(hw, knobs)


def apply(sch: Any, wl: Workload, hw: HwConfig, knobs: Knobs) -> None:
    """Apply ``wl``'s schedule template with ``knobs`` to ``sch`` (an ``s_tir.Schedule``)."""
    wl.schedule(_Unchecked(sch), hw, knobs)


class _Unchecked:
    """``sch`` with its primitives called past s_tir's Python argument checks.

    Every primitive of ``s_tir.Schedule`` is wrapped in a type checker that binds the call's
    signature and checks each argument against its annotation in Python (~75 us a call): ~4 ms
    of a program's ~60 ms lowering, for templates whose arguments come from the schedule's
    own ``get_sblock``/``get_loops``/``split``. TVM's C++ side still checks every argument.
    Lowered programs are identical with and without (structural hash of the 219 distinct
    programs of a 500-trial conv2d search)."""

    __slots__ = ("_sch",)

    def __init__(self, sch: Any):
        self._sch = sch

    def __getattr__(self, name: str) -> Any:
        raw = getattr(getattr(type(self._sch), name, None), "__wrapped__", None)
        return raw.__get__(self._sch) if raw is not None else getattr(self._sch, name)
