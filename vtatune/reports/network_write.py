"""Write a network study's report or a comparison of network studies: figures, CSV, HTML.

Report files: ``front.png``/``.svg`` (area vs network latency), ``breakdown.png``/``.svg``
(where each front design's time goes, per layer), ``convergence.png``, ``front.csv`` (one row
per front design, with each layer's latency and knobs), ``designs.csv`` (every design, any
status) and ``index.html``. Comparison files: ``compare.png``/``.svg``, ``compare.csv``,
``index.html``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from vtatune.reports import html, network_plots, plots
from vtatune.reports.data import (
    CompareData,
    DesignPoint,
    ReportData,
    host_ops_text,
)


def write_network_report(data: ReportData, out: Path) -> dict[str, Path]:
    """Write the report into ``out`` (created); returns file name -> path."""
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    pngs: dict[str, bytes] = {}
    for name, draw, svg in (("front", network_plots.front_figure, True),
                            ("breakdown", network_plots.breakdown_figure, True),
                            ("convergence", network_plots.convergence_figure, False)):
        fig = draw(data)
        pngs[name] = plots.to_bytes(fig, "png")
        written[f"{name}.png"] = _put(out / f"{name}.png", pngs[name])
        if svg:
            written[f"{name}.svg"] = _put(out / f"{name}.svg", plots.to_bytes(fig, "svg"))
    written["front.csv"] = _put(out / "front.csv", front_csv(data).encode())
    written["designs.csv"] = _put(out / "designs.csv", designs_csv(data.points).encode())
    written["index.html"] = _put(out / "index.html", report_page(data, pngs).encode())
    return written


def write_network_comparison(data: CompareData, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    fig = network_plots.compare_figure(data)
    png = plots.to_bytes(fig, "png")
    return {"compare.png": _put(out / "compare.png", png),
            "compare.svg": _put(out / "compare.svg", plots.to_bytes(fig, "svg")),
            "compare.csv": _put(out / "compare.csv", compare_csv(data).encode()),
            "index.html": _put(out / "index.html", compare_page(data, png).encode())}


# ---- CSV -----------------------------------------------------------------------------------------

DESIGN_COLUMNS = ["trial", "status", "hw_name", "area_mm2", "cycles", "latency_ms",
                  "accelerator_ms", "host_ms", "bound_ms", "efficiency", "evaluated", "cached",
                  "reason"]


def _design_row(p: DesignPoint) -> dict[str, Any]:
    return {"trial": p.trial, "status": p.status, "hw_name": p.hw_name,
            "area_mm2": p.area_mm2, "cycles": p.cycles, "latency_ms": p.latency_ms,
            "accelerator_ms": p.accelerator_ms, "host_ms": p.host_ms, "bound_ms": p.bound_ms,
            "efficiency": p.efficiency, "evaluated": p.evaluated, "cached": p.cached,
            "reason": p.reason}


def designs_csv(points: Sequence[DesignPoint]) -> str:
    """Every design, any status."""
    return _write(DESIGN_COLUMNS, [_design_row(p) for p in points])


def front_csv(data: ReportData) -> str:
    """Front designs with, per layer, its count-weighted latency, share and knobs."""
    names = list(data.layer_names)
    cols = [*DESIGN_COLUMNS[:-1], "knee"]
    for n in names:
        cols += [f"{n}_ms", f"{n}_share", f"{n}_knobs"]
    knee = data.knee.trial if data.knee else None
    rows = []
    for p in data.front:
        row = _design_row(p)
        row["knee"] = p.trial == knee
        for la in p.layers:
            row[f"{la.name}_ms"] = la.total_ms
            row[f"{la.name}_share"] = la.share
            row[f"{la.name}_knobs"] = ";".join(f"{k}={v}" for k, v in sorted(la.knobs.items()))
        rows.append(row)
    return _write(cols, rows)


def compare_csv(data: CompareData) -> str:
    cols = ["study", "sampler", "trial", "hw_name", "area_mm2", "latency_ms", "cycles"]
    rows = [{"study": s.study, "sampler": s.sampler, "trial": p.trial, "hw_name": p.hw_name,
             "area_mm2": p.area_mm2, "latency_ms": p.latency_ms, "cycles": p.cycles}
            for s in data.series for p in s.front]
    return _write(cols, rows)


def _write(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})
    return buf.getvalue()


# ---- HTML ----------------------------------------------------------------------------------------

def _front_table(data: ReportData) -> str:
    cols = ["trial", "hardware", "stock VTA", "area (mm²)", "latency (ms)", "accel (ms)",
            "host (ms)", "cycles", "bound (ms)", "of bound (%)"]
    cols += [f"{n} (%)" for n in data.layer_names]
    rows = []
    for p in data.front:
        shares = {la.name: None if la.share is None else 100 * la.share for la in p.layers}
        rows.append([p.trial, p.hw_name, html.stock_cell(p), p.area_mm2, p.latency_ms,
                     p.accelerator_ms, p.host_ms, p.cycles, p.bound_ms,
                     None if p.efficiency is None else 100 * p.efficiency,
                     *[shares.get(n) for n in data.layer_names]])

    in_ms = [cols.index(c) for c in ("latency (ms)", "accel (ms)", "host (ms)", "bound (ms)")]
    rows = [_ms_cells(r, in_ms) for r in rows]
    knee = data.knee.trial if data.knee else None
    titles = ["trial number", "hardware design",
              "stock VTA (apache/tvm-vta as it is) builds the design; else why not",
              "area in mm²",
              "network latency in ms per run, end to end: the accelerator's time plus the "
              "host's", "the accelerator's part", "the host's part", "accelerator cycles",
              "the network's physical lower bound in ms",
              "lower bound / the accelerator's time (bound cycles / cycles)",
              *[f"share of the network's latency spent in {n}" for n in data.layer_names]]
    return html.table(cols, rows, ["knee" if p.trial == knee else "" for p in data.front],
                      text_cols=(1, 2), wrap_cols=(2,), titles=titles)


def _layers_table(p: DesignPoint) -> str:
    cols = ["layer", "count", "ms per run", "ms in all", "share (%)", "of bound (%)",
            "evaluations", "knobs"]
    rows = [[la.name, la.count, la.latency_ms, la.total_ms,
             None if la.share is None else 100 * la.share,
             None if la.efficiency is None else 100 * la.efficiency, la.trials,
             ", ".join(f"{k}={v}" for k, v in sorted(la.knobs.items()))] for la in p.layers]
    in_ms = [cols.index(c) for c in ("ms per run", "ms in all")]
    return html.table(cols, [_ms_cells(r, in_ms) for r in rows], text_cols=(0, 7))


def _ms_cells(row: list[Any], columns: Sequence[int]) -> list[Any]:
    """``row`` with its millisecond values at ``columns`` as ``formats.ms`` shows them (three
    decimals, as everywhere), still sorted by the raw value."""
    from vtatune import formats

    return [html.Cell(formats.ms(v), v) if k in columns and isinstance(v, float) else v
            for k, v in enumerate(row)]


def report_page(data: ReportData, images: dict[str, bytes]) -> str:
    from vtatune import formats

    statuses = ", ".join(f"{k} {v}" for k, v in data.statuses.items())
    picks = []
    for label, p in (("fastest", data.fastest), ("smallest", data.smallest),
                     ("knee", data.knee)):
        if p is not None:
            picks.append(f"<li>{label}: trial {p.trial}, <code>{escape(p.hw_name)}</code>, "
                         f"{formats.ms(p.latency_ms)} ms ({p.cycles:,} cycles), "
                         f"{formats.area(p.area_mm2)} mm²{escape(html.pick_stock(p))} "
                         f"— <code>vtatune export {escape(data.study)} --pick {label}</code>"
                         "</li>")
    hv = ("–" if data.ref_point is None else
          f"{data.hypervolume:.4f} of the log box (reference point "
          f"{formats.area(data.ref_point[0])} mm², {formats.ms(data.ref_point[1])} ms)")
    body = [
        f"<h1>vtatune report: {escape(data.study)}</h1>",
        f'<p class="meta">network {escape(data.network)} on {escape(data.board)} at '
        f"{data.clock_mhz:g} MHz · objective {escape(data.objective)} · sampler "
        f"{escape(data.sampler)} · {data.evaluated:,} layer candidates evaluated, "
        f"{data.cached:,} served from the store</p>",
        f'<p class="meta">{formats.counted(data.n_trials, "design")}, {data.n_feasible} '
        'feasible '
        f"({escape(statuses)}) · front {formats.counted(len(data.front), 'design')} · "
        f"hypervolume {hv}</p>",
        f'<p class="meta">{escape(host_ops_text(data.host_ops))}</p>',
        "<ul>" + "".join(picks) + "</ul>" if picks else "<p>The front is empty.</p>",
        "<h2>Pareto front (area vs network latency)</h2>",
        html.image(images["front"], "front"),
        "<h2>Where the time goes (front designs)</h2>",
        html.image(images["breakdown"], "breakdown"),
        f"<h2>Front table ({formats.counted(len(data.front), 'design')}; knee highlighted; "
        "per-layer shares of "
        "the network's latency)</h2>",
        _front_table(data) if data.front else "<p>empty front</p>",
    ]
    if data.knee is not None:
        body += [f"<h2>Knee design, trial {data.knee.trial}: every layer</h2>",
                 _layers_table(data.knee)]
    body += ["<h2>Convergence</h2>", html.image(images["convergence"], "convergence"),
             '<p class="meta">latency = end to end per network run: every layer run is one '
             "call, the accelerator's time plus the host's (accel + host). of bound = the "
             "network's physical lower bound (each layer's compute or memory roofline × its "
             "count) / the accelerator's time (bound cycles / cycles, as everywhere). Files: "
             "front.png/.svg, breakdown.png/.svg, convergence.png, front.csv, designs.csv.</p>"]
    return html.page(f"vtatune report: {data.study}", "\n".join(body))


def compare_page(data: CompareData, png: bytes) -> str:
    cols = ["study", "sampler", "designs", "feasible", "best (ms)", "front size",
            "hypervolume", "layer evaluations"]
    rows = [_ms_cells([s.study, s.sampler, s.n_trials, s.n_feasible, s.best_ms, len(s.front),
                       s.hypervolume, s.evaluated], [cols.index("best (ms)")])
            for s in data.series]
    body = [f"<h1>vtatune compare: {escape(', '.join(s.study for s in data.series))}</h1>",
            f'<p class="meta">network {escape(data.network)} on {escape(data.board)} at '
            f"{data.clock_mhz:g} MHz · hypervolume: share of one box in log area and log "
            "network latency, from the fronts' ideal point to 10% beyond their nadir</p>",
            html.image(png, "comparison"), html.table(cols, rows, text_cols=(0, 1))]
    return html.page("vtatune compare", "\n".join(body))


def _put(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path
