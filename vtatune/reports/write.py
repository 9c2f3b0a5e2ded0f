"""Write a report or a comparison to a folder: figures (PNG, SVG), CSV tables, index.html."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from vtatune.reports import csv_files, html, plots
from vtatune.reports.data import CompareData, ReportData

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Figures of an operator study's report: file stem -> drawing function.
FIGURES: dict[str, Callable[[ReportData], Figure]] = {
    "pareto": plots.pareto_figure,
    "convergence": plots.convergence_figure,
    "params": plots.params_figure,
}
#: Figures of a network study's report: its front, where the front designs' time goes (per
#: layer), convergence.
NETWORK_FIGURES: dict[str, Callable[[ReportData], Figure]] = {
    "front": plots.network_front_figure,
    "breakdown": plots.breakdown_figure,
    "convergence": plots.network_convergence_figure,
}

#: Figures also written as SVG (vector, for papers).
SVG_FIGURES = ("pareto", "front", "breakdown", "energy")


def write_report(data: ReportData, out: Path) -> dict[str, Path]:
    """Write a study's report into ``out`` (created); returns name -> path. An operator
    study's: ``pareto.png``/``.svg``, ``convergence.png``, ``params.png``, ``energy.png``/
    ``.svg`` (when its trials have energy: area vs accelerator energy, the knee's energy by
    component), ``front.csv``,
    ``trials.csv`` (one row per candidate evaluated, its first trial, every status),
    ``index.html``; a network study's: ``front.png``/``.svg``, ``breakdown.png``/``.svg``,
    ``convergence.png``, ``front.csv`` (each layer's latency, share and knobs),
    ``designs.csv`` (every design, any status), ``index.html``."""
    out.mkdir(parents=True, exist_ok=True)
    net = data.network is not None
    written: dict[str, Path] = {}
    pngs: dict[str, bytes] = {}
    figures = dict(NETWORK_FIGURES if net else FIGURES)
    if any(p.energy_components or (net and p.accelerator_energy_j is not None)
           for p in data.points):
        figures["energy"] = plots.energy_figure  # trials stored with energy
    for name, draw in figures.items():
        fig = draw(data)
        pngs[name] = plots.to_bytes(fig, "png")
        written[f"{name}.png"] = _put(out / f"{name}.png", pngs[name])
        if name in SVG_FIGURES:
            written[f"{name}.svg"] = _put(out / f"{name}.svg", plots.to_bytes(fig, "svg"))
    tables = ({"front.csv": csv_files.network_front_csv(data),
               "designs.csv": csv_files.designs_csv(data.points),
               "index.html": html.network_report_page(data, pngs)} if net else
              {"front.csv": csv_files.points_csv(data.front, data.knee),
               "trials.csv": csv_files.points_csv(data.points),
               "index.html": html.report_page(data, pngs)})
    return written | {k: _put(out / k, v.encode()) for k, v in tables.items()}


def write_comparison(data: CompareData, out: Path) -> dict[str, Path]:
    """Write ``compare.png``/``.svg``, ``compare.csv`` and ``index.html`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    net = data.network is not None
    fig = (plots.network_compare_figure if net else plots.compare_figure)(data)
    png = plots.to_bytes(fig, "png")
    table = (csv_files.network_compare_csv if net else csv_files.compare_csv)(data)
    page = (html.network_compare_page if net else html.compare_page)(data, png)
    return {"compare.png": _put(out / "compare.png", png),
            "compare.svg": _put(out / "compare.svg", plots.to_bytes(fig, "svg")),
            "compare.csv": _put(out / "compare.csv", table.encode()),
            "index.html": _put(out / "index.html", page.encode())}


def _put(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path
