"""Board fit: utilization percentages, every overflow listed, one-line summary."""

from __future__ import annotations

import dataclasses

import pytest

from vtatune.area import estimate, fit
from vtatune.hardware import boards, config
from vtatune.hardware.boards import Board


def tiny_board(**resources: int) -> Board:
    base = boards.load("pynq-z1")
    return dataclasses.replace(base, name="tiny", resources=resources)


def test_every_overflow_is_listed_with_percentages() -> None:
    r = estimate(config.default(), boards.load("pynq-z1"))
    small = tiny_board(lut=10000, ff=106400, bram36=58, dsp=220)
    f = fit(r, small)
    assert not f.fits
    assert f.over == ("lut", "bram36")
    assert f.use("lut").utilization_pct == pytest.approx(100 * r.totals["lut"] / 10000)
    assert f.use("bram36").utilization_pct == pytest.approx(200.0)
    assert f.use("dsp").utilization_pct == 0.0
    line = f.summary()
    assert line.startswith("does not fit tiny: lut ")
    assert "bram36 200% (116/58)" in line


def test_missing_resource_counts_as_none() -> None:
    r = estimate(config.default(), boards.load("pynq-z1"))
    f = fit(r, tiny_board(lut=53200, ff=106400, bram36=140))  # no DSP listed, none needed
    assert f.fits
    needs_dsp = estimate(config.default(), boards.load("ultra96"))
    no_dsp = dataclasses.replace(boards.load("ultra96"), resources={"lut": 70560, "ff": 141120,
                                                                    "bram36": 216})
    f = fit(needs_dsp, no_dsp)
    assert f.over == ("dsp",)
    assert f.use("dsp").utilization_pct is None
    assert "dsp n/a (128/0)" in f.summary()


def test_family_mismatch_is_a_bug() -> None:
    r = estimate(config.default(), boards.load("pynq-z1"))
    with pytest.raises(ValueError, match="family"):
        fit(r, boards.load("de10-nano"))


def test_as_dict() -> None:
    r = estimate(config.default(), boards.load("zcu104"))
    d = fit(r, boards.load("zcu104")).as_dict()
    assert d["fits"] is True and d["over"] == []
    assert set(d["utilization"]) == {"lut", "ff", "bram36", "uram", "dsp"}
