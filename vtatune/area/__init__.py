"""Area and FPGA resource model: LUT/FF/BRAM/URAM/DSP (ALM/M10K on Intel) per component of a
VTA instance, a board fit check, and a scalar fabric area in mm^2 for Pareto plots.

Coefficients live in ``hwconfigs/area/coefficients.toml`` (each with unit and source).
"""

from __future__ import annotations

from vtatune.area.coefficients import Coefficients
from vtatune.area.coefficients import load as load_coefficients
from vtatune.area.fit import FitReport, ResourceUse, fit
from vtatune.area.model import AreaReport, ComponentArea, estimate
from vtatune.area.sram import Memory, MemoryMapping, map_memory

#: Version of the area model's equations: bump on any change that can change a design's
#: resources or area, so stored results of the old model are never served
#: (``vtatune.store.identity``; the coefficients file is hashed separately).
MODEL_VERSION = 1

__all__ = [
    "MODEL_VERSION",
    "AreaReport",
    "Coefficients",
    "ComponentArea",
    "FitReport",
    "Memory",
    "MemoryMapping",
    "ResourceUse",
    "estimate",
    "fit",
    "load_coefficients",
    "map_memory",
]
