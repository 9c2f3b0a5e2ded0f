"""Sanity anchors of the area model: real numbers for the default design, mapping rules per
family, monotonicity over many configs, every shipped config x board, speed."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from vtatune.area import AreaReport, estimate, fit
from vtatune.hardware import boards, config
from vtatune.hardware.config import LOG_RANGES, HwConfig, problems_of

BOARDS = {b.name: b for b in boards.all_boards()}
PYNQ = BOARDS["pynq-z1"]


def report(cfg: HwConfig | None = None, board: str = "pynq-z1") -> AreaReport:
    return estimate(cfg or config.default(), BOARDS[board])


def test_default_fits_pynq_with_hand_counted_block_ram() -> None:
    r = report()
    # Block RAM by hand (see test_area_sram): wgt 57 + inp 7.5 + out 7.5 + acc 28.5 + uop 7.5
    # + queues (3 x 2 + 4 x 0.5) 8 = 116 BRAM36 of 140.
    assert r.component("sram.wgt").resources["bram36"] == 57.0
    assert r.component("sram.acc").resources["bram36"] == 28.5
    assert r.component("queues").resources["bram36"] == 8.0
    assert r.totals["bram36"] == 116.0
    f = fit(r, PYNQ)
    assert f.fits and f.over == ()
    assert f.use("bram36").utilization_pct == pytest.approx(100 * 116 / 140)
    # VTA's Pynq build fills most of the device: LUTs well used, DSPs unused (GEMM in LUTs).
    assert 0.5 < r.totals["lut"] / 53200 < 0.9
    assert r.totals["dsp"] == 0
    assert 0.15 < r.totals["ff"] / 106400 < 0.5


def test_gemm_logic_by_hand_on_7series() -> None:
    # 256 soft 8x8 multipliers at 1.15 LUT/bit^2 = 18841.6; 16 lanes of a 16-input tree
    # (8x17 + 4x18 + 2x19 + 1x20 = 266 adder bits); 16 x 32-bit accumulate + reset select
    # (1 + 0.5 LUT/bit): 256 * 64 * 1.15 + 16 * 266 + 16 * 32 * 1.5 = 23865.6 -> 23866.
    assert report().component("gemm").resources["lut"] == 23866


@pytest.mark.parametrize(("board", "dsp"), [("pynq-z1", 0), ("ultra96", 128), ("zcu104", 128),
                                            ("de10-nano", 86)])
def test_gemm_dsp_packing_per_family(board: str, dsp: int) -> None:
    # 7-series: GEMM in LUTs; UltraScale+: two int8 products per DSP48E2 (WP486);
    # Cyclone V: three 9x9 multipliers per DSP block (ceil(256 / 3) = 86).
    assert report(board=board).component("gemm").resources["dsp"] == dsp


def test_dsp_overflow_spills_to_logic() -> None:
    cfg = config.load("1x32x32")
    r = report(cfg, "de10-nano")
    assert r.totals["dsp"] == 112  # every DSP block, the rest in ALMs
    assert any("spill" in n for n in r.notes)
    soft = report(dataclasses.replace(cfg, log_block_out=4), "de10-nano")
    assert r.component("gemm").resources["alm"] > soft.component("gemm").resources["alm"]


def test_huge_weight_buffer_does_not_fit_pynq() -> None:
    # 2 MiB of weights (16.8 Mbit) on a device with 140 x 36 Kbit = 5.2 Mbit of block RAM;
    # smaller inp/acc buffers keep the micro-op index fields within 32 bits.
    big = dataclasses.replace(config.default(), log_wgt_buff_size=21, log_inp_buff_size=13,
                              log_acc_buff_size=14)
    assert not problems_of(big)
    f = fit(report(big), PYNQ)
    assert not f.fits
    assert "bram36" in f.over
    assert f.use("bram36").utilization_pct > 100


def test_big_weight_buffer_goes_to_uram_on_zcu104() -> None:
    big = dataclasses.replace(config.default(), log_wgt_buff_size=21, log_inp_buff_size=13,
                              log_acc_buff_size=14)
    # 2 banks x (ceil(1024 / 72) = 15 columns) x (8192 / 4096 = 2 rows) = 60 URAM, 95% full.
    r = report(big, "zcu104")
    assert r.component("sram.wgt").resources == {"lut": 0, "ff": 0, "bram36": 0, "uram": 60,
                                                 "dsp": 0}
    assert fit(r, BOARDS["zcu104"]).fits
    # Same design on the URAM-less Ultra96 needs block RAM it does not have.
    assert fit(report(big, "ultra96"), BOARDS["ultra96"]).over == ("bram36",)


def test_every_shipped_config_on_every_board_has_a_report() -> None:
    for path in config.shipped():
        cfg = config.load(path)
        for board in BOARDS.values():
            r = estimate(cfg, board)
            f = fit(r, board)
            assert r.area_mm2 > 0
            assert r.area_mm2 == pytest.approx(sum(c.area_mm2 for c in r.components))
            assert set(r.totals) == set(r.kinds)
            assert {u.kind for u in f.usage} == set(r.kinds)
            assert f.fits == (not f.over)


def test_known_fits() -> None:
    assert fit(report(config.load("1x32x32")), PYNQ).over == ("lut", "bram36")
    assert fit(report(config.load("1x8x8")), PYNQ).fits
    assert fit(report(board="de10-nano"), BOARDS["de10-nano"]).fits
    assert fit(report(config.load("1x32x32"), "zcu104"), BOARDS["zcu104"]).over == ("bram36",)


def test_resource_kinds_follow_the_family() -> None:
    assert report().kinds == ("lut", "ff", "bram36", "dsp")
    assert report(board="zcu104").kinds == ("lut", "ff", "bram36", "uram", "dsp")
    assert report(board="de10-nano").kinds == ("alm", "ff", "m10k", "dsp")


def test_as_dict_is_plain_data() -> None:
    d = report().as_dict()
    assert d["board"] == "pynq-z1" and d["logic_kind"] == "lut"
    assert [c["name"] for c in d["components"]][:3] == ["gemm", "alu", "sram.inp"]


# ---- monotonicity -------------------------------------------------------------------------

KEYS = ("log_batch", "log_block_in", "log_block_out", "log_uop_buff_size", "log_inp_buff_size",
        "log_wgt_buff_size", "log_acc_buff_size")


@st.composite
def valid_configs(draw: st.DrawFn) -> HwConfig:
    """Valid configs, drawn by GEMM shape and SRAM depth (in tiles) so most draws are valid."""
    lb, bi, bo = draw(st.integers(0, 4)), draw(st.integers(1, 7)), draw(st.integers(1, 7))
    depth = st.integers(1, 12)
    cfg = HwConfig(log_batch=lb, log_block_in=bi, log_block_out=bo,
                   log_uop_buff_size=draw(st.integers(*LOG_RANGES["LOG_UOP_BUFF_SIZE"])),
                   log_inp_buff_size=draw(depth) + lb + bi,
                   log_wgt_buff_size=draw(depth) + bi + bo,
                   log_acc_buff_size=draw(depth) + lb + bo + 2)
    assume(not problems_of(cfg))
    return cfg


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(cfg=valid_configs(), key=st.sampled_from(KEYS), board=st.sampled_from(sorted(BOARDS)))
def test_area_grows_with_every_size_parameter(cfg: HwConfig, key: str, board: str) -> None:
    bigger = dataclasses.replace(cfg, **{key: getattr(cfg, key) + 1})
    assume(not problems_of(bigger))
    small, large = report(cfg, board), report(bigger, board)
    assert large.area_mm2 > small.area_mm2
    logic = small.logic_kind
    assert large.totals[logic] >= small.totals[logic]


def test_area_grows_on_a_grid() -> None:
    base = config.default()
    for board in BOARDS:
        for key in KEYS:
            prev = None
            lo, hi = LOG_RANGES[key.upper()]
            for val in range(lo, hi + 1):
                cfg = dataclasses.replace(base, **{key: val})
                if problems_of(cfg):
                    continue
                area = report(cfg, board).area_mm2
                assert prev is None or area > prev, (board, key, val)
                prev = area


def test_estimate_reads_its_coefficients_once() -> None:
    # estimate runs once per search candidate; its speed is measured by `make bench`
    # (vtatune/bench/area.py), not asserted here. What keeps it fast, and can fail: the
    # coefficient file is parsed once, and repeated estimates are the same pure result.
    from vtatune.area import coefficients

    pairs = [(config.load(p), board) for p in config.shipped() for board in BOARDS.values()]
    first = [estimate(cfg, board) for cfg, board in pairs]
    loads = coefficients._load_cached.cache_info().misses
    for _ in range(3):
        for (cfg, board), want in zip(pairs, first, strict=True):
            got = estimate(cfg, board)
            assert got.totals == want.totals and got.area_mm2 == want.area_mm2
    assert coefficients._load_cached.cache_info().misses == loads
