"""``vtatune report STUDY``: Pareto plots, convergence, parameters, front table, one HTML page."""

from __future__ import annotations

import time
from collections.abc import Callable
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
    t0 = time.perf_counter()
    loaded = open_study(study, db)
    _REPORT[loaded.kind](loaded, out, json_, t0)


def report_operator(study: Study, out: Path | None, json_: bool, t0: float) -> None:
    """``vtatune report`` of an operator study."""
    from vtatune.reports import report_data, require_feasible, write_report

    info, trials, where = study.info, list(study.trials), study.display_url
    require_feasible(info, trials)
    data = report_data(info, trials)
    folder = out if out is not None else default_out(study.name)
    files = write_files(lambda: write_report(data, folder), folder)
    elapsed = time.perf_counter() - t0
    if json_:
        console.print_json({
            "study": data.study, "db": where, "out": str(folder),
            "files": {k: str(v) for k, v in files.items()}, "trials": data.n_trials,
            "feasible": data.n_feasible, "hypervolume": data.hypervolume,
            "ref_point": data.ref_point,
            "front": [point_json(p) for p in data.front],
            "knee": point_json(data.knee), "fastest": point_json(data.fastest),
            "smallest": point_json(data.smallest), "elapsed_s": elapsed})
        return
    console.line(f"study {data.study}: {data.workload} on {data.board}, "
                 f"{formats.counted(data.n_trials, 'trial')}, "
                 f"{data.n_feasible} feasible; front {len(data.front)} point"
                 f"{'' if len(data.front) == 1 else 's'}, hypervolume "
                 f"{data.hypervolume:.3f}")
    for label, p in (("fastest", data.fastest), ("smallest", data.smallest),
                     ("knee", data.knee)):
        if p is not None:
            console.line(f"  {label:8s} trial {p.trial}: {p.hw_name}, "
                         f"{formats.cycles(p.cycles)} cycles ({formats.ms(p.latency_ms)} ms), "
                         f"{formats.area(p.area_mm2)} mm²{console.stock_text(p)}")
    others = ", ".join(n for n in files if n != "index.html")
    console.line(f"wrote {folder / 'index.html'} and {others} in {elapsed:.1f} s")


def _report_network(study: Study, out: Path | None, json_: bool, t0: float) -> None:
    from vtatune.cli.network import report_network

    report_network(study, out, json_, t0)


#: The report of a study of each kind.
_REPORT: dict[str, Callable[[Study, Path | None, bool, float], None]] = {
    "operator": report_operator, "network": _report_network}


def open_study(study: str, db: str | None) -> Study:
    """An existing study, as the one study model (``vtatune.reports.study``); one-line
    errors otherwise."""
    from vtatune.reports.study import load
    from vtatune.store import Store, StoreError, database_exists, normalize_url

    if not database_exists(db):  # a read-only command does not create the file
        raise StoreError(f"no study '{study}': no database at {normalize_url(db)}")
    return load(study, Store(db, readonly=True))


def point_json(p: Any) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"trial": p.trial, "hw_name": p.hw_name, "hw": p.hw, "knobs": p.knobs,
            "cycles": p.cycles, "latency_ms": p.latency_ms, "area_mm2": p.area_mm2,
            p.logic_kind: p.lut, "ff": p.ff, p.bram_kind: p.bram, "dsp": p.dsp,
            "efficiency": p.efficiency, "stock_vta": p.stock_vta,
            "stock_vta_problems": list(p.stock_vta_problems)}


def register(app: typer.Typer) -> None:
    app.command("report")(report)
