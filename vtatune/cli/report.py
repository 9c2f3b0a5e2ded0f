"""``vtatune report STUDY``: Pareto plots, convergence, parameters, front table, one HTML page."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.files import default_out, write_files
from vtatune.cli.options import DbOption, JsonOption, valid_text

if TYPE_CHECKING:
    from vtatune.reports.study import Study

OutOption = Annotated[
    Path | None,
    typer.Option("--out", help="Output folder (default: reports/<study>/ under the project)."),
]


def report(study: str = typer.Argument(..., help="Study name (see `vtatune studies`).",
                                callback=valid_text),
           db: DbOption = None, out: OutOption = None, json_: JsonOption = False) -> None:
    """Write a study's report: Pareto plots, convergence, parameters, front table, HTML.

    Files: pareto.png/.svg, convergence.png, params.png, front.csv, trials.csv and a
    self-contained index.html, in reports/<study>/ unless --out says otherwise.

    Examples:

    \b
      vtatune report conv2d-C8-xgb
      vtatune report network-resnet18-xgb --out /tmp/resnet18-report
    """
    from vtatune.escaping import terminal
    from vtatune.reports import host_ops_text, write_report
    from vtatune.reports.data import WEIGHTED_SUM

    t0 = time.perf_counter()
    loaded = open_study(study, db)
    loaded.require_feasible()
    data = loaded.report_data()
    folder = out if out is not None else default_out(loaded.name)
    files = write_files(lambda: write_report(data, folder), folder)
    elapsed = time.perf_counter() - t0
    picks = {"fastest": data.fastest, "smallest": data.smallest, "knee": data.knee}
    net = data.network is not None
    if json_:
        console.print_json({
            "study": data.study, **({"network": data.network} if net else {}),
            "db": loaded.display_url, "out": str(folder),
            "files": {k: str(v) for k, v in files.items()}, "trials": data.n_trials,
            "feasible": data.n_feasible, "hypervolume": data.hypervolume,
            "ref_point": data.ref_point, **({"host_ops": host_ops_json(data.host_ops)}
                                            if net else {}),
            **({"objective_latency": WEIGHTED_SUM, "networks": [
                {"network": m.network, "weight": m.weight, "layers": list(m.layer_names),
                 "host_ops": host_ops_json(m.host_ops)} for m in data.networks]}
               if data.networks else {}),
            "front": [point_json(p) for p in data.front],
            **{k: point_json(p) for k, p in picks.items()}, "elapsed_s": elapsed})
        return
    front = formats.counted(len(data.front), loaded.noun if net else "point")
    console.line(f"study {data.study}: " + (f"network {data.network}" if net else data.workload)
                 + f" on {data.board}, {formats.counted(data.n_trials, loaded.noun)}, "
                 f"{data.n_feasible} feasible; front {front}"
                 f", hypervolume {formats.hypervolume(data.hypervolume)}")
    if data.networks:
        console.line("networks: " + ", ".join(f"{m.network} (weight {m.weight:g})"
                                              for m in data.networks)
                     + f"; latency: the {WEIGHTED_SUM}")
        for m in data.networks:
            console.line(terminal(f"{m.network}: {host_ops_text(m.host_ops)}"))
    elif net:
        console.line(terminal(host_ops_text(data.host_ops)))
    for label in ("knee", "fastest", "smallest") if net else picks:
        p = picks[label]
        if p is not None:
            ms, cycles = formats.ms(p.latency_ms), formats.cycles(p.cycles)
            console.line(f"  {label:8s} trial {p.trial}: {p.hw_name}, "
                         + (f"{ms} ms ({cycles} cycles)" if net else f"{cycles} cycles ({ms} ms)")
                         + f", {formats.area(p.area_mm2)} mm²{console.stock_text(p)}")
            if p.multi:
                console.line("           " + "; ".join(
                    f"{n.network} {formats.ms(n.latency_ms)} ms x {n.weight:g}"
                    for n in p.networks))
    others = ", ".join(n for n in files if n != "index.html")
    console.line(f"wrote {folder / 'index.html'} and {others} in {elapsed:.1f} s")


def host_ops_json(host_ops: Any) -> list[dict[str, Any]] | None:
    """A network's host operators as JSON (None: not recorded with the study)."""
    return None if host_ops is None else [h.describe() for h in host_ops]


def open_study(study: str, db: str | None) -> Study:
    """An existing study, as the one study model (``vtatune.reports.study``); one-line
    errors otherwise."""
    from vtatune.reports.study import load
    from vtatune.store import Store, StoreError, database_exists, normalize_url

    if not database_exists(db):  # a read-only command does not create the file
        raise StoreError(f"no study '{study}': no database at {normalize_url(db)}")
    return load(study, Store(db, readonly=True))


def point_json(p: Any) -> dict[str, Any] | None:
    """A design point as JSON: a network design with its layers, an operator's with its
    knobs and resources."""
    if p is None:
        return None
    out = {"trial": p.trial, "hw_name": p.hw_name, "hw": p.hw, "cycles": p.cycles,
           "latency_ms": p.latency_ms, "area_mm2": p.area_mm2,
           "accelerator_energy_j": p.accelerator_energy_j, "board_energy_j": p.board_energy_j,
           "stock_vta": p.stock_vta, "stock_vta_problems": list(p.stock_vta_problems)}
    if p.multi:  # several networks: latency_ms is the weighted sum; each network's own
        return {**out, "bound_ms": p.bound_ms, "networks": [
            {"network": n.network, "weight": n.weight, "latency_ms": n.latency_ms,
             "accelerator_ms": n.accelerator_ms, "host_ms": n.host_ms, "cycles": n.cycles,
             "layers": [{"name": la.name, "count": la.count, "knobs": la.knobs,
                         "latency_ms": la.latency_ms, "share": la.share}
                        for la in n.layers]} for n in p.networks]}
    if p.networks:
        return {**out, "bound_ms": p.bound_ms,
                "layers": [{"name": la.name, "count": la.count, "knobs": la.knobs,
                            "latency_ms": la.latency_ms, "share": la.share}
                           for la in p.layers]}
    return {**out, "knobs": p.knobs, p.logic_kind: p.lut, "ff": p.ff, p.bram_kind: p.bram,
            "dsp": p.dsp, "efficiency": p.efficiency}


def register(app: typer.Typer) -> None:
    app.command("report")(report)
