"""A study in numbers: counts by status, the Pareto front and the fastest trials.

The front is over the study's objective values (``search.objectives``: area and latency, or
with energy); a study of one objective lists its best trials (the fastest, or the least
energy x latency for ``edp``) and the front of area and latency beside them.

Used by ``vtatune show``, ``vtatune search`` (its closing table and JSON) and the reports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from vtatune.search import objectives
from vtatune.statuses import Status

#: Trials listed for a latency study.
TOP_N = 10


def summarize(info: Any, trials: list[Any], top_n: int = TOP_N) -> dict[str, Any]:
    """The data ``show`` prints: counts, the Pareto front and the ``top_n`` fastest.

    A candidate served several times (cached) appears once, as its first trial.
    """
    from vtatune.search.pareto import pareto_front

    seen: set[str] = set()
    feasible = []
    for t in trials:
        if t.candidate.feasible and t.candidate.cycles is not None and t.candidate.key not in seen:
            seen.add(t.candidate.key)
            feasible.append(t)
    latency = (info.space or {}).get("latency", "end-to-end")

    def lat(t: Any) -> float:
        """The study's latency: end-to-end seconds (accelerator + host) or cycles; a record
        of a model without the split counts by its cycles."""
        c = t.candidate
        return float(c.cycles) if latency == "accelerator" or c.seconds is None else c.seconds

    objective = info.objective

    def values(t: Any) -> tuple[float, ...] | None:
        """The objective's values (``search.objectives``); None without an energy it needs."""
        c = t.candidate
        return objectives.values(objective, c.area_mm2, lat(t), c.accelerator_energy_j)

    with_area = [t for t in feasible if t.candidate.area_mm2 is not None]
    kinds = _kinds(info)
    if objectives.is_front(objective):  # the front of the objective's values
        with_area = [t for t in with_area if values(t) is not None]
        point: Any = values
    else:  # a single objective's study still lists the front of area and latency
        def point(t: Any) -> tuple[float, ...]:
            return (t.candidate.area_mm2, lat(t))
    front = pareto_front([point(t) for t in with_area])
    if "edp" in objectives.terms(objective):  # the least energy x latency first
        ranked = [t for t in feasible if values(t) is not None]
        fastest = sorted(ranked, key=lambda t: (values(t), t.candidate.area_mm2 or 0.0,
                                                t.number))[:top_n]
    else:
        fastest = sorted(feasible, key=lambda t: (lat(t), t.candidate.area_mm2 or 0.0,
                                                  t.number))[:top_n]
    return {
        "study": info.name, "workload": info.workload, "objective": info.objective,
        "latency": latency,
        "board": info.board, "sampler": info.sampler, "trials": len(trials),
        "feasible": sum(t.candidate.feasible for t in trials),
        "best_cycles": min((t.candidate.cycles for t in feasible), default=None),
        # the least end-to-end seconds per call, as a network study's (None without them)
        "best_seconds": min((t.candidate.seconds for t in feasible
                             if t.candidate.seconds is not None), default=None),
        # the least accelerator energy per call (J) of a feasible trial with energy
        "best_accelerator_energy_j": min((t.candidate.accelerator_energy_j for t in feasible
                                          if t.candidate.accelerator_energy_j is not None),
                                         default=None),
        "statuses": dict(Counter(t.candidate.status for t in trials).most_common()),
        "pareto": _distinct([with_area[i] for i in front], point, info.board, kinds),
        "top": [_row(t, info.board, kinds) for t in fastest],
        "not_feasible": not_feasible((t.candidate.status, t.number, t.candidate.hw_name,
                                      t.candidate.reason) for t in trials),
    }


def _kinds(info: Any) -> tuple[str, ...]:
    """The layer kinds of a study (its operator's; a network study's are its layers' and are
    not read here: the design and board are checked)."""
    from vtatune.hardware.timing_profiles import kind_of

    kind = kind_of(str(info.workload or ""))
    return (kind,) if kind else ()


def _distinct(front: list[Any], point: Any, board: str | None = None,
              kinds: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Front rows, one per point of the objective space: a trial whose (area, latency) equals
    a listed one's (adjacent in ``pareto_front``'s order) is that row's ``ties`` entry, not a
    row of its own. Such twins are different programs — e.g. the same tiles with the virtual
    threads over output rows instead of output channels — that the simulator times alike;
    the first found is listed."""
    rows: list[dict[str, Any]] = []
    last = None
    for t in front:
        here = point(t)
        if rows and here == last:
            rows[-1]["ties"].append({"trial": t.number, "knobs": dict(t.candidate.knobs)})
            continue
        rows.append({**_row(t, board, kinds), "ties": []})
        last = here
    return rows


def not_feasible(trials: Iterable[tuple[str, int, str, str]]) -> list[dict[str, Any]]:
    """Why trials were not feasible: per status other than ``ok`` (most frequent first), the
    count, how many distinct reasons, and its first trial as an example (``trial``,
    ``hw_name``, ``reason``), from ``(status, trial, hw_name, reason)`` tuples."""
    first: dict[str, tuple[int, str, str]] = {}
    count: Counter[str] = Counter()
    reasons: dict[str, set[str]] = {}
    for status, number, hw_name, reason in trials:
        if status in (Status.OK, Status.RUNNING):
            continue
        count[status] += 1
        reasons.setdefault(status, set()).add(reason)
        if status not in first or number < first[status][0]:
            first[status] = (number, hw_name, reason)
    return [{"status": st, "count": n, "reasons": len(reasons[st]), "trial": first[st][0],
             "hw_name": first[st][1], "reason": first[st][2]}
            for st, n in count.most_common()]


def _row(t: Any, board: str | None = None, kinds: tuple[str, ...] = ()) -> dict[str, Any]:
    """One trial as ``--json`` shows it; ``stock_vta`` (with ``stock_vta_problems``): stock
    VTA builds its design on ``board`` as it is (``hardware.stock``); ``timing_domain``:
    whether its time is extrapolated from its board's timing profile
    (``timing_profiles.domain``)."""
    from vtatune.hardware.stock import stock_of
    from vtatune.hardware.timing_profiles import domain

    c = t.candidate
    return {"trial": t.number, "hw_name": c.hw_name or c.hw_key, "hw": dict(c.hw),
            "knobs": dict(c.knobs), "cycles": c.cycles, "seconds": c.seconds,
            "accelerator_seconds": c.accelerator_seconds, "host_seconds": c.host_seconds,
            "area_mm2": c.area_mm2, "efficiency": c.efficiency,
            "accelerator_energy_j": c.accelerator_energy_j, "board_energy_j": c.board_energy_j,
            **_stock_fields(stock_of(dict(c.hw), board)),
            "timing_domain": domain(board, dict(c.hw), kinds).as_dict() if board else None}


def _stock_fields(stock: dict[str, Any]) -> dict[str, Any]:
    return {"stock_vta": stock.get("stock_vta"),
            "stock_vta_problems": list(stock.get("stock_vta_problems", ()))}
