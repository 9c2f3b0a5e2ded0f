"""One self-contained ``index.html`` per report: figures inlined as base64 PNG, tables sortable
by a few lines of inline JavaScript, no external asset (it opens offline, from anywhere).

The page never scrolls sideways: figures shrink to its width, text wraps, and every table sits
in its own box (``div.scroll``) that scrolls horizontally when the table is wider than the
window (checked in a headless browser at 1000 and 1400 pixels: tests/reports)."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from vtatune import formats
from vtatune.escaping import html as escape
from vtatune.escaping import shell_command
from vtatune.reports.data import (
    WEIGHTED_SUM,
    CompareData,
    DesignPoint,
    ReportData,
    host_ops_text,
)

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;
color:#222;max-width:1500px}
h1{font-size:1.4em;margin-bottom:.2em}h2{font-size:1.1em;margin-top:1.6em}
.meta{color:#555;margin:.2em 0}
img{max-width:100%;border:1px solid #ddd;margin:6px 0}
.scroll{overflow-x:auto;max-width:100%;margin:6px 0}
table{border-collapse:collapse;font-size:.85em}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}
td.t,th.t{text-align:left}
td.w{white-space:normal;min-width:13em;max-width:24em}
.note{color:#555;font-size:.85em;max-width:75em}
th{background:#f1f1f1;cursor:pointer;user-select:none}
th:after{content:" \\2195";color:#aaa}
tr.knee td{background:#fff3c4;font-weight:600}
tr:hover td{background:#eef5ff}
code{background:#f5f5f5;padding:1px 4px}
"""

# Click a header to sort by it; click again to reverse. Cells carry their raw value in data-v.
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function(t){
  t.querySelectorAll("th").forEach(function(th,i){
    th.addEventListener("click",function(){
      var body=t.tBodies[0],rows=Array.from(body.rows),asc=th.dataset.asc!=="1";
      t.querySelectorAll("th").forEach(function(h){delete h.dataset.asc;});
      th.dataset.asc=asc?"1":"0";
      rows.sort(function(a,b){
        var x=a.cells[i].dataset.v,y=b.cells[i].dataset.v,nx=parseFloat(x),ny=parseFloat(y);
        var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:String(x).localeCompare(String(y));
        return asc?c:-c;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
"""


def page(title: str, body: str) -> str:
    """A complete HTML document with the shared style and the table-sorting script."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>\n{body}\n"
            f"<script>{_SCRIPT}</script></body></html>\n")


def image(png: bytes, alt: str) -> str:
    """An ``<img>`` with the PNG inlined as a data URI."""
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


class Cell(NamedTuple):
    """A table cell shown as ``text`` and sorted by ``raw``."""

    text: str
    raw: Any


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]],
          row_classes: Sequence[str] | None = None, text_cols: Sequence[int] = (),
          wrap_cols: Sequence[int] = (), titles: Sequence[str] | None = None) -> str:
    """A sortable table in its own horizontally scrolling box (``div.scroll``); each cell
    shows a formatted value (a ``Cell``'s text, or the value formatted here) and sorts by its
    raw one. ``text_cols`` are left-aligned, ``wrap_cols`` may wrap between words; ``titles``
    are the headers' tooltips."""
    head = "".join(
        f'<th{_cls(i, text_cols, ())}{_title(titles, i)}>{escape(c)}</th>'
        for i, c in enumerate(columns))
    lines = []
    for k, r in enumerate(rows):
        cls = f' class="{row_classes[k]}"' if row_classes and row_classes[k] else ""
        cells = "".join(
            f'<td{_cls(i, text_cols, wrap_cols)} data-v="{escape(_raw(v))}">'
            f"{escape(v.text if isinstance(v, Cell) else _fmt(v))}</td>"
            for i, v in enumerate(r))
        lines.append(f"<tr{cls}>{cells}</tr>")
    return (f'<div class="scroll"><table class="sortable"><thead><tr>{head}</tr></thead>'
            "<tbody>\n" + "\n".join(lines) + "\n</tbody></table></div>")


def _cls(i: int, text_cols: Sequence[int], wrap_cols: Sequence[int]) -> str:
    names = [n for n, cols in (("t", text_cols), ("w", wrap_cols)) if i in cols]
    return f' class="{" ".join(names)}"' if names else ""


def _title(titles: Sequence[str] | None, i: int) -> str:
    return f' title="{escape(titles[i])}"' if titles and titles[i] else ""


def _raw(v: Any) -> str:
    if isinstance(v, Cell):
        v = v.raw
    return "" if v is None else str(v)


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def stock_cell(p: DesignPoint | Any) -> str:
    """The stock-VTA cell: yes, or no with each reason's first clause (what is wrong, not
    the source that says so: ``export`` prints them whole), escaped by ``table``."""
    if p.stock_vta is None:
        return ""
    return "yes" if p.stock_vta else "no: " + "; ".join(
        r.split(":", 1)[0] for r in p.stock_vta_problems)


def pick_stock(p: Any) -> str:
    """``, stock VTA: yes`` or ``, stock VTA: no (reasons)`` for a picked design."""
    if p.stock_vta is None:
        return ""
    return ", stock VTA: " + ("yes" if p.stock_vta else stock_cell(p).replace(": ", " (", 1)
                              + ")")


def front_table(data: ReportData) -> str:
    """The front: hardware, stock VTA, knobs, cycles, ms, area, resources, efficiency vs the
    bound (knobs and the stock-VTA reasons wrap between words; a window too narrow for the
    rest scrolls the table in its box)."""
    logic = data.front[0].logic_kind.upper() if data.front else "LUT"
    bram = data.front[0].bram_kind.upper() if data.front else "BRAM36"
    cols = ["trial", "hardware", "stock VTA", "knobs", "cycles", "ms", "mm²", logic, "FF", bram,
            "DSP", "fits", "bound", "eff."]
    titles = ["trial number", formats.HW_NAME_LEGEND,
              "stock VTA (apache/tvm-vta as it is) builds the design; else why not",
              "schedule knobs",
              f"accelerator cycles (at {data.clock_mhz:g} MHz)",
              "latency in ms per call, end to end: the accelerator's time plus the host's",
              "area in mm²", f"{logic} used", "flip-flops used", f"{bram} blocks used",
              "DSP blocks used", f"fits {data.board}",
              "the larger physical lower bound (compute or memory roofline), cycles",
              "efficiency: bound / cycles"]
    rows = [[p.trial, p.hw_name, stock_cell(p), formats.knobs(p.knobs),
             Cell(formats.cycles(p.cycles), p.cycles), Cell(formats.ms(p.latency_ms),
                                                          p.latency_ms),
             Cell(formats.area(p.area_mm2), p.area_mm2), Cell(formats.count(p.lut), p.lut),
             Cell(formats.count(p.ff), p.ff), Cell(formats.count(p.bram), p.bram),
             Cell(formats.count(p.dsp), p.dsp), p.fits,
             Cell(formats.cycles(p.bound_cycles), p.bound_cycles),
             Cell(formats.percent(p.efficiency), p.efficiency)] for p in data.front]
    knee = data.knee.trial if data.knee else None
    return table(cols, rows, ["knee" if p.trial == knee else "" for p in data.front],
                 text_cols=(1, 2, 3), wrap_cols=(2, 3), titles=titles)


def report_page(data: ReportData, images: Mapping[str, bytes]) -> str:
    """``index.html`` of one study's report; ``images`` maps figure names to PNG bytes."""
    statuses = ", ".join(f"{k} {v}" for k, v in data.statuses.items())
    ref = data.reference
    ref_line = (f"{ref.hw_name}: {formats.area(ref.area_mm2)} mm², best measured "
                f"{formats.ms(ref.latency_ms)} ms (trial {ref.trial})"
                if ref.latency_ms is not None
                else f"{ref.hw_name}: {formats.area(ref.area_mm2)} mm² (not run in this study)")
    picks = []
    for label, p in (("fastest", data.fastest), ("smallest", data.smallest),
                     ("knee", data.knee)):
        if p is not None:
            export = shell_command(["vtatune", "export", data.study, "--pick", label])
            picks.append(f"<li>{label}: trial {p.trial}, <code>{escape(p.hw_name)}</code>, "
                         f"{formats.cycles(p.cycles)} cycles = {formats.ms(p.latency_ms)} ms, "
                         f"{formats.area(p.area_mm2)} mm²{escape(pick_stock(p))} — "
                         f"<code>{escape(export)}</code></li>")
    hv = ("–" if data.ref_point is None else
          f"{formats.hypervolume(data.hypervolume)} (reference point "
          f"{formats.area(data.ref_point[0])} mm², "
          f"{formats.ms(data.ref_point[1])} ms)")
    body = [
        f"<h1>vtatune report: {escape(data.study)}</h1>",
        f'<p class="meta">{escape(data.workload)} on {escape(data.board)} at '
        f"{data.clock_mhz:g} MHz · objective {escape(data.objective)} · sampler "
        f"{escape(data.sampler)}</p>",
        f'<p class="meta">{data.n_trials} trials, {data.n_feasible} feasible '
        f"({escape(statuses)}) · front {len(data.front)} points · hypervolume {hv}</p>",
        f'<p class="meta">reference design: {escape(ref_line)}</p>',
        timing_note(data),
        "<ul>" + "".join(picks) + "</ul>" if picks else "<p>The front is empty: no feasible "
        "trial.</p>",
        "<h2>Pareto front (area vs latency; LUT and BRAM vs latency)</h2>",
        image(images["pareto"], "Pareto front") if "pareto" in images else "",
        f"<h2>Front table ({len(data.front)} points; knee highlighted; click a column to "
        "sort)</h2>",
        front_table(data) if data.front else "<p>empty front</p>",
        f'<p class="note">{escape(formats.HW_NAME_LEGEND)}; shipped configs keep their '
        "file names (<code>default</code> is VTA's 1x16x16 Pynq design). bound = the larger "
        "physical lower bound (compute or memory roofline) in cycles; eff. = bound / cycles. "
        "Knee: the front point closest to the ideal point (least area, least latency) in log "
        "area and log latency. " + _HV_NOTE + " Files: pareto.png, pareto.svg, "
        "convergence.png, params.png, front.csv, trials.csv.</p>",
        "<h2>Convergence</h2>",
        image(images["convergence"], "convergence") if "convergence" in images else "",
        "<h2>Parameters and latency</h2>",
        image(images["params"], "parameters") if "params" in images else "",
        *(["<h2>Energy (area vs accelerator energy; the knee's energy by component)</h2>",
           image(images["energy"], "energy"),
           '<p class="note">Energy per call from the energy model (estimates from its '
           "constants unless the board's power was calibrated): the accelerator's (what the "
           "design changes) and the board's (with the processor and board's baseline power). "
           "Files: energy.png, energy.svg.</p>"] if "energy" in images else []),
    ]
    return page(f"vtatune report: {data.study}", "\n".join(body))


def timing_note(data: Any) -> str:
    """A paragraph naming the front's designs whose times are extrapolated from the board's
    timing profile (``timing_profiles.domain``); '' when none is."""
    from vtatune.hardware.timing_profiles import domain, domain_line, kind_of

    kind = kind_of(str(data.workload))
    lines = [domain_line(domain(data.board, p.hw, (kind,) if kind else ()).as_dict())
             for p in data.front]
    out = [s for s in lines if s]
    if not out:
        return ""
    return (f'<p class="note">{escape(out[0])} — {len(out)} of the {len(lines)} front '
            "designs.</p>")


_HV_NOTE = ("Hypervolume: the share of a box, in log area and log latency, running from the "
            "ideal point of the front(s) to 10% beyond their nadir, that the front dominates "
            "(0..1).")


def compare_page(data: CompareData, png: bytes) -> str:
    """``index.html`` of a comparison: the figure and one sortable row per study."""
    cols = ["study", "sampler", "trials", "feasible", "best cycles", "best ms", "front size",
            "hypervolume"]

    rows = [[s.study, s.sampler, s.n_trials, s.n_feasible,
             Cell(formats.cycles(s.best_cycles), s.best_cycles),
             Cell(formats.ms(s.best_ms), s.best_ms),
             len(s.front), Cell(formats.hypervolume(s.hypervolume), s.hypervolume)]
            for s in data.series]
    ref = ("–" if data.ref_point is None else
           f"{formats.area(data.ref_point[0])} mm², {formats.ms(data.ref_point[1])} ms")
    body = [f"<h1>vtatune compare: {escape(', '.join(s.study for s in data.series))}</h1>",
            f'<p class="meta">{escape(data.workload)} on {escape(data.board)} at '
            f"{data.clock_mhz:g} MHz · hypervolumes in one shared box (reference point "
            f"{escape(ref)})</p>",
            image(png, "comparison"), table(cols, rows, text_cols=(0, 1)),
            f'<p class="note">{_HV_NOTE}</p>']
    return page("vtatune compare", "\n".join(body))


# ---- network studies: designs with their layers ----------------------------------------

def network_front_table(data: ReportData) -> str:
    cols = ["trial", "hardware", "stock VTA", "area (mm²)", "latency (ms)", "accel (ms)",
            "host (ms)", "cycles", "bound (ms)", "of bound (%)"]
    nets = [m.network for m in data.networks]
    if nets:  # several networks: latency is the weighted sum; each network's own after it
        cols[4] = "weighted sum (ms)"
        cols[5:5] = [f"{n} (ms)" for n in nets]
    cols += [f"{n} (%)" for n in data.layer_names]
    rows = []
    for p in data.front:
        shares = {la.name: None if la.share is None else 100 * la.share for la in p.layers}
        mine = {n.network: n.latency_ms for n in p.networks}
        rows.append([p.trial, p.hw_name, stock_cell(p), p.area_mm2, p.latency_ms,
                     *[mine.get(n) for n in nets],
                     p.accelerator_ms, p.host_ms, p.cycles, p.bound_ms,
                     None if p.efficiency is None else 100 * p.efficiency,
                     *[shares.get(n) for n in data.layer_names]])

    in_ms = [cols.index(c) for c in ("accel (ms)", "host (ms)", "bound (ms)")] + [
        4, *range(5, 5 + len(nets))]
    rows = [_ms_cells(r, in_ms) for r in rows]
    knee = data.knee.trial if data.knee else None
    titles = ["trial number", "hardware design",
              "stock VTA (apache/tvm-vta as it is) builds the design; else why not",
              "area in mm²",
              "network latency in ms per run, end to end: the accelerator's time plus the "
              "host's" if not nets else f"the {WEIGHTED_SUM} (the objective), end to end",
              *[f"{n}'s latency in ms per run (weight {m.weight:g})"
                for n, m in zip(nets, data.networks, strict=True)],
              "the accelerator's part", "the host's part", "accelerator cycles",
              "the network's physical lower bound in ms",
              "lower bound / the accelerator's time (bound cycles / cycles)",
              *[f"share of {'its' if nets else 'the'} network's latency spent in {n}"
                for n in data.layer_names]]
    return table(cols, rows, ["knee" if p.trial == knee else "" for p in data.front],
                      text_cols=(1, 2), wrap_cols=(2,), titles=titles)


def layers_table(p: DesignPoint) -> str:
    cols = ["layer", "count", "ms per run", "ms in all", "share (%)", "of bound (%)",
            "evaluations", "knobs"]
    rows = [[la.name, la.count, la.latency_ms, la.total_ms,
             None if la.share is None else Cell(formats.percent_value(la.share), la.share),
             None if la.efficiency is None else Cell(formats.percent_value(la.efficiency),
                                                     la.efficiency), la.trials,
             ", ".join(f"{k}={v}" for k, v in sorted(la.knobs.items()))] for la in p.layers]
    in_ms = [cols.index(c) for c in ("ms per run", "ms in all")]
    return table(cols, [_ms_cells(r, in_ms) for r in rows], text_cols=(0, 7))


def _ms_cells(row: list[Any], columns: Sequence[int]) -> list[Any]:
    """``row`` with its millisecond values at ``columns`` as ``formats.ms`` shows them (three
    decimals, as everywhere), still sorted by the raw value."""
    return [Cell(formats.ms(v), v) if k in columns and isinstance(v, float) else v
            for k, v in enumerate(row)]


def network_report_page(data: ReportData, images: Mapping[str, bytes]) -> str:
    """A network study's page: front, per-layer breakdown, front table, knee's layers."""
    statuses = ", ".join(f"{k} {v}" for k, v in data.statuses.items())
    picks = []
    for label, p in (("fastest", data.fastest), ("smallest", data.smallest),
                     ("knee", data.knee)):
        if p is not None:
            picks.append(f"<li>{label}: trial {p.trial}, <code>{escape(p.hw_name)}</code>, "
                         f"{formats.ms(p.latency_ms)} ms ({p.cycles:,} cycles), "
                         f"{formats.area(p.area_mm2)} mm²{escape(pick_stock(p))} "
                         f"— <code>vtatune export {escape(data.study)} --pick {label}</code>"
                         "</li>")
    hv = ("–" if data.ref_point is None else
          f"{formats.hypervolume(data.hypervolume)} of the log box (reference point "
          f"{formats.area(data.ref_point[0])} mm², {formats.ms(data.ref_point[1])} ms)")
    body = [
        f"<h1>vtatune report: {escape(data.study)}</h1>",
        f'<p class="meta">network {escape(str(data.network))} on {escape(data.board)} at '
        f"{data.clock_mhz:g} MHz · objective {escape(data.objective)} · sampler "
        f"{escape(data.sampler)} · {data.evaluated:,} layer candidates evaluated, "
        f"{data.cached:,} served from the store</p>",
        f'<p class="meta">{formats.counted(data.n_trials, "design")}, {data.n_feasible} '
        'feasible '
        f"({escape(statuses)}) · front {formats.counted(len(data.front), 'design')} · "
        f"hypervolume {hv}</p>",
        *(['<p class="meta">networks: ' + ", ".join(
            f"{escape(m.network)} (weight {m.weight:g})" for m in data.networks)
            + f"; latency is the {WEIGHTED_SUM} ("
            + " + ".join(f"{m.weight:g} × {escape(m.network)}" for m in data.networks)
            + ")</p>", *[f'<p class="meta">{escape(m.network)}: '
                         f"{escape(host_ops_text(m.host_ops))}</p>" for m in data.networks]]
          if data.networks else
          [f'<p class="meta">{escape(host_ops_text(data.host_ops))}</p>']),
        "<ul>" + "".join(picks) + "</ul>" if picks else "<p>The front is empty.</p>",
        "<h2>Pareto front (area vs network latency)</h2>",
        image(images["front"], "front"),
        "<h2>Where the time goes (front designs)</h2>",
        image(images["breakdown"], "breakdown"),
        f"<h2>Front table ({formats.counted(len(data.front), 'design')}; knee highlighted; "
        "per-layer shares of "
        "the network's latency)</h2>",
        network_front_table(data) if data.front else "<p>empty front</p>",
    ]
    if data.knee is not None:
        body += [f"<h2>Knee design, trial {data.knee.trial}: every layer</h2>",
                 layers_table(data.knee)] if not data.networks else [
            f"<h2>Knee design, trial {data.knee.trial}: every network, every layer</h2>",
            *[f"<h3>{escape(n.network)} (weight {n.weight:g}): {formats.ms(n.latency_ms)} ms "
              f"per run; shares of its latency</h3>" + layers_table(replace(data.knee,
                                                                           networks=(n,)))
              for n in data.knee.networks]]
    if "energy" in images:
        body += ["<h2>Energy (area vs the accelerator's energy per inference; the knee's "
                 "energy by layer)</h2>", image(images["energy"], "energy"),
                 '<p class="note">Energy per inference from the energy model: the count-'
                 "weighted sum of the layers' picks (estimates from its constants unless the "
                 "board's power was calibrated). Files: energy.png, energy.svg.</p>"]
    body += ["<h2>Convergence</h2>", image(images["convergence"], "convergence"),
             '<p class="meta">latency = end to end per network run: every layer run is one '
             "call, the accelerator's time plus the host's (accel + host). of bound = the "
             "network's physical lower bound (each layer's compute or memory roofline × its "
             "count) / the accelerator's time (bound cycles / cycles, as everywhere). Files: "
             "front.png/.svg, breakdown.png/.svg, convergence.png, front.csv, designs.csv.</p>"]
    return page(f"vtatune report: {data.study}", "\n".join(body))


def network_compare_page(data: CompareData, png: bytes) -> str:
    """A comparison of network studies."""
    cols = ["study", "sampler", "designs", "feasible", "best (ms)", "front size",
            "hypervolume", "layer evaluations"]
    rows = [_ms_cells([s.study, s.sampler, s.n_trials, s.n_feasible, s.best_ms, len(s.front),
                       s.hypervolume, s.evaluated], [cols.index("best (ms)")])
            for s in data.series]
    body = [f"<h1>vtatune compare: {escape(', '.join(s.study for s in data.series))}</h1>",
            f'<p class="meta">network {escape(str(data.network))} on {escape(data.board)} at '
            f"{data.clock_mhz:g} MHz · "
            + (f"latency: the {WEIGHTED_SUM} ("
               + " + ".join(f"{m.weight:g} × {escape(m.network)}" for m in data.networks)
               + ") · " if data.networks else "")
            + "hypervolume: share of one box in log area and log "
            "network latency, from the fronts' ideal point to 10% beyond their nadir</p>",
            image(png, "comparison"), table(cols, rows, text_cols=(0, 1))]
    return page("vtatune compare", "\n".join(body))
