"""Pareto front and 2-D hypervolume against brute force on random points."""

from __future__ import annotations

import math
import random

import pytest

from vtatune.search.pareto import hypervolume_2d, pareto_front

Point = tuple[float, float]


def dominates(q: Point, p: Point) -> bool:
    return q[0] <= p[0] and q[1] <= p[1] and (q[0] < p[0] or q[1] < p[1])


def brute_front(points: list[Point]) -> list[int]:
    keep = [i for i, p in enumerate(points) if not any(dominates(q, p) for q in points)]
    return sorted(keep, key=lambda i: (points[i][0], i))


def brute_hypervolume(points: list[Point], ref: Point) -> float:
    """Union of the boxes [x, rx] x [y, ry] over a compressed grid."""
    inside = [p for p in points if p[0] < ref[0] and p[1] < ref[1]]
    xs = sorted({p[0] for p in inside} | {ref[0]})
    ys = sorted({p[1] for p in inside} | {ref[1]})
    area = 0.0
    for x0, x1 in zip(xs, xs[1:], strict=False):
        for y0, y1 in zip(ys, ys[1:], strict=False):
            if any(p[0] <= x0 and p[1] <= y0 for p in inside):
                area += (x1 - x0) * (y1 - y0)
    return area


def random_points(rng: random.Random, n: int) -> list[Point]:
    if rng.random() < 0.5:  # coarse values: many ties and duplicates
        return [(float(rng.randint(0, 8)), float(rng.randint(0, 8))) for _ in range(n)]
    return [(rng.uniform(0, 10), rng.uniform(0, 1e6)) for _ in range(n)]


@pytest.mark.parametrize("seed", range(200))
def test_front_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    points = random_points(rng, rng.randint(0, 40))
    assert pareto_front(points) == brute_front(points)


@pytest.mark.parametrize("seed", range(200))
def test_hypervolume_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    points = random_points(rng, rng.randint(0, 25))
    ref = (rng.uniform(4, 11), rng.uniform(4, 1.1e6)) if rng.random() < 0.5 else (11.0, 2e6)
    assert hypervolume_2d(points, ref) == pytest.approx(brute_hypervolume(points, ref))


def test_small_cases() -> None:
    assert pareto_front([]) == [] and hypervolume_2d([], (1.0, 1.0)) == 0.0
    pts = [(2.0, 5.0), (1.0, 9.0), (3.0, 1.0), (2.0, 6.0), (4.0, 4.0), (2.0, 5.0)]
    assert pareto_front(pts) == [1, 0, 5, 2]  # by area; the duplicate (2, 5) stays
    assert hypervolume_2d(pts, (5.0, 10.0)) == pytest.approx(1 * 1 + 1 * 5 + 2 * 9)
    assert hypervolume_2d([(6.0, 1.0), (1.0, 11.0)], (5.0, 10.0)) == 0.0  # outside the box
    assert hypervolume_2d([(0.0, 0.0)], (math.inf, 1.0)) == math.inf


def test_nan_is_rejected() -> None:
    with pytest.raises(ValueError, match="not a point"):
        pareto_front([(1.0, math.nan)])


def test_front_size_counts_points_not_designs() -> None:
    # the live "front N" says how many rows show will list: designs that tie exactly (same
    # area, same latency) are one point of the front
    from vtatune.search.pareto import front_size

    pts = [(1.0, 9.0), (2.0, 5.0), (2.0, 5.0), (3.0, 6.0), (3.0, 4.0), (1.0, 9.0)]
    assert len(pareto_front(pts)) == 5
    assert front_size(pts) == 3
    assert front_size([]) == 0
