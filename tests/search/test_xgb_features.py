"""Proposal features for the XGBoost cost model: realization mirrors the space, rows are sane."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vtatune.search import space as spaces
from vtatune.search.cost_model.features import Featurizer

SHIPPED = ("conv2d_schedule", "conv2d", "dense")


@pytest.fixture(scope="module", params=SHIPPED)
def featurizer(request: pytest.FixtureRequest) -> Featurizer:
    return Featurizer(spaces.load(request.param))


def test_point_realizes_like_the_space(featurizer: Featurizer) -> None:
    sp = featurizer.space
    rng = np.random.default_rng(0)
    for _ in range(150):
        params = featurizer.random_params(rng)
        point = featurizer.point(params)
        cand, why = sp.realize(params)
        assert (cand is None) == (not point.valid), why
        if cand is not None:
            assert cand.hw == point.hw.hw and cand.knobs == point.knobs
            # canonical parameters are what the space would give back for the candidate
            assert sp.params_of(cand) == point.params
            again = featurizer.point(point.params)
            assert again.key == point.key and again.params == point.params


def test_point_after_a_hardware_move_realizes_like_the_space(featurizer: Featurizer) -> None:
    """Canonical parameters of one hardware config realized on another (what annealing does)."""
    sp = featurizer.space
    rng = np.random.default_rng(3)
    hw_params = [k for k, (kind, v) in sp.param_space().items()
                 if kind == "categorical" and k in sp.hw_choices]
    checked = 0
    while checked < 40:
        point = featurizer.point(featurizer.random_params(rng))
        if not point.valid:
            continue
        moved = dict(point.params)
        for k in hw_params:
            if rng.random() < 0.5:
                values = sp.param_space()[k][1]
                moved[k] = values[int(rng.integers(len(values)))]
        cand, _ = sp.realize(moved)
        again = featurizer.point(moved)
        assert (cand is None) == (not again.valid)
        if cand is not None:
            assert (cand.hw, cand.knobs) == (again.hw.hw, again.knobs)
        checked += 1


def test_point_without_tile_params_uses_the_suggestion(featurizer: Featurizer) -> None:
    sp = featurizer.space
    params = {k: v[0] for k, (kind, v) in sp.param_space().items() if kind == "categorical"}
    cand, _ = sp.realize(params)
    point = featurizer.point(params)
    assert (cand is None) == (not point.valid)
    if cand is not None:
        assert cand.knobs == point.knobs


def test_rows_have_one_value_per_name(featurizer: Featurizer) -> None:
    rng = np.random.default_rng(1)
    points = [featurizer.point(featurizer.random_params(rng)) for _ in range(60)]
    x = featurizer.matrix(points)
    assert x.shape == (60, len(featurizer.names)) and x.dtype == np.float32
    n_raw = len(featurizer.space.param_space())
    for point, row in zip(points, x, strict=True):
        assert np.isfinite(row[:n_raw]).all()
        if point.valid:
            assert np.isfinite(row).all()
        else:  # impossible hardware: derived features are missing, not made up
            assert np.isnan(row[n_raw:]).all()


def test_fill_features_flag_overflow() -> None:
    f = Featurizer(spaces.load("conv2d_schedule"))
    names = f.names
    big = f.point({"u_tile_h": 1.0, "u_tile_w": 1.0, "u_tile_ci": 1.0, "u_tile_co": 1.0,
                   "h_nthread": 1, "oc_nthread": 1})
    small = f.point({"u_tile_h": 0.0, "u_tile_w": 0.0, "u_tile_ci": 0.0, "u_tile_co": 0.0,
                     "h_nthread": 1, "oc_nthread": 1})
    fill = names.index("max_fill")
    assert f.row(big)[fill] > 1 > f.row(small)[fill]
    traffic = names.index("log2:traffic_bytes")
    assert f.row(big)[traffic] < f.row(small)[traffic]  # whole-layer tiles move the least


def test_enumerate_lists_every_candidate_once() -> None:
    f = Featurizer(spaces.load("conv2d_schedule"))
    points = f.enumerate(100_000)
    assert points is not None
    keys = {p.key for p in points}
    assert len(keys) == len(points)
    rng = np.random.default_rng(2)
    for _ in range(200):
        assert f.point(f.random_params(rng)).key in keys
    assert Featurizer(spaces.load("conv2d")).enumerate(1000) is None  # too large: refused


def test_hardware_features_are_cached_and_exact() -> None:
    from vtatune import area
    from vtatune.hardware import boards

    f = Featurizer(spaces.load("conv2d"))
    point = f.point({"LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_INP_BUFF_SIZE": 15,
                     "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17, "LOG_UOP_BUFF_SIZE": 15})
    assert point.valid
    report = area.estimate(point.hw.hw, boards.load("pynq-z1"))
    assert point.hw.log2_area_mm2 == pytest.approx(math.log2(report.area_mm2))
    assert f.hw_info(point.params) is point.hw
