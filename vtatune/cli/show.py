"""``vtatune show STUDY``: a study's Pareto front (area vs cycles) or its best trials."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.options import DbOption, JsonOption, valid_text
from vtatune.search.summary import summarize

if TYPE_CHECKING:
    from vtatune.reports.study import Study


def show(study: str = typer.Argument(..., help="Study name (see `vtatune studies`).",
                                callback=valid_text),
         db: DbOption = None, json_: JsonOption = False) -> None:
    """Show a study: the Pareto front of feasible trials (area-latency) or the 10 fastest.

    Examples:

    \b
      vtatune show conv2d-C8-xgb
      vtatune show conv2d-C8-xgb --json | jq '.pareto[0]'
    """
    from vtatune.cli.report import open_study

    loaded = open_study(study, db)
    _SHOW[loaded.kind](loaded, json_)


def show_operator(study: Study, json_: bool) -> None:
    """An operator study: counts, then its front (or its fastest trials)."""
    info = study.info
    data = summarize(info, study.operator_trials)
    if json_:
        console.print_json(data)
        return
    lat = "cycles" if data["latency"] == "accelerator" else "ms per call"
    console.line(f"study {info.name}: {info.workload} on {info.board}, objective "
                 f"{info.objective} ({data['latency']} latency), sampler {info.sampler} "
                 f"({study.display_url})")
    wl = console.workload_of(info.workload)
    if wl is not None:
        console.line(f"workload: {wl.summary()}")
    infeasible = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != "ok")
    console.line(f"{formats.counted(data['trials'], 'trial')}, {data['feasible']} feasible"
                 + (f" (infeasible: {infeasible})" if infeasible else "")
                 + (f", best {formats.cycles(data['best_cycles'])} cycles"
                    if data["best_cycles"] else ""))
    console.not_feasible(data["not_feasible"])
    if not data["feasible"]:
        console.line("no feasible trial yet")
        return
    if info.objective == "area-latency":
        console.designs(f"Pareto front, area vs {lat} "
                        f"({formats.counted(len(data['pareto']), 'point')}):",
                        data["pareto"], wl)
    else:
        console.designs(f"top {len(data['top'])} by {lat}:", data["top"], wl)


def _show_network(study: Study, json_: bool) -> None:
    from vtatune.cli.network import show_network

    show_network(study, json_)


#: The output of ``show`` for each kind of study.
_SHOW: dict[str, Callable[[Study, bool], None]] = {"operator": show_operator,
                                                  "network": _show_network}


def register(app: typer.Typer) -> None:
    app.command("show")(show)
