"""Report data against direct computations: front, knee, hypervolume, convergence, params."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vtatune.reports import data as rd
from vtatune.search.pareto import hypervolume_2d
from vtatune.store import Store


def _load(studies, name):
    store = Store(studies.db)
    return store.study(name), store.trials(name)


def _point(trial: int, area: float | None, cycles: int | None, status: str = "ok",
           **hw: int) -> rd.DesignPoint:
    return rd.DesignPoint(
        trial=trial, key=f"k{trial}", status=status, reason="", hw_name=f"hw{trial}", hw=hw,
        knobs={}, cycles=cycles, latency_ms=None if cycles is None else cycles / 1e5,
        area_mm2=area, lut=None, ff=None, bram=None, dsp=None, logic_kind="lut",
        bram_kind="bram36", efficiency=None, bound_cycles=None, fits=True)


@pytest.mark.parametrize("which", ["random", "tpe"])
def test_front_is_the_brute_force_non_dominated_set(studies, which) -> None:
    info, trials = _load(studies, getattr(studies, which))
    data = rd.report_data(info, trials)
    feas = [p for p in data.points if p.feasible]
    expect = {p.trial for p in feas
              if not any(q.area_mm2 <= p.area_mm2 and q.cycles <= p.cycles
                         and (q.area_mm2 < p.area_mm2 or q.cycles < p.cycles) for q in feas)}
    assert {p.trial for p in data.front} == expect and expect
    areas = [p.area_mm2 for p in data.front]
    assert areas == sorted(areas)
    assert data.smallest == data.front[0]
    assert data.fastest.cycles == min(p.cycles for p in feas)
    assert data.n_trials == len(trials)
    assert data.n_feasible == sum(t.candidate.feasible for t in trials)
    # latency is the stored seconds in ms, consistent with the board clock
    for p in feas:
        assert p.latency_ms == pytest.approx(p.cycles / (data.clock_mhz * 1e3))


def test_knee_is_farthest_from_the_extremes_line_in_normalized_log_space() -> None:
    front = [_point(0, 1.0, 1000), _point(1, 2.0, 100), _point(2, 4.0, 50),
             _point(3, 10.0, 10)]
    x = np.log([1.0, 2.0, 4.0, 10.0])
    y = np.log([1000, 100, 50, 10])
    x, y = (x - x.min()) / np.ptp(x), (y - y.min()) / np.ptp(y)
    a, b = np.array([x[0], y[0]]), np.array([x[-1], y[-1]])
    u = b - a
    d = [abs(u[0] * (yi - a[1]) - u[1] * (xi - a[0])) / np.linalg.norm(u)
         for xi, yi in zip(x, y, strict=True)]
    assert rd.knee(front).trial == int(np.argmax(d)) == 1
    assert rd.knee(list(reversed(front))).trial == 1  # order of the input does not matter


def test_knee_of_small_and_empty_fronts() -> None:
    assert rd.knee([]) is None
    assert rd.knee([_point(7, 3.0, 99)]).trial == 7
    assert rd.knee([_point(1, 5.0, 10), _point(2, 2.0, 40)]).trial == 2  # tie: smaller design


def test_knee_of_a_study_front_is_on_it(studies) -> None:
    info, trials = _load(studies, studies.tpe)
    data = rd.report_data(info, trials)
    assert data.knee in data.front


def test_hypervolume_matches_a_direct_computation(studies) -> None:
    info, trials = _load(studies, studies.tpe)
    data = rd.report_data(info, trials)
    feas = [p for p in data.points if p.feasible]
    ref = (1.1 * max(p.area_mm2 for p in feas), 1.1 * max(p.cycles for p in feas))
    assert data.ref_point == pytest.approx(ref)
    direct = hypervolume_2d([(p.area_mm2, p.cycles) for p in feas], ref) / (ref[0] * ref[1])
    assert data.hypervolume == pytest.approx(direct) and 0 < direct < 1


def test_convergence_series(studies) -> None:
    info, trials = _load(studies, studies.random)
    data = rd.report_data(info, trials)
    conv = data.convergence
    assert conv.trials == tuple(range(1, len(trials) + 1))
    for n, best in zip(conv.trials, conv.best_cycles, strict=True):
        seen = [t.candidate.cycles for t in trials[:n] if t.candidate.feasible]
        assert best == (min(seen) if seen else None)
    hv = conv.hypervolume
    assert all(a <= b + 1e-15 for a, b in zip(hv, hv[1:], strict=False))
    assert conv.hypervolume[-1] == pytest.approx(data.hypervolume)
    mid = len(trials) // 2
    ref = data.ref_point
    pts = [(t.candidate.area_mm2, t.candidate.cycles) for t in trials[:mid]
           if t.candidate.feasible]
    assert conv.hypervolume[mid - 1] == pytest.approx(
        hypervolume_2d(pts, ref) / (ref[0] * ref[1]))


def test_eta_squared() -> None:
    assert rd.eta_squared([[1.0, 1.0], [3.0, 3.0]]) == pytest.approx(1.0)
    assert rd.eta_squared([[1.0, 3.0], [1.0, 3.0]]) == pytest.approx(0.0)
    assert rd.eta_squared([[2.0]]) is None and rd.eta_squared([[2.0, 2.0]]) is None
    g = [[1.0, 2.0, 4.0], [5.0, 7.0], [0.5]]
    xs = np.concatenate([np.array(x) for x in g])
    between = sum(len(x) * (np.mean(x) - xs.mean()) ** 2 for x in g)
    assert rd.eta_squared(g) == pytest.approx(between / ((xs - xs.mean()) ** 2).sum())


def test_param_relations(studies) -> None:
    info, trials = _load(studies, studies.tpe)
    data = rd.report_data(info, trials)
    names = {r.name for r in data.params}
    searched = {k for k, v in info.space["hardware"].items() if len(v) > 1}
    assert searched <= names and set(info.space["knobs"]) <= names
    for rel in data.params:
        source = "hw" if rel.kind == "hardware" else "knobs"
        having = [p for p in data.points if rel.name in getattr(p, source)]
        assert sum(v.n_trials for v in rel.values) == len(having)
        for v in rel.values:
            mine = [p for p in having if getattr(p, source)[rel.name] == v.value]
            assert v.n_feasible == sum(p.feasible for p in mine)
            assert sorted(v.latencies_ms) == sorted(p.latency_ms for p in mine if p.feasible)
        groups = [[math.log10(x) for x in v.latencies_ms] for v in rel.values]
        assert rel.importance == rd.eta_squared(groups)
    imps = [r.importance for r in data.params if r.importance is not None]
    assert imps == sorted(imps, reverse=True)
    block = next(r for r in data.params if r.name == "LOG_BLOCK_OUT")
    assert block.label == "BLOCK_OUT" and {v.label for v in block.values} <= {"8", "16", "32"}


def test_reference_design_is_the_default_vta(studies) -> None:
    from vtatune.area import estimate
    from vtatune.hardware import boards, config

    board = boards.load("pynq-z1")
    area = estimate(config.default(), board)
    ref = rd.reference_design(board, [])
    assert ref.area_mm2 == area.area_mm2 and ref.cycles is None
    hw = config.default().log_params()
    pts = [_point(3, 1.0, 500, **hw), _point(4, 1.0, 400, **hw), _point(5, 1.0, 300)]
    ref = rd.reference_design(board, pts)
    assert (ref.trial, ref.cycles) == (4, 400)
    assert ref.latency_ms == pytest.approx(400 / (board.clock_mhz * 1e3))


def test_a_study_without_feasible_trials_has_an_empty_front(studies) -> None:
    from vtatune.errors import UserError

    info, trials = _load(studies, studies.nofit)
    data = rd.report_data(info, trials)
    assert data.front == () and data.knee is None and data.fastest is None
    assert data.hypervolume == 0.0 and data.ref_point is None
    assert set(data.convergence.best_cycles) == {None}
    with pytest.raises(UserError, match="no feasible trial"):
        rd.require_feasible(info, trials)
    info, trials = _load(studies, studies.empty)
    with pytest.raises(UserError, match="no trials"):
        rd.require_feasible(info, trials)
    assert rd.report_data(info, trials).points == ()


def test_compare_hypervolumes_share_one_reference(studies) -> None:
    loaded = [_load(studies, n) for n in (studies.random, studies.tpe, studies.nofit)]
    data = rd.compare_data(loaded)
    feas = [(t.candidate.area_mm2, t.candidate.cycles) for _, ts in loaded for t in ts
            if t.candidate.feasible]
    ref = (1.1 * max(a for a, _ in feas), 1.1 * max(c for _, c in feas))
    assert data.ref_point == pytest.approx(ref)
    for (_, ts), s in zip(loaded, data.series, strict=True):
        pts = [(t.candidate.area_mm2, t.candidate.cycles) for t in ts if t.candidate.feasible]
        assert s.hypervolume == pytest.approx(hypervolume_2d(pts, ref) / (ref[0] * ref[1]))
        assert s.convergence.hypervolume[-1] == pytest.approx(s.hypervolume)
    assert data.series[2].front == () and data.series[2].hypervolume == 0.0
