"""``vtatune show STUDY``: a study's Pareto front (area vs cycles) or its best trials."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.options import DbOption, JsonOption, ms_of, valid_text
from vtatune.search import objectives
from vtatune.statuses import Status

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
    data = study.summary()
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
    infeasible = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != Status.OK)
    console.line(f"{formats.counted(data['trials'], 'trial')}, {data['feasible']} feasible"
                 + (f" (infeasible: {infeasible})" if infeasible else "")
                 + (f", best {formats.cycles(data['best_cycles'])} cycles"
                    if data["best_cycles"] else ""))
    console.not_feasible(data["not_feasible"])
    if not data["feasible"]:
        console.line("no feasible trial yet")
        return
    terms = objectives.terms(info.objective)
    if info.objective == "area-latency":
        console.designs(f"Pareto front, area vs {lat} "
                        f"({formats.counted(len(data['pareto']), 'point')}):",
                        data["pareto"], wl)
    elif objectives.is_front(info.objective):
        names = {"area": "area", "latency": lat, "energy": "accelerator energy"}
        console.designs(f"Pareto front, {' vs '.join(names[t] for t in terms)} "
                        f"({formats.counted(len(data['pareto']), 'point')}):",
                        data["pareto"], wl)
    elif terms == ("edp",):
        console.designs(f"top {len(data['top'])} by accelerator energy x {lat}:",
                        data["top"], wl)
    else:
        console.designs(f"top {len(data['top'])} by {lat}:", data["top"], wl)


def show_network(study: Study, json_: bool) -> None:
    """A network study: counts, then every front design with its per-layer breakdown."""
    from vtatune.cli.report import host_ops_json
    from vtatune.escaping import terminal
    from vtatune.networks.summary import best_text
    from vtatune.reports.data import WEIGHTED_SUM, host_ops_text

    info, host_ops, members = study.info, study.host_ops, study.networks
    data = study.summary()
    if json_:
        if members:  # several networks: each network's host operators, the objective named
            data = {**data, "objective_latency": WEIGHTED_SUM, "networks": [
                {**n, "host_ops": host_ops_json(m.host_ops)}
                for n, m in zip(data["networks"], members, strict=True)]}
        console.print_json({**data, "host_ops": host_ops_json(host_ops)})
        return
    console.line(f"study {info.name}: network {data['network']} on {info.board}, objective "
                 f"{info.objective}, sampler {info.sampler} ({study.display_url})")
    if members:
        console.line("networks: " + ", ".join(f"{m.network} (weight {m.weight:g})"
                                              for m in members)
                     + f"; latency: the {WEIGHTED_SUM} ("
                     + " + ".join(f"{m.weight:g} x {m.network}" for m in members) + ")")
    others = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != Status.OK)
    best = best_text(data)
    console.line(f"{formats.counted(data['trials'], 'design')}, {data['feasible']} feasible"
                 + (f" (not feasible: {others})" if others else "")
                 + (f"; {best}" if best is not None else "")
                 + f"; {data['evaluated']} layer candidates evaluated, {data['cached']} from "
                 "the store" + (f"; {data['running']} design(s) interrupted (rerun the search "
                                "to continue)" if data["running"] else ""))
    console.not_feasible(data["not_feasible"])
    if members:
        for m in members:
            console.line(terminal(f"{m.network}: {host_ops_text(m.host_ops)}"))
    else:
        console.line(terminal(host_ops_text(host_ops)))
    if not data["feasible"]:
        console.line("no feasible design yet")
        return
    against = f"the {WEIGHTED_SUM}" if members else "network latency"
    terms = objectives.terms(info.objective)
    if objectives.is_front(info.objective):
        rows = data["pareto"]
        names = {"area": "area_mm2", "latency": against, "energy": "accelerator energy"}
        console.line(f"Pareto front, {' vs '.join(names[t] for t in terms)} "
                     f"({formats.counted(len(rows), 'design')}):")
    elif terms == ("edp",):
        rows = data["top"]
        console.line(f"top {formats.counted(len(rows), 'design')} by accelerator energy x "
                     f"{against}:")
    else:
        rows = data["top"]
        console.line(f"top {formats.counted(len(rows), 'design')} by {against}:")
    for r in rows:
        console.line("")
        split = "" if r["host_seconds"] is None else (
            f"accelerator {ms_of(r['accelerator_seconds'])} ms + host "
            f"{ms_of(r['host_seconds'])} ms, ")
        per = " weighted sum" if members else " per run"
        console.line(f"trial {r['trial']}: {r['hw_name']}, {ms_of(r['seconds'])} ms{per} "
                     f"({split}{formats.cycles(r['cycles'])} cycles, "
                     f"{formats.percent(r['efficiency'])} of the bound), "
                     f"{formats.area(r['area_mm2'])} mm²{_energy(r, per)}; stock VTA: "
                     + ("yes" if r.get("stock_vta") else
                        "no (" + "; ".join(r.get("stock_vta_problems") or ()) + ")"))
        if not members:
            _layer_table(r["layers"], "  ")
            continue
        for n in r["networks"]:
            split = "" if n["host_seconds"] is None else (
                f"accelerator {ms_of(n['accelerator_seconds'])} ms + host "
                f"{ms_of(n['host_seconds'])} ms, ")
            console.line(f"  network {n['network']} (weight {n['weight']:g}): "
                         f"{ms_of(n['seconds'])} ms per run ({split}"
                         f"{formats.cycles(n['cycles'])} cycles); share of its latency:")
            _layer_table(n["layers"], "    ")
    if console.stock_note(rows):
        console.line("")
        console.line(console.stock_note(rows))
    if console.domain_note(rows):
        console.line(console.domain_note(rows))


def _layer_table(layers: list[dict], indent: str) -> None:
    """A design's layers, one line each (``share``: of its network's latency; ``accel J``:
    the accelerator's energy of one run of the layer, when the picks have it)."""
    from vtatune.cli.studies import aligned

    energy = any(la.get("accelerator_energy_j") is not None for la in layers)
    for text in aligned(
            [f"{indent}layer", "count", "cycles", "ms", "share",
             *(["accel J"] if energy else []), "trials", "knobs"],
            [[f"{indent}{la['name']}", la["count"], formats.cycles(la["cycles"]),
              ms_of(la["seconds"]), formats.percent(la["share"]),
              *([formats.energy(la.get("accelerator_energy_j"))] if energy else []),
              la["trials"], formats.knobs(la["knobs"])]
             for la in layers]):
        console.line(text)


#: The output of ``show`` for each kind of study.
_SHOW: dict[str, Callable[[Study, bool], None]] = {"operator": show_operator,
                                                  "network": show_network}


def register(app: typer.Typer) -> None:
    app.command("show")(show)


def _energy(row: dict[str, Any], per: str) -> str:
    """``, energy 41.2 mJ per run (board 812 mJ)`` of a design with energy ("" without)."""
    if row.get("accelerator_energy_j") is None:
        return ""
    return (f", energy {formats.energy(row['accelerator_energy_j'])}{per} (board "
            f"{formats.energy(row.get('board_energy_j'))})")
