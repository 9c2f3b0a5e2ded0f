"""``vtatune calibrate``: report, --json keys, --out writes a usable timing file, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtatune.cli.main import main
from vtatune.simulator.timing import FIT_KEYS, load_params_file

RECORDS = [
    {"shape": {"op": "conv2d", "n": 1, "cin": 32, "h": 8, "w": 8, "cout": 32, "kh": 3, "kw": 3,
               "stride": 1, "pad": 1, "groups": 1},
     "knobs": {"tile_h": 8, "tile_w": 8, "tile_ci": 1, "tile_co": 1, "oc_nthread": 2},
     "ms": 0.2, "board": "pynq-z1", "model": "pynq_1x16_i8w8a32_15_15_18_17"},
    {"shape": {"op": "conv2d", "n": 1, "cin": 64, "h": 7, "w": 7, "cout": 64, "kh": 1, "kw": 1,
               "stride": 1, "pad": 0, "groups": 1},
     "knobs": {"tile_h": 1, "tile_w": 7, "tile_ci": 4, "tile_co": 4, "oc_nthread": 1},
     "ms": 0.3},
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["calibrate", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture()
def measured(tmp_path: Path) -> Path:
    p = tmp_path / "m.json"
    p.write_text(json.dumps(RECORDS))
    return p


def test_json_keys_and_written_file(capsys, measured: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "pynq-fitted.json"
    rc, out, err = run(capsys, str(measured), "--board", "pynq-z1", "--out", str(out_file),
                       "--json")
    assert rc == 0, err
    d = json.loads(out)
    for key in ("median_error", "loo_median_error", "worst_error", "records", "params",
                "solver", "rank_agreement"):
        assert key in d
    assert len(d["records"]) == 2 and d["written"] == str(out_file)
    assert d["median_error"] <= d["worst_error"]
    for r in d["records"]:
        assert r["simulated_ms"] == pytest.approx(r["accelerator_ms"] + r["host_ms"])
        assert r["error"] == pytest.approx(r["simulated_ms"] / r["measured_ms"] - 1)
    p = load_params_file(out_file)
    assert p.calibrated and set(d["params"]) == set(FIT_KEYS)
    assert all(getattr(p, k) == pytest.approx(v, rel=1e-3) for k, v in d["params"].items())


def test_text_report_writes_nothing_without_out(capsys, measured: Path) -> None:
    rc, out, err = run(capsys, str(measured), "--no-loo")
    assert rc == 0, err
    assert "median error" in out and "leave-one-out median n/a" in out
    assert "nothing written" in out and "rank agreement" in out


@pytest.mark.parametrize("content,message", [
    ("[]", "no measured records"),
    ("{", "not valid JSON"),
    (json.dumps([{"shape": {}, "knobs": {}}]), "missing or wrong-typed ms"),
    (json.dumps([{**RECORDS[0],  # legal knobs whose tiles overflow the SRAMs
                  "shape": {**RECORDS[0]["shape"], "cin": 256, "cout": 256, "h": 56, "w": 56},
                  "knobs": {"tile_h": 56, "tile_w": 56, "tile_ci": 16, "tile_co": 16}}]),
     "buffer needs"),
])
def test_bad_files_are_one_line(capsys, tmp_path: Path, content: str, message: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(content)
    rc, out, err = run(capsys, str(p))
    assert rc == 2 and out == ""
    assert err.startswith("vtatune: error:") and message in err and err.count("\n") == 1


def test_missing_file_and_unknown_board(capsys, measured: Path, tmp_path: Path) -> None:
    rc, _, err = run(capsys, str(tmp_path / "nope.json"))
    assert rc == 2 and "no such file" in err
    rc, _, err = run(capsys, str(measured), "--board", "abacus")
    assert rc == 2 and err.startswith("vtatune: error:") and err.count("\n") == 1
