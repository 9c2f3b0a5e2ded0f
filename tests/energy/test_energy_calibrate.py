"""Power calibration on records whose truth is known (made with numpy from a chosen baseline
and scale, plus meter noise): the fit finds them, says how sure it is, and holds at its prior
what the records cannot pin."""

from __future__ import annotations

import numpy as np
import pytest

from tests.energy.conftest import c8_program, timed
from vtatune.energy.calibrate import PowerRecord, fit, power_record


def _records(baseline: float, scale: float, dyn_w: list[float], noise: float = 0.0,
             seed: int = 0) -> list[PowerRecord]:
    rng = np.random.default_rng(seed)
    out = []
    for i, d in enumerate(dyn_w):
        seconds = 0.01 * (i + 1)
        running = baseline + scale * d + rng.normal(0, noise)
        out.append(PowerRecord(f"r{i}", d * seconds, d * seconds / 2, d * seconds * 2, seconds,
                               idle_w=baseline - 0.05, running_w=running))
    return out


def test_recovers_a_known_baseline_and_scale() -> None:
    recs = _records(1.8, 1.6, [0.1, 0.3, 0.5, 0.8, 1.2, 0.2, 0.9], noise=0.01)
    f = fit(recs)
    assert f.scale.pinned and f.baseline_w.pinned
    assert f.scale.value == pytest.approx(1.6, abs=3 * f.scale.stderr + 0.05)
    assert f.baseline_w.value == pytest.approx(1.8, abs=3 * f.baseline_w.stderr + 0.02)
    assert f.median_abs_error < 0.02
    assert -1 <= f.correlation <= 1


def test_records_of_one_dynamic_power_cannot_pin_the_scale() -> None:
    """Every record draws the same dynamic power: baseline and scale trade off exactly, so the
    scale stays at its prior (1, the shipped constants) and says so."""
    recs = _records(1.7, 2.0, [0.4] * 5)
    f = fit(recs)
    assert not f.scale.pinned and f.scale.value == 1.0
    # the baseline absorbs what the scale cannot say: running = b + 1 x 0.4
    assert f.baseline_w.value == pytest.approx(1.7 + 2.0 * 0.4 - 0.4, rel=0.05)


def test_bad_records_are_refused() -> None:
    with pytest.raises(ValueError, match="no power records"):
        fit([])
    with pytest.raises(ValueError, match="seconds > 0"):
        fit([PowerRecord("x", 1.0, 0.5, 2.0, 0.0, 1.0, 2.0)])


def test_power_record_prices_a_real_program() -> None:
    from vtatune.compiler import compile_candidate
    from vtatune.hardware import boards, config
    from vtatune.runtime import build_program
    from vtatune.simulator import simulate
    from vtatune.workloads import RESNET18

    hw, b = config.default(), boards.load("pynq-z1")
    knobs = dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=1, tile_co=8, h_nthread=1,
                 oc_nthread=2)
    res = compile_candidate(RESNET18["C8"], hw, knobs)
    assert res.ok, res.reason
    p = build_program(res, RESNET18["C8"], hw)
    t = simulate(p, b)
    r = power_record("C8", p, t.cycles, 2 * t.seconds, b, idle_w=1.6, running_w=2.1)
    assert 0 < r.dynamic_low_j < r.dynamic_j < r.dynamic_high_j
    # slower measured time, same events: the same dynamic energy but the clocked logic's
    assert r.dynamic_w < power_record("C8", p, t.cycles, t.seconds, b, 1.6, 2.1).dynamic_w


def test_a_saved_profile_prices_the_board_it_names(tmp_path, monkeypatch) -> None:
    """Fit, save as pynq-z1@lab, and price with --board pynq-z1@lab: the dynamic terms scale,
    static and baseline power are the fitted baseline, and outputs say it is calibrated."""
    from vtatune.energy import estimate
    from vtatune.energy import profiles as pp
    from vtatune.energy.calibrate import profile_of
    from vtatune.hardware import boards

    monkeypatch.setenv("VTATUNE_DATA", str(tmp_path))
    recs = _records(1.9, 1.5, [0.1, 0.3, 0.5, 0.8, 1.2], noise=0.005)
    f = fit(recs)
    path = pp.save(profile_of(f, "pynq-z1", "lab"))
    assert path == tmp_path / "energy" / "pynq-z1" / "lab.json"
    prof = pp.load("pynq-z1", "lab")
    assert prof is not None and prof.scale == pytest.approx(f.scale.value)

    program = c8_program()
    cycles, seconds = timed(program, "pynq-z1")
    shipped = estimate(program, cycles, seconds, boards.load("pynq-z1"))
    lab = estimate(program, cycles, seconds, boards.load("pynq-z1"), profile=prof)
    assert lab.components["gemm"].value == pytest.approx(
        prof.scale * shipped.components["gemm"].value)
    static = lab.components["pl_static"].value + lab.components["base"].value
    assert static == pytest.approx(prof.baseline_w * seconds)
    assert "calibrated on 5 measured power records (profile lab" in lab.note
    assert not lab.unsourced
    assert lab.board_w.low <= lab.board_w.value <= lab.board_w.high
    # a board named with the profile (pynq-z1@lab) picks it up by itself
    import dataclasses

    named_board = dataclasses.replace(boards.load("pynq-z1"), name="pynq-z1@lab",
                                      profile="lab")
    named = estimate(program, cycles, seconds, named_board)
    assert named.board_j == lab.board_j and named.note == lab.note


def test_a_damaged_profile_lists_its_problems(tmp_path) -> None:
    from vtatune.energy import profiles as pp
    from vtatune.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        pp.parse({"schema": 1, "board": "pynq-z1", "name": "x", "baseline_w": -1,
                  "scale": "big"}, "p.json")
    text = " ".join(err.value.problems)
    for key in ("baseline_w", "scale", "records", "scale_pinned"):
        assert key in text
