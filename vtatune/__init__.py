"""vtatune: joint hardware x schedule autotuning and design-space exploration for VTA."""

from __future__ import annotations

__version__ = "0.2.0"
