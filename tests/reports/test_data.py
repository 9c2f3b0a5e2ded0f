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
        objective_ms=None if cycles is None else cycles / 1e5,
        area_mm2=area, lut=None, ff=None, bram=None, dsp=None, logic_kind="lut",
        bram_kind="bram36", efficiency=None, bound_cycles=None, fits=True)


@pytest.mark.parametrize("which", ["random", "tpe"])
def test_front_is_the_brute_force_non_dominated_set(studies, which) -> None:
    info, trials = _load(studies, getattr(studies, which))
    data = rd.report_data(info, trials)
    feas = [p for p in data.points if p.feasible]
    # the study minimizes end-to-end latency: the front is in (area, latency_ms)
    assert all(p.objective_ms == p.latency_ms for p in feas)
    expect = {p.trial for p in feas
              if not any(q.area_mm2 <= p.area_mm2 and q.latency_ms <= p.latency_ms
                         and (q.area_mm2 < p.area_mm2 or q.latency_ms < p.latency_ms)
                         for q in feas)}
    assert {p.trial for p in data.front} == expect and expect
    areas = [p.area_mm2 for p in data.front]
    assert areas == sorted(areas)
    assert data.smallest == data.front[0]
    assert data.fastest.latency_ms == min(p.latency_ms for p in feas)
    assert data.n_trials == len(trials)
    assert data.n_feasible == sum(t.candidate.feasible for t in trials)
    # latency is the stored end-to-end seconds in ms: the accelerator's cycles at the board
    # clock plus the host's work per call
    for p in feas:
        assert p.latency_ms > p.cycles / (data.clock_mhz * 1e3)
        assert p.latency_ms < p.cycles / (data.clock_mhz * 1e3) + 10.0


def _knee_direct(front) -> int:
    """Independent: numpy distances to the ideal point in log space, each axis divided by
    its span (at least log 2); the first minimum in area order."""
    order = sorted(front, key=lambda p: (p.area_mm2, p.latency_ms))
    la = np.log([p.area_mm2 for p in order])
    lc = np.log([p.latency_ms for p in order])
    x = (la - la.min()) / max(np.ptp(la), np.log(2))
    y = (lc - lc.min()) / max(np.ptp(lc), np.log(2))
    return order[int(np.argmin(np.hypot(x, y)))].trial


def test_knee_is_closest_to_the_ideal_point_in_log_space() -> None:
    front = [_point(0, 1.0, 1000), _point(1, 2.0, 100), _point(2, 4.0, 50),
             _point(3, 10.0, 10)]
    assert rd.knee(front).trial == _knee_direct(front) == 1
    assert rd.knee(list(reversed(front))).trial == 1  # order of the input does not matter


def test_knee_of_a_straight_log_log_front_is_its_middle() -> None:
    # twice the area for half the cycles: every point on the extremes' line (the old
    # farthest-from-the-line rule saw distances of 0 everywhere and circled the slowest end)
    front = [_point(i, 10.0 * 2 ** i, 2 ** (20 - i)) for i in range(7)]
    assert rd.knee(front).trial == _knee_direct(front) == 3
    # the same with float noise around the line: still near the middle, never an end
    rng = np.random.default_rng(0)
    noisy = [_point(i, 10.0 * 2 ** i * (1 + 1e-3 * rng.standard_normal()), 2 ** (20 - i))
             for i in range(7)]
    assert rd.knee(noisy).trial in (2, 3, 4)


def test_knee_when_one_objective_hardly_varies() -> None:
    # areas within 0.2%, cycles tenfold: the fastest design costs next to nothing more
    front = [_point(0, 37.40, 10_000_000), _point(1, 37.42, 3_000_000),
             _point(2, 37.45, 1_000_000)]
    assert rd.knee(front).trial == _knee_direct(front) == 2
    # a concave front (every middle point worse than the line): an end, the smaller on a tie
    concave = [_point(0, 1.0, 1000), _point(1, 8.0, 900), _point(2, 10.0, 100)]
    assert rd.knee(concave).trial == _knee_direct(concave)


def test_knee_of_small_and_empty_fronts() -> None:
    assert rd.knee([]) is None
    assert rd.knee([_point(7, 3.0, 99)]).trial == 7
    assert rd.knee([_point(1, 5.0, 10), _point(2, 2.0, 40)]).trial == 2  # tie: smaller design


def test_knee_on_random_fronts_matches_numpy() -> None:
    from vtatune.search.pareto import pareto_front

    rng = np.random.default_rng(1)
    for _ in range(50):
        n = int(rng.integers(1, 30))
        raw = [(float(a), int(c)) for a, c in zip(rng.uniform(5, 50, n),
                                                    rng.integers(10_000, 10_000_000, n),
                                                    strict=True)]
        front = [_point(i, *raw[i]) for i in pareto_front(raw)]
        assert rd.knee(front).trial == _knee_direct(front)


def test_knee_of_a_study_front_is_on_it(studies) -> None:
    info, trials = _load(studies, studies.tpe)
    data = rd.report_data(info, trials)
    assert data.knee in data.front


def _log_box_hv(points, fronts, margin=0.1) -> float:
    """Independent: numpy log-normalization by the fronts' ideal and nadir, then the union of
    the dominated boxes on a compressed grid."""
    f = np.log(np.array(fronts, dtype=float))
    lo, span = f.min(axis=0), np.ptp(f, axis=0)
    span = np.where(span > 0, span, np.log(1 + margin))
    if not points:
        return 0.0
    u = (np.log(np.array(points, dtype=float)) - lo) / span
    r = 1 + margin
    return brute_hypervolume([tuple(x) for x in u], (r, r)) / (r * r)


def brute_hypervolume(points, ref) -> float:
    """Union of the boxes [x, rx] x [y, ry] over a compressed grid."""
    inside = [p for p in points if p[0] < ref[0] and p[1] < ref[1]]
    xs = sorted({p[0] for p in inside} | {ref[0]})
    ys = sorted({p[1] for p in inside} | {ref[1]})
    return sum((x1 - x0) * (y1 - y0)
               for x0, x1 in zip(xs, xs[1:], strict=False)
               for y0, y1 in zip(ys, ys[1:], strict=False)
               if any(p[0] <= x0 and p[1] <= y0 for p in inside))


@pytest.mark.parametrize("which", ["random", "tpe"])
def test_hypervolume_matches_a_direct_computation(studies, which) -> None:
    info, trials = _load(studies, getattr(studies, which))
    data = rd.report_data(info, trials)
    front = [(p.area_mm2, p.latency_ms) for p in data.front]
    feas = [(p.area_mm2, p.latency_ms) for p in data.points if p.feasible]
    # the reference point: 10% of the fronts' log span beyond their nadir, on both axes (a
    # front that does not spread along an axis gets a span of log 1.1 there)
    ref = []
    for axis in (np.log([a for a, _ in front]), np.log([c for _, c in front])):
        span = np.ptp(axis) if np.ptp(axis) > 0 else math.log(1.1)
        ref.append(math.exp(axis.min() + 1.1 * span))
    assert data.ref_point == pytest.approx(tuple(ref))
    direct = _log_box_hv(feas, front)
    assert data.hypervolume == pytest.approx(direct) and 0 < direct <= 1
    if len(front) == 1:  # one design dominates every other: it holds its whole box
        assert direct == pytest.approx(1.0)


def test_hypervolume_discriminates_fronts_apart_in_latency() -> None:
    """The issue's case: a dense front against a sparse one 12% slower, plus far slower
    feasible designs. Measured against the worst feasible design in linear units the two got
    0.602 and 0.598; in the log box spanned by the fronts the gap is the latency ratio's."""
    dense = [_point(i, 10 * 1.1 ** i, int(4e6 / 1.25 ** i)) for i in range(23)]
    sparse = [_point(100 + i, 10 * 1.1 ** (3 * i), int(1.12 * 4e6 / 1.25 ** (3 * i)))
              for i in range(8)]
    slow = [_point(200 + i, 30.0 + i, int(9e7)) for i in range(5)]  # feasible, far off
    box = rd.hv_box([*dense, *sparse])
    hv_dense = rd.hypervolume([*dense, *slow], box)
    hv_sparse = rd.hypervolume([*sparse, *slow], box)
    assert hv_dense - hv_sparse > 0.03
    # the old measure (linear, reference 1.1 x the worst feasible point) hardly separated them
    worst = (1.1 * 34.0, 1.1 * 9e7)
    old = [hypervolume_2d([(p.area_mm2, p.cycles) for p in pts], worst) / (worst[0] * worst[1])
           for pts in (dense, sparse)]
    assert old[0] - old[1] < 0.01 < hv_dense - hv_sparse
    # independent computation of the same numbers
    fronts = [(p.area_mm2, p.cycles) for p in [*dense, *sparse]]
    assert hv_dense == pytest.approx(_log_box_hv([(p.area_mm2, p.cycles) for p in dense],
                                                 fronts))


def test_hypervolume_box_properties() -> None:
    a = [_point(0, 1.0, 1000), _point(1, 2.0, 300), _point(2, 8.0, 100)]
    b = [_point(3, 1.5, 1200), _point(4, 9.0, 400)]  # dominated by a everywhere
    box = rd.hv_box([*a, *b])
    assert 0 < rd.hypervolume(b, box) < rd.hypervolume(a, box) < 1
    assert rd.hypervolume([*a, *b], box) == pytest.approx(rd.hypervolume(a, box))
    # units do not matter: mm² -> µm² and cycles -> ns change nothing
    scaled = [_point(p.trial, p.area_mm2 * 1e6, p.cycles * 10) for p in a]
    assert rd.hypervolume(scaled, rd.hv_box(scaled)) == pytest.approx(
        rd.hypervolume(a, rd.hv_box(a)))
    # degenerate fronts: one point, two equal areas, all on one line: defined, in 0..1
    one = [_point(0, 3.0, 500)]
    assert rd.hypervolume(one, rd.hv_box(one)) == pytest.approx(1.0)  # at the ideal point
    same_area = [_point(0, 3.0, 500), _point(1, 3.0, 400)]
    assert 0 < rd.hypervolume(same_area, rd.hv_box(same_area)) <= 1
    line = [_point(i, 2.0 ** i, 2 ** (10 - i)) for i in range(6)]
    assert 0 < rd.hypervolume(line, rd.hv_box(line)) < 1
    assert rd.hv_box([]) is None and rd.hypervolume(a, None) == 0.0


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
    front = [(p.area_mm2, p.latency_ms) for p in data.front]
    pts = [(t.candidate.area_mm2, 1e3 * t.candidate.seconds) for t in trials[:mid]
           if t.candidate.feasible]
    assert conv.hypervolume[mid - 1] == pytest.approx(_log_box_hv(pts, front))


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
    # the box is spanned by the union of the studies' fronts
    fronts = [(p.area_mm2, p.latency_ms) for s in data.series for p in s.front]
    assert data.hv_box == rd.hv_box([p for s in data.series for p in s.front])
    for (_, ts), s in zip(loaded, data.series, strict=True):
        pts = [(t.candidate.area_mm2, 1e3 * t.candidate.seconds) for t in ts
               if t.candidate.feasible]
        assert s.hypervolume == pytest.approx(_log_box_hv(pts, fronts))
        assert s.convergence.hypervolume[-1] == pytest.approx(s.hypervolume)
        # the best latency in the studies' measure (end to end per call), not the cycles'
        assert s.best_ms == (pytest.approx(min(p[1] for p in pts)) if pts else None)
    assert data.series[2].front == () and data.series[2].hypervolume == 0.0
    from vtatune.reports.csv_files import compare_csv

    rows = compare_csv(data).splitlines()
    assert rows[0].split(",")[5] == "best_latency_ms"
    assert float(rows[1].split(",")[5]) == pytest.approx(data.series[0].best_ms)


def test_the_latency_a_study_minimizes() -> None:
    from vtatune.store import CandidateRecord

    base = dict(key="k", workload="w", hw_key="h", hw={}, hw_name="x", knobs={})
    c = CandidateRecord(**base, status="ok", cycles=100_000, seconds=1.5e-3,
                        accelerator_seconds=1e-3, host_seconds=0.5e-3)
    assert rd.objective_ms(c) == pytest.approx(1.5)  # end to end per call
    assert rd.objective_ms(c, "accelerator") == pytest.approx(1.0)
    # stored before the split: its seconds were the accelerator's
    old = CandidateRecord(**base, status="ok", cycles=100_000, seconds=1e-3)
    assert rd.objective_ms(old, "accelerator") == pytest.approx(1.0)
    assert rd.objective_ms(CandidateRecord(**base, status="invalid")) is None


def test_a_study_of_a_profile_not_here_has_its_report_data(studies, network_studies) -> None:
    # a study made with another machine's user profile (pynq-z1@mylab): what show lists, the
    # report computes too (its clock and areas are the board's, whatever its timing profile)
    from dataclasses import replace

    store = Store(studies.db)
    info = store.study(studies.tpe)
    here = rd.report_data(info, store.trials(studies.tpe))
    away = rd.report_data(replace(info, board="pynq-z1@mylab"), store.trials(studies.tpe))
    assert away.board == "pynq-z1@mylab" and away.clock_mhz == here.clock_mhz
    assert [p.latency_ms for p in away.front] == [p.latency_ms for p in here.front]
    net = Store(network_studies.db)
    ninfo = net.study(network_studies.study)
    designs = net.network_trials(network_studies.study)
    assert rd.network_report_data(replace(ninfo, board="pynq-z1@mylab"), designs).front


def test_host_operators_kept_for_one_reason_say_it_once() -> None:
    from vtatune.networks.network import HostOp

    why = "its input shapes are not fixed (?x?x?x?)"
    ops = [HostOp("MaxPool", 1, ("1x64x112x112",)),
           *[HostOp("Conv", 1, (f"1x{8 * i}x14x14",), why) for i in range(1, 10)],
           HostOp("Gemm", 1, (), "QGemm has no float counterpart here")]
    text = rd.host_ops_text(ops)
    assert text.count(why) == 1 and text.count("QGemm has no") == 1
    assert "MaxPool x1 (1x64x112x112)" in text
    assert "Conv x1 (1x8x14x14), Conv x1 (1x16x14x14)" in text  # every node, once each
    assert all(f"1x{8 * i}x14x14" in text for i in range(1, 10))
