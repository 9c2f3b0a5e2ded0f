"""Hardware descriptions: VTA configs (``HwConfig``) and FPGA boards (``Board``)."""

from __future__ import annotations

from vtatune.hardware.boards import Board
from vtatune.hardware.config import HwConfig

__all__ = ["Board", "HwConfig"]
