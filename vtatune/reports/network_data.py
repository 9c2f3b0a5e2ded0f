"""What a network study's report shows, computed from its frozen records (no drawing).

A network trial is one hardware design with every layer tuned. Units: ``latency_ms`` is the
network's latency (the count-weighted sum of its layers' best latencies) in milliseconds, end
to end (one call per layer run), ``accelerator_ms`` + ``host_ms``;
``area_mm2`` as in ``reports.data``. The front is ``vtatune show``'s: finished feasible
designs, non-dominated in (area_mm2, network latency). Front, knee, hypervolume (the log box,
``reports.data.HvBox``) and convergence are ``reports.data``'s, as for every study.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vtatune.networks.network import HostOp, host_ops_of
from vtatune.reports.data import (
    Convergence,
    HvBox,
    convergence_of,
    front_of,
    hv_box,
    hypervolume,
    knee,
)
from vtatune.store.records import LayerResult, NetworkTrialRecord, StudyInfo

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
    return f"{HOST_OPS_NOTE}: " + "; ".join(h.text() for h in host_ops)


def study_host_ops(info: StudyInfo) -> tuple[HostOp, ...] | None:
    """The host operators of a network study's network, as stored with the study (None for
    a study made before they were recorded)."""
    network = (info.space or {}).get("network")
    if not isinstance(network, dict) or "host_ops" not in network:
        return None
    return tuple(host_ops_of(network))


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


@dataclass(frozen=True)
class NetworkPoint:
    """One network trial (design) as the report shows it; numbers an unfinished or infeasible
    design does not have are None. ``bound_ms`` is the network's physical lower bound."""

    trial: int
    status: str
    reason: str
    hw_name: str
    hw: dict[str, int]
    area_mm2: float | None
    cycles: int | None
    latency_ms: float | None
    bound_ms: float | None
    lut: float | None
    bram: float | None
    logic_kind: str
    bram_kind: str
    evaluated: int
    cached: int
    layers: tuple[LayerShare, ...]
    accelerator_ms: float | None = None  # the split of latency_ms (None before it was stored)
    host_ms: float | None = None
    #: stock VTA builds the design as it is on the study's board (None: unknown)
    stock_vta: bool | None = None
    stock_vta_problems: tuple[str, ...] = ()

    @property
    def feasible(self) -> bool:
        return self.status == "ok" and self.latency_ms is not None

    @property
    def objective_ms(self) -> float | None:
        """The latency the study minimizes (``reports.data.knee`` reads it): a network's is
        end to end."""
        return self.latency_ms

    @property
    def efficiency(self) -> float | None:
        """Network lower bound / the accelerator's time (= bound cycles / cycles): the one
        definition of efficiency, as ``show``, ``simulate`` and single-operator reports give
        it; the host's time is no part of what the bound bounds. (A design stored before the
        split has only its accelerator's time, as ``latency_ms``.)"""
        accel = self.accelerator_ms if self.accelerator_ms is not None else self.latency_ms
        if self.bound_ms is None or not accel:
            return None
        return self.bound_ms / accel


@dataclass(frozen=True)
class NetworkReportData:
    """Everything a network report draws and tabulates."""

    study: str
    network: str
    board: str
    clock_mhz: float
    objective: str
    sampler: str
    n_trials: int
    n_feasible: int
    statuses: dict[str, int]
    layer_names: tuple[str, ...]
    points: tuple[NetworkPoint, ...]
    front: tuple[NetworkPoint, ...]
    knee: NetworkPoint | None
    fastest: NetworkPoint | None
    smallest: NetworkPoint | None
    hv_box: HvBox | None
    hypervolume: float
    convergence: Convergence
    evaluated: int
    cached: int
    #: operators the network runs on the host (not in the latency; None: not recorded)
    host_ops: tuple[HostOp, ...] | None = ()

    @property
    def ref_point(self) -> tuple[float, float] | None:
        """The hypervolume's reference point (area_mm2, latency ms)."""
        return None if self.hv_box is None else self.hv_box.ref_point


def network_point(t: NetworkTrialRecord, clock_mhz: float, board: str | None = None
                  ) -> NetworkPoint:
    """The report's view of one design (``board``: the study's, for the stock-VTA check)."""
    from vtatune.hardware.stock import stock_of

    res = t.resources or {}
    logic_kind = str(res.get("logic_kind", "lut"))
    bram_kind = str(res.get("bram_kind", "bram36"))
    ms = None if t.seconds is None else 1e3 * t.seconds
    return NetworkPoint(
        trial=t.number, status=t.status, reason=t.reason, hw_name=t.hw_name, hw=dict(t.hw),
        area_mm2=t.area_mm2, cycles=t.cycles, latency_ms=ms if t.status == "ok" else None,
        bound_ms=None if t.bound_cycles is None else t.bound_cycles / (clock_mhz * 1e3),
        lut=_num(res.get(logic_kind)), bram=_num(res.get(bram_kind)), logic_kind=logic_kind,
        bram_kind=bram_kind,
        evaluated=t.evaluated, cached=t.cached,
        layers=tuple(layer_share(la, t.seconds) for la in t.layers),
        accelerator_ms=_ms(t.accelerator_seconds) if t.status == "ok" else None,
        host_ms=_ms(t.host_seconds) if t.status == "ok" else None,
        **(stock_of(dict(t.hw), board) if board else {}))


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else 1e3 * seconds


def layer_share(la: LayerResult, network_seconds: float | None) -> LayerShare:
    one = None if la.seconds is None else 1e3 * la.seconds
    total = None if one is None else la.count * one
    share = (total / (1e3 * network_seconds)) if total is not None and network_seconds \
        else None
    eff = (la.bound_cycles / la.cycles) if la.bound_cycles and la.cycles else None
    return LayerShare(la.name, la.count, one, total, share, eff, dict(la.knobs), la.trials)


def require_feasible(info: StudyInfo, trials: Sequence[NetworkTrialRecord]) -> None:
    """``UserError`` (one line) for a network study without a finished feasible design."""
    from vtatune.errors import UserError

    done = [t for t in trials if t.status != "running"]
    if not done:
        raise UserError(f"study '{info.name}' has no finished design yet (run `vtatune search "
                        f"... --study {info.name}`)")
    if not any(t.feasible for t in done):
        statuses = ", ".join(f"{k} {v}" for k, v in
                             Counter(t.status for t in done).most_common())
        raise UserError(f"study '{info.name}' has no feasible design, so its front is empty "
                        f"({len(done)} designs: {statuses})")


def network_report_data(info: StudyInfo, trials: Sequence[NetworkTrialRecord]
                        ) -> NetworkReportData:
    """A network study's report data (running designs left out)."""
    from vtatune.hardware import boards

    board = boards.load(info.board)
    done = [t for t in trials if t.status != "running"]
    points = [network_point(t, board.clock_mhz, board.name) for t in done]
    front = front_of(points)
    feas = [p for p in points if p.feasible]
    box = hv_box(front)
    network = (info.space or {}).get("network", {})
    return NetworkReportData(
        study=info.name, network=network.get("name", info.workload), board=board.name,
        clock_mhz=board.clock_mhz, objective=info.objective, sampler=info.sampler,
        n_trials=len(points), n_feasible=len(feas),
        statuses=dict(Counter(p.status for p in points).most_common()),
        layer_names=tuple(la.get("name", "") for la in network.get("layers", [])),
        points=tuple(points), front=tuple(front), knee=knee(front),  # type: ignore[arg-type]
        fastest=min(feas, key=lambda p: (p.latency_ms, p.area_mm2 or 0.0, p.trial),
                    default=None),
        smallest=front[0] if front else None, hv_box=box,
        hypervolume=hypervolume(front, box), convergence=_convergence(points, box),
        evaluated=sum(t.evaluated for t in trials), cached=sum(t.cached for t in trials),
        host_ops=study_host_ops(info))


# ---- comparing network studies ----------------------------------------------------------------

@dataclass(frozen=True)
class NetworkSeries:
    """One network study in a comparison, under the shared reference point."""

    study: str
    sampler: str
    n_trials: int
    n_feasible: int
    best_ms: float | None
    front: tuple[NetworkPoint, ...]
    points: tuple[NetworkPoint, ...]
    hypervolume: float
    convergence: Convergence
    evaluated: int


@dataclass(frozen=True)
class NetworkCompareData:
    network: str
    board: str
    clock_mhz: float
    hv_box: HvBox | None
    series: tuple[NetworkSeries, ...]

    @property
    def ref_point(self) -> tuple[float, float] | None:
        """The shared reference point (area_mm2, latency ms)."""
        return None if self.hv_box is None else self.hv_box.ref_point


def network_compare_data(studies: Sequence[tuple[StudyInfo, Sequence[NetworkTrialRecord]]]
                         ) -> NetworkCompareData:
    """Fronts, hypervolumes and convergence of network studies of one network and board, in
    one ``HvBox`` spanned by the points of all their fronts (as ``compare_data``)."""
    from vtatune.hardware import boards

    board = boards.load(studies[0][0].board)
    every = [(info, trials, [network_point(t, board.clock_mhz) for t in trials
                             if t.status != "running"]) for info, trials in studies]
    box = hv_box([p for _, _, pts in every for p in front_of(pts)])
    series = []
    for info, trials, pts in every:
        front = front_of(pts)
        feas = [p.latency_ms for p in pts if p.feasible and p.latency_ms is not None]
        series.append(NetworkSeries(
            study=info.name, sampler=info.sampler, n_trials=len(pts),
            n_feasible=len(feas), best_ms=min(feas, default=None), front=tuple(front),
            points=tuple(pts), hypervolume=hypervolume(front, box),
            convergence=_convergence(pts, box), evaluated=sum(t.evaluated for t in trials)))
    network = (studies[0][0].space or {}).get("network", {}).get("name", "")
    return NetworkCompareData(network=network, board=board.name, clock_mhz=board.clock_mhz,
                              hv_box=box, series=tuple(series))


def _convergence(points: Sequence[NetworkPoint], box: HvBox | None) -> Convergence:
    """``convergence_of`` the designs in trial order."""
    return convergence_of(sorted(points, key=lambda p: p.trial), box)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
