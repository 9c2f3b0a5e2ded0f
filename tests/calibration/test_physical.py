"""The joint physical model: recovering per-build refills and shared constants from known
ones, holding what records cannot pin at its prior, transfer across designs on the measured
records, and the shipped profiles (bounds and transfer thresholds, not exact fitted values:
they are refitted whenever the programs change, ``python -m vtatune.calibration.ship``)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from vtatune import calibration as cal
from vtatune.calibration import physical
from vtatune.hardware import boards, timing_profiles
from vtatune.hardware.config import default
from vtatune.simulator.timing import FIT_KEYS, end_cycles, host_seconds, load_params, timing_dir

PYNQ = boards.load("pynq-z1")
BASE = replace(load_params(PYNQ), **{k: t.prior for k, t in physical.TERMS.items()})
#: Small conv2d records (shape, knobs) that compile quickly and stress different constants
#: (tiles VTA's compiler builds: its DMA rules refuse e.g. a 2x2 tile of an 8-wide output).
CASES = [
    ((1, 32, 8, 8, 32, 3, 3, 1, 1), dict(tile_h=8, tile_w=8, tile_ci=1, tile_co=1, oc_nthread=2)),
    ((1, 32, 8, 8, 32, 3, 3, 1, 1), dict(tile_h=2, tile_w=8, tile_ci=1, tile_co=2, oc_nthread=1)),
    ((1, 64, 7, 7, 64, 1, 1, 0, 1), dict(tile_h=7, tile_w=7, tile_ci=1, tile_co=2, oc_nthread=2)),
    ((1, 64, 7, 7, 64, 1, 1, 0, 1), dict(tile_h=1, tile_w=7, tile_ci=4, tile_co=4, oc_nthread=1)),
    ((1, 16, 14, 14, 32, 3, 3, 1, 2), dict(tile_h=7, tile_w=7, tile_ci=1, tile_co=1)),
    ((1, 16, 14, 14, 32, 3, 3, 1, 2), dict(tile_h=1, tile_w=7, tile_ci=1, tile_co=2)),
    ((1, 48, 6, 6, 16, 3, 3, 1, 1), dict(tile_h=3, tile_w=2, tile_ci=1, tile_co=1)),
    ((1, 32, 16, 16, 16, 1, 1, 0, 1), dict(tile_h=4, tile_w=16, tile_ci=1, tile_co=1)),
]
#: Two builds of one design: the same shared constants, other ALU refills.
SHARED = {"dma_row_cycles": 30.0, "dma_beat_cycles": 1.0, "insn_cycles": 14.0,
          "gemm_refill_cycles": 6.0, "host_call_us": 30.0, "host_insn_us": 0.7}
ALU = {"2019-01": 3.0, "2019-02": 20.0}


def _raw(shape: tuple[int, ...], knobs: dict[str, int], month: str) -> dict:
    keys = ("n", "cin", "h", "w", "cout", "kh", "kw", "pad", "stride")
    return {"shape": {"op": "conv2d", **dict(zip(keys, shape, strict=True)), "groups": 1},
            "knobs": knobs, "ms": 1.0, "measured": f"{month}-15"}


@pytest.fixture(scope="module")
def two_builds() -> list[cal.Prepared]:
    """CASES measured on two builds, 'measured' with known constants."""
    raw = [_raw(s, k, m) for m in ALU for s, k in CASES]
    items = cal.prepare(cal.records_from_list(raw, "cases", default(), "pynq-z1"), PYNQ, BASE)
    out = []
    for it in items:
        p = replace(BASE, **SHARED, alu_refill_cycles=ALU[it.record.session])
        ms = (math.ceil(end_cycles(it.rows, p)) / PYNQ.clock_hz
              + host_seconds(it.rows.n, p)) * 1e3
        out.append(replace(it, record=replace(it.record, ms=ms)))
    return out


def test_builds_share_constants_and_differ_in_refills(two_builds) -> None:
    fit = physical.fit_joint(two_builds, PYNQ, BASE)
    assert sorted(fit.builds) == ["1x16x16 2019-01", "1x16x16 2019-02"]
    assert float(np.max(np.abs(fit.errors))) < 0.03
    alu = {b.split()[1]: fit.builds[b]["alu_refill_cycles"].value for b in fit.builds}
    # the build that refills slower is fitted slower, near the truth where it is pinned
    assert alu["2019-02"] > 2 * alu["2019-01"]
    est = fit.builds["1x16x16 2019-02"]["alu_refill_cycles"]
    assert est.pinned and est.value == pytest.approx(ALU["2019-02"], rel=0.3)
    for e in fit.estimates:  # inside the physical bounds; held ones sit at their prior
        t = physical.TERMS[e.key]
        assert t.lo <= e.value <= t.hi
        if not e.pinned:
            assert e.value == pytest.approx(e.prior, rel=1e-6) and e.name in fit.unpinned


def test_what_records_cannot_pin_is_held_at_its_prior(two_builds) -> None:
    # two records of one build cannot tell apart seven constants: most are held at prior
    fit = physical.fit_joint(two_builds[:2], PYNQ, BASE)
    held = [e for e in fit.estimates if not e.pinned]
    assert len(held) >= 5
    for e in held:
        assert e.value == pytest.approx(e.prior, rel=1e-6), e.name
    # every pinned constant's uncertainty is within the pin rule
    for e in fit.estimates:
        if e.pinned:
            assert e.factor is not None and e.factor > 1.0


def test_correlations_are_bounded(two_builds) -> None:
    fit = physical.fit_joint(two_builds, PYNQ, BASE)
    assert all(-1.0 - 1e-9 <= c <= 1.0 + 1e-9 for c in fit.correlations.values())


@pytest.fixture(scope="module")
def measured() -> list[cal.Prepared]:
    data = cal.read_measured(timing_dir() / "measured" / "vta_pynq_measured.log", default(),
                             PYNQ)
    return cal.prepare(data.records, PYNQ, BASE)


def test_measured_records_are_three_builds_of_two_designs(measured) -> None:
    assert len(measured) == 31
    builds = sorted({physical.build_of(it) for it in measured})
    assert builds == ["1x16x16 2019-07", "1x16x16 2019-08", "4x8x8 2019-07"]


def test_leave_one_design_out_transfers(measured) -> None:
    # fit on the 1x16 records, predict the 4x8 ones, and back: within the stated threshold
    # (the out-of-the-box error was 1.6x slow for the 4x8 design)
    errs = physical.held_out_errors(measured, PYNQ, BASE, "lodo")
    assert all(e is not None and math.isfinite(e) for e in errs)
    assert float(np.median(np.abs(errs))) < 0.40


def test_shipped_profiles_are_one_physical_model() -> None:
    raw = json.loads((timing_dir() / "pynq-z1.json").read_text())
    profiles = raw["profiles"]
    assert "physical" in profiles and {"2019-07", "2019-08"} <= set(profiles)
    scores = {n: p["calibration"]["all_records_median_error"] for n, p in profiles.items()}
    # the default is the profile that times every record best, not its own records best
    assert raw["default_profile"] == min(scores, key=lambda n: scores[n])
    shared = [k for k in FIT_KEYS if k not in physical.BUILD_KEYS]
    for name, body in profiles.items():
        c = body["calibration"]
        p = load_params(f"pynq-z1@{name}")
        assert p.calibrated and c["all_records"] == 31
        for k in FIT_KEYS:  # physical bounds
            assert physical.TERMS[k].lo <= getattr(p, k) <= physical.TERMS[k].hi, (name, k)
        for k in shared:  # the shared constants are one set for every build
            assert getattr(p, k) == load_params(f"pynq-z1@{raw['default_profile']}").__dict__[k]
        for e in c["estimates"]:  # a held constant sits at its prior
            if not e["pinned"] and not e["build"]:
                assert e["value"] == pytest.approx(raw["prior"][e["key"]], rel=1e-3)
        t = c["transfer"]
        assert set(t) == {"loo", "lono", "lodo", "lobo"}
        assert all(t[g]["records"] == 31 for g in t)
        # thresholds: LOO within 10%, transfer to another network, design or build within 35%
        assert t["loo"]["median"] < 0.10
        assert max(t[g]["median"] for g in ("lono", "lodo", "lobo")) < 0.35
        assert c["domain"]["boards"] == ["pynq-z1"] and c["domain"]["kinds"] == ["conv2d"]
    assert profiles["physical"]["calibration"]["domain"]["designs"] == ["1x16x16", "4x8x8"]


def test_domain_marks_extrapolation() -> None:
    from vtatune.hardware.config import from_dict

    inside = timing_profiles.domain("pynq-z1", default(), ["conv2d"])
    assert not inside.extrapolated and inside.line() == ""
    wide = from_dict({**default().to_vta_json(), "LOG_BLOCK": 5}, "x")
    out = timing_profiles.domain("pynq-z1", wide, ["conv2d"])
    assert out.extrapolated and "design 1x32x32" in out.reasons[0]
    lodo = load_params("pynq-z1").calibration["transfer"]["lodo"]["median"]
    assert out.expected_error == pytest.approx(lodo)
    assert "timing extrapolated" in out.line()
    kind = timing_profiles.domain("pynq-z1", default(), ["group_conv2d"])
    assert kind.extrapolated and "group_conv2d" in kind.reasons[0]
    board = timing_profiles.domain("ultra96", default(), ["conv2d"])
    assert board.extrapolated and "no measurements" in board.reasons[0]
    # stored rows give the design as log2 parameters
    assert timing_profiles.design_name({"LOG_BATCH": 2, "LOG_BLOCK_IN": 3,
                                        "LOG_BLOCK_OUT": 3}) == "4x8x8"
    assert timing_profiles.kind_of("group_conv2d_n1_c32_h8") == "group_conv2d"
    assert timing_profiles.kind_of("resnet18") == ""
