"""``vtatune area`` and ``vtatune boards``: output, JSON, and one-line errors for bad input."""

from __future__ import annotations

import json

import pytest

from vtatune.cli.main import main
from vtatune.hardware import config


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_area_default_table(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "area")
    assert rc == 0, err
    assert "VTA 1x16x16 on pynq-z1" in out
    for name in ("gemm", "alu", "sram.wgt", "queues", "axi", "total"):
        assert name in out
    assert "bram36 82.9% (116/140)" in out
    assert "mm² (40nm-fpga-fabric" in out and "mm2" not in out
    assert out.rstrip().endswith("fits pynq-z1")


def test_area_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "area", "--json")
    assert rc == 0
    d = json.loads(out)
    for key in ("lut", "ff", "bram", "dsp", "area_mm2", "fits", "over", "utilization",
                "components"):
        assert key in d
    assert d["board"] == "pynq-z1" and d["logic_kind"] == "lut" and d["bram_kind"] == "bram36"
    assert d["bram"] == 116.0 and d["dsp"] == 0 and d["fits"] is True and d["over"] == []
    assert d["utilization"]["bram36"] == pytest.approx(100 * 116 / 140)
    wgt = next(c for c in d["components"] if c["name"] == "sram.wgt")
    assert wgt["resources"]["bram36"] == 57.0 and wgt["memory_bits"] == 256 * 1024 * 8
    assert d["area_mm2"] == pytest.approx(sum(c["area_mm2"] for c in d["components"]))


def test_area_other_board_and_config(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "area", "--hw", "1x32x32", "--board", "de10-nano", "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["logic_kind"] == "alm" and d["bram_kind"] == "m10k"
    assert d["fits"] is False and d["over"] == ["alm", "m10k"]
    assert d["dsp"] == 112 and d["notes"]


def test_area_config_file_path(capsys: pytest.CaptureFixture[str]) -> None:
    path = config.hwconfig_dir() / "1x8x8.json"
    rc, out, _ = run(capsys, "area", "--hw", str(path), "--board", "zcu104")
    assert rc == 0
    assert "VTA 1x8x8 on zcu104" in out and "uram" in out


def test_area_not_fitting_is_reported_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "area", "--hw", "1x32x32")
    assert rc == 0
    assert "does not fit pynq-z1: lut" in out and "bram36" in out


def test_area_unknown_board(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "area", "--board", "nope")
    assert rc == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "unknown board 'nope'" in err and "pynq-z1" in err


@pytest.mark.parametrize("bad", ["impossible", "not_json", "too_deep", "unknown_keys"])
def test_area_invalid_config(capsys: pytest.CaptureFixture[str], bad: str) -> None:
    path = config.hwconfig_dir() / "malformed" / f"{bad}.json"
    rc, out, err = run(capsys, "area", "--hw", str(path))
    assert rc == 2
    assert out == ""
    assert err.startswith("vtatune: error: ") and err.count("\n") == 1
    assert "Traceback" not in err


def test_area_missing_config_file(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run(capsys, "area", "--hw", "/nonexistent/cfg.json")
    assert rc == 2 and "no such file" in err


def test_boards_table(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "boards")
    assert rc == 0
    for name in ("pynq-z1", "ultra96", "zcu104", "de10-nano"):
        assert name in out
    assert "53,200 lut" in out and "553 m10k" in out


def test_boards_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "boards", "--json")
    assert rc == 0
    boards = {b["name"]: b for b in json.loads(out)}
    pynq = boards["pynq-z1"]
    assert pynq["clock_mhz"] == 100 and pynq["axi_bits"] == 64
    assert pynq["resources"] == {"lut": 53200, "ff": 106400, "bram36": 140, "dsp": 220}
    assert boards["zcu104"]["resources"]["uram"] == 96
    assert boards["de10-nano"]["family"] == "intel-cyclonev"
