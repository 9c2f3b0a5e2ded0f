"""``vtatune show STUDY``: a study's Pareto front (area vs cycles) or its best trials."""

from __future__ import annotations

from collections import Counter
from typing import Any

import typer

from vtatune.cli import console
from vtatune.cli.options import DbOption, JsonOption
from vtatune.cli.studies import aligned

#: Trials listed for a latency study.
TOP_N = 10


def show(study: str = typer.Argument(..., help="Study name (see `vtatune studies`)."),
         db: DbOption = None, json_: JsonOption = False) -> None:
    """Show a study: the Pareto front of feasible trials (area-latency) or the 10 fastest."""
    from vtatune.store import Store, StoreError, database_exists, normalize_url

    if not database_exists(db):  # a read-only command does not create the file
        raise StoreError(f"no study '{study}': no database at {normalize_url(db)}")
    store = Store(db)
    info = store.study(study)
    data = summarize(info, store.trials(study))
    if json_:
        console.print_json(data)
        return
    console.line(f"study {info.name}: {info.workload} on {info.board}, objective "
                 f"{info.objective}, sampler {info.sampler} ({store.display_url})")
    infeasible = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != "ok")
    console.line(f"{data['trials']} trials, {data['feasible']} feasible"
                 + (f" (infeasible: {infeasible})" if infeasible else "")
                 + (f", best {data['best_cycles']:,} cycles" if data["best_cycles"] else ""))
    if not data["feasible"]:
        console.line("no feasible trial yet")
        return
    if info.objective == "area-latency":
        rows = data["pareto"]
        console.line(f"Pareto front, area_mm2 vs cycles ({len(rows)} points):")
    else:
        rows = data["top"]
        console.line(f"top {len(rows)} by cycles:")
    for text in aligned(["trial", "cycles", "seconds", "area_mm2", "efficiency", "hardware",
                         "knobs"],
                        [[r["trial"], r["cycles"], r["seconds"], r["area_mm2"], r["efficiency"],
                          r["hw_name"], _knobs(r["knobs"])] for r in rows]):
        console.line(text)


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
    with_area = [t for t in feasible if t.candidate.area_mm2 is not None]
    front = pareto_front([(t.candidate.area_mm2, float(t.candidate.cycles)) for t in with_area])
    fastest = sorted(feasible, key=lambda t: (t.candidate.cycles, t.candidate.area_mm2 or 0.0,
                                              t.number))[:top_n]
    return {
        "study": info.name, "workload": info.workload, "objective": info.objective,
        "board": info.board, "sampler": info.sampler, "trials": len(trials),
        "feasible": sum(t.candidate.feasible for t in trials),
        "best_cycles": min((t.candidate.cycles for t in feasible), default=None),
        "statuses": dict(Counter(t.candidate.status for t in trials).most_common()),
        "pareto": [_row(with_area[i]) for i in front],
        "top": [_row(t) for t in fastest],
    }


def _row(t: Any) -> dict[str, Any]:
    c = t.candidate
    return {"trial": t.number, "hw_name": c.hw_name or c.hw_key, "hw": dict(c.hw),
            "knobs": dict(c.knobs), "cycles": c.cycles, "seconds": c.seconds,
            "area_mm2": c.area_mm2, "efficiency": c.efficiency}


def _knobs(knobs: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(knobs.items()))


def register(app: typer.Typer) -> None:
    app.command("show")(show)
