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
    assert d["unpinned"] and all(not e["pinned"] for e in d["estimates"]
                                 if (e["key"] + (f"[{e['build']}]" if e["build"] else ""))
                                 in d["unpinned"])
    held = [e for e in d["estimates"] if not e["pinned"] and not e["build"]]
    assert all(e["value"] == pytest.approx(e["prior"], rel=1e-3) for e in held)
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
    # two records cannot pin seven constants: the ones they cannot are named, at their priors
    assert "held at prior (not pinned by the records)" in out
    assert "not pinned by these records, held at their priors: " in out
    assert "nothing written" in out and "rank agreement" in out


@pytest.mark.parametrize("content,message", [
    ("[]", "no measured records"),
    ("{", "not valid JSON"),
    (json.dumps([{"shape": {}, "knobs": {}}]), "missing or wrong-typed ms"),
    (json.dumps([{**RECORDS[0],  # legal knobs whose tiles overflow the SRAMs
                  "shape": {**RECORDS[0]["shape"], "cin": 256, "cout": 256, "h": 56, "w": 56,
                            "pad": 0},  # unpadded: VTA refuses padded tiles over channels
                  "knobs": {"tile_h": 54, "tile_w": 54, "tile_ci": 16, "tile_co": 16}}]),
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


def test_save_a_user_profile_and_use_it(capsys, measured: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from vtatune.hardware import timing_profiles
    from vtatune.simulator.timing import load_params

    data = tmp_path / "data"
    monkeypatch.setenv("VTATUNE_DATA", str(data))
    rc, out, err = run(capsys, str(measured), "--board", "pynq-z1", "--save", "myboard",
                       "--no-loo", "--json")
    assert rc == 0, err
    d = json.loads(out)
    path = data / "timing" / "pynq-z1" / "myboard.json"
    assert d["written"] == str(path) and path.is_file()
    p = load_params("pynq-z1@myboard")
    assert p.calibrated and p.profile == "myboard"
    assert all(getattr(p, k) == pytest.approx(v, rel=1e-3) for k, v in d["params"].items())
    assert [q.name for q in timing_profiles.user("pynq-z1")] == ["myboard"]
    # every command takes it: simulate times with the saved constants, boards lists it
    assert main(["simulate", "conv2d", "--layer", "C8", "--board", "pynq-z1@myboard",
                 "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)
    assert main(["simulate", "conv2d", "--layer", "C8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) != sim
    assert main(["boards"]) == 0
    listing = capsys.readouterr().out
    assert "pynq-z1@myboard" in listing and "pynq-z1@2019-07" in listing
    assert main(["boards", "--json"]) == 0
    pynq = next(b for b in json.loads(capsys.readouterr().out) if b["name"] == "pynq-z1")
    shipped = [q.name for q in timing_profiles.shipped("pynq-z1")]
    assert [q["name"] for q in pynq["profiles"]] == [*shipped, "myboard"]
    assert pynq["profiles"][-1]["origin"] == "user"


@pytest.mark.parametrize("name,message", [
    ("2019-07", "ships a profile of that name"),
    ("../evil", "is not a profile name"),
    ("a/b", "is not a profile name"),
    ("", "is not a profile name"),
    (".hidden", "is not a profile name"),
])
def test_save_refuses_shipped_and_path_names(capsys, measured: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, name: str,
                                             message: str) -> None:
    monkeypatch.setenv("VTATUNE_DATA", str(tmp_path / "data"))
    rc, out, err = run(capsys, str(measured), "--save", name)
    assert rc == 2 and out == "" and message in err and err.count("\n") == 1
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("argv,message", [
    (["calibrate", "M", "--board", "pynq-z1@nope"], "its timing profile 'nope' is not here"),
    (["simulate", "conv2d", "--board", "pynq-z1@nope"], "its timing profile 'nope' is not here"),
    (["simulate", "conv2d", "--board", "pynq-z1@"], "is not a profile name"),
    (["simulate", "conv2d", "--board", "pynq-z1@a@b"], "is not a profile name"),
    (["simulate", "conv2d", "--board", "pynq-z1@../x"], "'../x' is not a profile name"),
    (["area", "--board", "nope@2019-07"], "unknown board 'nope'"),
])
def test_unknown_profile_is_one_line(capsys, measured: Path, argv: list[str],
                                     message: str) -> None:
    rc = main([str(measured) if a == "M" else a for a in argv])
    _, err = capsys.readouterr()
    assert rc == 2 and err.startswith("vtatune: error:") and err.count("\n") == 1
    assert message in err


def test_autotvm_log_and_build(capsys, tmp_path: Path) -> None:
    # a TopHub log: the board's VTA records kept (by section: the network), the others counted
    entity = [["tile_b", "sp", [1, 1]], ["tile_h", "sp", [1, 8]], ["tile_w", "sp", [1, 8]],
              ["tile_ci", "sp", [2, 1]], ["tile_co", "sp", [2, 1]], ["oc_nthread", "ot", 2],
              ["h_nthread", "ot", 1]]
    args = [["TENSOR", [1, 2, 8, 8, 1, 16], "int8"], ["TENSOR", [2, 2, 3, 3, 16, 16], "int8"],
            [1, 1], [1, 1, 1, 1], [1, 1], "NCHW1n16c", "int32"]

    def line(target: str, code: int, stamp: float) -> str:
        return json.dumps({"input": [target, "conv2d_packed.vta", args, {}],
                           "config": {"index": 0, "entity": entity},
                           "result": [[2e-4], code, 1.0, stamp], "version": 0.2})

    vta = "ext_dev -device=vta -keys=cpu -model=pynq_1x16_i8w8a32_15_15_18_17"
    log = tmp_path / "tuned.log"
    log.write_text("\n".join(["# Net - pynq_1x16_i8w8a32_15_15_18_17",
                              line(vta, 0, 1562808175.0), line(vta, 0, 1565395200.0),
                              line(vta, 1, 1565395200.0),
                              line("llvm -device=arm_cpu", 0, 1565395200.0)]) + "\n")
    rc, out, err = run(capsys, str(log), "--no-loo", "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert len(d["records"]) == 2 and d["records"][0]["network"] == "Net"
    assert d["skipped"] == {"with an error code": 1, "of other targets": 1}
    rc, out, err = run(capsys, str(log), "--no-loo", "--json", "--build", "2019-08")
    assert rc == 0, err
    assert [r["session"] for r in json.loads(out)["records"]] == ["2019-08"]
    rc, out, err = run(capsys, str(log), "--build", "2020-01")
    assert rc == 2 and "--build 2020-01: no record was measured then" in err


def test_records_of_several_builds_are_named_with_the_way_to_fit_one(capsys,
                                                                     tmp_path: Path) -> None:
    # two builds of the board (the months measured), each a section of its own: the report
    # names them, their networks, the build the left-out records are of, and --build
    entity = [["tile_b", "sp", [1, 1]], ["tile_h", "sp", [1, 8]], ["tile_w", "sp", [1, 8]],
              ["tile_ci", "sp", [2, 1]], ["tile_co", "sp", [2, 1]], ["oc_nthread", "ot", 2],
              ["h_nthread", "ot", 1]]
    args = [["TENSOR", [1, 2, 8, 8, 1, 16], "int8"], ["TENSOR", [2, 2, 3, 3, 16, 16], "int8"],
            [1, 1], [1, 1, 1, 1], [1, 1], "NCHW1n16c", "int32"]

    def line(stamp: float, seconds: float) -> str:
        return json.dumps({"input": ["ext_dev -device=vta -keys=cpu -model=pynq_1x16_i8w8a32_"
                                     "15_15_18_17", "conv2d_packed.vta", args, {}],
                           "config": {"index": 0, "entity": entity},
                           "result": [[seconds], 0, 1.0, stamp], "version": 0.2})

    log = tmp_path / "two-builds.log"
    log.write_text("\n".join(["# Old - pynq_1x16_i8w8a32_15_15_18_17",
                              line(1562808175.0, 2e-4),  # 2019-07
                              "# New - pynq_1x16_i8w8a32_15_15_18_17",
                              line(1565395200.0, 2e-4), line(1565395300.0, 2.1e-4)]) + "\n")
    rc, out, err = run(capsys, str(log), "--no-loo")
    assert rc == 0, err
    (hint,) = [x for x in out.splitlines() if x.startswith("builds:")]
    assert "2 builds of pynq-z1" in hint
    assert "2019-07 (1 record: Old), 2019-08 (2 records: New)" in hint
    assert "--build 2019-07 or --build 2019-08" in hint
    assert "shipped as pynq-z1@2019-07, pynq-z1@2019-08" in hint
    rc, out, err = run(capsys, str(log), "--no-loo", "--json")
    assert json.loads(out)["builds"] == {"2019-07": {"records": 1, "networks": ["Old"]},
                                         "2019-08": {"records": 2, "networks": ["New"]}}
    rc, out, err = run(capsys, str(log), "--no-loo", "--build", "2019-08")
    assert rc == 0 and "builds:" not in out  # one build is fitted: nothing to say


def test_power_readings_fit_and_save_a_power_profile(capsys, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Records with a meter's idle and running watts also fit the board's power; --save
    keeps it beside the timing profile and simulate --board BOARD@NAME prices with it."""
    monkeypatch.setenv("VTATUNE_DATA", str(tmp_path / "data"))
    recs = [dict(r, idle_w=1.6, running_w=2.0 + 0.1 * i) for i, r in enumerate(RECORDS)]
    p = tmp_path / "power.json"
    p.write_text(json.dumps(recs))
    rc, out, err = run(capsys, str(p), "--board", "pynq-z1", "--no-loo", "--save", "lab",
                       "--json")
    assert rc == 0, err
    d = json.loads(out)
    power = d["power"]
    assert power["records"] == 2 and len(power["errors"]) == 2
    for key in ("baseline_w", "scale"):
        assert {"value", "stderr", "prior", "prior_spread", "pinned"} <= set(power[key])
    assert str(tmp_path / "data" / "energy" / "pynq-z1" / "lab.json") in d["written"]
    rc = main(["simulate", "conv2d", "--shape", "1,32,8,8,32,3,3,1,1", "--board",
               "pynq-z1@lab", "--knobs", "tile_h=8,tile_w=8,tile_ci=1,tile_co=1,oc_nthread=2",
               "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert json.loads(out)["energy"]["note"].startswith("calibrated on 2 measured power")


@pytest.mark.parametrize("bad", [{"idle_w": 1.0}, {"idle_w": "x", "running_w": 2},
                                 {"idle_w": 1.0, "running_w": 0}, {"idle_w": -1, "running_w": 2},
                                 {"idle_w": 1.0, "running_w": 1e9}])
def test_bad_power_readings_are_one_line(capsys, tmp_path: Path, bad: dict) -> None:
    p = tmp_path / "power.json"
    p.write_text(json.dumps([dict(RECORDS[0], **bad), dict(RECORDS[1], idle_w=1, running_w=2)]))
    rc, out, err = run(capsys, str(p), "--board", "pynq-z1", "--no-loo")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "power readings: record 0" in err
