"""Board fit: does an ``AreaReport`` fit a board's device resources, and by how much."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vtatune.area.model import AreaReport
from vtatune.hardware.boards import Board


@dataclass(frozen=True)
class ResourceUse:
    """One resource kind: used and available counts; ``utilization_pct`` is None when the board
    has none of it but the design needs some."""

    kind: str
    used: float
    available: int
    utilization_pct: float | None

    @property
    def over(self) -> bool:
        return self.used > self.available

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "used": self.used, "available": self.available,
                "utilization_pct": self.utilization_pct, "over": self.over}


@dataclass(frozen=True)
class FitReport:
    """Per-resource utilization of one design on one board; ``over`` lists every overflow."""

    board: str
    fits: bool
    over: tuple[str, ...]
    usage: tuple[ResourceUse, ...]

    def use(self, kind: str) -> ResourceUse:
        for u in self.usage:
            if u.kind == kind:
                return u
        raise KeyError(kind)

    def as_dict(self) -> dict[str, Any]:
        return {"board": self.board, "fits": self.fits, "over": list(self.over),
                "utilization": {u.kind: u.utilization_pct for u in self.usage},
                "usage": [u.as_dict() for u in self.usage]}

    def summary(self) -> str:
        """One line: ``fits pynq-z1`` or ``does not fit pynq-z1: bram36 183% (256/140)``."""
        if self.fits:
            return f"fits {self.board}"
        items = []
        for u in self.usage:
            if u.over:
                pct = "n/a" if u.utilization_pct is None else f"{u.utilization_pct:.0f}%"
                items.append(f"{u.kind} {pct} ({_num(u.used)}/{u.available})")
        return f"does not fit {self.board}: " + ", ".join(items)


def fit(report: AreaReport, board: Board) -> FitReport:
    """Utilization of every resource ``report`` uses against ``board``'s device.

    The report must have been estimated for the board's family (its resource kinds).
    """
    if report.family != board.family:
        raise ValueError(f"report is for family {report.family}, board {board.name} is "
                         f"{board.family}")
    usage = []
    for kind in report.kinds:
        used = report.totals.get(kind, 0.0)
        available = board.resources.get(kind, 0)
        if available > 0:
            pct: float | None = 100.0 * used / available
        else:
            pct = 0.0 if used == 0 else None
        usage.append(ResourceUse(kind, used, available, pct))
    over = tuple(u.kind for u in usage if u.over)
    return FitReport(board.name, not over, over, tuple(usage))


def _num(v: float) -> str:
    return f"{v:g}" if v != int(v) else f"{int(v)}"
