"""Pareto fronts of any number of objectives and hypervolume of two, all minimized
(area_mm2, latency, energy: ``search.objectives``).

Pure functions over plain tuples, shared by the search's progress display, ``vtatune show``
and the benchmarks. A point dominates another when it is no worse in every objective and
better in at least one; equal points do not dominate each other, so duplicates on the front
are all kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

Point = tuple[float, float]


def pareto_front(points: Sequence[tuple[float, ...]]) -> list[int]:
    """Indices of the non-dominated points, by increasing first objective (ties: by the
    next objectives, then by index). Points are tuples of one length (1, 2, 3, ...).

    O(n log n) for two objectives, O(n x front) otherwise. NaN coordinates raise
    ``ValueError``.
    """
    if points and len(points[0]) != 2:
        return _front_nd(points)
    _check(cast(Sequence[Point], points))
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1], i))
    front: list[int] = []
    best_y = math.inf  # lowest second objective among points with a smaller first objective
    i = 0
    while i < len(order):
        # one group of equal first objectives: only its lowest second objective can survive
        x = points[order[i]][0]
        j = i
        while j < len(order) and points[order[j]][0] == x:
            j += 1
        y = points[order[i]][1]
        if y < best_y:
            front += [k for k in order[i:j] if points[k][1] == y]
            best_y = y
        i = j
    return front


def _front_nd(points: Sequence[tuple[float, ...]]) -> list[int]:
    """``pareto_front`` of points of any one length: in lexicographic order a point can only
    be dominated by one before it, so each is checked against the front kept so far."""
    n = len(points[0])
    for p in points:
        if len(p) != n or any(math.isnan(v) for v in p):
            raise ValueError(f"not a point of {n} numbers: {p!r}")
    order = sorted(range(len(points)), key=lambda i: (*points[i], i))
    front: list[int] = []
    for i in order:
        p = points[i]
        if not any(_dominates(points[j], p) for j in front):
            front.append(i)
    return front


def _dominates(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True)) and a != b


def front_size(points: Sequence[tuple[float, ...]]) -> int:
    """Distinct points on the front: what ``show`` lists, one row per point (designs that tie
    exactly are one row; ``search.summary``)."""
    return len({points[i] for i in pareto_front(points)}) if points else 0


def hypervolume_2d(points: Sequence[Point], ref: Point) -> float:
    """Area dominated by ``points`` and bounded by ``ref`` (exact; minimization).

    Points not strictly better than ``ref`` in both objectives add nothing.
    """
    _check([*points, ref])
    rx, ry = ref
    inside = [p for p in points if p[0] < rx and p[1] < ry]
    volume = 0.0
    front = [inside[i] for i in pareto_front(inside)]
    for k, (x, y) in enumerate(front):
        next_x = front[k + 1][0] if k + 1 < len(front) else rx
        volume += (next_x - x) * (ry - y)
    return volume


def _check(points: Sequence[Point]) -> None:
    for p in points:
        if len(p) != 2 or math.isnan(p[0]) or math.isnan(p[1]):
            raise ValueError(f"not a point of two numbers: {p!r}")
