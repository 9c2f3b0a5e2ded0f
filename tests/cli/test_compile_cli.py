"""vtatune compile / space / hw: output, JSON, exit codes, one-line errors."""

from __future__ import annotations

import json

import pytest

from vtatune.cli.main import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_compile_default_is_the_tutorial_layer(capsys) -> None:
    rc, out, err = _run(capsys, "compile")
    assert rc == 0, err
    assert "conv2d C8" in out and "status: valid" in out and "on default (1x16x16)" in out
    assert "compile time:" in out and "GEMM" in out


def test_compile_json(capsys) -> None:
    rc, out, _ = _run(capsys, "compile", "conv2d", "--layer", "C2", "--knobs",
                      "tile_h=2,tile_w=56,tile_ci=1,tile_co=2,h_nthread=2,oc_nthread=2",
                      "--json")
    assert rc == 0
    d = json.loads(out)
    for key in ("status", "reason", "sram_bytes", "sram_capacity", "counts", "compile_ms"):
        assert key in d
    assert d["status"] == "valid" and d["knobs"]["h_nthread"] == 2
    assert set(d["sram_bytes"]) >= {"inp", "wgt", "acc"}
    assert d["sram_capacity"]["wgt"] == 262144


def test_compile_invalid_candidate_exits_1_with_reason(capsys) -> None:
    # (unpadded: VTA's compiler refuses C9's padded tiles over several channel tiles)
    rc, out, _ = _run(capsys, "compile", "conv2d", "--shape", "1,256,14,14,512,3,3,0,1",
                      "--knobs",
                      "tile_h=12,tile_w=12,tile_co=32,tile_ci=16,h_nthread=1,oc_nthread=1",
                      "--json")
    assert rc == 1
    d = json.loads(out)
    assert d["status"] == "invalid" and "wgt buffer needs 1,179,648 bytes" in d["reason"]


def test_compile_dense_and_print_tir(capsys) -> None:
    rc, out, _ = _run(capsys, "compile", "dense", "--shape", "16,64,32", "--print", "tir")
    assert rc == 0
    assert "VTALoadBuffer2D" in out and "VTAUopLoopBegin" in out and "VTASynchronize" in out


def test_compile_other_hardware(capsys) -> None:
    rc, out, _ = _run(capsys, "compile", "--layer", "C2", "--hw", "hwconfigs/1x32x32.json")
    assert rc == 0 and "(1x32x32)" in out


@pytest.mark.parametrize("argv, message", [
    (["compile", "--layer", "C99"], "unknown layer 'C99'"),
    (["compile", "--knobs", "tile_q=3"], "unknown knob 'tile_q'"),
    (["compile", "--knobs", "tile_h=15"], "tile_h=15 is outside 1..14"),
    (["compile", "--knobs", "tile_h=x"], "must be an integer"),
    (["compile", "--hw", "hwconfigs/malformed/too_deep.json"], "GEMM instruction needs 139"),
    (["compile", "--hw", "missing.json"], "no such file"),
    (["compile", "gemm"], "unknown workload 'gemm'"),
    (["compile", "--shape", "1,2,3"], "takes 9 comma-separated integers"),
    (["compile", "--print", "asm"], "--print takes one of"),
    (["compile", "--bogus"], "No such option"),
    (["space", "dense", "--layer", "C1"], "dense has no named layers"),
    (["hw", "--hw", "hwconfigs/malformed/unknown_keys.json"], "unknown key 'LOG_BLOK'"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message) -> None:
    rc, out, err = _run(capsys, *argv)
    assert rc == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("vtatune: error:"), err
    assert message in lines[0]
    assert "Traceback" not in err


def test_space_counts_valid_candidates(capsys) -> None:
    rc, out, _ = _run(capsys, "space", "dense", "--shape", "16,64,64", "--jobs", "1", "--json")
    assert rc == 0
    d = json.loads(out)
    # tile_b: 7 tile sizes of 16 rows, tile_ci/co: 3 of 4 channel tiles, threads
    assert d["product_size"] == 7 * 3 * 3 * 2
    assert d["size"] == d["valid"] + d["invalid"] + d["failed"]
    assert d["valid"] > 0 and d["failed"] == 0


def test_space_reports_rejections(capsys) -> None:
    rc, out, _ = _run(capsys, "space", "dense", "--shape", "16,4096,256", "--hw", "1x8x8",
                      "--jobs", "1", "--json")
    d = json.loads(out)
    assert d["invalid"] > 0 and any("buffer" in k for k in d["rejections"])


def test_hw_shows_derived_sizes(capsys) -> None:
    rc, out, _ = _run(capsys, "hw", "--json")
    d = json.loads(out)
    assert rc == 0 and d["inp_depth"] == 2048 and d["gemm_insn_bits"] == 128
    rc, out, _ = _run(capsys, "hw", "--list")
    assert rc == 0 and "1x32x32" in out


def test_compile_emit_writes_a_bundle_that_verifies(capsys, tmp_path) -> None:
    from vtatune.compiler import compile_candidate
    from vtatune.export import verify_bundle
    from vtatune.hardware import boards, config
    from vtatune.program.program import Program
    from vtatune.runtime.build import build_program
    from vtatune.simulator import simulate
    from vtatune.workloads import parse

    out = tmp_path / "emit"
    rc, stdout, err = _run(capsys, "compile", "dense", "--shape", "16,64,64", "--hw", "1x8x8",
                           "--board", "ultra96", "--emit", str(out), "--json")
    assert rc == 0, err
    d = json.loads(stdout)
    files = {"vta_config.json", "schedule.json", "program.bin", "resources.json",
             "autotvm.log", "manifest.json"}
    assert set(d["emitted"]["files"]) == files == {p.name for p in out.iterdir()}
    vta = json.loads((out / "vta_config.json").read_text())
    hw = config.load("1x8x8")
    assert vta["TARGET"] == boards.load("ultra96").vta_target
    assert vta["LOG_BLOCK"] == hw.log_block_in == 3  # square: stock VTA's one LOG_BLOCK
    # the program is the candidate's, independently rebuilt and timed here
    wl = parse("dense", None, "16,64,64")
    res = compile_candidate(wl, hw, d["knobs"])
    program = build_program(res, wl, hw)
    assert (out / "program.bin").read_bytes() == program.to_bytes()
    assert Program.from_bytes(hw, (out / "program.bin").read_bytes()).insns == program.insns
    cycles = simulate(program, boards.load("ultra96")).cycles
    assert d["emitted"]["cycles"] == cycles
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"]["command"] == "compile" and manifest["board"] == "ultra96"
    assert manifest["bitstream"] == "ultra96_1x8_i8w8a32_14_14_16_16" == \
        f"ultra96_1x8_i8w8a32_{hw.log_uop_buff_size}_{hw.log_inp_buff_size}_" \
        f"{hw.log_wgt_buff_size}_{hw.log_acc_buff_size}"
    report = verify_bundle(out)  # the same checks as `vtatune verify-export`
    assert report.ok, [c for c in report.checks if c.status == "fail"]


def test_compile_emit_of_an_invalid_candidate_writes_nothing(capsys, tmp_path) -> None:
    out = tmp_path / "emit"
    rc, _, err = _run(capsys, "compile", "conv2d", "--shape", "1,256,14,14,512,3,3,0,1",
                      "--knobs",
                      "tile_h=12,tile_w=12,tile_co=32,tile_ci=16,h_nthread=1,oc_nthread=1",
                      "--emit", str(out))
    assert rc == 1 and not out.exists() and "nothing written" in err
    rc, _, err = _run(capsys, "compile", "--emit", str(out), "--board", "nope")
    assert rc == 2 and err.startswith("vtatune: error:") and len(err.splitlines()) == 1


def test_list_phases(capsys) -> None:
    rc, out, _ = _run(capsys, "compile", "--list-phases", "--json")
    assert rc == 0
    phases = json.loads(out)["phases"]
    assert [p["name"] for p in phases] == ["scheduled", "loops", "flat", "tasks", "threads",
                                           "vta"]
    assert [p["tvm_phase"] for p in phases] == [None, 0, 1, None, 2, 3]
    rc, out, _ = _run(capsys, "compile", "--list-phases")
    assert rc == 0 and "InjectVirtualThread" in out and "threads" in out


def test_compile_and_space_take_passes(capsys, tmp_path) -> None:
    from pathlib import Path

    example = str(Path(__file__).resolve().parents[2] / "examples" / "passes" / "dram_rows.py")
    rc, out, err = _run(capsys, "compile", "dense", "--shape", "16,64,64", "--knobs",
                        "tile_b=16,tile_ci=4,tile_co=4,oc_nthread=1", "--passes", example,
                        "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["passes"] == d["user_passes"]["fingerprint"]
    assert d["user_passes"]["verifiers"] == ["dram_rows_of_48_bytes"]
    rc, out, _ = _run(capsys, "space", "dense", "--shape", "16,64,64", "--jobs", "2",
                      "--passes", example, "--json")
    d = json.loads(out)
    assert rc == 0 and d["passes"] and d["invalid"] > 0
    assert any(k.startswith("dram_rows_of_48_bytes") for k in d["rejections"])
    rc, _, err = _run(capsys, "space", "dense", "--shape", "16,64,64", "--simulate",
                      "--passes", example)
    assert rc == 2 and "--simulate does not take --passes" in err and err.count("\n") == 1
    bad = tmp_path / "bad.py"
    bad.write_text("PASSES = [('sideways', None)]\n")
    rc, _, err = _run(capsys, "compile", "--passes", str(bad))
    assert rc == 2 and "unknown phase 'sideways'" in err and err.count("\n") == 1
    rc, _, err = _run(capsys, "compile", "--passes", example, "--emit", str(tmp_path / "e"))
    assert rc == 2 and "--emit cannot be combined with --passes" in err
