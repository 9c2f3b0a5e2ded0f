"""Figures of a network study, drawn from ``network_data``'s records only.

Conventions as ``reports.plots``: latency in ms per call, end to end (the network's: the
count-weighted sum of its layers'), area in mm^2, the front as a red staircase, figures
returned on the Agg canvas and never shown. Designs stopped early (``dominated``) have no
measured latency: they are drawn at their lower bound as hollow grey markers, which is where
the search knew they could not reach the front.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vtatune import formats
from vtatune.reports import plots
from vtatune.reports.data import CompareData, ReportData
from vtatune.reports.plots import (
    FEASIBLE_COLOR,
    FRONT_COLOR,
    _figure,
    _log_axis,
    _log_if_spread,
    _n,
    _plain_text,
    _step_front,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: What a network latency axis measures.
LATENCY_LABEL = "network latency (ms per run, end to end)"
#: Colours of the statuses that have no latency (counted in the side panel).
_STATUS_COLORS = {"dominated": "tab:gray", "no_fit": "tab:red", "no_schedule": "tab:orange",
                  "hw_invalid": "silver"}


@_plain_text
def front_figure(data: ReportData) -> Figure:
    """Area vs network latency: every feasible design, the front, the knee, the dominated
    designs at their bound; a side panel counts the designs of every other status."""
    fig = _figure(12.5, 6.2)
    ax, side = fig.subplots(1, 2, width_ratios=[5, 1.3])
    fig.suptitle(f"{_n(data.study)}: network {_n(data.network)} on {_n(data.board)} @ "
                 f"{data.clock_mhz:g} MHz — {data.n_feasible} of {data.n_trials} designs "
                 "feasible", fontsize=12)
    feas = [p for p in data.points if p.feasible and p.area_mm2 is not None]
    ax.set_title("Area vs network latency", loc="left", fontsize=11)
    ax.set_xlabel(LATENCY_LABEL)
    ax.set_ylabel("area (mm²)")
    ax.grid(True, which="both", alpha=0.25)
    xs = [float(p.latency_ms or 0.0) for p in feas]
    ax.scatter(xs, [p.area_mm2 for p in feas], s=18, color=FEASIBLE_COLOR, lw=0, alpha=0.85,
               label=f"designs, every layer tuned ({len(feas)})", zorder=2)
    dom = [p for p in data.points if p.status == "dominated" and p.bound_ms is not None]
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
    counts = [(s, n) for s, n in data.statuses.items() if s != "ok"]
    side.barh([s for s, _ in counts], [n for _, n in counts],
              color=[_STATUS_COLORS.get(s, "gray") for s, _ in counts])
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


@_plain_text
def breakdown_figure(data: ReportData) -> Figure:
    """Where each front design's network time goes: one stacked bar per design, one segment
    per layer (count x its latency), in the network's layer order."""
    front = sorted(data.front, key=lambda p: float(p.area_mm2 or 0.0))
    fig = _figure(12.5, 1.8 + 0.42 * max(len(front), 1))
    ax = fig.subplots()
    ax.set_title(f"{_n(data.study)}: where the network's time goes (front designs, by area; each "
                 "segment is a layer's count × latency)", loc="left", fontsize=11)
    names = list(data.layer_names) or sorted({la.name for p in front for la in p.layers})
    colors = {n: f"C{i % 10}" for i, n in enumerate(names)}
    hatches = {n: ("" if i < 10 else "//") for i, n in enumerate(names)}
    labels = []
    for row, p in enumerate(front):
        left = 0.0
        for la in p.layers:
            if la.total_ms is None:
                continue
            ax.barh(row, la.total_ms, left=left, color=colors.get(la.name, "gray"),
                    hatch=hatches.get(la.name, ""), edgecolor="white", lw=0.5,
                    label=_n(la.name) if row == 0 else None)
            if la.share is not None and la.share >= 0.06:
                ax.text(left + la.total_ms / 2, row, _n(la.name), ha="center", va="center",
                        fontsize=7, color="white")
            left += la.total_ms
        labels.append(f"trial {p.trial}: {_n(p.hw_name)}, {formats.area(p.area_mm2)} mm²")
    ax.set_yticks(range(len(front)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(LATENCY_LABEL)
    ax.grid(True, axis="x", alpha=0.25)
    if front:  # below the panel: inside it covers the longest bars
        fig.legend(loc="outside lower center", fontsize=8, ncol=min(len(names), 13),
                   framealpha=0.9)
    else:
        ax.text(0.5, 0.5, "no feasible design", transform=ax.transAxes, ha="center")
    return fig


def convergence_figure(data: ReportData) -> Figure:
    """Best network latency so far and front hypervolume against designs done: the
    operator studies' figure (``plots.convergence_figure``) with a network's words."""
    return plots.convergence_figure(
        data, noun="design", latency_label=LATENCY_LABEL, latency_title="Best network latency",
        note=f", {data.evaluated + data.cached:,} layer evaluations")


@_plain_text
def compare_figure(data: CompareData) -> Figure:
    """Fronts of several network studies overlaid; best latency and hypervolume per design."""
    fig = _figure(16.0, 5.2)
    fr, lat, hv = fig.subplots(1, 3, width_ratios=[1.25, 1, 1])
    fig.suptitle(f"network {_n(data.network)} on {_n(data.board)} @ {data.clock_mhz:g} MHz: "
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
                        label=f"{_n(s.study)}: HV {s.hypervolume:.3f}, {len(s.front)} on front")
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
                label=f"{_n(s.study)} ({s.hypervolume:.3f})")
    _log_if_spread(fr, "x", every)
    fr.set_title("Pareto fronts (faint: feasible designs)", loc="left", fontsize=11)
    fr.set_xlabel(LATENCY_LABEL)
    fr.set_ylabel("area (mm²)")
    fr.legend(fontsize=8, loc="upper right")
    lat.set_title("Best network latency so far", loc="left", fontsize=11)
    lat.set_xlabel("designs done")
    lat.set_ylabel(LATENCY_LABEL)
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
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    return fig
