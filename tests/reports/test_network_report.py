"""Network reports: data against direct computations, the files, compare."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from vtatune.reports.data import network_compare_data, network_report_data
from vtatune.reports.write import write_comparison as write_network_comparison
from vtatune.reports.write import write_report as write_network_report
from vtatune.search.pareto import hypervolume_2d
from vtatune.store import Store


@pytest.fixture(scope="module")
def data(network_studies):
    store = Store(network_studies.db)
    return network_report_data(store.study(network_studies.study),
                               store.network_trials(network_studies.study))


def test_front_is_non_dominated_and_complete(data) -> None:
    feas = [p for p in data.points if p.feasible]
    assert data.n_trials == 4 and data.n_feasible == len(feas) >= 1
    for p in feas:
        dominated = any(q.area_mm2 <= p.area_mm2 and q.latency_ms <= p.latency_ms
                        and (q.area_mm2, q.latency_ms) != (p.area_mm2, p.latency_ms)
                        for q in feas)
        assert (p in data.front) == (not dominated)
    assert data.knee in data.front and data.smallest == data.front[0]
    assert data.fastest.latency_ms == min(p.latency_ms for p in feas)


def _log_box(fronts):
    """The documented box, computed here: log area and log latency, 0 at the fronts' ideal
    point, 1 at their nadir (an axis without spread: a unit of log 1.1); reference at 1.1."""
    logs = np.log(np.array(fronts, dtype=float))
    lo, span = logs.min(axis=0), np.ptp(logs, axis=0)
    span = np.where(span > 0, span, np.log(1.1))
    return lo, span


def _direct_hv(points, lo, span) -> float:
    u = [tuple((np.log(p) - lo) / span) for p in points]
    return hypervolume_2d(u, (1.1, 1.1)) / 1.21


def _front(pts):
    return [p for p in pts if not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in pts)]


def test_hypervolume_and_convergence(data) -> None:
    """A network study's hypervolume is the operator studies' (the log box), not a share of
    a linear box from 0."""
    feas = [(p.area_mm2, p.latency_ms) for p in data.points if p.feasible]
    lo, span = _log_box(_front(feas))
    assert data.ref_point == pytest.approx(tuple(np.exp(lo + 1.1 * span)))
    want = _direct_hv(feas, lo, span)
    assert data.hypervolume == pytest.approx(want) and 0 < data.hypervolume < 1
    conv = data.convergence
    assert conv.trials == tuple(range(1, 5)) and conv.hypervolume[-1] == pytest.approx(want)
    assert conv.best_latency_ms[-1] == pytest.approx(data.fastest.latency_ms)
    assert list(conv.hypervolume) == sorted(conv.hypervolume)


def test_breakdown_adds_up_to_the_network(data) -> None:
    for p in data.front:
        assert [la.name for la in p.layers] == ["a", "b", "a2", "fc"]
        assert sum(la.total_ms for la in p.layers) == pytest.approx(p.latency_ms)
        assert sum(la.share for la in p.layers) == pytest.approx(1.0)
        for la in p.layers:
            assert la.total_ms == pytest.approx(la.count * la.latency_ms)
            assert 0 < la.efficiency <= 1
        assert 0 < p.efficiency <= 1


def test_efficiency_has_one_definition(data, network_studies) -> None:
    # show once said "31.9% of the bound" (bound cycles / cycles) where the report said
    # 30.15% (bound / end-to-end time, host included): both are bound cycles / cycles now
    from vtatune.networks.summary import summarize

    store = Store(network_studies.db)
    trials = store.network_trials(network_studies.study)
    shown = {r["trial"]: r["efficiency"] for r in summarize(
        store.study(network_studies.study), trials)["pareto"]}
    by_number = {t.number: t for t in trials}
    assert shown and set(shown) == {p.trial for p in data.front}
    for p in data.front:
        t = by_number[p.trial]
        assert p.host_ms > 0  # end to end and accelerator differ: the test can tell them
        assert p.efficiency == pytest.approx(t.bound_cycles / t.cycles)
        assert p.efficiency == pytest.approx(shown[p.trial])


def test_report_files(data, tmp_path) -> None:
    files = write_network_report(data, tmp_path)
    for name in ("front.png", "front.svg", "breakdown.png", "breakdown.svg", "convergence.png",
                 "front.csv", "designs.csv", "index.html"):
        assert files[name].stat().st_size > 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "front.csv").read_text())))
    assert [int(r["trial"]) for r in rows] == [p.trial for p in data.front]
    assert sum(r["knee"] == "True" for r in rows) == 1
    for r, p in zip(rows, data.front, strict=True):
        total = sum(float(r[f"{n}_ms"]) for n in ("a", "b", "a2", "fc"))
        assert total == pytest.approx(p.latency_ms, rel=1e-9)
    assert len(list(csv.DictReader(io.StringIO((tmp_path / "designs.csv").read_text())))) == 4
    page = (tmp_path / "index.html").read_text()
    assert "Where the time goes" in page and "data:image/png;base64" in page


def test_report_page_gives_milliseconds_with_three_decimals(data, tmp_path) -> None:
    # README: latency in ms with three decimals; the network page printed four significant
    # digits (0.3406 ms) in its picks and tables
    import re

    write_network_report(data, tmp_path)
    page = (tmp_path / "index.html").read_text()
    for p in data.front:
        for v in (p.latency_ms, p.accelerator_ms, p.host_ms, p.bound_ms):
            assert re.search(rf'data-v="{re.escape(str(v))}">{v:,.3f}</td>', page), v
    assert f"{data.fastest.latency_ms:,.3f} ms (" in page
    for la in data.knee.layers:
        assert f">{la.latency_ms:,.3f}</td>" in page


def test_compare_shares_one_reference(network_studies, tmp_path) -> None:
    store = Store(network_studies.db)
    loaded = [(store.study(n), store.network_trials(n))
              for n in (network_studies.study, network_studies.other)]
    cmp = network_compare_data(loaded)
    assert [s.study for s in cmp.series] == [network_studies.study, network_studies.other]
    pts = {s.study: [(p.area_mm2, p.latency_ms) for p in s.points if p.feasible]
           for s in cmp.series}
    lo, span = _log_box([p for ps in pts.values() for p in _front(ps)])
    assert cmp.ref_point == pytest.approx(tuple(np.exp(lo + 1.1 * span)))
    for s in cmp.series:
        assert s.hypervolume == pytest.approx(_direct_hv(pts[s.study], lo, span))
    files = write_network_comparison(cmp, tmp_path)
    assert set(files) == {"compare.png", "compare.svg", "compare.csv", "index.html"}


@pytest.mark.parametrize("name", ["$\\frac{a}$", "a$b^$c"])
def test_mathtext_study_names_are_drawn_as_written(network_studies, data, name,
                                                   tmp_path) -> None:
    """A study (or network) named with mathtext neither crashes the report nor compare (the
    operator plots' escaping): the figures are written and the names drawn as written."""
    import dataclasses

    from vtatune.reports import plots

    named = dataclasses.replace(data, study=name, network=name)
    files = write_network_report(named, tmp_path / "report")
    assert {"front.png", "front.svg", "breakdown.png", "convergence.png"} <= set(files)
    fig = plots.network_front_figure(named)
    assert fig._suptitle.get_text().startswith(name + ": network " + name)
    store = Store(network_studies.db)
    cmp = network_compare_data([(store.study(n), store.network_trials(n))
                                for n in (network_studies.study, network_studies.other)])
    cmp = dataclasses.replace(cmp, network=name, series=tuple(
        dataclasses.replace(s, study=f"{name}{i}") for i, s in enumerate(cmp.series)))
    assert {"compare.png", "compare.svg"} <= set(write_network_comparison(cmp, tmp_path / "c"))


def test_network_csv_cells_are_never_formulas(network_studies, data) -> None:
    """A network study's CSV files (front, designs, comparison) are written by the one CSV
    writer, which keeps a name a spreadsheet would run as a formula as text (``'`` first)."""
    import csv
    import dataclasses
    import io

    from vtatune.reports import csv_files

    evil = "=HYPERLINK(\"http://x\")"
    front = [dataclasses.replace(p, hw_name=evil) for p in data.front]
    named = dataclasses.replace(data, front=tuple(front), points=tuple(front))
    for text in (csv_files.network_front_csv(named), csv_files.designs_csv(named.points)):
        rows = list(csv.DictReader(io.StringIO(text)))
        assert rows and all(r["hw_name"] == "'" + evil for r in rows)
    store = Store(network_studies.db)
    cmp = network_compare_data([(store.study(n), store.network_trials(n))
                                for n in (network_studies.study, network_studies.other)])
    cmp = dataclasses.replace(cmp, series=tuple(dataclasses.replace(s, study=evil)
                                                for s in cmp.series))
    rows = list(csv.DictReader(io.StringIO(csv_files.network_compare_csv(cmp))))
    assert rows and {r["study"] for r in rows} == {"'" + evil}


def test_the_energy_figure_of_a_network_gives_the_knees_energy_by_layer(data, tmp_path) -> None:
    from vtatune.reports import plots

    feas = [p for p in data.points if p.feasible]
    assert all(p.accelerator_energy_j is not None for p in feas)
    knee = plots.energy_design(data)
    assert knee is data.knee
    # the design's energy per inference is its layers' count x one run's, summed
    layers = [la for n in knee.networks for la in n.layers]
    assert sum(la.count * la.energy_j for la in layers) == pytest.approx(
        knee.accelerator_energy_j, rel=1e-12)
    fig = plots.energy_figure(data)
    bars = fig.axes[1].patches
    assert [b.get_width() for b in bars] == pytest.approx(
        [la.count * la.energy_j * 1e6 for la in layers])
    assert "per inference" in fig.axes[0].get_xlabel()
    files = write_network_report(data, tmp_path)
    assert {"energy.png", "energy.svg"} <= set(files)
    assert "energy by layer" in (tmp_path / "index.html").read_text()
