"""``vtatune simulate``: report, JSON keys, --check/--inputs/--output, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vtatune.cli.main import main
from vtatune.runtime import random_inputs
from vtatune.workloads import Conv2d, Dense

TUTORIAL = "tile_h=7,tile_w=14,tile_ci=1,tile_co=8,h_nthread=1,oc_nthread=2"
SMALL = ["conv2d", "--shape", "1,20,7,7,24,3,3,1,2"]
INVALID = ["conv2d", "--layer", "C2", "--hw", "1x16x16_small", "--knobs",
           "tile_h=56,tile_w=56,tile_ci=1,tile_co=4,h_nthread=1,oc_nthread=1"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_tutorial_layer_report_and_check(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "conv2d", "--layer", "C8", "--knobs", TUTORIAL, "--check")
    assert rc == 0, err
    assert "conv2d C8" in out and "board pynq-z1 at 100 MHz" in out
    assert "epilogue clip(acc >> 8, 0, 127)" in out
    assert "gemm_counter 451,584" in out and "alu_counter 9,408" in out
    assert "check: bit-exact vs numpy" in out
    assert "energy per call: accelerator" in out and "average power" in out
    assert "energy: estimate from the shipped constants" in out


def test_json_has_the_promised_keys(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, *SMALL, "--board", "ultra96", "--json")
    assert rc == 0
    d = json.loads(out)
    for key in ("status", "cycles", "seconds", "counters", "bounds", "efficiency", "check",
                "instructions", "modules", "knobs", "build"):
        assert key in d
    assert d["status"] == "valid" and d["board"] == "ultra96" and d["check"] is None
    assert d["accelerator_seconds"] == pytest.approx(d["cycles"] / 333e6)
    assert d["seconds"] == pytest.approx(d["accelerator_seconds"] + d["host_seconds"])
    assert d["host_seconds"] > 0 and d["timing_model"] >= 2
    assert d["cycles"] >= max(d["bounds"].values())
    assert 0 < d["efficiency"] <= 1
    assert d["instructions"]["total"] == d["build"]["insns"]
    assert d["counters"]["gemm_counter"] > 0  # read off the program without running it
    e = d["energy"]
    assert e["board"] == "ultra96" and e["seconds"] == pytest.approx(d["seconds"])
    for key in ("accelerator_j", "board_j", "accelerator_w", "board_w"):
        assert 0 < e[key]["low"] <= e[key]["value"] <= e[key]["high"]
    assert e["board_w"]["value"] == pytest.approx(e["board_j"]["value"] / d["seconds"])
    # the events are the program's: GEMM micro-ops as VTA counts them, plus reset GEMMs
    act = e["activity"]
    assert act["gemm_uops"] - act["gemm_reset_uops"] == d["counters"]["gemm_counter"]
    assert act["alu_uops"] == d["counters"]["alu_counter"]
    assert "base_w" in e["unsourced_constants"]  # Ultra96's baseline has no public figure
    assert "not calibrated" in e["note"]


def test_check_with_random_inputs_and_other_shift(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "dense", "--shape", "5,40,36", "--hw", "2x16x16", "--check",
                       "--shift", "3", "--seed", "4", "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["check"] is True and d["shift"] == 3


def test_inputs_and_output_round_trip(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    wl = Conv2d(1, 20, 7, 7, 24, 3, 3, 1, 2)
    rng = np.random.default_rng(1)
    data = rng.integers(-128, 128, size=(1, 20, 7, 7), dtype=np.int8)
    kernel = rng.integers(-128, 128, size=(24, 20, 3, 3), dtype=np.int8)
    np.savez(tmp_path / "in.npz", data=data, kernel=kernel)
    rc, out, err = run(capsys, *SMALL, "--inputs", str(tmp_path / "in.npz"), "--output",
                       str(tmp_path / "out.npy"), "--check", "--shift", "6")
    assert rc == 0, err
    got = np.load(tmp_path / "out.npy")
    assert got.dtype == np.int8 and got.shape == (1, 24, 4, 4)
    np.testing.assert_array_equal(got, wl.reference(data, kernel, 6))
    assert "check: bit-exact" in out and "out.npy" in out


def test_dense_output_without_check(capsys: pytest.CaptureFixture[str],
                                    tmp_path: Path) -> None:
    rc, out, _ = run(capsys, "dense", "--shape", "3,20,10", "--output",
                     str(tmp_path / "r.npy"), "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["check"] is None and d["output"].endswith("r.npy")
    data, kernel = random_inputs(Dense(3, 20, 10), 0)
    np.testing.assert_array_equal(np.load(tmp_path / "r.npy"),
                                  Dense(3, 20, 10).reference(data, kernel))


def test_invalid_candidate_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, *INVALID)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "candidate is invalid" in err and "inp buffer" in err


def test_invalid_candidate_under_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, *INVALID, "--json")
    assert rc == 1
    d = json.loads(out)
    assert d["status"] == "invalid" and "inp buffer" in d["reason"]
    assert d["cycles"] is None and d["check"] is None and d["energy"] is None


def _bad_npz(tmp_path: Path, **arrays: np.ndarray) -> str:
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    return str(path)


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: str(p / "missing.npz"), "no such file"),
    (lambda p: (p / "x.npz").write_text("not a zip") and str(p / "x.npz"), "not an .npz file"),
    (lambda p: _bad_npz(p, data=np.zeros((1, 20, 7, 7), np.int8)), "has no array 'kernel'"),
    (lambda p: _bad_npz(p, data=np.zeros((1, 20, 7, 7), np.int16),
                        kernel=np.zeros((24, 20, 3, 3), np.int8)), "int16, expected int8"),
    (lambda p: _bad_npz(p, data=np.zeros((1, 20, 7, 6), np.int8),
                        kernel=np.zeros((24, 20, 3, 3), np.int8)), "expected (1, 20, 7, 7)"),
])
def test_bad_inputs_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                        make, message: str) -> None:
    rc, out, err = run(capsys, *SMALL, "--inputs", make(tmp_path), "--check")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize(("argv", "message"), [
    (["--shift", "40"], "'--shift': must be in 0..31"),
    (["--board", "nope"], "nope"),
    (["--knobs", "tile_q=2"], "unknown knob"),
    (["--output", "/nonexistent/dir/out.npy"], "cannot write"),
])
def test_bad_options_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                                         message: str) -> None:
    rc, out, err = run(capsys, *SMALL, *argv)
    assert rc == 2
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize(("argv", "kernel_shape", "out_shape"), [
    (["conv2d_transpose", "--shape", "1,20,3,4,12,4,4,1,2"], (20, 12, 4, 4), (1, 12, 6, 8)),
    (["conv2d_transpose", "--shape", "1,16,3,3,8,3,3,0,1"], (16, 8, 3, 3), (1, 8, 5, 5)),
    (["group_conv2d", "--shape", "1,32,6,6,32,3,3,1,2,4"], (32, 8, 3, 3), (1, 32, 3, 3)),
    (["group_conv2d", "--shape", "1,24,5,5,24,3,3,1,1,24"], (24, 1, 3, 3), (1, 24, 5, 5)),
])
def test_new_operators_take_tvm_layouts_and_match_tvm(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str],
        kernel_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> None:
    """--inputs in TVM's layouts (conv2d_transpose_nchw: kernel (CIN, COUT, KH, KW);
    group_conv2d_nchw: (COUT, CIN/GROUPS, KH, KW)), --output (N, COUT, OH, OW) int8, equal
    to TVM's own numpy reference through the same epilogue."""
    testing = pytest.importorskip("tvm.topi.testing")
    rng = np.random.default_rng(7)
    n, cin, h, w = (int(v) for v in argv[2].split(",")[:4])
    data = rng.integers(-128, 128, (n, cin, h, w), dtype=np.int8)
    kernel = rng.integers(-128, 128, kernel_shape, dtype=np.int8)
    np.savez(tmp_path / "in.npz", data=data, kernel=kernel)
    rc, out, err = run(capsys, *argv, "--inputs", str(tmp_path / "in.npz"), "--output",
                       str(tmp_path / "out.npy"), "--check")
    assert rc == 0, err
    assert "check: bit-exact vs numpy" in out
    result = np.load(tmp_path / "out.npy")
    assert result.dtype == np.int8 and result.shape == out_shape
    fields = [int(v) for v in argv[2].split(",")]
    pad, stride = fields[7], fields[8]
    if argv[0] == "conv2d_transpose":
        acc = testing.conv2d_transpose_nchw_python(data.astype(np.int64), kernel.astype(np.int64),
                                                   stride, pad, (0, 0))
    else:
        acc = testing.conv2d_nchw_python(data.astype(np.int64), kernel.astype(np.int64), stride,
                                         pad, fields[9])
    expect = np.clip(np.asarray(acc).astype(np.int64) >> 8, 0, 127).astype(np.int8)
    np.testing.assert_array_equal(result, expect)


def test_new_operators_named_layers_and_wrong_inputs(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    rc, out, err = run(capsys, "conv2d_transpose", "--layer", "CT1", "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["layer"] == "CT1" and d["workload"].startswith("conv2d_transpose_n1_c1024_h4")
    np.savez(tmp_path / "bad.npz", data=np.zeros((1, 16, 4, 4), np.int8),
             kernel=np.zeros((8, 16, 4, 4), np.int8))  # conv2d's kernel layout, not (CIN, COUT..)
    rc, _, err = run(capsys, "conv2d_transpose", "--shape", "1,16,4,4,8,4,4,1,2", "--inputs",
                     str(tmp_path / "bad.npz"))
    assert rc == 2 and "'kernel' has shape (8, 16, 4, 4), expected (16, 8, 4, 4)" in err
    rc, _, err = run(capsys, "group_conv2d", "--shape", "1,16,4,4,8,3,3,1,1,3")
    assert rc == 2 and err.count("\n") == 1 and "CIN=16 is not a multiple of GROUPS=3" in err


def test_simulate_with_passes(capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "passes" / "dram_rows.py"
    rc, out, err = run(capsys, "dense", "--shape", "16,64,64", "--knobs",
                       "tile_b=16,tile_ci=4,tile_co=4,oc_nthread=1", "--passes", str(example),
                       "--check", "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["check"] is True and d["passes"]
    rc, out, _ = run(capsys, "dense", "--shape", "16,64,64", "--knobs",
                     "tile_b=1,tile_ci=4,tile_co=1,oc_nthread=1", "--passes", str(example),
                     "--json")
    assert rc == 1 and json.loads(out)["reason"].startswith("dram_rows_of_48_bytes")


def test_an_estimate_outside_the_profile_is_marked_extrapolated(capsys) -> None:
    # the default profile was fitted on the 1x16x16 and 4x8x8 designs' conv2d records
    rc, out, err = run(capsys, *SMALL)
    assert rc == 0, err
    assert "extrapolated" not in out
    rc, out, err = run(capsys, *SMALL, "--hw", "1x32x32")
    assert rc == 0, err
    line = next(x for x in out.splitlines() if x.startswith("timing extrapolated"))
    assert "design 1x32x32 not among the fitted" in line and "expected error ~" in line
    rc, out, err = run(capsys, *SMALL, "--board", "ultra96", "--json")
    d = json.loads(out)["timing_domain"]
    assert d["extrapolated"] and "no measurements" in d["reasons"][0]
    assert 0 < d["expected_error"] < 1
