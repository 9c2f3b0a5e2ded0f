"""Schedule templates' shared machinery (knob spaces, tensor intrinsics, staging) and the
entry points the compile path and the search use; each operator's own template lives with the
operator (``vtatune.workloads.<kind>``)."""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from vtatune.schedules.knobs import Knobs, KnobSpace, parse_knobs

if TYPE_CHECKING:
    from typing import Any

    from vtatune.hardware.config import HwConfig
    from vtatune.workloads.base import Workload

__all__ = ["KnobSpace", "Knobs", "apply", "footprint", "knob_space", "parse_knobs", "suggest",
           "traffic"]


@lru_cache(maxsize=512)
def knob_space(wl: Workload, hw: HwConfig, stock: bool = False) -> KnobSpace:
    """The enumerable knob space of ``wl`` on ``hw`` (cached; treat it as read-only), built
    from the operator's knob declarations. Every space keeps to the tiles VTA's compiler
    builds (``Workload.knob_constraint``); ``stock`` (``--stock-vta``) also to those VTA's
    AutoTVM template expresses: every tile divides its axis (``define_split``'s factors)."""
    def values(knob: Any, extent: int) -> tuple[int, ...]:
        out = wl.knob_values(hw, knob, extent)
        return tuple(v for v in out if extent % v == 0) if stock else out

    def legal(knob: Any, extent: int, v: int) -> str | None:
        why = wl.knob_legal(hw, knob, extent, v)
        if why is None and stock and extent % v:
            why = (f"{knob.name}={v} does not divide its extent {extent}: VTA's AutoTVM "
                   "template splits by exact factors (--stock-vta)")
        return why

    return KnobSpace.build(wl.KNOBS, wl.tiles(hw), hw, values=values,
                           extra=lambda k: wl.knob_constraint(hw, k), legal=legal)


def suggest(wl: Workload, hw: HwConfig, stock: bool = False) -> Knobs:
    """A good starting knob setting: the least analytic DRAM traffic whose analytic footprint
    fits the SRAMs, preferring two virtual threads; the space's default when nothing fits.
    ``stock``: of the stock knob space (``knob_space``)."""
    return dict(_suggest(wl, hw, stock))


@lru_cache(maxsize=512)
def _suggest(wl: Workload, hw: HwConfig, stock: bool = False) -> tuple[tuple[str, int], ...]:
    # the search calls it for every proposal's hardware: cached, and the knob space is
    # enumerated once per GEMM shape and widths (``_ranked``), not once per buffer size
    ranked = _ranked(wl, _program_hw(hw), stock)
    if ranked is None:
        return enumerated_suggestion(wl, hw, stock)
    footprints, combos = ranked
    caps = np.array([hw.inp_buff_bytes, hw.wgt_buff_bytes, hw.acc_buff_bytes, hw.uop_depth],
                    dtype=np.int64)
    fits = (footprints <= caps).all(axis=1)
    space = knob_space(wl, hw, stock)
    if not fits.any():
        return tuple(space.default().items())
    axes = list(space.axes.values())
    at = np.unravel_index(int(combos[int(fits.argmax())]), [len(a) for a in axes])
    return tuple((n, a[int(i)]) for n, a, i in zip(space.axes, axes, at, strict=True))


def enumerated_suggestion(wl: Workload, hw: HwConfig, stock: bool = False
                          ) -> tuple[tuple[str, int], ...]:
    """``suggest`` by its definition: every point of the knob space in order, the first of
    the least key among those that fit (``_ranked`` must give the same; tests compare)."""
    space = knob_space(wl, hw, stock)
    threads = space.names_of("thread")
    best, best_key = None, None
    for k in space:
        f = wl.footprint(hw, k)
        if (f["inp"] > hw.inp_buff_bytes or f["wgt"] > hw.wgt_buff_bytes
                or f["acc"] > hw.acc_buff_bytes or f["uops"] > hw.uop_depth):
            continue
        key = _suggest_key(wl, hw, k, threads)
        if best_key is None or key < best_key:
            best, best_key = k, key
    return tuple((best if best is not None else space.default()).items())


def _suggest_key(wl: Workload, hw: HwConfig, k: Knobs, threads: list[str]
                 ) -> tuple[int, int, int]:
    """What ``suggest`` minimizes: DRAM traffic, then two virtual threads, then more."""
    n = 1
    for t in threads:
        n *= k[t]
    return (wl.traffic(hw, k), -min(n, 2), -n)


def _program_hw(hw: HwConfig) -> HwConfig:
    from vtatune.hardware.config import program_hw

    return program_hw(hw)


@lru_cache(maxsize=64)
def _ranked(wl: Workload, shape_hw: HwConfig, stock: bool = False
            ) -> tuple[np.ndarray, np.ndarray] | None:
    """The knob space of ``wl`` on a GEMM shape and widths (``shape_hw``: the compiler's
    ``program_hw`` view, which refuses any use of a buffer size) sorted by ``suggest``'s key
    (stable: ties keep the knob space's order), as (footprints (n, 4): inp, wgt, acc bytes
    and micro-ops; each point's index in the product of the knob axes); the first point
    whose footprint fits a design's buffers is its suggestion. The knob space, footprint
    and traffic depend on the GEMM shape and widths only; None when the workload's
    analytic model reads a buffer size after all (``suggest`` then enumerates per design)."""
    from vtatune.hardware.config import BufferSizeDependence

    try:
        space = knob_space(wl, shape_hw, stock)
        threads = space.names_of("thread")
        names = space.names
        rows = []
        for i, combo in enumerate(itertools.product(*space.axes.values())):
            k = dict(zip(names, combo, strict=True))
            if space.constraint(k) is not None:  # as KnobSpace.__iter__
                continue
            f = wl.footprint(shape_hw, k)
            rows.append((_suggest_key(wl, shape_hw, k, threads),
                         (f["inp"], f["wgt"], f["acc"], f["uops"]), i))
    except BufferSizeDependence:
        return None
    rows.sort(key=lambda r: r[0])  # stable
    try:
        footprints = np.array([r[1] for r in rows], dtype=np.int64).reshape(len(rows), 4)
    except OverflowError:  # beyond 64 bits: compared as Python integers, per design
        return None
    return footprints, np.array([r[2] for r in rows], dtype=np.int64)


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
