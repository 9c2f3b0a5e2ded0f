"""A network study in numbers: counts by status, the front of designs and the fastest ones.

Used by ``vtatune search`` (its closing table and JSON), ``vtatune show`` and the reports. A
study of several networks adds ``networks`` (each network's name and weight) and, per design,
each network's totals and layers. The
front is over finished ``ok`` designs, non-dominated in (area_mm2, network seconds); a
``latency`` study lists its fastest designs instead. Network seconds are end to end: every
layer run is one call (accelerator + host), as ``simulate`` and single-layer studies count it;
``cycles`` are the accelerator's. The study's ``best`` is one design, the fastest (least
network seconds: the objective of a latency study, the latency axis of an area-latency one):
``best_seconds``, ``best_cycles`` and ``best_trial`` are all that design's (the fewest cycles
may be another design's, at another clock).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from vtatune.search import objectives
from vtatune.search.pareto import pareto_front
from vtatune.search.summary import not_feasible
from vtatune.statuses import Status
from vtatune.store.records import LayerResult, NetworkTrialRecord, StudyInfo

#: Designs listed for a latency study.
TOP_N = 10


def values(t: NetworkTrialRecord, objective: str) -> tuple[float, ...] | None:
    """A finished design's objective values (``search.objectives``), None without one."""
    return objectives.values(objective, t.area_mm2, t.seconds, t.accelerator_energy_j)


def front_trials(trials: list[NetworkTrialRecord], objective: str = "area-latency"
                 ) -> list[NetworkTrialRecord]:
    """Finished feasible designs, non-dominated in the objective's values when it has
    several (else in (area, network seconds)), by area."""
    ok = [t for t in trials if t.feasible and t.seconds is not None and t.area_mm2 is not None]
    if objectives.is_front(objective) and objective != "area-latency":
        ok = [t for t in ok if values(t, objective) is not None]
        return [ok[i] for i in pareto_front([values(t, objective) or () for t in ok])]
    return [ok[i] for i in pareto_front([(float(t.area_mm2 or 0.0), float(t.seconds or 0.0))
                                         for t in ok])]


def fastest(trials: list[NetworkTrialRecord], n: int = TOP_N, objective: str = "latency"
            ) -> list[NetworkTrialRecord]:
    """The best designs of a single objective: the fastest (the least energy x latency for
    ``edp``)."""
    ok = [t for t in trials if t.feasible and t.seconds is not None]
    if objective == "edp":
        ok = [t for t in ok if values(t, objective) is not None]
        return sorted(ok, key=lambda t: (values(t, objective), t.area_mm2 or 0.0,
                                         t.number))[:n]
    return sorted(ok, key=lambda t: (t.seconds, t.area_mm2 or 0.0, t.number))[:n]


def summarize(info: StudyInfo, trials: list[NetworkTrialRecord], top_n: int = TOP_N
              ) -> dict[str, Any]:
    """What ``show`` prints for a network study (JSON-ready)."""
    finished = [t for t in trials if t.status != Status.RUNNING]
    ok = [t for t in finished if t.feasible and t.cycles is not None]
    network = info.space.get("network", {})
    best = next(iter(fastest(ok, 1)), None)
    return {
        "study": info.name, "network": network.get("name", info.workload),
        "objective": info.objective, "latency": "end-to-end", "board": info.board,
        "sampler": info.sampler,
        "trials": len(finished), "running": len(trials) - len(finished),
        "feasible": len(ok),
        "best_trial": None if best is None else best.number,
        "best_cycles": None if best is None else best.cycles,
        "best_seconds": None if best is None else best.seconds,
        "statuses": dict(Counter(t.status for t in finished).most_common()),
        "evaluated": sum(t.evaluated for t in trials),
        "cached": sum(t.cached for t in trials),
        "layers": [la.get("name") for la in network.get("layers", [])],
        **({"networks": [{"network": (m.get("network") or {}).get("name"),
                          "weight": m.get("weight")} for m in info.space["networks"]
                         if isinstance(m, dict)]}
           if isinstance(info.space.get("networks"), list) else {}),
        "best_accelerator_energy_j": min((t.accelerator_energy_j for t in ok
                                          if t.accelerator_energy_j is not None), default=None),
        "pareto": [design_row(t, info.board)
                   for t in front_trials(finished, info.objective)],
        "top": [design_row(t, info.board) for t in fastest(finished, top_n, info.objective)],
        "not_feasible": not_feasible((t.status, t.number, t.hw_name, t.reason)
                                     for t in finished),
    }


def design_row(t: NetworkTrialRecord, board: str | None = None) -> dict[str, Any]:
    """One design as ``--json`` shows it: network totals and every layer's pick;
    ``stock_vta`` (with ``stock_vta_problems``): stock VTA builds it on ``board`` as it is;
    ``timing_domain``: whether its time is extrapolated (``timing_profiles.domain``)."""
    from vtatune.hardware.stock import stock_of
    from vtatune.hardware.timing_profiles import domain, kind_of

    stock = stock_of(dict(t.hw), board)
    kinds = {kind_of(la.workload) for n in (t, *(t.networks or ()))
             for la in (n.layers or ())} - {""}
    return {"trial": t.number, "hw": dict(t.hw), "hw_name": t.hw_name,
            "stock_vta": stock.get("stock_vta"),
            "stock_vta_problems": list(stock.get("stock_vta_problems", ())),
            "timing_domain": domain(board, dict(t.hw), sorted(kinds)).as_dict()
            if board else None,
            "area_mm2": t.area_mm2, "cycles": t.cycles, "seconds": t.seconds,
            "accelerator_seconds": t.accelerator_seconds, "host_seconds": t.host_seconds,
            "bound_cycles": t.bound_cycles,
            "efficiency": (t.bound_cycles / t.cycles) if t.bound_cycles and t.cycles else None,
            "accelerator_energy_j": t.accelerator_energy_j, "board_energy_j": t.board_energy_j,
            "layers": _layer_rows(t.layers, t.seconds),
            **({"networks": [
                {"network": n.network, "weight": n.weight, "cycles": n.cycles,
                 "seconds": n.seconds, "accelerator_seconds": n.accelerator_seconds,
                 "host_seconds": n.host_seconds, "bound_cycles": n.bound_cycles,
                 "accelerator_energy_j": n.accelerator_energy_j,
                 "board_energy_j": n.board_energy_j,
                 "layers": _layer_rows(n.layers, n.seconds)} for n in t.networks]}
               if t.networks is not None else {})}


def _layer_rows(layers: tuple[LayerResult, ...], total: float | None
                ) -> list[dict[str, Any]]:
    """Each layer's pick; ``share``: its part (count x seconds) of ``total``."""
    return [{"name": la.name, "count": la.count, "knobs": dict(la.knobs),
             "cycles": la.cycles, "seconds": la.seconds,
             "accelerator_seconds": la.accelerator_seconds,
             "host_seconds": la.host_seconds,
             "share": (la.count * la.seconds / total)
             if la.seconds is not None and total else None,
             "accelerator_energy_j": la.accelerator_energy_j,
             "board_energy_j": la.board_energy_j,
             "trials": la.trials} for la in layers]


def best_text(data: dict[str, Any]) -> str | None:
    """The best design in words, all its numbers one design's: ``best (least end-to-end
    latency): 12.345 ms, trial 7 (1,234,567 cycles)``; None while no design is feasible."""
    from vtatune import formats

    if data.get("best_seconds") is None:
        return None
    what = ("weighted sum of the networks' latencies" if data.get("networks")
            else "end-to-end latency")
    return (f"best (least {what}): {formats.ms(1e3 * data['best_seconds'])} ms, trial "
            f"{formats.count(data['best_trial'])} ({formats.cycles(data['best_cycles'])} "
            "cycles)")
