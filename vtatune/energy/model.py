"""Energy and average power of one call of a VTA program on one board.

``estimate(program, timing, board)`` prices the program's events (vtatune.energy.activity) with
the board's constants (``hwconfigs/energy/constants.toml``, each cited) and adds static and
baseline power over the call's time::

    sram.<buf> = accesses(buf) x primitives one access enables(buf) x e_bram   (or e_uram)
    gemm       = MACs x (DSP share x e_mac_dsp + logic share x e_mac_lut)
    alu        = ALU lane-ops x e_alu
    dram       = DRAM bytes (loads, stores, instruction fetch) x e_dram
    pl_logic   = (FF x e_ff + LUT x e_lut) x accelerator cycles
    pl_static  = P_pl_static x (accelerator + host seconds)
    base       = P_base (processor system and board) x (accelerator + host seconds)

    accelerator energy = every term but ``base`` (what the design's knobs change)
    board energy       = accelerator energy + base (what a battery sees)
    average power      = energy / (accelerator + host seconds)

One access of a ``W``-bit scratchpad row enables one primitive per column of primitives the
area model built it from (``vtatune.area.sram``: one block of each column, in every bank;
an 18 Kb half block counts as the family's ``half_block`` of one), so energy and area agree
on how memories are built. Every figure is given three times: with the constants' central
values and with all at their ``low`` and all at their ``high`` ends (energy is monotone in each
constant, so these bound the range the constants' ranges imply).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from vtatune.area import coefficients as area_coeffs
from vtatune.area.model import estimate as estimate_area
from vtatune.area.model import sram_mappings
from vtatune.area.sram import MemoryMapping
from vtatune.energy import constants as energy_constants
from vtatune.energy import profiles as power_profiles
from vtatune.energy.activity import SRAMS, Activity, activity
from vtatune.energy.constants import EnergyConstants
from vtatune.energy.profiles import RANGE_SIGMAS, PowerProfile
from vtatune.hardware.boards import Board
from vtatune.hardware.config import HwConfig
from vtatune.program.program import Program

#: The three evaluations of every figure: central constants, all low, all high.
CASES = ("value", "low", "high")
PJ, FJ = 1e-12, 1e-15
#: Components in the order outputs list them; all but BASE are the accelerator's.
COMPONENTS = (*(f"sram.{s}" for s in SRAMS), "gemm", "alu", "dram", "pl_logic", "pl_static",
              "base")
BASE = "base"
#: The components that scale with the program's events (not static or baseline power).
DYNAMIC_COMPONENTS = tuple(c for c in COMPONENTS if c not in ("pl_static", BASE))
#: What outputs say about the constants until a board's power is measured (``calibrate``).
ESTIMATE_NOTE = "estimate from the shipped constants (not calibrated on measured power)"


@dataclass(frozen=True)
class Figure:
    """A figure with the central constants and its range (all constants low / all high)."""

    value: float
    low: float
    high: float

    @classmethod
    def of(cls, by_case: dict[str, float]) -> Figure:
        return cls(by_case["value"], by_case["low"], by_case["high"])

    def pick(self, case: str) -> float:
        """``value``, ``low`` or ``high``."""
        return float(getattr(self, case))

    def scaled(self, k: float) -> Figure:
        return Figure(self.value * k, self.low * k, self.high * k)

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class EnergyReport:
    """Energy of one call (joules) and average power (watts), per component and in total.

    ``seconds`` is the call's time (accelerator + host), ``unsourced`` the constants used that
    no public figure backs, ``note`` how far the figures can be trusted."""

    board: str
    seconds: float
    components: dict[str, Figure]
    accelerator_j: Figure
    board_j: Figure
    accelerator_w: Figure
    board_w: Figure
    activity: Activity
    unsourced: tuple[str, ...]
    note: str = ESTIMATE_NOTE

    def as_dict(self) -> dict[str, Any]:
        return {
            "board": self.board,
            "seconds": self.seconds,
            "accelerator_j": self.accelerator_j.as_dict(),
            "board_j": self.board_j.as_dict(),
            "accelerator_w": self.accelerator_w.as_dict(),
            "board_w": self.board_w.as_dict(),
            "components_j": {k: v.as_dict() for k, v in self.components.items()},
            "activity": self.activity.as_dict(),
            "unsourced_constants": list(self.unsourced),
            "note": self.note,
        }


@dataclass(frozen=True)
class _Design:
    """What the energy of a design on a board needs from the area model."""

    logic_cells: float  # LUTs (Xilinx) or ALMs (Intel)
    ffs: float
    dsp_share: float  # of the GEMM's multipliers, the share in DSP blocks
    srams: dict[str, tuple[bool, float]]  # buffer -> (in UltraRAM, primitives per access)


_DESIGNS: dict[tuple[HwConfig, str], _Design] = {}


def _design(hw: HwConfig, board_name: str, board: Board) -> _Design:
    """Cached per (design, board name): a search prices thousands of programs of few designs."""
    key = (hw, board_name)
    if key not in _DESIGNS:
        if len(_DESIGNS) >= 256:
            _DESIGNS.clear()
        _DESIGNS[key] = _design_of(hw, board)
    return _DESIGNS[key]


def _design_of(hw: HwConfig, board: Board) -> _Design:
    co = area_coeffs.load()
    fam = co.family(board.family)
    area = estimate_area(hw, board, co)
    maps = sram_mappings(hw, board, co)
    dsp_share = area.gemm_dsp_multipliers / hw.macs_per_cycle if hw.macs_per_cycle else 0.0
    srams = {s: (m.primitive == "uram", primitives_per_access(m, fam.half_block))
             for s, m in maps.items()}
    return _Design(area.logic, area.totals.get("ff", 0.0), dsp_share, srams)


@lru_cache(maxsize=16)
def _board_constants(board: str, family: str) -> EnergyConstants:
    return energy_constants.load().for_board(board, family)


def primitives_per_access(mapping: MemoryMapping, half_block: float) -> float:
    """Primitives one row access of a memory enables: one block of each column, every bank
    (18 Kb halves weighted ``half_block``)."""
    per_bank = sum(c.count * (half_block if c.half else 1.0) for c in mapping.columns)
    return mapping.banks * per_bank


def estimate(program: Program, cycles: int, seconds: float, board: Board,
             constants: EnergyConstants | None = None,
             profile: PowerProfile | None = None) -> EnergyReport:
    """Energy of one call of ``program`` on ``board``: ``cycles`` accelerator cycles and
    ``seconds`` per call in all (accelerator + host), e.g. from ``simulator.simulate``."""
    return estimate_activity(activity(program), program.hw, cycles, seconds, board, constants,
                             profile)


def estimate_activity(act: Activity, hw: HwConfig, cycles: int, seconds: float, board: Board,
                      constants: EnergyConstants | None = None,
                      profile: PowerProfile | None = None) -> EnergyReport:
    """``estimate`` from events already counted. With no ``profile`` (and no ``constants``
    given) your power profile of the board's name (``pynq-z1@NAME``) applies when you have
    one (``vtatune.energy.profiles``)."""
    k = constants or _board_constants(board.base, board.family)
    design = _design(hw, board.base, board)
    logic_cells, ffs, dsp_share = design.logic_cells, design.ffs, design.dsp_share

    by_case: dict[str, dict[str, float]] = {name: {} for name in COMPONENTS}
    for case in CASES:
        def c(name: str, case: str = case) -> float:
            return k[name].pick(case)

        for s in SRAMS:
            uram, enabled = design.srams[s]
            e_access = c("uram_access_pj") if uram else c("bram_access_pj")
            by_case[f"sram.{s}"][case] = act.sram_accesses(s) * e_access * PJ * enabled
        by_case["gemm"][case] = act.macs * PJ * (dsp_share * c("mac_dsp_pj")
                                                 + (1 - dsp_share) * c("mac_lut_pj"))
        by_case["alu"][case] = act.alu_lane_ops * c("alu_lane_pj") * PJ
        by_case["dram"][case] = act.dram_bytes * c("dram_pj_per_byte") * PJ
        by_case["pl_logic"][case] = cycles * FJ * (ffs * c("ff_clock_fj")
                                                   + logic_cells * c("lut_active_fj"))
        by_case["pl_static"][case] = c("pl_static_w") * seconds
        by_case[BASE][case] = c("base_w") * seconds

    prof = profile if profile is not None else (
        None if constants is not None else power_profiles.load(board.base, board.profile))
    note = ESTIMATE_NOTE
    if prof is not None:
        _apply(prof, by_case, seconds)
        note = prof.note
    components = {name: Figure.of(v) for name, v in by_case.items()}
    acc = Figure.of({case: sum(v[case] for n, v in by_case.items() if n != BASE)
                     for case in CASES})
    brd = Figure.of({case: acc.pick(case) + by_case[BASE][case] for case in CASES})
    inv = 1.0 / seconds if seconds > 0 else 0.0
    return EnergyReport(board.name, seconds, components, acc, brd, acc.scaled(inv),
                        brd.scaled(inv), act, () if prof is not None else k.unsourced, note)


def _apply(prof: PowerProfile, by_case: dict[str, dict[str, float]], seconds: float) -> None:
    """Replace the shipped constants' figures by a fitted profile's: dynamic terms times the
    fitted scale, static and baseline power by the fitted baseline (the fabric's static share
    kept as shipped, at most the baseline), each range the fit's +- RANGE_SIGMAS errors."""
    k = RANGE_SIGMAS
    if prof.scale_pinned:
        lo, hi = max(prof.scale - k * prof.scale_se, 0.0), prof.scale + k * prof.scale_se
        for name in DYNAMIC_COMPONENTS:
            v = by_case[name]["value"]
            by_case[name] = {"value": v * prof.scale, "low": v * lo, "high": v * hi}
    base = {"value": prof.baseline_w,
            "low": max(prof.baseline_w - k * prof.baseline_se, 0.0),
            "high": prof.baseline_w + k * prof.baseline_se}
    for case in CASES:
        static = min(by_case["pl_static"]["value"], base[case] * seconds)
        by_case["pl_static"][case] = static
        by_case[BASE][case] = base[case] * seconds - static
