"""Energy and power per call of a VTA program: events counted from the program, priced with
cited per-board constants (``hwconfigs/energy/constants.toml``), plus static and baseline power.

``estimate(program, cycles, seconds, board)`` gives an ``EnergyReport``: the accelerator's
energy (what the design's knobs change) and the board's (what a battery sees), average power,
per-component figures, each with the range the constants' ranges imply.
"""

from vtatune.energy.activity import Activity, activity
from vtatune.energy.constants import EnergyConstants, load
from vtatune.energy.model import ESTIMATE_NOTE, EnergyReport, Figure, estimate, estimate_activity

__all__ = ["ESTIMATE_NOTE", "Activity", "EnergyConstants", "EnergyReport", "Figure", "activity",
           "estimate", "estimate_activity", "load"]
