"""Figures of a report, drawn from ``data``'s records only (no computation of their own).

Every function returns a matplotlib ``Figure`` built on the non-interactive Agg canvas; nothing
is shown. Conventions: latency in ms per call, end to end (accelerator + host), area in mm^2;
feasible points solid, infeasible ones faint in a side strip (they have no latency); the front
is a step line; VTA's default 1x16x16 is a black star (or a dotted line at its area when the
study did not run it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from vtatune import formats
from vtatune.reports.data import CompareData, DesignPoint, ReportData
from vtatune.statuses import Status

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: A log axis when the values span more than this factor.
LOG_SPAN = 8.0

#: Faint markers of the infeasible statuses in the side strip.
_STATUS_COLORS = {Status.NO_FIT: "tab:red", Status.INVALID: "tab:orange",
                  Status.FAILED: "tab:purple", Status.TIMEOUT: "tab:brown",
                  Status.HW_INVALID: "tab:gray"}
FEASIBLE_COLOR = "tab:blue"
_UNITS = {"area_mm2": "an area", "lut": "a count", "bram": "a count"}
FRONT_COLOR = "tab:red"



#: Longest name shown in a figure (characters); the HTML and CSV files hold the whole name.
NAME_CHARS = 60


def _n(text: object) -> str:
    """A name for a figure: controls made visible (SVG is XML), cut to ``NAME_CHARS``."""
    from vtatune.escaping import terminal, truncate

    return truncate(terminal(text), NAME_CHARS)


def _plain_text(draw: Callable[..., Figure]) -> Callable[..., Figure]:
    """Build the figure with mathtext off: names are drawn as written, and a study named
    ``$x$`` or ``a $ b`` can neither be typeset nor crash the mathtext parser."""

    @functools.wraps(draw)
    def wrapped(*args: Any, **kwargs: Any) -> Figure:
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return wrapped

def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    # A bare Figure draws on the Agg canvas when saved: no pyplot, no global state, no GUI.
    return Figure(figsize=(width, height), layout="constrained")


def _log_if_spread(ax: Axes, axis: str, values: Sequence[float]) -> None:
    """A log axis labelled with plain numbers (1, 2, 5 per decade) when values spread wide."""

    vals = [v for v in values if v is not None and v > 0]
    if vals and max(vals) / min(vals) > LOG_SPAN:
        _log_axis(ax, axis)


def _log_axis(ax: Axes, axis: str) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    target.set_major_formatter(FuncFormatter(_plain))
    target.set_minor_formatter(NullFormatter())


def _plain(v: float, _pos: int | None = None) -> str:
    if v >= 1e4:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def _thousands(ax: Axes) -> None:
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))


def _step_front(ax: Axes, xs: Sequence[float], ys: Sequence[float], **kw: Any) -> None:
    """The front as a staircase: sorted by latency, each point's area holds until the next."""
    pairs = sorted(zip(xs, ys, strict=True))
    if not pairs:
        return
    sx = [p[0] for p in pairs]
    sy = [p[1] for p in pairs]
    ax.step(sx, sy, where="post", **kw)


def _text_width_pt(text: str, fontsize: float) -> float:
    """The width of ``text`` drawn at ``fontsize`` (points), as matplotlib lays it out."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    return max(text_to_path.get_text_width_height_descent(
        line, FontProperties(size=fontsize), ismath=False)[0] for line in text.split("\n"))


def _wrap(text: str, width_pt: float, fontsize: float) -> str:
    """``text`` broken between words into lines at most ``width_pt`` wide at ``fontsize``."""
    lines: list[str] = []
    for words in (para.split(" ") for para in text.split("\n")):
        line = ""
        for w in words:
            trial = f"{line} {w}" if line else w
            if line and _text_width_pt(trial, fontsize) > width_pt:
                lines.append(line)
                line = w
            else:
                line = trial
        lines.append(line)
    return "\n".join(lines)


def _integer_ticks(ax: Axes) -> None:
    """Whole numbers only on the x axis (trials or designs done: there is no 1.5th)."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


#: Points between an axes' bottom and a legend below it: room for the tick labels and the
#: axis label (10 pt each with their pads).
_BELOW_AXIS_PT = 40


def _legend_below(ax: Axes, **kw: Any) -> None:
    """The axes' legend under its x axis label, outside the plot: it never covers a point, a
    line or a tick label, however the data falls (constrained layout makes room for it)."""
    from matplotlib.transforms import ScaledTranslation

    shift = ScaledTranslation(0, -_BELOW_AXIS_PT / 72, ax.figure.dpi_scale_trans)
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, 0.0),
              bbox_transform=ax.transAxes + shift, borderaxespad=0.0, **kw)


# ---- pareto.png ------------------------------------------------------------------------------

@_plain_text
def pareto_figure(data: ReportData) -> Figure:
    """Area vs latency (top) and LUT and BRAM vs latency (bottom), with the board's capacity."""
    fig = _figure(13.0, 9.5)
    grid = fig.add_gridspec(2, 4, width_ratios=[6, 1, 6, 1], height_ratios=[1.25, 1])
    main = fig.add_subplot(grid[0, 0:3])
    main_strip = fig.add_subplot(grid[0, 3], sharey=main)
    lut = fig.add_subplot(grid[1, 0])
    lut_strip = fig.add_subplot(grid[1, 1], sharey=lut)
    bram = fig.add_subplot(grid[1, 2])
    bram_strip = fig.add_subplot(grid[1, 3], sharey=bram)
    fig.suptitle(f"{_n(data.study)}: area vs latency — {_n(data.workload)} on {_n(data.board)} "
                 f"@ {data.clock_mhz:g} MHz ({data.n_feasible} of {data.n_trials} trials "
                 "feasible)", fontsize=12)
    kinds = _kinds(data.points)
    views = [(main, main_strip, "area_mm2", "area (mm²)", "Area vs latency"),
             (lut, lut_strip, "lut", f"{kinds[0].upper()} (count)",
              f"{kinds[0].upper()} vs latency"),
             (bram, bram_strip, "bram", f"{kinds[1].upper()} (blocks)",
              f"{kinds[1].upper()} vs latency")]
    for ax, strip, attr, ylabel, title in views:
        _pareto_view(ax, data, attr, ylabel, title, main=ax is main)
        _infeasible_strip(strip, data.points, attr, ax.get_ylim())
        if attr != "area_mm2":
            _thousands(ax)
    fig.supxlabel(f"{formats.HW_NAME_LEGEND}.\nKnee: the front point closest to the ideal "
                  "point (least area, least latency) in log area and log latency.", x=0.005,
                  ha="left", fontsize=7, color="dimgray")
    cap = data.board_capacity
    for ax, kind in ((lut, kinds[0]), (bram, kinds[1])):
        if kind in cap:
            ax.axhline(cap[kind], color="black", lw=1, ls="--")
            ax.annotate(f"{_n(data.board)}: {cap[kind]:,.0f} {kind.upper()}", (0.01, cap[kind]),
                        xycoords=("axes fraction", "data"), va="bottom", fontsize=8)
    return fig


def _ref_value(attr: str, v: float) -> str:
    return f"{formats.area(v)} mm²" if attr == "area_mm2" else formats.count(v)


def _kinds(points: Sequence[DesignPoint]) -> tuple[str, str]:
    for p in points:
        if p.lut is not None:
            return p.logic_kind, p.bram_kind
    return "lut", "bram36"


def _pareto_view(ax: Axes, data: ReportData, attr: str, ylabel: str, title: str,
                 main: bool) -> None:
    feas = [p for p in data.points if p.feasible and getattr(p, attr) is not None]
    ax.set_title(title, fontsize=11, loc="left")
    ax.set_xlabel("latency (ms per call, end to end)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.25)
    if not feas:
        ax.text(0.5, 0.5, "no feasible trial: the front is empty", transform=ax.transAxes,
                ha="center", va="center", fontsize=11, color="dimgray")
        return
    xs = [p.latency_ms for p in feas]
    ys = [getattr(p, attr) for p in feas]
    ax.scatter(xs, ys, s=16, color=FEASIBLE_COLOR, alpha=0.85, lw=0,
               label=f"feasible ({len(feas)})", zorder=2)
    front = [p for p in data.front if getattr(p, attr) is not None]
    fx = [p.latency_ms for p in front]
    fy = [getattr(p, attr) for p in front]
    _step_front(ax, fx, fy, color=FRONT_COLOR, lw=1.6, zorder=3,
                label=f"Pareto front, area vs latency ({len(front)})")
    ax.scatter(fx, fy, s=34, color=FRONT_COLOR, edgecolor="black", lw=0.6, zorder=4)
    ref = data.reference
    ref_y = {"area_mm2": ref.area_mm2, "lut": ref.lut, "bram": ref.bram}[attr]
    all_x = [*xs]
    if ref.latency_ms is not None:
        ax.scatter([ref.latency_ms], [ref_y], marker="*", s=220, color="black", zorder=5,
                   label=f"VTA {_n(ref.hw_name)} (trial {ref.trial})")
        ax.annotate(f"VTA {_n(ref.hw_name)}", (ref.latency_ms, ref_y), xytext=(9, -3),
                    textcoords="offset points", fontsize=7, va="top")
        all_x.append(ref.latency_ms)
    else:
        ax.axhline(ref_y, color="black", lw=1, ls=":", zorder=1,
                   label=f"VTA {_n(ref.hw_name)} (area only; not in the study)")
        # every view labels its own line (only the main view has a legend)
        ax.annotate(f"VTA {_n(ref.hw_name)}: {_ref_value(attr, ref_y)} (not run in this study)",
                    (0.99, ref_y), xycoords=("axes fraction", "data"), ha="right",
                    va="bottom", fontsize=7)
    # the feasible designs and the reference set the scale; taller infeasible ones are
    # clipped to the top of their strip
    kind = {"lut": feas[0].logic_kind, "bram": feas[0].bram_kind}.get(attr, "")
    top = max([*ys, ref_y, data.board_capacity.get(kind, 0.0)])
    every = [v for p in data.points if (v := getattr(p, attr)) is not None]
    low = min([*every, ref_y])
    margin = 0.08 * (top - low) if top > low else 0.1 * top
    ax.set_ylim(max(0.0, low - margin), top + margin)
    _log_if_spread(ax, "x", all_x)
    if data.knee is not None and getattr(data.knee, attr) is not None:
        k = data.knee
        ax.scatter([k.latency_ms], [getattr(k, attr)], s=140, facecolor="none",
                   edgecolor="black", lw=1.5, zorder=6,
                   label=f"knee: trial {k.trial}" if main else None)
        text = (f"knee: trial {k.trial}\n{_n(k.hw_name)}\n{formats.ms(k.latency_ms)} ms, "
                f"{formats.area(k.area_mm2)} mm²") if main else "knee"
        # the label goes towards the middle of the axes, so it never covers the title or
        # leaves the plot when the knee sits near an edge
        ax.get_xlim()  # settle the autoscaled limits first
        fx, fy = ax.transAxes.inverted().transform(
            ax.transData.transform((k.latency_ms, getattr(k, attr))))
        dx, dy = (-18 if fx > 0.55 else 18), (-22 if fy > 0.55 else 22)
        ax.annotate(text, (k.latency_ms, getattr(k, attr)), xytext=(dx, dy),
                    textcoords="offset points", fontsize=8,
                    ha="right" if dx < 0 else "left", va="top" if dy < 0 else "bottom",
                    arrowprops={"arrowstyle": "->", "lw": 0.8},
                    bbox={"boxstyle": "round", "fc": "white", "alpha": 0.85})
    if main:
        ax.legend(loc="best", fontsize=8, framealpha=0.9)


def _infeasible_strip(ax: Axes, points: Sequence[DesignPoint], attr: str,
                      ylim: tuple[float, float]) -> None:
    """Infeasible candidates (no latency), faint, one column per status; those above the
    main view's range sit on the top edge as triangles, counted in the column label."""
    import numpy as np

    bad = [p for p in points if not p.feasible and getattr(p, attr) is not None]
    order = list(_STATUS_COLORS)
    statuses = sorted({p.status for p in bad},
                      key=lambda s: order.index(s) if s in order else len(order))
    rng = np.random.default_rng(0)  # jitter only; fixed so the figure is reproducible
    top = ylim[1]
    labels = []
    for i, st in enumerate(statuses):
        ys = [getattr(p, attr) for p in bad if p.status == st]
        inside = [y for y in ys if y <= top]
        above = len(ys) - len(inside)
        color = _STATUS_COLORS.get(st, "gray")
        ax.scatter(i + rng.uniform(-0.25, 0.25, len(inside)), inside, s=12, alpha=0.3, lw=0,
                   color=color)
        if above:
            ax.scatter(i + rng.uniform(-0.25, 0.25, above), [top * 0.985] * above, s=18,
                       marker="^", alpha=0.3, lw=0, color=color, clip_on=False)
            # the count sits inside the strip, under its triangles (a tick label would be
            # wider than the strip)
            ax.annotate(f"{above}▲", (i, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(0, -13), textcoords="offset points", ha="center", va="top",
                        fontsize=7, color="dimgray")
        labels.append(f"{st}\n{len(ys)}")
    unplaced = sum(1 for p in points if not p.feasible and getattr(p, attr) is None)
    ax.set_xticks(range(len(statuses)))
    ax.set_xticklabels(labels, fontsize=7)
    if not statuses:
        ax.text(0.5, 0.5, "none", transform=ax.transAxes, ha="center", fontsize=8,
                color="dimgray")
    ax.set_xlim(-0.6, max(len(statuses), 1) - 0.4)
    ax.set_ylim(*ylim)
    # impossible hardware has no area model either: counted, not drawn
    extra = f"\n+{unplaced} without\n{_UNITS.get(attr, attr)}" if unplaced else ""
    if any(getattr(p, attr) > top for p in bad):
        extra += "\n▲ above"
    ax.set_title("infeasible\n(no latency)" + extra, fontsize=7)
    ax.tick_params(axis="y", labelleft=False)
    ax.grid(True, axis="y", alpha=0.25)


# ---- convergence.png -------------------------------------------------------------------------

@_plain_text
def convergence_figure(data: Any, noun: str = "trial",
                       latency_label: str = "latency (ms per call, end to end)",
                       latency_title: str = "Best latency", note: str = "") -> Figure:
    """Best latency so far (with every feasible trial faint) and hypervolume vs trial: the
    one convergence figure of every study (``data``: a ``ReportData`` or a network's
    ``ReportData``; ``noun``: what its trials are, ``note``: added to the title)."""
    fig = _figure(12.0, 4.6)
    lat, hv = fig.subplots(1, 2)
    conv = data.convergence
    fig.suptitle(f"{_n(data.study)}: convergence ({_n(data.sampler)}, {data.n_trials} "
                 f"{noun}s{note})", fontsize=12)
    feas = [p for p in data.points if p.feasible]
    lat.scatter([p.trial + 1 for p in feas], [p.latency_ms for p in feas], s=10, alpha=0.3,
                color=FEASIBLE_COLOR, lw=0, label=f"feasible {noun}")
    xs = [x for x, b in zip(conv.trials, conv.best_latency_ms, strict=True) if b is not None]
    ys = [b for b in conv.best_latency_ms if b is not None]
    if xs:
        lat.step([*xs, conv.trials[-1]], [*ys, ys[-1]], where="post", color=FRONT_COLOR,
                 lw=1.8, label=f"best so far ({formats.ms(ys[-1])} ms)")
        _log_if_spread(lat, "y", [p.latency_ms for p in feas])
    else:
        lat.text(0.5, 0.5, f"no feasible {noun} yet", transform=lat.transAxes, ha="center")
    lat.set_title(latency_title, loc="left", fontsize=11)
    lat.set_xlabel(f"{noun}s done")
    lat.set_ylabel(latency_label)
    lat.grid(True, which="both", alpha=0.25)
    lat.legend(fontsize=8)
    hv.step(conv.trials, conv.hypervolume, where="post", color="tab:green", lw=1.8,
            label=f"final {formats.hypervolume(data.hypervolume)}")
    hv.set_title("Hypervolume of the front (log area × log latency)", loc="left", fontsize=11)
    hv.set_xlabel(f"{noun}s done")
    ref = data.ref_point
    hv.set_ylabel("share of the box dominated")
    if ref is not None:
        hv.text(0.98, 0.04, f"box: the final front's ideal point to 10% beyond its nadir\n"
                f"reference point {formats.area(ref[0])} mm², {formats.ms(ref[1])} ms",
                transform=hv.transAxes, ha="right", fontsize=8, color="dimgray")
    hv.set_ylim(0, 1.05)  # a share of the box: the whole 0..1 scale
    hv.grid(True, alpha=0.25)
    hv.legend(fontsize=8, loc="upper left")
    for ax in (lat, hv):
        _integer_ticks(ax)
    return fig


# ---- params.png ------------------------------------------------------------------------------

@_plain_text
def params_figure(data: ReportData) -> Figure:
    """What each parameter does to latency and to area. First the importance of every
    parameter (eta^2 of log latency, and of log area for hardware parameters); then latency
    per value of each parameter and knob, most important first; then area per value of each
    hardware parameter (knobs do not change the hardware). Feasible trials as dots, the
    median as a bar, feasible / all trials under each value."""
    import numpy as np

    rels = list(data.params)
    hw_rels = sorted((r for r in rels if r.kind == "hardware"),
                     key=lambda r: -(r.area_importance or 0.0))
    cols = 4
    lat_rows = -(-(len(rels) + 1) // cols)
    area_rows = -(-len(hw_rels) // cols)
    fig = _figure(3.6 * cols, 3.1 * (lat_rows + area_rows))
    grid = fig.add_gridspec(lat_rows + area_rows, cols)
    fig.suptitle(f"{_n(data.study)}: latency (ms per call, end to end) and area (mm²) by "
                 "hardware parameter and schedule knob — dots: feasible trials, bar: median, "
                 "below each value: feasible / all trials", fontsize=11)
    _importance_panel(fig.add_subplot(grid[0, 0]), data, rels)
    rng = np.random.default_rng(0)
    latencies = [x for r in rels for v in r.values for x in v.latencies_ms]
    areas = [x for r in hw_rels for v in r.values for x in v.areas_mm2]
    for k, rel in enumerate(rels, start=1):
        ax = fig.add_subplot(grid[k // cols, k % cols])
        _value_panel(ax, rel, [v.latencies_ms for v in rel.values],
                     [v.median_ms for v in rel.values], latencies, "latency (ms)",
                     rel.importance, rng)
    for k, rel in enumerate(hw_rels):
        ax = fig.add_subplot(grid[lat_rows + k // cols, k % cols])
        _value_panel(ax, rel, [v.areas_mm2 for v in rel.values],
                     [v.median_mm2 for v in rel.values], areas, "area (mm²)",
                     rel.area_importance, rng, what="area")
    return fig


def _importance_panel(ax: Axes, data: ReportData, rels: Sequence[Any]) -> None:
    import numpy as np

    named = [r for r in rels if r.importance is not None or r.area_importance is not None]
    named = named[::-1]  # most important on top
    y = np.arange(len(named))
    ax.barh(y + 0.2, [r.importance or 0.0 for r in named], height=0.4,
            color=[FEASIBLE_COLOR if r.kind == "hardware" else "tab:orange" for r in named],
            label="latency")
    ax.barh(y - 0.2, [r.area_importance or 0.0 for r in named], height=0.4,
            color="tab:green", label="area (hardware only)")
    ax.set_yticks(y)
    ax.set_yticklabels([_n(r.label) for r in named])
    ax.set_xlim(0, 1)
    n_feas = sum(p.feasible for p in data.points)
    ax.set_title(f"Importance: η² of log latency / area ({n_feas} feasible)", loc="left",
                 fontsize=10)
    ax.set_xlabel("share of variance explained (latency: blue hardware, orange knob)",
                  fontsize=7)
    ax.tick_params(labelsize=8)
    if named:
        ax.legend(fontsize=7, loc="lower right")
    else:
        ax.text(0.5, 0.5, "too few feasible trials", ha="center", transform=ax.transAxes)


#: Tick labels of the parameter panels (points), the width of a panel's plot area (points:
#: a 3.6-inch column less its y labels) and a character's width at that size (points, the
#: widest digits of DejaVu Sans are 0.64 em) with a gap between neighbours.
TICK_FONT_PT = 7
PANEL_WIDTH_PT = 205.0
_CHAR_EM = 0.64
_TICK_GAP_PT = 6.0


def _crowded(labels: Sequence[str], width_pt: float) -> bool:
    """Whether ``labels``, one per tick over ``width_pt``, would touch side by side (then
    they are turned upright)."""
    if not labels:
        return False
    widest = max(len(line) for lab in labels for line in lab.split("\n"))
    return widest * _CHAR_EM * TICK_FONT_PT + _TICK_GAP_PT > width_pt / len(labels)


def _value_panel(ax: Axes, rel: Any, groups: Sequence[Sequence[float]],
                 medians: Sequence[float | None], every: Sequence[float], ylabel: str,
                 importance: float | None, rng: Any, what: str = "latency") -> None:
    """Dots per value of ``rel`` with the median as a bar, on one scale shared by all the
    panels of the same quantity (``every``)."""
    color = ("tab:green" if what == "area" else
             FEASIBLE_COLOR if rel.kind == "hardware" else "tab:orange")
    for i, (ys, med) in enumerate(zip(groups, medians, strict=True)):
        ax.scatter(i + rng.uniform(-0.18, 0.18, len(ys)), list(ys), s=9, alpha=0.55, lw=0,
                   color=color)
        if med is not None:
            ax.hlines(med, i - 0.3, i + 0.3, color="black", lw=1.6)
    ax.set_xticks(range(len(rel.values)))
    labels = [f"{_n(v.label)}\n{v.n_feasible}/{v.n_trials}" for v in rel.values]
    ax.set_xticklabels(labels, fontsize=TICK_FONT_PT,
                       rotation=90 if _crowded(labels, PANEL_WIDTH_PT) else 0)
    imp_txt = "" if importance is None else f"  η²={importance:.2f}"
    ax.set_title(f"{_n(rel.label)}{' — area' if what == 'area' else ''}{imp_txt}", loc="left",
                 fontsize=10)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(True, axis="y", which="both", alpha=0.25)
    ax.set_xlim(-0.6, len(rel.values) - 0.4)
    _log_if_spread(ax, "y", every)
    if every:
        lo, hi = min(every), max(every)
        if ax.get_yscale() == "log":
            pad = (hi / lo) ** 0.06
            ax.set_ylim(lo / pad, hi * pad)
        else:
            ax.set_ylim(0, hi * 1.08)
    if not any(groups):
        ax.text(0.5, 0.5, "no feasible trial", ha="center", transform=ax.transAxes,
                fontsize=8, color="dimgray")


# ---- compare.png -----------------------------------------------------------------------------

@_plain_text
def compare_figure(data: CompareData) -> Figure:
    """Fronts of several studies overlaid, best latency and hypervolume vs trial."""
    fig = _figure(16.0, 5.6 + 0.17 * len(data.series))  # (the legends below the panels)
    fr, lat, hv = fig.subplots(1, 3, width_ratios=[1.25, 1, 1])
    fig.suptitle(f"{_n(data.workload)} on {_n(data.board)} @ {data.clock_mhz:g} MHz: "
                 f"{len(data.series)} studies", fontsize=12)
    colors = [f"C{i % 10}" for i in range(len(data.series))]
    all_x: list[float] = []
    all_y: list[float] = []
    for s, color in zip(data.series, colors, strict=True):
        feas = [p for p in s.points if p.feasible and p.area_mm2 is not None]
        fr.scatter([p.latency_ms for p in feas], [p.area_mm2 for p in feas], s=8, alpha=0.2,
                   color=color, lw=0)
        fx = [p.latency_ms for p in s.front]
        fy = [p.area_mm2 for p in s.front]
        label = (f"{_n(s.study)}: HV {formats.hypervolume(s.hypervolume)}, {len(s.front)} on "
                 "front")
        if s.front:
            # the staircase runs on to the slowest feasible point of any study, so a front of
            # one point still shows the region it dominates
            right = max(p.latency_ms for t in data.series for p in t.points
                        if p.feasible)
            _step_front(fr, [*fx, right], [*fy, min(fy)], color=color, lw=1.8,
                        label=label)
            fr.scatter(fx, fy, s=26, color=color, edgecolor="black", lw=0.5, zorder=4)
        else:
            fr.plot([], [], color=color, label=f"{_n(s.study)}: no feasible trial (empty front)")
        all_x += [p.latency_ms for p in feas]
        all_y += [p.area_mm2 for p in feas]
        conv = s.convergence
        pts = [(x, b) for x, b in zip(conv.trials, conv.best_latency_ms, strict=True)
               if b is not None]
        if pts:
            lat.step([p[0] for p in pts] + [conv.trials[-1]],
                     [p[1] for p in pts] + [pts[-1][1]], where="post", color=color, lw=1.6,
                     label=f"{_n(s.study)} ({formats.ms(pts[-1][1])} ms)")
        hv.step(conv.trials, conv.hypervolume, where="post", color=color, lw=1.6,
                label=f"{_n(s.study)} ({formats.hypervolume(s.hypervolume)})")
    _log_if_spread(fr, "x", all_x)
    _log_if_spread(fr, "y", all_y)
    fr.set_title("Pareto fronts (faint: feasible trials)", loc="left", fontsize=11)
    fr.set_xlabel("latency (ms per call, end to end)")
    fr.set_ylabel("area (mm²)")
    _legend_below(fr, fontsize=8)
    lat.set_title("Best latency so far", loc="left", fontsize=11)
    lat.set_xlabel("trials done")
    lat.set_ylabel("latency (ms)")
    _log_axis(lat, "y")
    hv.set_title("Hypervolume (one box for all)", loc="left", fontsize=11)
    hv.set_xlabel("trials done")
    hv.set_ylabel("share of the box dominated")
    # the whole 0..1 scale (a share of one box), with room above for the box note
    hv.set_ylim(0, 1.2)
    hv.set_yticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    if data.ref_point is not None:
        hv.text(0.02, 0.98, "box: log area × log latency, the fronts' ideal point\nto 10% "
                f"beyond their nadir; reference point {formats.area(data.ref_point[0])} mm², "
                f"{formats.ms(data.ref_point[1])} ms", transform=hv.transAxes,
                ha="left", va="top", fontsize=8, color="dimgray")
    for ax in (fr, lat, hv):
        ax.grid(True, which="both", alpha=0.25)
    for ax in (lat, hv):
        _integer_ticks(ax)
        if ax.get_legend_handles_labels()[0]:
            _legend_below(ax, fontsize=8)
    return fig


def to_bytes(fig: Figure, fmt: str = "png", dpi: int = 110) -> bytes:
    """The figure encoded as ``png`` or ``svg``."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, metadata=_metadata(fmt))
    return buf.getvalue()


def _metadata(fmt: str) -> dict[str, Any]:
    # No creation date or version stamps in the files.
    if fmt == "svg":
        return {"Date": None, "Creator": None}
    if fmt == "png":
        return {"Software": None}
    return {}


# ---- network studies: designs with their layers (latency in ms per network run, end to end;
# designs stopped early, ``dominated``, drawn at their lower bound as hollow grey markers) ----

#: What a network latency axis measures.
LATENCY_LABEL = "network latency (ms per run, end to end)"
#: The latency axis of a study of several networks: its objective.
WEIGHTED_LABEL = "weighted sum of the networks' latencies (ms, end to end)"


def _latency_label(data: ReportData | CompareData) -> str:
    return WEIGHTED_LABEL if data.networks else LATENCY_LABEL
#: Colours of the statuses that have no latency (counted in the side panel).
_NETWORK_STATUS_COLORS = {Status.DOMINATED: "tab:gray", Status.NO_FIT: "tab:red",
                          Status.NO_SCHEDULE: "tab:orange", Status.HW_INVALID: "silver"}


@_plain_text
def network_front_figure(data: ReportData) -> Figure:
    """Area vs network latency: every feasible design, the front, the knee, the dominated
    designs at their bound; a side panel counts the designs of every other status."""
    fig = _figure(12.5, 6.2)
    ax, side = fig.subplots(1, 2, width_ratios=[5, 1.3])
    fig.suptitle(f"{_n(data.study)}: network {_n(str(data.network))} on {_n(data.board)} @ "
                 f"{data.clock_mhz:g} MHz — {data.n_feasible} of {data.n_trials} designs "
                 "feasible", fontsize=12)
    feas = [p for p in data.points if p.feasible and p.area_mm2 is not None]
    ax.set_title("Area vs network latency" if not data.networks else
                 "Area vs the weighted sum of the networks' latencies", loc="left", fontsize=11)
    ax.set_xlabel(_latency_label(data))
    ax.set_ylabel("area (mm²)")
    ax.grid(True, which="both", alpha=0.25)
    xs = [float(p.latency_ms or 0.0) for p in feas]
    ax.scatter(xs, [p.area_mm2 for p in feas], s=18, color=FEASIBLE_COLOR, lw=0, alpha=0.85,
               label=f"designs, every layer tuned ({len(feas)})", zorder=2)
    dom = [p for p in data.points if p.status == Status.DOMINATED and p.bound_ms is not None]
    if dom:
        ax.scatter([p.bound_ms for p in dom], [p.area_mm2 for p in dom], s=22,
                   facecolor="none", edgecolor="tab:gray", lw=0.8, zorder=1,
                   label=f"stopped early: lower bound dominated ({len(dom)})")
    front = list(data.front)
    if front:
        fx = [float(p.latency_ms or 0.0) for p in front]
        fy = [float(p.area_mm2 or 0.0) for p in front]
        _step_front(ax, fx, fy, color=FRONT_COLOR, lw=1.6, zorder=3,
                    label=f"Pareto front ({len(front)})")
        ax.scatter(fx, fy, s=36, color=FRONT_COLOR, edgecolor="black", lw=0.6, zorder=4)
    else:
        ax.text(0.5, 0.5, "no feasible design: the front is empty", transform=ax.transAxes,
                ha="center", va="center", color="dimgray")
    _log_if_spread(ax, "x", xs + [float(p.bound_ms or 0.0) for p in dom])
    if data.knee is not None:
        k = data.knee
        ax.scatter([k.latency_ms], [k.area_mm2], s=150, facecolor="none", edgecolor="black",
                   lw=1.5, zorder=5, label=f"knee: trial {k.trial}")
        _label_inside(ax, float(k.latency_ms or 0.0), float(k.area_mm2 or 0.0),
                      f"knee: trial {k.trial}\n{_n(k.hw_name)}\n{formats.ms(k.latency_ms)} ms, "
                      f"{formats.area(k.area_mm2)} mm²")
    # the legend below the panel: inside, "best" may still cover the knee's label
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.11), ncol=2, fontsize=8,
              framealpha=0.9)
    counts = [(s, n) for s, n in data.statuses.items() if s != Status.OK]
    side.barh([s for s, _ in counts], [n for _, n in counts],
              color=[_NETWORK_STATUS_COLORS.get(s, "gray") for s, _ in counts])
    for i, (_, n) in enumerate(counts):
        side.text(n, i, f" {n}", va="center", fontsize=8)
    side.set_title("designs without a\nmeasured latency", fontsize=9)
    side.tick_params(labelsize=8)
    side.set_xlim(0, max([n for _, n in counts], default=1) * 1.35)
    if not counts:
        side.text(0.5, 0.5, "none", ha="center", transform=side.transAxes, color="dimgray")
        side.set_xticks([])
        side.set_yticks([])
    return fig


def _label_inside(ax: Any, x: float, y: float, text: str) -> None:
    """Annotate data point (x, y) with ``text`` on the side facing the panel's middle, so
    that the label stays inside the panel (clear of its title above) whatever the point."""
    ax.autoscale_view()
    fx, fy = ax.transAxes.inverted().transform(ax.transData.transform((x, y)))
    right, up = fx < 0.55, fy < 0.5
    ax.annotate(text, (x, y), xytext=(18 if right else -18, 22 if up else -22),
                textcoords="offset points", fontsize=8, ha="left" if right else "right",
                va="bottom" if up else "top", arrowprops={"arrowstyle": "->", "lw": 0.8},
                bbox={"boxstyle": "round", "fc": "white", "alpha": 0.85}, zorder=6)


#: Width (inches) and font size of the breakdown figure, its title and its legend.
_BREAKDOWN_WIDTH, _TITLE_PT, _LEGEND_PT, _SEGMENT_PT = 12.5, 11, 8, 7


@_plain_text
def breakdown_figure(data: ReportData) -> Figure:
    """Where each front design's network time goes: one stacked bar per design, one segment
    per layer (count x its latency), in the network's layer order. The title wraps to the
    figure's width, the legend below takes as many columns as fit it, and a segment is named
    only where its name fits inside it."""
    import math

    front = sorted(data.front, key=lambda p: float(p.area_mm2 or 0.0))
    names = list(data.layer_names) or sorted({la.name for p in front for la in p.layers})
    # the legend's columns: as many of its widest entry (handle, label, gap) as fit the width
    entry = max((_text_width_pt(_n(n), _LEGEND_PT) for n in names), default=0) \
        + 3.5 * _LEGEND_PT
    ncol = max(1, min(len(names), int((_BREAKDOWN_WIDTH * 72 - 24) // entry)))
    rows = math.ceil(len(names) / ncol) if front else 0
    if data.networks:  # several networks: the bar is the weighted sum, the objective
        title = (f"{_n(data.study)}: where the weighted sum goes (front designs, by area; a "
                 "segment: weight × count × a layer's latency)")
    else:
        title = (f"{_n(data.study)}: where the network's time goes (front designs, by area; "
                 "each segment is a layer's count × latency)")
    title = _wrap(title, _BREAKDOWN_WIDTH * 72 - 24, _TITLE_PT)
    fig = _figure(_BREAKDOWN_WIDTH, 1.8 + 0.42 * max(len(front), 1) + 0.2 * rows
                  + 0.2 * title.count("\n"))
    ax = fig.subplots()
    fig.suptitle(title, x=0.01, ha="left", fontsize=_TITLE_PT)
    colors = {n: f"C{i % 10}" for i, n in enumerate(names)}
    hatches = {n: ("" if i < 10 else "//") for i, n in enumerate(names)}
    labels = []
    named = []  # (segment, its name): kept where the name fits the drawn segment
    for row, p in enumerate(front):
        left = 0.0
        weights = [n.weight for n in p.networks for _ in n.layers] if p.multi else \
            [1.0] * len(p.layers)
        for la, w in zip(p.layers, weights, strict=True):
            if la.total_ms is None:
                continue
            seg = w * la.total_ms
            bars = ax.barh(row, seg, left=left, color=colors.get(la.name, "gray"),
                           hatch=hatches.get(la.name, ""), edgecolor="white", lw=0.5,
                           label=_n(la.name) if row == 0 else None)
            named.append((bars.patches[0], ax.text(
                left + seg / 2, row, _n(la.name), ha="center", va="center",
                fontsize=_SEGMENT_PT, color="white")))
            left += seg
        labels.append(f"trial {p.trial}: {_n(p.hw_name)}, {formats.area(p.area_mm2)} mm²")
    ax.set_yticks(range(len(front)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(_latency_label(data))
    ax.grid(True, axis="x", alpha=0.25)
    if front:  # below the panel: inside it covers the longest bars
        fig.legend(loc="outside lower center", fontsize=_LEGEND_PT, ncol=ncol,
                   framealpha=0.9)
    else:
        ax.text(0.5, 0.5, "no feasible design", transform=ax.transAxes, ha="center")
    _drop_names_that_do_not_fit(fig, named)
    return fig


def _drop_names_that_do_not_fit(fig: Figure, named: Sequence[tuple[Any, Any]]) -> None:
    """Lay the figure out and remove each segment's name wider than the segment (two short
    segments side by side would otherwise run their names together)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # (what saving the figure draws on anyway)
    fig.draw_without_rendering()
    renderer = canvas.get_renderer()
    for patch, text in named:
        bar, box = patch.get_window_extent(renderer), text.get_window_extent(renderer)
        if box.width > bar.width - 2 or box.height > bar.height:
            text.remove()


def network_convergence_figure(data: ReportData) -> Figure:
    """Best network latency so far and front hypervolume against designs done: the
    operator studies' figure (``convergence_figure``) with a network's words."""
    return convergence_figure(
        data, noun="design", latency_label=_latency_label(data),
        latency_title="Best network latency" if not data.networks else "Best weighted sum",
        note=f", {data.evaluated + data.cached:,} layer evaluations")


@_plain_text
def network_compare_figure(data: CompareData) -> Figure:
    """Fronts of several network studies overlaid; best latency and hypervolume per design."""
    fig = _figure(16.0, 5.6 + 0.17 * len(data.series))  # (the legends below the panels)
    fr, lat, hv = fig.subplots(1, 3, width_ratios=[1.25, 1, 1])
    fig.suptitle(f"network {_n(str(data.network))} on {_n(data.board)} @ {data.clock_mhz:g} MHz: "
                 f"{len(data.series)} studies", fontsize=12)
    every = [float(p.latency_ms or 0.0) for s in data.series for p in s.points if p.feasible]
    for i, s in enumerate(data.series):
        color = f"C{i % 10}"
        feas = [p for p in s.points if p.feasible]
        fr.scatter([p.latency_ms for p in feas], [p.area_mm2 for p in feas], s=8, alpha=0.2,
                   color=color, lw=0)
        if s.front:
            fx = [float(p.latency_ms or 0.0) for p in s.front]
            fy = [float(p.area_mm2 or 0.0) for p in s.front]
            _step_front(fr, [*fx, max(every)], [*fy, min(fy)], color=color, lw=1.8,
                        label=f"{_n(s.study)}: HV {formats.hypervolume(s.hypervolume)}, "
                              f"{len(s.front)} on front")
            fr.scatter(fx, fy, s=26, color=color, edgecolor="black", lw=0.5, zorder=4)
        else:
            fr.plot([], [], color=color, label=f"{_n(s.study)}: no feasible design")
        conv = s.convergence
        pts = [(x, b) for x, b in zip(conv.trials, conv.best_latency_ms, strict=True)
               if b is not None]
        if pts:
            lat.step([x for x, _ in pts] + [conv.trials[-1]],
                     [b for _, b in pts] + [pts[-1][1]], where="post", color=color, lw=1.6,
                     label=f"{_n(s.study)} ({formats.ms(pts[-1][1])} ms)")
        hv.step(conv.trials, conv.hypervolume, where="post", color=color, lw=1.6,
                label=f"{_n(s.study)} ({formats.hypervolume(s.hypervolume)})")
    _log_if_spread(fr, "x", every)
    fr.set_title("Pareto fronts (faint: feasible designs)", loc="left", fontsize=11)
    fr.set_xlabel(_latency_label(data))
    fr.set_ylabel("area (mm²)")
    _legend_below(fr, fontsize=8)
    lat.set_title("Best network latency so far" if not data.networks else
                  "Best weighted sum so far", loc="left", fontsize=11)
    lat.set_xlabel("designs done")
    lat.set_ylabel(_latency_label(data))
    if every:
        _log_axis(lat, "y")
    hv.set_title("Hypervolume (shared reference)", loc="left", fontsize=11)
    hv.set_xlabel("designs done")
    hv.set_ylabel("fraction of the reference box")
    top = max((max(s.convergence.hypervolume, default=0.0) for s in data.series), default=0.0)
    hv.set_ylim(0, max(top, 1e-3) * 1.1)
    for ax in (fr, lat, hv):
        ax.grid(True, which="both", alpha=0.25)
    for ax in (lat, hv):
        _integer_ticks(ax)
        if ax.get_legend_handles_labels()[0]:
            _legend_below(ax, fontsize=8)
    return fig


# ---- energy.png ------------------------------------------------------------------------------

#: Components' labels in the energy breakdown (``energy.model.COMPONENTS``).
_COMPONENT_LABELS = {"sram.inp": "input SRAM", "sram.wgt": "weight SRAM",
                     "sram.acc": "accumulator SRAM", "sram.out": "output SRAM",
                     "sram.uop": "micro-op SRAM", "gemm": "GEMM MACs", "alu": "ALU",
                     "dram": "DRAM", "pl_logic": "clocked logic (FF, LUT)",
                     "pl_static": "fabric static", "base": "processor and board (baseline)"}


def energy_front(points: Sequence[DesignPoint]) -> list[DesignPoint]:
    """Feasible points with energy, non-dominated in (area, accelerator energy), by area."""
    from vtatune.search.pareto import pareto_front

    pts = [p for p in points if p.feasible and p.area_mm2 is not None
           and p.accelerator_energy_j is not None]
    return [pts[i] for i in pareto_front([(float(p.area_mm2 or 0.0),
                                           float(p.accelerator_energy_j or 0.0))
                                          for p in pts])]


def energy_design(data: ReportData) -> DesignPoint | None:
    """The design whose energy the breakdown shows (an operator trial's by component, a
    network design's by layer): the knee, else the least energy."""
    def shown(p: DesignPoint) -> bool:
        return bool(p.energy_components) or (
            bool(p.networks) and p.accelerator_energy_j is not None)

    if data.knee is not None and shown(data.knee):
        return data.knee
    with_parts = [p for p in data.points if p.feasible and shown(p)]
    return min(with_parts, key=lambda p: (p.accelerator_energy_j or math.inf, p.trial),
               default=None)


@_plain_text
def energy_figure(data: ReportData) -> Figure:
    """Area vs the accelerator's energy per call (per inference for a network study) with its
    front (left), and one design's energy (right: the knee, else the least energy): an
    operator trial's by component, board baseline apart; a network design's by layer."""
    fig = _figure(13.0, 5.5)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1]})
    per = "inference" if data.network is not None else "call"
    fig.suptitle(f"{_n(data.study)}: energy per {per} — {_n(data.network or data.workload)} "
                 f"on {_n(data.board)} (estimates from the energy model's constants)",
                 fontsize=12)
    pts = [p for p in data.points if p.feasible and p.area_mm2 is not None
           and p.accelerator_energy_j is not None]
    front = energy_front(data.points)
    if pts:
        left.scatter([_uj(p) for p in pts], [p.area_mm2 for p in pts], s=14,
                     color="tab:gray", alpha=0.6, label="feasible trials")
        _step_front(left, [_uj(p) for p in front], [float(p.area_mm2 or 0.0) for p in front],
                    color="tab:red", lw=1.5, label="front (area vs energy)")
        left.scatter([_uj(p) for p in front], [p.area_mm2 for p in front], s=24,
                     color="tab:red")
        _log_if_spread(left, "x", [_uj(p) for p in pts])
        left.legend(fontsize=8, loc="upper right")
    left.set_xlabel(f"accelerator energy per {per} (uJ)")
    left.set_ylabel("area (mm²)")
    left.set_title("Area vs accelerator energy")
    chosen = energy_design(data)
    if chosen is not None and chosen.networks:  # a network design: per layer
        _layer_energy(right, chosen, "knee" if chosen is data.knee else "least energy")
    elif chosen is not None:
        parts = chosen.energy_components
        names = [n for n in _COMPONENT_LABELS if n in parts]
        values = [parts[n] * 1e6 for n in names]
        colors = ["tab:gray" if n == "base" else "tab:blue" for n in names]
        right.barh(range(len(names)), values, color=colors)
        if any(v > 0 for v in values):  # the baseline dwarfs the rest: a log axis shows all
            right.set_xscale("log")
            right.set_xlim(left=min(v for v in values if v > 0) / 2)
        right.set_yticks(range(len(names)), [_COMPONENT_LABELS[n] for n in names], fontsize=8)
        right.invert_yaxis()
        right.set_xlabel("energy per call (uJ)")
        which = "knee" if chosen is data.knee else "least energy"
        right.set_title(f"Trial {chosen.trial} ({which}, {_n(chosen.hw_name)}): accelerator "
                        f"{formats.energy(chosen.accelerator_energy_j)}, board "
                        f"{formats.energy(chosen.board_energy_j)}", fontsize=9)
    else:
        right.set_axis_off()
    return fig


def _layer_energy(ax: Axes, p: DesignPoint, which: str) -> None:
    """A network design's accelerator energy per inference by layer: count x one run's
    (several networks: weight x count x one run's, named ``NETWORK.LAYER``)."""
    rows = [(f"{n.network}.{la.name}" if p.multi else la.name,
             n.weight * la.count * float(la.energy_j) * 1e6)
            for n in p.networks for la in n.layers if la.energy_j is not None]
    ax.barh(range(len(rows)), [v for _, v in rows], color="tab:blue")
    ax.set_yticks(range(len(rows)), [_n(name) for name, _ in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("accelerator energy per inference by layer (uJ): count × one run's")
    ax.set_title(f"Trial {p.trial} ({which}, {_n(p.hw_name)}): accelerator "
                 f"{formats.energy(p.accelerator_energy_j)}, board "
                 f"{formats.energy(p.board_energy_j)}", fontsize=9)


def _uj(p: DesignPoint) -> float:
    return float(p.accelerator_energy_j or 0.0) * 1e6
