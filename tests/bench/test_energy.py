"""The energy bench's figures: ResNet-18 on the default design, checked against the physics
they summarise (runs per inference, power = energy / time, ranges ordered)."""

from __future__ import annotations

import pytest

from vtatune.bench.energy import bench_energy, resnet18_energy


def test_resnet18_energy_figures() -> None:
    r = resnet18_energy()
    assert r["layers"] == 10
    assert r["runs"] == 19  # ResNet-18's offloaded convolutions: 20 minus the stem
    for key in ("accelerator_j", "board_j", "accelerator_w", "board_w"):
        f = r[key]
        assert 0 < f["low"] <= f["value"] <= f["high"]
    for c in ("value", "low", "high"):
        assert r["board_w"][c] == pytest.approx(r["board_j"][c] / r["seconds"])
        assert r["accelerator_j"][c] < r["board_j"][c]
    assert r["board_w"]["low"] <= 2.0 <= r["board_w"]["high"]


def test_bench_rows_name_their_figures() -> None:
    rows = bench_energy()
    assert len(rows) == 3
    assert "energy per inference" in rows[0][0] and rows[0][1].count("J") >= 6
    assert "average power" in rows[1][0] and rows[1][1].count("W") >= 6
