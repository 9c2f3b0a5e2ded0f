"""What ``vtatune search`` prints of a network study (``cli/search.py`` runs every search
through ``studies.SearchJob``). Reading a network study (show, report, compare, export) is the
commands' own, on the one study model (``reports.study``)."""

from __future__ import annotations

from typing import Any

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.options import ms_of
from vtatune.search import objectives
from vtatune.statuses import Status


def _report(result: Any, sp: Any, json_: bool, db: str | None) -> None:
    from vtatune.networks.summary import best_text, summarize
    from vtatune.reports.data import WEIGHTED_SUM
    from vtatune.store import Store

    store = Store(db, readonly=True)  # result.db hides the password
    data = summarize(store.study(result.study), store.network_trials(result.study))
    if json_:
        console.print_json({
            "study": result.study, "db": result.db, "network": data["network"],
            "trials": data["trials"], "new_trials": result.new_trials,
            "evaluated": result.evaluated, "cached": result.cached,
            "repeats": result.repeats, "feasible": data["feasible"],
            "best_cycles": data["best_cycles"], "best_seconds": data["best_seconds"],
            "best_accelerator_energy_j": data["best_accelerator_energy_j"],
            "elapsed_s": round(result.elapsed_s, 2), "exhausted": result.exhausted,
            "statuses": data["statuses"], "objective": data["objective"],
            "latency": data["latency"], "screened": result.screened,
            "space_size": result.space_size, "space_passing": result.space_passing,
            "pareto": data["pareto"], "top": data["top"],
            **({"networks": data["networks"], "objective_latency": WEIGHTED_SUM}
               if "networks" in data else {})})
        return
    best = best_text(data)
    console.line(f"study {result.study}: {formats.counted(data['trials'], 'design')} "
                 f"({result.new_trials} new; "
                 f"{result.evaluated} layer candidates evaluated, {result.cached} from the "
                 f"store) in {result.elapsed_s:.1f} s; {data['feasible']} feasible"
                 + (f"; {best}" if best is not None else ""))
    others = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != Status.OK)
    if others:
        console.line(f"not feasible: {others}")
        console.not_feasible(data["not_feasible"])
    from vtatune.search.screen import summary_line

    if summary_line(result.screened):
        console.line(summary_line(result.screened))
    if result.exhausted:
        console.line(_exhausted(result, data["trials"]))
    elif result.new_trials == 0:
        console.line(console.nothing_new(result.study, data["trials"], "design"))
    front = objectives.is_front(data["objective"])
    rows = data["pareto"] if front else data["top"]
    # several networks: "ms" is the weighted sum (the objective); each network's ms after it
    nets = [f"{n['network']} ms" for n in data.get("networks", [])]
    energy = any(r.get("accelerator_energy_j") is not None for r in rows)
    if rows:
        if data["objective"] == "area-latency":
            title = "Pareto front (area vs network latency)"
        elif front or data["objective"] == "edp":
            title = console.designs_title(data["objective"], per="inference", noun="designs")
        else:
            title = "fastest designs"
        if nets:
            title += f"; ms: the {WEIGHTED_SUM} (" + " + ".join(
                f"{n['weight']:g} x {n['network']}" for n in data["networks"]) + ")"
        console.table(title, ["trial", "ms", *nets, "cycles", "mm²", "of bound",
                              *(["accel J", "board J"] if energy else []), "stock VTA",
                              "hardware"],
                      [[formats.count(r["trial"]), ms_of(r["seconds"]),
                        *[ms_of(n["seconds"]) for n in r.get("networks") or ()][:len(nets)],
                        formats.cycles(r["cycles"]), formats.area(r["area_mm2"]),
                        formats.percent(r["efficiency"]),
                        *([formats.energy(r.get("accelerator_energy_j")),
                           formats.energy(r.get("board_energy_j"))] if energy else []),
                        console.stock_mark(r), r["hw_name"]] for r in rows],
                      right=[True] * (5 + len(nets) + 2 * energy) + [False, False])
        console.line(console.BOUND_LEGEND)
        if energy:
            console.line(console.ENERGY_LEGEND.replace("per call", "per inference")
                         .replace("over the call", "over the inference"))
        if console.stock_note(rows):
            console.line(console.stock_note(rows))
        if console.domain_note(rows):
            console.line(console.domain_note(rows))
    else:
        console.line("no feasible design yet")
    console.line(f"results: {result.db}")
    for text in console.next_steps(result.study, result.db, db, data["objective"],
                                   shows="every front design, layer by layer",
                                   feasible=bool(data["feasible"])):
        console.line(text)


def _exhausted(result: Any, trials: int) -> str:
    """Why a network search stopped before the requested number of designs."""
    if result.space_passing is not None:
        return (f"stopped after {trials:,} of {result.requested:,} requested designs: every "
                f"design of the hardware space that passes the screen "
                f"({result.space_passing:,} of {result.space_size:,}) is in the study")
    return (f"stopped after {trials:,} of {result.requested:,} requested designs: no new "
            "hardware design that passes the screen left to propose")
