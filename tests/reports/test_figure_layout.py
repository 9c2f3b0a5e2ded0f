"""Figures whose text and legends do not cover each other or the data, checked on the drawn
figure by the window extents of the artists (the renderer's bounding boxes, in pixels)."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from vtatune.reports import plots, report_data
from vtatune.reports.data import ParamRelation, ValueStats, network_report_data
from vtatune.store import Store


def _drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _overlap(a, b) -> bool:
    """Boxes sharing more than a pixel each way."""
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > 1) and (min(a.y1, b.y1) - max(a.y0, b.y0) > 1)


def _inside(inner, outer) -> bool:
    return (inner.x0 >= outer.x0 - 1 and inner.x1 <= outer.x1 + 1
            and inner.y0 >= outer.y0 - 1 and inner.y1 <= outer.y1 + 1)


@pytest.fixture(scope="module")
def net(network_studies):
    store = Store(network_studies.db)
    return network_report_data(store.study(network_studies.study),
                               store.network_trials(network_studies.study))


def test_the_knee_label_stays_inside_its_panel_whatever_the_knee(net) -> None:
    assert net.front
    for knee in net.front:  # the top-left design too: its label must not reach the title
        fig = plots.network_front_figure(dataclasses.replace(net, knee=knee))
        r = _drawn(fig)
        ax = fig.axes[0]
        label = next(t for t in ax.texts if t.get_text().startswith("knee"))
        box = label.get_window_extent(r)
        assert _inside(box, ax.get_window_extent(r)), knee.trial
        titles = [t for t in (ax.title, ax._left_title, fig._suptitle)  # (no public getter)
                  if t is not None and t.get_text()]
        assert titles
        for other in (*titles, ax.get_legend()):
            assert not _overlap(box, other.get_window_extent(r)), (knee.trial, other)


def test_the_breakdown_legend_covers_no_bar(net) -> None:
    # the longest bar last (largest area), where an inside legend would sit on it
    front = sorted(net.front, key=lambda p: p.latency_ms)
    slow = [dataclasses.replace(p, area_mm2=float(i + 1)) for i, p in enumerate(front)]
    fig = plots.breakdown_figure(dataclasses.replace(net, front=tuple(slow)))
    r = _drawn(fig)
    ax = fig.axes[0]
    legends = [lg for lg in (ax.get_legend(), *fig.legends) if lg is not None]
    assert legends and ax.patches
    for lg, bar in itertools.product(legends, ax.patches):
        assert not _overlap(lg.get_window_extent(r), bar.get_window_extent(r))


def test_network_latency_axes_say_what_they_measure(net) -> None:
    fig = plots.network_convergence_figure(net)
    assert fig.axes[0].get_ylabel() == "network latency (ms per run, end to end)"


@pytest.fixture(scope="module")
def crowded(studies):
    """The tpe study's report data with a knob of ten values, each with a long count."""
    store = Store(studies.db)
    data = report_data(store.study(studies.tpe), store.trials(studies.tpe))
    values = tuple(ValueStats(value=v, label=str(v), n_trials=71, n_feasible=65,
                              latencies_ms=(0.1 * (i + 1),))
                   for i, v in enumerate((1, 2, 3, 4, 5, 7, 8, 11, 16, 32)))
    knob = ParamRelation(name="tile_ci", label="tile_ci (tiles)", kind="knob",
                         values=values, importance=0.2)
    return dataclasses.replace(data, params=(*data.params, knob))


#: Least space between two tick labels side by side (pixels at the figures' 100 dpi).
LABEL_GAP_PX = 3


def test_parameter_tick_labels_do_not_overlap(crowded) -> None:
    fig = plots.params_figure(crowded)
    r = _drawn(fig)
    checked = 0
    for ax in fig.axes:
        boxes = [t.get_window_extent(r) for t in ax.get_xticklabels() if t.get_text()]
        for a, b in itertools.pairwise(boxes):  # neighbours apart by a few pixels at least
            assert b.x0 - a.x1 >= LABEL_GAP_PX or not _overlap(a.padded(LABEL_GAP_PX), b), \
                ax.get_title("left")
        checked += len(boxes) > 8
    assert checked >= 1  # the crowded panel was drawn


def _crowded_breakdown(net, per: int = 20):
    """``net``'s front as designs of two networks of ``per`` layers each (long names, many
    short segments beside long ones) in a study with a long name: what a study of resnet18
    and mobilenet_v1 draws."""
    front = []
    for p in net.front:
        (n,) = p.networks
        base = n.layers[0]
        nets = tuple(dataclasses.replace(n, network=name, weight=1.0, layers=tuple(
            dataclasses.replace(base, name=f"C{j + 1}", share=None, total_ms=float(
                base.total_ms or 1.0) * (0.3 if j % 3 == 0 else 0.02) * (j + 1) / per)
            for j in range(per))) for name in ("resnet18", "mobilenet_v1"))
        front.append(dataclasses.replace(p, networks=nets))
    names = tuple(f"{m}.C{j + 1}" for m in ("resnet18", "mobilenet_v1") for j in range(per))
    return dataclasses.replace(net, study="resnet18-mobilenet_v1-weights-3-1-a-long-study",
                               front=tuple(front), layer_names=names,
                               networks=("resnet18", "mobilenet_v1"))


def test_the_breakdown_of_many_layers_keeps_its_title_legend_and_names_apart(net) -> None:
    fig = plots.breakdown_figure(_crowded_breakdown(net))
    r = _drawn(fig)
    page = fig.bbox  # the figure's pixels: nothing may be cut at its edges
    (legend,) = fig.legends
    assert _inside(fig._suptitle.get_window_extent(r), page)
    assert _inside(legend.get_window_extent(r), page)
    ax = fig.axes[0]
    assert len(legend.get_texts()) == 40
    names = [t for t in ax.texts if t.get_text()]
    assert names  # the long segments keep theirs
    boxes = [t.get_window_extent(r) for t in names]
    for a, b in itertools.combinations(boxes, 2):
        assert not _overlap(a, b)
    bars = [p.get_window_extent(r) for p in ax.patches]
    for t, box in zip(names, boxes, strict=True):  # each name inside a segment
        assert any(_inside(box, bar) for bar in bars), t.get_text()


def _legends_clear_of_the_plots(fig, r) -> None:
    """Every axes' legend lies outside every plotting area and clear of every tick label."""
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends
    for lg, ax in itertools.product(legends, fig.axes):
        box = lg.get_window_extent(r)
        assert not _overlap(box, ax.get_window_extent(r)), ax.get_title("left")
        for t in (*ax.get_xticklabels(), *ax.get_yticklabels()):
            if t.get_text():
                assert not _overlap(box, t.get_window_extent(r)), t.get_text()
        assert _inside(box, fig.bbox)


def test_compare_figures_keep_legends_off_the_data_and_count_whole_trials(
        studies, network_studies) -> None:
    from vtatune.reports.data import compare_data, network_compare_data

    store, nets = Store(studies.db), Store(network_studies.db)
    figures = [
        plots.compare_figure(compare_data(
            [(store.study(n), store.trials(n)) for n in (studies.random, studies.tpe)])),
        plots.network_compare_figure(network_compare_data(
            [(nets.study(n), nets.network_trials(n))
             for n in (network_studies.study, network_studies.other)]))]
    for fig in figures:
        r = _drawn(fig)
        _legends_clear_of_the_plots(fig, r)
        counted = [ax for ax in fig.axes if ax.get_xlabel().endswith(" done")]
        assert len(counted) == 2
        for ax in counted:  # trials and designs done: 1, 2, 3, never 1.5
            ticks = ax.xaxis.get_major_locator().tick_values(1, 3)
            assert all(float(v).is_integer() for v in ticks), ticks


def test_convergence_counts_whole_trials(net) -> None:
    fig = plots.network_convergence_figure(net)
    for ax in fig.axes:
        assert all(float(v).is_integer()
                   for v in ax.xaxis.get_major_locator().tick_values(1, 3))
