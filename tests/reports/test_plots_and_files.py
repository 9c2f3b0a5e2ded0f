"""Figures (returned, labelled, drawn for empty fronts too) and the files a report writes."""

from __future__ import annotations

import csv
import io

import pytest

from vtatune.reports import compare_data, plots, report_data, write_comparison, write_report
from vtatune.store import Store


@pytest.fixture(scope="module")
def tpe_data(studies):
    store = Store(studies.db)
    return report_data(store.study(studies.tpe), store.trials(studies.tpe))


def _texts(fig) -> str:
    parts = [fig._suptitle.get_text() if fig._suptitle else ""]
    for ax in fig.axes:
        parts += [ax.get_title(), ax.get_title("left"), ax.get_xlabel(), ax.get_ylabel()]
        parts += [t.get_text() for t in ax.texts]
        leg = ax.get_legend()
        if leg is not None:
            parts += [t.get_text() for t in leg.get_texts()]
    return "\n".join(parts)


def test_pareto_figure_is_labelled(tpe_data) -> None:
    from matplotlib.figure import Figure

    fig = plots.pareto_figure(tpe_data)
    assert isinstance(fig, Figure) and len(fig.axes) == 6  # 3 views, each with its strip
    text = _texts(fig)
    for needle in ("area (mm²)", "latency (ms per call, end to end)", "LUT", "BRAM36",
                   "Pareto front", f"knee: trial {tpe_data.knee.trial}", "VTA default 1x16x16",
                   "infeasible", "pynq-z1"):
        assert needle in text, needle
    assert plots.to_bytes(fig)[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in plots.to_bytes(fig, "svg")


def test_other_figures(tpe_data) -> None:
    conv = _texts(plots.convergence_figure(tpe_data))
    assert "Best latency" in conv and "Hypervolume" in conv and "trials done" in conv
    params = plots.params_figure(tpe_data)
    assert "Importance" in _texts(params)
    hardware = [r for r in tpe_data.params if r.kind == "hardware"]
    assert hardware
    # importance, latency per value of every parameter, area per value of every hardware one
    assert len(params.axes) == 1 + len(tpe_data.params) + len(hardware)
    ylabels = [ax.get_ylabel() for ax in params.axes]
    assert ylabels.count("latency (ms)") == len(tpe_data.params)
    assert ylabels.count("area (mm²)") == len(hardware)
    titles = [ax.get_title("left") for ax in params.axes]
    for r in hardware:
        assert any(t.startswith(f"{r.label} — area") for t in titles), r.label


def test_every_view_labels_the_default_design(tpe_data) -> None:
    import dataclasses

    ref = dataclasses.replace(tpe_data.reference, cycles=None, latency_ms=None, trial=None)
    data = dataclasses.replace(tpe_data, reference=ref)
    fig = plots.pareto_figure(data)
    views = [ax for ax in fig.axes if ax.get_xlabel().startswith("latency")]
    assert len(views) == 3
    for ax in views:  # the dotted line of the study that never ran it: labelled in each view
        assert any("VTA default 1x16x16" in t.get_text() and "not run" in t.get_text()
                   for t in ax.texts)
    # strip labels stay two short lines (status, count): the count above the view sits inside
    for ax in fig.axes:
        for label in ax.get_xticklabels():
            assert label.get_text().count("\n") <= 1


def test_figures_of_an_empty_front(studies) -> None:
    store = Store(studies.db)
    data = report_data(store.study(studies.nofit), store.trials(studies.nofit))
    assert "front is empty" in _texts(plots.pareto_figure(data))
    assert "no feasible trial" in _texts(plots.convergence_figure(data))
    plots.params_figure(data)


def test_report_files(tpe_data, tmp_path) -> None:
    files = write_report(tpe_data, tmp_path)
    for name in ("pareto.png", "pareto.svg", "convergence.png", "params.png", "front.csv",
                 "trials.csv", "index.html"):
        assert (tmp_path / name).stat().st_size > 0 and files[name] == tmp_path / name
    rows = list(csv.DictReader(io.StringIO((tmp_path / "front.csv").read_text())))
    assert [int(r["trial"]) for r in rows] == [p.trial for p in tpe_data.front]
    for r, p in zip(rows, tpe_data.front, strict=True):
        assert int(r["cycles"]) == p.cycles and float(r["area_mm2"]) == p.area_mm2
        assert float(r["latency_ms"]) == p.latency_ms and r["hw_name"] == p.hw_name
        assert int(r["LOG_BLOCK_IN"]) == p.hw["LOG_BLOCK_IN"]
        assert all(int(r[k]) == v for k, v in p.knobs.items())
        assert float(r["accelerator_energy_j"]) == p.accelerator_energy_j
    assert [r["knee"] for r in rows].count("1") == 1
    assert rows[[r["knee"] for r in rows].index("1")]["trial"] == str(tpe_data.knee.trial)
    every = list(csv.DictReader(io.StringIO((tmp_path / "trials.csv").read_text())))
    assert len(every) == len(tpe_data.points)


def test_index_html_is_self_contained_and_holds_the_front(tpe_data, tmp_path) -> None:
    write_report(tpe_data, tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "http://" not in page and "https://" not in page and "//cdn" not in page
    # pareto, convergence, params and energy (its trials have energy)
    assert page.count("<img") == 4 and page.count('src="data:image/png;base64,') == 4
    assert "<script>" in page and 'class="sortable"' in page
    for p in tpe_data.front:
        assert f'data-v="{p.trial}"' in page and p.hw_name in page
        assert f'data-v="{p.cycles}"' in page and f"{p.cycles:,}" in page
    assert page.count('<tr class="knee">') == 1


def test_comparison_files(studies, tmp_path) -> None:
    store = Store(studies.db)
    data = compare_data([(store.study(n), store.trials(n)) for n in (studies.random,
                                                                      studies.tpe)])
    write_comparison(data, tmp_path)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "compare.csv").read_text())))
    assert [r["study"] for r in rows] == [studies.random, studies.tpe]
    for r, s in zip(rows, data.series, strict=True):
        assert float(r["hypervolume"]) == s.hypervolume
    page = (tmp_path / "index.html").read_text()
    assert "http://" not in page and "https://" not in page
    assert (tmp_path / "compare.png").read_bytes()[:4] == b"\x89PNG"


def test_the_energy_figure_shows_the_area_energy_front_and_the_knees_components(
        tpe_data, tmp_path) -> None:
    import numpy as np

    pts = [p for p in tpe_data.points if p.feasible]
    assert pts and all(p.accelerator_energy_j is not None for p in pts)  # stored per trial
    # the front of area and accelerator energy, against a brute-force non-dominated filter
    xy = np.array([[p.area_mm2, p.accelerator_energy_j] for p in pts])
    brute = {pts[i].trial for i in range(len(pts))
             if not (((xy <= xy[i]).all(axis=1)) & ((xy < xy[i]).any(axis=1))).any()}
    assert {p.trial for p in plots.energy_front(tpe_data.points)} == brute
    knee = plots.energy_design(tpe_data)
    assert knee is tpe_data.knee
    # the components add up to the board's energy; the baseline is the board's share
    assert sum(knee.energy_components.values()) == pytest.approx(knee.board_energy_j)
    assert knee.energy_components["base"] == pytest.approx(
        knee.board_energy_j - knee.accelerator_energy_j)
    fig = plots.energy_figure(tpe_data)
    text = _texts(fig)
    for needle in ("Area vs accelerator energy", "accelerator energy per call (uJ)",
                   f"Trial {knee.trial} (knee", "estimates"):
        assert needle in text, needle
    bars = fig.axes[1].patches
    assert len(bars) == len(knee.energy_components)
    written = write_report(tpe_data, tmp_path / "r")
    assert {"energy.png", "energy.svg"} <= set(written)
    assert "energy.png" in (tmp_path / "r" / "index.html").read_text()
