"""Screen hardware designs before they become trials: the cheap analytic checks.

A design the search proposes is first checked without compiling anything, in this order:

1. ``hw_invalid`` -- the config cannot be built or encoded (``config.problems_of``: parameter
   ranges, widths, the ISA's instruction and micro-op fields);
2. ``not_stock_vta`` -- under the ``stock_vta`` constraint, stock VTA cannot build it on the
   space's board (``hardware.stock``);
3. ``no_fit`` -- it does not fit the board (``area.fit``), when the space asks for a fit;
4. ``over_area`` -- its area exceeds the space's ``max_area_mm2`` budget;
5. ``vta_refuses`` -- the schedule the proposal realizes to has a tile VTA's compiler refuses
   (its DMA rules: ``passes.vta_copy_rules``, asked of the operator's copies,
   ``Workload.vta_copy_problem``). This one is of the proposal, not of the design: it is
   counted per proposal.

A design that fails one is *screened*: the search loops (single operator, ``search.runner``;
network, ``networks.runner``) do not spend a trial on it. They tell the sampler the screened
proposal as an infeasible observation with its violation, as a stored ``no_fit`` trial used
to be told, so model-based samplers (xgb, TPE, NSGA-II, GP) learn where the infeasible region
lies and stop proposing it; they count each screened design once per run with its reason.
Each check is deterministic in the design, the board and the space's constraints, so a
screened design is screened again, identically, by any other process or a resumed run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vtatune.search.samplers._base import Observation
from vtatune.search.space import NOT_STOCK
from vtatune.statuses import Status

if TYPE_CHECKING:
    from vtatune.hardware.config import HwConfig
    from vtatune.search.space import SearchSpace

#: Why a design is screened, in the order the checks run.
REASONS = ("hw_invalid", "not_stock_vta", "no_fit", "over_area", "vta_refuses")
#: What each reason means, for output.
REASON_TEXT = {"hw_invalid": "cannot be built or encoded",
               "not_stock_vta": "stock VTA cannot build it",
               "no_fit": "does not fit the board",
               "over_area": "over the area budget",
               "vta_refuses": "VTA's compiler refuses a tile of the schedule"}


@dataclass(frozen=True)
class Verdict:
    """What the screen says of one design. ``reason`` is "" for a design that passes;
    ``status`` is the record status a trial of it would have had (``hw_invalid``/``no_fit``);
    ``violation`` (> 0 when screened) is how far it is from feasible, as the samplers
    learn it. ``area_mm2`` and ``resources`` are None/empty when the config cannot be
    built."""

    reason: str = ""
    status: str = Status.OK
    why: str = ""
    violation: float = 0.0
    area_mm2: float | None = None
    resources: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.reason

    @property
    def observation(self) -> Observation:
        """A screened design as the sampler learns it: infeasible, with its violation."""
        return Observation(None, self.violation, self.status)


def screen(space: SearchSpace, hw: HwConfig) -> Verdict:
    """The screen's verdict on ``hw`` as a design of ``space`` (its board and constraints)."""
    from vtatune.area import estimate, fit
    from vtatune.hardware import boards

    problems = space.hardware_problems(hw)
    if problems:
        stock_only = all(p.startswith(NOT_STOCK) for p in problems)
        return Verdict(reason="not_stock_vta" if stock_only else "hw_invalid",
                       status=Status.HW_INVALID, why="hardware: " + "; ".join(problems),
                       violation=1.0)
    board = boards.load(space.board)
    report = estimate(hw, board)
    fitted = fit(report, board)
    resources = {**{k: float(v) for k, v in report.totals.items()},
                 "logic_kind": report.logic_kind, "bram_kind": report.bram_kind,
                 "fits": fitted.fits, "over": list(fitted.over),
                 "utilization": {u.kind: u.utilization_pct for u in fitted.usage}}
    area = report.area_mm2
    if space.fit_board and not fitted.fits:
        over = [u.utilization_pct for u in fitted.usage
                if u.over and u.utilization_pct is not None]
        violation = max((p / 100.0 - 1.0 for p in over), default=1.0)
        return Verdict(reason="no_fit", status=Status.NO_FIT, why=fitted.summary(),
                       violation=max(violation, 1e-3), area_mm2=area, resources=resources)
    cap = space.max_area_mm2
    if cap is not None and area > cap:
        return Verdict(reason="over_area", status=Status.NO_FIT,
                       why=f"area {area:.1f} mm² exceeds the {cap:.1f} mm² budget",
                       violation=max(area / cap - 1.0, 1e-3), area_mm2=area,
                       resources=resources)
    return Verdict(area_mm2=area, resources=resources)


class Screen:
    """``screen`` for one space, cached by design, counting the designs it screens.

    ``counts``: screened designs by reason (each design once); ``examples``: the first
    screened design's full reason per reason.
    """

    def __init__(self, space: SearchSpace, schedules: bool = True):
        self.space = space
        #: whether proposals carry a schedule to screen (a network study's are designs only)
        self.schedules = schedules
        self._verdicts: dict[tuple[int, ...], Verdict] = {}
        self._keys = tuple(space.hw_choices)
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self._counted: set[tuple[int, ...]] = set()

    def _values(self, params: dict[str, Any]) -> tuple[int, ...]:
        return tuple(int(params.get(k, v[0])) for k, v in self.space.hw_choices.items())

    def verdict(self, params: dict[str, Any]) -> Verdict:
        """The verdict on the design ``params`` name, then on the schedule they realize to
        (not counted)."""
        values = self._values(params)
        v = self._verdicts.get(values)
        if v is None:
            v = screen(self.space, self.space.hardware(dict(zip(self._keys, values,
                                                                strict=True))))
            self._verdicts[values] = v
        return self._schedule(params, v) if v.passed and self.schedules else v

    def _schedule(self, params: dict[str, Any], v: Verdict) -> Verdict:
        """``v`` (the design passed), or ``vta_refuses`` when the schedule ``params``
        realizes to has a tile VTA's compiler refuses."""
        from vtatune.passes.vta_copy_rules import REFUSED

        cand, why = self.space.realize(params)
        if cand is None and why.startswith("schedule: ") and REFUSED in why:
            return Verdict(reason="vta_refuses", status=Status.INVALID,
                           why=why.removeprefix("schedule: "), violation=1.0,
                           area_mm2=v.area_mm2, resources=v.resources)
        return v

    def check(self, params: dict[str, Any]) -> Verdict:
        """The verdict on the design ``params`` name, counted when it is screened (each
        design once; a refused schedule each time)."""
        v = self.verdict(params)
        values = self._values(params)
        if v.reason == "vta_refuses":
            self.counts[v.reason] += 1
            self.examples.setdefault(v.reason, v.why)
        elif not v.passed and values not in self._counted:
            self._counted.add(values)
            self.counts[v.reason] += 1
            self.examples.setdefault(v.reason, v.why)
        return v

    def passes(self, params: dict[str, Any]) -> bool:
        return self.verdict(params).passed

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def describe(self) -> dict[str, Any]:
        """JSON-ready: ``designs`` screened, by ``reason``, with an ``example`` each."""
        return {"designs": self.total,
                "by_reason": {r: self.counts[r] for r in REASONS if self.counts[r]},
                "examples": {r: self.examples[r] for r in REASONS if r in self.examples}}


def summary_line(screened: dict[str, Any], what: str = "design") -> str:
    """How many designs were screened before evaluation and why: a line, then one indented
    line per reason with an example ("" when none was screened)."""
    n = screened.get("designs", 0)
    if not n:
        return ""
    refused = screened["by_reason"].get("vta_refuses", 0)
    designs = n - refused
    parts = ([f"{designs:,} hardware {what}{'' if designs == 1 else 's'}"] if designs else []) \
        + ([f"{refused:,} proposal{'' if refused == 1 else 's'} VTA's compiler refuses"]
           if refused else [])
    lines = [f"screened before evaluation (not trials): {', '.join(parts)}"]
    for reason, count in screened["by_reason"].items():
        example = screened.get("examples", {}).get(reason, "")
        lines.append(f"  {reason} {count:,}: {REASON_TEXT[reason]}"
                     + (f" (e.g. {example})" if example else ""))
    return "\n".join(lines)
