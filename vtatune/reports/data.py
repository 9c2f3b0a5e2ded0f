"""What the report plots and tables show, computed from a study's frozen records (no drawing).

Units: ``cycles`` accelerator clock cycles; ``latency_ms`` milliseconds at the board clock;
``area_mm2`` fabric mm^2 at the area model's node; ``lut``/``bram`` in the board family's logic
and block-RAM units (LUT or ALM; BRAM36 or M10K). Both objectives are minimized.

The front is ``vtatune show``'s (``search.summary.summarize``): feasible trials only, one point per
candidate, non-dominated in (area_mm2, the study's latency). The study's latency
(``DesignPoint.objective_ms``) is end to end per call (``latency_ms``) or, for a study made
with ``--latency accelerator``, the accelerator's time; knee, fastest, hypervolume and
convergence all use it. Hypervolumes are measured in an ``HvBox``:
log area and log latency, scaled so the ideal point of the fronts is 0 and their nadir is 1,
with the reference point ``HV_MARGIN`` beyond the nadir; a hypervolume is the dominated share
of that box (0..1, comparable between studies that share the box).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from vtatune.networks.network import HostOp, host_ops_of
from vtatune.search.pareto import hypervolume_2d
from vtatune.statuses import Status
from vtatune.store.records import (
    CandidateRecord,
    LayerResult,
    NetworkTrialRecord,
    StudyInfo,
    TrialRecord,
)

#: The hypervolume's reference point lies this far beyond the fronts' nadir, in the box's
#: normalized log units (the nadir is 1).
HV_MARGIN = 0.10

#: Hardware parameters whose values are sizes in bytes (shown in KiB).
_BUFFER_LABELS = {"LOG_INP_BUFF_SIZE": "inp buffer", "LOG_WGT_BUFF_SIZE": "wgt buffer",
                  "LOG_ACC_BUFF_SIZE": "acc buffer", "LOG_UOP_BUFF_SIZE": "uop buffer"}


@dataclass(frozen=True)
class DesignPoint:
    """One trial's candidate as the report shows it; numbers a failed evaluation could not
    measure are None (``cycles``/``latency_ms`` for every infeasible one)."""

    trial: int
    key: str
    status: str
    reason: str
    hw_name: str
    hw: dict[str, int]
    knobs: dict[str, int]
    cycles: int | None
    latency_ms: float | None
    area_mm2: float | None
    lut: float | None
    ff: float | None
    bram: float | None
    dsp: float | None
    logic_kind: str
    bram_kind: str
    efficiency: float | None
    bound_cycles: float | None  # the larger physical lower bound (compute or memory)
    fits: bool | None
    #: stock VTA builds the design as it is on the study's board (None: unknown)
    stock_vta: bool | None = None
    stock_vta_problems: tuple[str, ...] = ()
    #: ``latency_ms`` (end to end per call) split: the accelerator's and the host's share
    accelerator_ms: float | None = None
    host_ms: float | None = None
    #: the latency the study minimizes, in ms: ``latency_ms`` (end to end) or, for an
    #: accelerator-latency study, the accelerator's time
    objective_ms: float | None = None
    #: a network study's design: its children, one breakdown per network it runs (one for a
    #: single-network study); the layer evaluations it ran and took from the store; its
    #: physical lower bound in ms
    networks: tuple[NetworkShare, ...] = ()
    evaluated: int = 0
    cached: int = 0
    bound_ms: float | None = None
    #: energy per call (joules; per inference for a network design): the accelerator's and
    #: the board's, and an operator trial's components (central joules by component,
    #: ``energy.model.COMPONENTS``); None/empty for records stored before energy
    accelerator_energy_j: float | None = None
    board_energy_j: float | None = None
    energy_components: dict[str, float] = field(default_factory=dict)

    @property
    def feasible(self) -> bool:
        return self.status == Status.OK and self.cycles is not None and (
            not self.networks or self.latency_ms is not None)

    @property
    def multi(self) -> bool:
        """A design of a study of several networks (one accelerator for all)."""
        return len(self.networks) > 1

    @property
    def layers(self) -> tuple[LayerShare, ...]:
        """The layer results of every network the design runs (none for an operator); of
        several networks, named ``NETWORK.LAYER`` (each share of its own network's
        latency)."""
        if not self.multi:
            return tuple(la for n in self.networks for la in n.layers)
        return tuple(replace(la, name=f"{n.network}.{la.name}")
                     for n in self.networks for la in n.layers)


@dataclass(frozen=True)
class LayerShare:
    """Where a design's network time goes: one layer (all ``count`` runs of it)."""

    name: str
    count: int
    latency_ms: float | None  # one run
    total_ms: float | None  # count x one run
    share: float | None  # of the network's latency
    efficiency: float | None  # physical bound / cycles of one run
    knobs: dict[str, int]
    trials: int
    #: the accelerator's energy of one run (joules; None without energy)
    energy_j: float | None = None


@dataclass(frozen=True)
class NetworkShare:
    """One network a design runs: its weight in the study's objective (1 for a study of one
    network), its latency in ms and its layers."""

    network: str
    weight: float
    latency_ms: float | None
    layers: tuple[LayerShare, ...]
    #: its time per run split (None: unknown or not feasible), and accelerator cycles
    accelerator_ms: float | None = None
    host_ms: float | None = None
    cycles: int | None = None


@dataclass(frozen=True)
class StudyNetwork:
    """One network of a study of several (one accelerator for all): its name, weight in the
    objective (the weighted sum of the networks' latencies), layer names and the operators
    it runs on the host (not in the latency; None: not recorded)."""

    network: str
    weight: float
    layer_names: tuple[str, ...]
    host_ops: tuple[HostOp, ...] | None


#: How reports name the objective of a study of several networks.
WEIGHTED_SUM = "weighted sum of the networks' latencies"


def study_networks(info: StudyInfo) -> tuple[StudyNetwork, ...]:
    """The networks of a study of several (``StudyInfo.space["networks"]``); empty for a
    study of one network or an operator study."""
    out = []
    for m in (info.space or {}).get("networks") or ():
        net = m.get("network") if isinstance(m, dict) else None
        if not isinstance(net, dict):
            continue
        out.append(StudyNetwork(
            network=str(net.get("name", "")), weight=float(m.get("weight", 1.0)),
            layer_names=tuple(la.get("name", "") for la in net.get("layers", [])),
            host_ops=tuple(host_ops_of(net)) if "host_ops" in net else None))
    return tuple(out)


@dataclass(frozen=True)
class Reference:
    """VTA's default 1x16x16 design on the study's board: its area always, its best
    latency when the study measured it (``trial`` is that trial)."""

    hw_name: str
    area_mm2: float
    lut: float
    bram: float
    cycles: int | None = None
    latency_ms: float | None = None
    trial: int | None = None


@dataclass(frozen=True)
class HvBox:
    """Where hypervolumes are measured, shared by the studies being compared.

    Both objectives in log scale (12% less time is the same gain at any latency; areas and
    latencies span orders of magnitude), each scaled so the ``ideal`` point (least area and
    latency over the fronts) is 0 and the ``nadir`` of the fronts (the largest area and latency
    among front points) is 1. Latency is the study's (``DesignPoint.objective_ms``). The
    reference point is ``1 + margin`` on both axes; a hypervolume is the dominated share of the
    box ``[0, 1 + margin]^2``. Taking the nadir of the fronts — not of every feasible design,
    whose slowest ones lie far beyond any front — keeps the box on the region where fronts
    differ. An axis along which the fronts do not spread (one area only) gets a unit of
    ``log(1 + margin)``.
    """

    ideal: tuple[float, float]  # (area_mm2, latency ms)
    nadir: tuple[float, float]
    margin: float = HV_MARGIN

    def _spans(self) -> tuple[float, float]:
        return (_log_span(self.ideal[0], self.nadir[0], self.margin),
                _log_span(self.ideal[1], self.nadir[1], self.margin))

    def normalize(self, area_mm2: float, ms: float) -> tuple[float, float]:
        """(area, latency) in box units: 0 at the ideal point, 1 at the nadir."""
        sa, sc = self._spans()
        return (math.log(area_mm2 / self.ideal[0]) / sa, math.log(ms / self.ideal[1]) / sc)

    @property
    def ref_point(self) -> tuple[float, float]:
        """The reference point in (area_mm2, latency ms)."""
        sa, sc = self._spans()
        r = 1.0 + self.margin
        return (self.ideal[0] * math.exp(r * sa), self.ideal[1] * math.exp(r * sc))

    def hypervolume(self, points: Iterable[tuple[float, float]]) -> float:
        """Dominated share of the box by (area_mm2, latency ms) ``points`` (0..1)."""
        r = 1.0 + self.margin
        xy = [self.normalize(a, c) for a, c in points]
        return hypervolume_2d(xy, (r, r)) / (r * r)


def _log_span(lo: float, hi: float, margin: float) -> float:
    return math.log(hi / lo) if hi > lo else math.log(1.0 + margin)


def hv_box(fronts: Iterable[DesignPoint], margin: float = HV_MARGIN) -> HvBox | None:
    """The box spanned by the points of one or several fronts; None without a point."""
    pts = [(p.area_mm2, p.objective_ms) for p in fronts
           if p.feasible and p.area_mm2 is not None and p.area_mm2 > 0 and p.objective_ms]
    if not pts:
        return None
    return HvBox(ideal=(min(a for a, _ in pts), min(c for _, c in pts)),
                 nadir=(max(a for a, _ in pts), max(c for _, c in pts)), margin=margin)


@dataclass(frozen=True)
class Convergence:
    """Per trial done (``trials`` = 1..N): the fewest cycles and the least end-to-end latency
    so far (None before the first feasible trial) and the hypervolume fraction of everything
    feasible so far (in the study's latency)."""

    trials: tuple[int, ...]
    best_cycles: tuple[int | None, ...]
    best_latency_ms: tuple[float | None, ...]
    hypervolume: tuple[float, ...]


@dataclass(frozen=True)
class ValueStats:
    """One value of a parameter: how many trials had it, how many were feasible, and the
    latencies (ms) and areas (mm²) of the feasible ones."""

    value: int
    label: str
    n_trials: int
    n_feasible: int
    latencies_ms: tuple[float, ...]
    areas_mm2: tuple[float, ...] = ()

    @property
    def median_ms(self) -> float | None:
        return _median(self.latencies_ms)

    @property
    def median_mm2(self) -> float | None:
        return _median(self.areas_mm2)


def _median(values: Sequence[float]) -> float | None:
    xs = sorted(values)
    if not xs:
        return None
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


@dataclass(frozen=True)
class ParamRelation:
    """How one hardware parameter or schedule knob relates to latency and area.

    ``importance`` is the correlation ratio eta^2 of log10(latency) over the parameter's
    values among feasible trials: the share of the variance the values explain (0..1; None
    with fewer than two feasible trials or no spread). ``area_importance`` is the same for
    log10(area) — hardware parameters only, since knobs do not change the hardware.
    """

    name: str
    label: str
    kind: str  # "hardware" | "knob"
    values: tuple[ValueStats, ...]
    importance: float | None
    area_importance: float | None = None


@dataclass(frozen=True)
class ReportData:
    """Everything ``vtatune report`` draws and tabulates for one study."""

    study: str
    workload: str
    board: str
    clock_mhz: float
    objective: str
    sampler: str
    n_trials: int
    n_feasible: int
    statuses: dict[str, int]
    points: tuple[DesignPoint, ...]  # one per candidate (first trial), every status
    front: tuple[DesignPoint, ...]  # by increasing area
    knee: DesignPoint | None
    fastest: DesignPoint | None
    smallest: DesignPoint | None
    reference: Reference | None  # None for a network study
    hv_box: HvBox | None  # where the hypervolume is measured (None: no feasible trial)
    hypervolume: float
    convergence: Convergence
    params: tuple[ParamRelation, ...]
    board_capacity: dict[str, float] = field(default_factory=dict)
    #: a network study's network, its layers, layer evaluations run and taken from the store,
    #: and the operators it runs on the host (not in the latency; None: not recorded)
    network: str | None = None
    layer_names: tuple[str, ...] = ()
    evaluated: int = 0
    cached: int = 0
    host_ops: tuple[HostOp, ...] | None = ()
    #: a study of several networks: each network (its weight, layers, host operators); the
    #: objective is the weighted sum of their latencies (empty for one network)
    networks: tuple[StudyNetwork, ...] = ()

    @property
    def ref_point(self) -> tuple[float, float] | None:
        """The hypervolume's reference point (area_mm2, latency ms)."""
        return None if self.hv_box is None else self.hv_box.ref_point


# ---- records -> points -----------------------------------------------------------------------

def objective_ms(c: CandidateRecord, latency: str = "end-to-end") -> float | None:
    """The latency a study minimizes in ms (None without one): end to end per call, or the
    accelerator's time (records stored before the split: their seconds were the
    accelerator's)."""
    if latency == "accelerator":
        s = c.accelerator_seconds if c.accelerator_seconds is not None else c.seconds
    else:
        s = c.seconds
    return None if s is None else s * 1e3


def study_latency(info: StudyInfo) -> str:
    """What latency ``info``'s study minimizes (``search --latency``)."""
    return str((info.space or {}).get("latency", "end-to-end"))


def design_point(t: TrialRecord, board: str | None = None,
                 latency: str = "end-to-end") -> DesignPoint:
    """The report's view of one trial (``board``: the study's, for the stock-VTA check;
    ``latency``: the study's)."""
    c = t.candidate
    res = c.resources or {}
    logic_kind = str(res.get("logic_kind", "lut"))
    bram_kind = str(res.get("bram_kind", "bram36"))
    bounds = [v for v in (c.bounds or {}).values() if isinstance(v, int | float)]
    return DesignPoint(
        trial=t.number, key=c.key, status=c.status, reason=c.reason,
        hw_name=c.hw_name or c.hw_key, hw=dict(c.hw), knobs=dict(c.knobs),
        cycles=c.cycles, latency_ms=None if c.seconds is None else c.seconds * 1e3,
        area_mm2=c.area_mm2, lut=_num(res.get(logic_kind)), ff=_num(res.get("ff")),
        bram=_num(res.get(bram_kind)), dsp=_num(res.get("dsp")), logic_kind=logic_kind,
        bram_kind=bram_kind, efficiency=c.efficiency,
        bound_cycles=max(bounds) if bounds else None,
        fits=res.get("fits") if isinstance(res.get("fits"), bool) else None,
        accelerator_ms=None if c.accelerator_seconds is None else c.accelerator_seconds * 1e3,
        host_ms=None if c.host_seconds is None else c.host_seconds * 1e3,
        objective_ms=objective_ms(c, latency), accelerator_energy_j=c.accelerator_energy_j,
        board_energy_j=c.board_energy_j,
        energy_components=dict((c.energy or {}).get("components_j") or {}),
        **_stock(c.hw, board))


def _stock(hw: dict[str, int], board: str | None) -> dict[str, Any]:
    """``stock_vta`` and its reasons for stored LOG_* parameters (unknown if they do not make
    a config)."""
    from vtatune.hardware.stock import stock_of

    return stock_of(hw, board)


def unique_points(trials: Iterable[TrialRecord], board: str | None = None,
                  latency: str = "end-to-end") -> list[DesignPoint]:
    """One point per candidate (its first trial), in trial order."""
    seen: set[str] = set()
    out = []
    for t in trials:
        if t.candidate.key not in seen:
            seen.add(t.candidate.key)
            out.append(design_point(t, board, latency))
    return out


def front_points(info: StudyInfo, trials: Sequence[TrialRecord]) -> list[DesignPoint]:
    """The study's Pareto front (area_mm2, its latency), by increasing area: ``show``'s
    front."""
    from vtatune.search.summary import summarize

    by_number = {t.number: t for t in trials}
    rows = summarize(info, list(trials))["pareto"]
    return [design_point(by_number[r["trial"]], info.board, study_latency(info)) for r in rows]


# ---- front analysis --------------------------------------------------------------------------

def knee(front: Sequence[DesignPoint]) -> DesignPoint | None:
    """The front's knee: the point closest to the ideal point (least area, least latency of
    the front) in log area and log latency, each divided by the front's log span along it —
    but by at least ``log(KNEE_MIN_RATIO)``, so an objective that hardly varies along the
    front (areas within a few percent) does not weigh as much as one that varies tenfold.

    Unlike the farthest point from the line between the extremes, this is defined for every
    front shape: on a straight front in log-log space — VTA's usual trade-off, twice the GEMM
    area for half the time — every point is on that line, and the knee is the middle one,
    not an extreme. Ties go to the smaller design; None for an empty front.
    """
    pts = [p for p in front if p.area_mm2 is not None and p.area_mm2 > 0 and p.objective_ms]
    if not pts:
        return None
    pts.sort(key=lambda p: (p.area_mm2, p.objective_ms, p.trial))
    xs = _scaled_log([p.area_mm2 for p in pts])
    ys = _scaled_log([float(p.objective_ms or 0.0) for p in pts])
    best, best_d = pts[0], math.inf
    for p, x, y in zip(pts, xs, ys, strict=True):
        d = math.hypot(x, y)
        if d < best_d - 1e-12:
            best, best_d = p, d
    return best


#: ``knee`` scales each objective's log span to at least this ratio.
KNEE_MIN_RATIO = 2.0


def _scaled_log(values: Sequence[float]) -> list[float]:
    logs = [math.log(v) for v in values]
    lo = min(logs)
    span = max(max(logs) - lo, math.log(KNEE_MIN_RATIO))
    return [(v - lo) / span for v in logs]


def hypervolume(points: Iterable[DesignPoint], box: HvBox | None) -> float:
    """Dominated share of ``box`` by the feasible ``points`` (0..1; 0 without a box)."""
    if box is None:
        return 0.0
    return box.hypervolume([(p.area_mm2, p.objective_ms) for p in points
                            if p.feasible and p.area_mm2 is not None and p.objective_ms])


def front_of(points: Iterable[Any]) -> list[Any]:
    """Feasible ``points`` non-dominated in (area_mm2, the study's latency), by increasing
    area: a network study's front (an operator study's is ``front_points``, ``show``'s)."""
    from vtatune.search.pareto import pareto_front

    feas = [p for p in points if p.feasible and p.area_mm2 is not None
            and p.objective_ms is not None]
    return [feas[i] for i in pareto_front([(float(p.area_mm2), float(p.objective_ms))
                                           for p in feas])]


def convergence_of(points: Iterable[Any], box: HvBox | None,
                   clock_mhz: float | None = None) -> Convergence:
    """Best cycles, best end-to-end latency (ms per call) and hypervolume (in ``box``, of the
    study's latency) after each of ``points``, one per trial in trial order: the one
    definition for every kind of study (a point has ``feasible``, ``cycles``,
    ``latency_ms``, ``area_mm2``, ``objective_ms``). A feasible point without a measured
    latency counts its cycles at ``clock_mhz``."""
    from vtatune.search.pareto import pareto_front

    best: int | None = None
    best_ms: float | None = None
    front: list[tuple[float, float]] = []
    hv = 0.0
    bests: list[int | None] = []
    bests_ms: list[float | None] = []
    hvs: list[float] = []
    for p in points:
        if p.feasible and p.cycles is not None:
            best = p.cycles if best is None else min(best, p.cycles)
            ms = p.latency_ms
            if ms is None and clock_mhz:
                ms = cycles_to_ms(p.cycles, clock_mhz)
            if ms is not None:
                best_ms = ms if best_ms is None else min(best_ms, ms)
            obj = p.objective_ms
            if p.area_mm2 is not None and box is not None and obj:
                cand = [*front, (p.area_mm2, obj)]
                front = [cand[i] for i in pareto_front(cand)]
                hv = box.hypervolume(front)
        bests.append(best)
        bests_ms.append(best_ms)
        hvs.append(hv)
    return Convergence(trials=tuple(range(1, len(bests) + 1)), best_cycles=tuple(bests),
                       best_latency_ms=tuple(bests_ms), hypervolume=tuple(hvs))


def convergence(trials: Sequence[TrialRecord], box: HvBox | None,
                clock_mhz: float, latency: str = "end-to-end") -> Convergence:
    """``convergence_of`` an operator study's trials (in trial-number order)."""
    return convergence_of([design_point(t, None, latency)
                           for t in sorted(trials, key=lambda t: t.number)], box, clock_mhz)


def cycles_to_ms(cycles: float, clock_mhz: float) -> float:
    """Milliseconds of ``cycles`` at ``clock_mhz``."""
    return cycles / (clock_mhz * 1e3)


# ---- parameters ------------------------------------------------------------------------------

def param_relations(points: Sequence[DesignPoint], hardware: Sequence[str],
                    knobs: Sequence[str]) -> list[ParamRelation]:
    """Latency per value of each hardware parameter (LOG_* key) and knob, most important first
    (parameters without an importance last, in the order given)."""
    out = []
    for kind, names in (("hardware", hardware), ("knob", knobs)):
        for name in names:
            groups: dict[int, list[DesignPoint]] = {}
            for p in points:
                v = (p.hw if kind == "hardware" else p.knobs).get(name)
                if v is not None:
                    groups.setdefault(int(v), []).append(p)
            if not groups:
                continue
            stats = tuple(
                ValueStats(value=v, label=_value_label(name, v), n_trials=len(g),
                           n_feasible=sum(p.feasible for p in g),
                           latencies_ms=tuple(p.latency_ms for p in g
                                              if p.feasible and p.latency_ms is not None),
                           areas_mm2=tuple(p.area_mm2 for p in g if p.feasible
                                           and p.area_mm2 is not None and p.area_mm2 > 0))
                for v, g in sorted(groups.items()))
            area_imp = None if kind != "hardware" else eta_squared(
                [[math.log10(x) for x in s.areas_mm2] for s in stats])
            out.append(ParamRelation(name=name, label=_param_label(name), kind=kind,
                                     values=stats, importance=eta_squared(
                                         [[math.log10(x) for x in s.latencies_ms]
                                          for s in stats]), area_importance=area_imp))
    order = {id(r): i for i, r in enumerate(out)}
    return sorted(out, key=lambda r: (r.importance is None, -(r.importance or 0.0),
                                      order[id(r)]))


def eta_squared(groups: Sequence[Sequence[float]]) -> float | None:
    """Correlation ratio: between-group sum of squares / total sum of squares."""
    xs = [x for g in groups for x in g]
    if len(xs) < 2:
        return None
    mean = sum(xs) / len(xs)
    total = sum((x - mean) ** 2 for x in xs)
    if total <= 0.0:
        return None
    between = sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups if g)
    return between / total


def _param_label(name: str) -> str:
    if name in _BUFFER_LABELS:
        return f"{_BUFFER_LABELS[name]} (KiB)"
    if name.startswith("LOG_"):
        return name[4:]
    if name.startswith("tile_"):
        return f"{name} (tiles)"
    return name


def _value_label(name: str, v: int) -> str:
    if name in _BUFFER_LABELS:
        kib = (1 << v) / 1024
        return f"{kib:g}"
    if name.startswith("LOG_"):
        return str(1 << v)
    return str(v)


# ---- the whole report ------------------------------------------------------------------------

def require_feasible(info: StudyInfo, trials: Sequence[TrialRecord]) -> None:
    """``UserError`` (one line) for a study with no trials or no feasible trial: it has no
    front to report, compare on its own, or export from."""
    from vtatune.errors import UserError
    from vtatune.escaping import shell_word, shown

    if not trials:
        raise UserError(f"study {shown(info.name)} has no trials yet (run `vtatune search ... "
                        f"--study {shell_word(info.name)}`)")
    if not any(t.candidate.feasible and t.candidate.cycles is not None for t in trials):
        statuses = ", ".join(f"{k} {v}" for k, v in
                             Counter(t.candidate.status for t in trials).most_common())
        raise UserError(f"study '{info.name}' has no feasible trial, so its front is empty "
                        f"({len(trials)} trials: {statuses})")


def reference_design(board: Any, points: Sequence[DesignPoint]) -> Reference:
    """VTA's default 1x16x16 on ``board``: its modelled area, and the fewest cycles any of
    ``points`` measured on that hardware (any knobs)."""
    from vtatune.area import estimate
    from vtatune.hardware.config import default

    hw = default()
    area = estimate(hw, board)
    mine = [p for p in points if p.feasible and p.hw == hw.log_params()]
    best = min(mine, key=lambda p: (p.objective_ms or math.inf, p.trial), default=None)
    return Reference(
        hw_name=f"default {hw.shape_label}", area_mm2=area.area_mm2, lut=area.logic,
        bram=area.bram, cycles=None if best is None else best.cycles,
        latency_ms=None if best is None else best.latency_ms,  # end to end, as the points
        trial=None if best is None else best.trial)


def report_data(info: StudyInfo, trials: Sequence[TrialRecord]) -> ReportData:
    """Compute a study's report data. An empty study or front gives empty fields, no error."""
    from vtatune.hardware import boards

    board = boards.device(info.board)
    latency = study_latency(info)
    points = unique_points(trials, info.board, latency)
    front = front_points(info, trials)
    feas = [p for p in points if p.feasible]
    box = hv_box(front)
    space = info.space or {}
    hardware = [k for k, v in (space.get("hardware") or {}).items() if len(v) > 1]
    knobs = list(space.get("knobs") or [])
    return ReportData(
        study=info.name, workload=info.workload, board=board.name,
        clock_mhz=board.clock_mhz, objective=info.objective, sampler=info.sampler,
        n_trials=len(trials), n_feasible=sum(t.candidate.feasible for t in trials),
        statuses=dict(Counter(t.candidate.status for t in trials).most_common()),
        points=tuple(points), front=tuple(front), knee=knee(front),
        fastest=min(feas, key=lambda p: (p.objective_ms or math.inf, p.area_mm2 or 0.0, p.trial),
                    default=None),
        smallest=front[0] if front else None,
        reference=reference_design(board, points), hv_box=box,
        hypervolume=hypervolume(front, box),
        convergence=convergence(trials, box, board.clock_mhz, latency),
        params=tuple(param_relations(points, hardware, knobs)),
        board_capacity={k: float(v) for k, v in board.resources.items()})


# ---- comparing studies -----------------------------------------------------------------------

@dataclass(frozen=True)
class StudySeries:
    """One study in a comparison: its front and convergence under the shared reference."""

    study: str
    sampler: str
    n_trials: int
    n_feasible: int
    best_cycles: int | None
    front: tuple[DesignPoint, ...]
    points: tuple[DesignPoint, ...]
    hypervolume: float
    convergence: Convergence
    evaluated: int = 0  # a network study's layer evaluations

    @property
    def best_ms(self) -> float | None:
        """The least latency in the studies' measure (the fronts'; end to end by default)."""
        return min((p.objective_ms for p in self.front if p.objective_ms is not None),
                   default=None)

    @property
    def least_energy_j(self) -> float | None:
        """The least accelerator energy (J per call or inference) of a feasible point."""
        return min((p.accelerator_energy_j for p in self.points
                    if p.feasible and p.accelerator_energy_j is not None), default=None)


@dataclass(frozen=True)
class CompareData:
    """Several studies of one workload on one board, with one hypervolume reference."""

    workload: str
    board: str
    clock_mhz: float
    hv_box: HvBox | None
    series: tuple[StudySeries, ...]
    network: str | None = None  # network studies: the network's name
    #: studies of several networks: the networks and weights they share (the latency is the
    #: weighted sum of the networks'); empty otherwise
    networks: tuple[StudyNetwork, ...] = ()

    @property
    def ref_point(self) -> tuple[float, float] | None:
        """The shared reference point (area_mm2, latency ms)."""
        return None if self.hv_box is None else self.hv_box.ref_point


#: What ``require_comparable`` compares: a name, how to read it from a study, how to show it.
Facet = tuple[str, Callable[[StudyInfo], Any], Callable[[Any], str]]


def require_comparable(infos: Sequence[StudyInfo], facets: Sequence[Facet]) -> None:
    """``UserError`` (one line) naming the first facet in which ``infos`` differ (values
    compared as canonical JSON): their fronts are not comparable. The one rule of
    ``compare`` for every kind of study (operators: workload, board, latency; networks: the
    network and the board)."""
    import json

    from vtatune.errors import UserError

    for what, get, show in facets:
        if len({json.dumps(get(i), sort_keys=True, default=str) for i in infos}) > 1:
            raise UserError(f"studies differ in {what} ("
                            + ", ".join(f"{i.name}: {show(get(i))}" for i in infos)
                            + "): their fronts are not comparable")


def compare_data(studies: Sequence[tuple[StudyInfo, Sequence[TrialRecord]]]) -> CompareData:
    """Fronts, hypervolumes and convergence of ``studies`` in one ``HvBox``, spanned by the
    points of all their fronts (so the box is where the fronts differ).

    The studies must share workload and board (the CLI checks this and says which differ).
    """
    from vtatune.hardware import boards

    board = boards.device(studies[0][0].board)
    every = [(info, trials, unique_points(trials, info.board, study_latency(info)),
              front_points(info, trials)) for info, trials in studies]
    box = hv_box([p for *_, front in every for p in front])
    series = []
    for info, trials, pts, front in every:
        feas = [p.cycles for p in pts if p.feasible and p.cycles is not None]
        series.append(StudySeries(
            study=info.name, sampler=info.sampler, n_trials=len(trials),
            n_feasible=sum(t.candidate.feasible for t in trials),
            best_cycles=min(feas, default=None), front=tuple(front), points=tuple(pts),
            hypervolume=hypervolume(front, box),
            convergence=convergence(trials, box, board.clock_mhz, study_latency(info))))
    return CompareData(workload=studies[0][0].workload, board=board.name,
                       clock_mhz=board.clock_mhz, hv_box=box, series=tuple(series))


# ---- network studies: a trial is a design whose children are its layer results -----------

#: What ``show`` and ``report`` say of a network's host operators.
HOST_OPS_NOTE = "host operators (run on the host, not on VTA; their time is not in the latency)"


def host_ops_text(host_ops: Sequence[HostOp] | None) -> str:
    """One line naming a network's host operators (kind, count, tensor sizes), saying that
    their time is not in the network's latency (None: the study was made before they were
    recorded); escape it for a terminal or HTML."""
    if host_ops is None:
        return (f"{HOST_OPS_NOTE}: not recorded with this study (made before vtatune listed "
                "them; a new study of the network lists those its file names)")
    if not host_ops:
        return (f"{HOST_OPS_NOTE}: none listed in the network file (an operator that is not "
                "one of its layers runs on the host, outside the latency)")
    # operators of a kind VTA runs, kept on the host for one reason, are named once with it
    parts = [h.text() for h in host_ops if not h.reason]
    by_reason: dict[str, list[HostOp]] = {}
    for h in host_ops:
        if h.reason:
            by_reason.setdefault(h.reason, []).append(h)
    parts += [", ".join(replace(h, reason="").text() for h in hs) + f": {reason}"
              for reason, hs in by_reason.items()]
    return f"{HOST_OPS_NOTE}: " + "; ".join(parts)


def study_host_ops(info: StudyInfo) -> tuple[HostOp, ...] | None:
    """The host operators of a network study's network, as stored with the study (None for
    a study made before they were recorded); of several networks, all of theirs in order
    (``study_networks`` has each network's)."""
    members = study_networks(info)
    if members:  # several networks: every network's (the union's own list is not kept)
        if any(m.host_ops is None for m in members):
            return None
        return tuple(h for m in members for h in m.host_ops or ())
    network = (info.space or {}).get("network")
    if not isinstance(network, dict) or "host_ops" not in network:
        return None
    return tuple(host_ops_of(network))


def network_point(t: NetworkTrialRecord, clock_mhz: float, board: str | None = None,
                  network: str = "") -> DesignPoint:
    """The report's view of one design of a study of ``network`` (``board``: the study's,
    for the stock-VTA check, unknown without it): latency end to end (count-weighted sum of
    its layers' best latencies); numbers an unfinished or infeasible design lacks are None."""
    res = t.resources or {}
    logic_kind = str(res.get("logic_kind", "lut"))
    bram_kind = str(res.get("bram_kind", "bram36"))
    ok = t.status == Status.OK
    ms = _ms(t.seconds) if ok else None
    accel = _ms(t.accelerator_seconds) if ok else None
    bound = None if t.bound_cycles is None else cycles_to_ms(t.bound_cycles, clock_mhz)
    # efficiency: the network's bound over the accelerator's time (a design stored before
    # the split has only its accelerator's time, as seconds); the host's is no part of it
    mine = accel if accel is not None else ms
    if t.networks:  # several networks: each its own breakdown
        shares = tuple(NetworkShare(
            n.network, n.weight, _ms(n.seconds) if ok else None,
            tuple(layer_share(la, n.seconds) for la in n.layers),
            accelerator_ms=_ms(n.accelerator_seconds) if ok else None,
            host_ms=_ms(n.host_seconds) if ok else None, cycles=n.cycles if ok else None)
            for n in t.networks)
    else:
        shares = (NetworkShare(network, 1.0, ms,
                               tuple(layer_share(la, t.seconds) for la in t.layers)),)
    return DesignPoint(
        trial=t.number, key="", status=t.status, reason=t.reason, hw_name=t.hw_name,
        hw=dict(t.hw), knobs={}, cycles=t.cycles, latency_ms=ms, area_mm2=t.area_mm2,
        lut=_num(res.get(logic_kind)), ff=None, bram=_num(res.get(bram_kind)), dsp=None,
        logic_kind=logic_kind, bram_kind=bram_kind,
        efficiency=None if bound is None or not mine else bound / mine,
        bound_cycles=t.bound_cycles, fits=None, accelerator_ms=accel,
        host_ms=_ms(t.host_seconds) if ok else None, objective_ms=ms,
        networks=shares, evaluated=t.evaluated,
        cached=t.cached, bound_ms=bound,
        accelerator_energy_j=t.accelerator_energy_j if ok else None,
        board_energy_j=t.board_energy_j if ok else None,
        **(_stock(dict(t.hw), board) if board else {}))


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else 1e3 * seconds


def layer_share(la: LayerResult, network_seconds: float | None) -> LayerShare:
    one = _ms(la.seconds)
    total = None if one is None else la.count * one
    share = (total / (1e3 * network_seconds)) if total is not None and network_seconds \
        else None
    eff = (la.bound_cycles / la.cycles) if la.bound_cycles and la.cycles else None
    return LayerShare(la.name, la.count, one, total, share, eff, dict(la.knobs), la.trials,
                      la.accelerator_energy_j)


def require_feasible_design(info: StudyInfo, trials: Sequence[NetworkTrialRecord]) -> None:
    """``UserError`` (one line) for a network study without a finished feasible design."""
    from vtatune.errors import UserError

    done = [t for t in trials if t.status != Status.RUNNING]
    if not done:
        raise UserError(f"study '{info.name}' has no finished design yet (run `vtatune search "
                        f"... --study {info.name}`)")
    if not any(t.feasible for t in done):
        statuses = ", ".join(f"{k} {v}" for k, v in
                             Counter(t.status for t in done).most_common())
        raise UserError(f"study '{info.name}' has no feasible design, so its front is empty "
                        f"({len(done)} designs: {statuses})")


def network_report_data(info: StudyInfo, trials: Sequence[NetworkTrialRecord]) -> ReportData:
    """A network study's report data (running designs left out)."""
    from vtatune.hardware import boards

    board = boards.device(info.board)
    network = (info.space or {}).get("network", {})
    points = [network_point(t, board.clock_mhz, board.name, network.get("name", ""))
              for t in trials if t.status != Status.RUNNING]
    front = front_of(points)
    feas = [p for p in points if p.feasible]
    box = hv_box(front)
    return ReportData(
        study=info.name, workload=info.workload, board=board.name, clock_mhz=board.clock_mhz,
        objective=info.objective, sampler=info.sampler, n_trials=len(points),
        n_feasible=len(feas), statuses=dict(Counter(p.status for p in points).most_common()),
        points=tuple(points), front=tuple(front), knee=knee(front),
        fastest=min(feas, key=lambda p: (p.latency_ms, p.area_mm2 or 0.0, p.trial),
                    default=None),
        smallest=front[0] if front else None, reference=None, hv_box=box,
        hypervolume=hypervolume(front, box), convergence=_in_order(points, box), params=(),
        network=network.get("name", info.workload),
        layer_names=tuple(la.get("name", "") for la in network.get("layers", [])),
        evaluated=sum(t.evaluated for t in trials), cached=sum(t.cached for t in trials),
        host_ops=study_host_ops(info), networks=study_networks(info))


def network_compare_data(studies: Sequence[tuple[StudyInfo, Sequence[NetworkTrialRecord]]]
                         ) -> CompareData:
    """Fronts, hypervolumes and convergence of network studies of one network and board, in
    one ``HvBox`` spanned by the points of all their fronts (as ``compare_data``)."""
    from vtatune.hardware import boards

    board = boards.device(studies[0][0].board)
    every = [(info, trials, [network_point(t, board.clock_mhz) for t in trials
                             if t.status != Status.RUNNING]) for info, trials in studies]
    box = hv_box([p for _, _, pts in every for p in front_of(pts)])
    series = []
    for info, trials, pts in every:
        front = front_of(pts)
        feas = [p.cycles for p in pts if p.feasible and p.cycles is not None]
        series.append(StudySeries(
            study=info.name, sampler=info.sampler, n_trials=len(pts), n_feasible=len(feas),
            best_cycles=min(feas, default=None), front=tuple(front), points=tuple(pts),
            hypervolume=hypervolume(front, box), convergence=_in_order(pts, box),
            evaluated=sum(t.evaluated for t in trials)))
    network = (studies[0][0].space or {}).get("network", {}).get("name", "")
    return CompareData(workload=studies[0][0].workload, board=board.name,
                       clock_mhz=board.clock_mhz, hv_box=box, series=tuple(series),
                       network=network, networks=study_networks(studies[0][0]))


def _in_order(points: Sequence[DesignPoint], box: HvBox | None) -> Convergence:
    """``convergence_of`` the designs in trial order."""
    return convergence_of(sorted(points, key=lambda p: p.trial), box)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
