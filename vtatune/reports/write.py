"""Write a report or a comparison to a folder: figures (PNG, SVG), CSV tables, index.html."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from vtatune.reports import csv_files, html, plots
from vtatune.reports.data import CompareData, ReportData

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Figures of a study report: file stem -> drawing function.
FIGURES: dict[str, Callable[[ReportData], Figure]] = {
    "pareto": plots.pareto_figure,
    "convergence": plots.convergence_figure,
    "params": plots.params_figure,
}

#: Figures also written as SVG (vector, for papers).
SVG_FIGURES = ("pareto",)


def write_report(data: ReportData, out: Path) -> dict[str, Path]:
    """Write ``pareto.png``/``.svg``, ``convergence.png``, ``params.png``, ``front.csv``,
    ``trials.csv`` and ``index.html`` into ``out`` (created); returns name -> path."""
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    pngs: dict[str, bytes] = {}
    for name, draw in FIGURES.items():
        fig = draw(data)
        pngs[name] = plots.to_bytes(fig, "png")
        written[f"{name}.png"] = _put(out / f"{name}.png", pngs[name])
        if name in SVG_FIGURES:
            written[f"{name}.svg"] = _put(out / f"{name}.svg", plots.to_bytes(fig, "svg"))
    written["front.csv"] = _put(out / "front.csv",
                                csv_files.points_csv(data.front, data.knee).encode())
    # one row per candidate the study evaluated (its first trial), every status
    written["trials.csv"] = _put(out / "trials.csv", csv_files.points_csv(data.points).encode())
    written["index.html"] = _put(out / "index.html", html.report_page(data, pngs).encode())
    return written


def write_comparison(data: CompareData, out: Path) -> dict[str, Path]:
    """Write ``compare.png``/``.svg``, ``compare.csv`` and ``index.html`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    fig = plots.compare_figure(data)
    png = plots.to_bytes(fig, "png")
    return {"compare.png": _put(out / "compare.png", png),
            "compare.svg": _put(out / "compare.svg", plots.to_bytes(fig, "svg")),
            "compare.csv": _put(out / "compare.csv", csv_files.compare_csv(data).encode()),
            "index.html": _put(out / "index.html", html.compare_page(data, png).encode())}


def _put(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path
