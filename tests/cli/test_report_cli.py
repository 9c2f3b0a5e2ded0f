"""report, compare, export, verify-export of operator and network studies: files, JSON, exit
codes, one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vtatune.cli.main import main
from vtatune.search.pareto import hypervolume_2d
from vtatune.store import Store


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _one_error_line(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.strip() and "Warning" not in ln
            and not ln.startswith("  ")]


def test_report_writes_every_file(capsys, studies, tmp_path) -> None:
    rc, out, err = _run(capsys, "report", studies.tpe, "--db", studies.db, "--out",
                        str(tmp_path), "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert set(d["files"]) == {"pareto.png", "pareto.svg", "convergence.png", "params.png",
                               "energy.png", "energy.svg",  # its trials have energy
                               "front.csv", "trials.csv", "index.html"}
    assert d["knee"]["trial"] in [p["trial"] for p in d["front"]]
    rc, out, _ = _run(capsys, "report", studies.tpe, "--db", studies.db, "--out",
                      str(tmp_path / "text"))
    assert rc == 0 and "knee" in out and "index.html" in out


def test_compare_hypervolumes_match_a_direct_computation(capsys, studies, tmp_path) -> None:
    rc, out, err = _run(capsys, "compare", studies.random, studies.tpe, studies.nofit, "--db",
                        studies.db, "--out", str(tmp_path), "--json")
    assert rc == 0, err
    d = json.loads(out)
    store = Store(studies.db)
    pts = {n: [(t.candidate.area_mm2, 1e3 * t.candidate.seconds) for t in store.trials(n)
               if t.candidate.feasible] for n in (studies.random, studies.tpe, studies.nofit)}
    # the shared box: log area and log latency (end to end, ms) from the ideal point of the
    # union of the fronts (0) to their nadir (1); reference point at 1.1 on both axes
    fronts = [p for ps in pts.values() for p in ps
              if not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in ps)]
    lo = np.log(np.array(fronts, dtype=float)).min(axis=0)
    span = np.ptp(np.log(np.array(fronts, dtype=float)), axis=0)
    span = np.where(span > 0, span, np.log(1.1))
    assert d["ref_point"] == pytest.approx(list(np.exp(lo + 1.1 * span)))
    for s in d["studies"]:
        u = [tuple((np.log(p) - lo) / span) for p in pts[s["study"]]]
        direct = hypervolume_2d(u, (1.1, 1.1)) / 1.21
        assert s["hypervolume"] == pytest.approx(direct)
    assert [s["front_size"] for s in d["studies"]][2] == 0
    assert {"compare.png", "compare.svg", "compare.csv", "index.html"} == set(d["files"])
    rc, out, _ = _run(capsys, "compare", studies.random, studies.tpe, "--db", studies.db,
                      "--out", str(tmp_path / "text"))
    assert rc == 0 and "hypervolume" in out and studies.tpe in out


def test_compare_gives_the_end_to_end_latency_everywhere(capsys, studies, tmp_path) -> None:
    # The terminal once printed the accelerator's time of the fewest cycles as "best ms"
    # where compare.csv, index.html, show and report give the end-to-end time per call, and
    # --json had no latency at all.
    names = (studies.random, studies.tpe)
    store = Store(studies.db)
    best = {n: min(1e3 * t.candidate.seconds for t in store.trials(n) if t.candidate.feasible)
            for n in names}
    accel = {n: min(1e3 * t.candidate.accelerator_seconds for t in store.trials(n)
                    if t.candidate.feasible) for n in names}
    assert all(best[n] > accel[n] for n in names)  # the two differ: the test can tell them
    rc, out, err = _run(capsys, "compare", *names, "--db", studies.db, "--out",
                        str(tmp_path / "j"), "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["latency"] == "end-to-end"
    for s in d["studies"]:
        assert s["best_ms"] == pytest.approx(best[s["study"]])
    csv = (tmp_path / "j" / "compare.csv").read_text().splitlines()
    col = csv[0].split(",").index("best_latency_ms")
    for row in csv[1:]:
        cells = row.split(",")
        assert float(cells[col]) == pytest.approx(best[cells[0]])
    rc, out, _ = _run(capsys, "compare", *names, "--db", studies.db, "--out",
                      str(tmp_path / "t"))
    assert rc == 0
    lines = out.splitlines()
    head = next(ln for ln in lines if ln.split()[:2] == ["study", "sampler"])
    assert "best ms" in head and "accel" not in head
    for n in names:
        row = next(ln.split() for ln in lines if ln.split() and ln.split()[0] == n)
        assert row[5] == f"{best[n]:.3f}"
    assert any(ln.startswith("best ms: ") and "end to end" in ln for ln in lines)


def test_export_and_verify_round_trip(capsys, studies, tmp_path) -> None:
    folder = tmp_path / "bundle"
    rc, out, err = _run(capsys, "export", studies.tpe, "--pick", "fastest", "--db", studies.db,
                        "--out", str(folder), "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["cycles"] == d["stored_cycles"] and d["pick"] == "fastest"
    rc, out, err = _run(capsys, "verify-export", str(folder))
    assert rc == 0, out + err
    lines = out.splitlines()
    for name in ("checksums", "vta_config", "schedule", "program.bin", "rebuild", "cycles",
                 "functional", "resources"):
        assert any(ln.startswith("pass") and f" {name} " in ln for ln in lines), name
    assert lines[-1].startswith("ok:")
    (res,) = [ln for ln in lines if " resources " in ln]
    assert f"{d['area_mm2']:.2f} mm², " in res and "mm2" not in out  # formats.area's unit
    # tampering: exit 1 and the failing check named
    cfg = folder / "resources.json"
    cfg.write_text(cfg.read_text().replace('"fits": true', '"fits": false'))
    rc, out, _ = _run(capsys, "verify-export", str(folder), "--json")
    assert rc == 1
    d = json.loads(out)
    assert not d["ok"]
    assert {c["name"] for c in d["checks"] if c["status"] == "FAIL"} == {"checksums",
                                                                         "resources"}


def test_verify_export_of_a_name_too_long_for_the_file_system_is_bad_input(capsys,
                                                                         tmp_path) -> None:
    rc, out, err = _run(capsys, "verify-export", str(tmp_path / ("x" * 300)))
    assert rc == 2 and len(_one_error_line(err)) == 1 and "no such bundle folder" in err


def test_verify_export_exits_1_when_autotvm_log_disagrees_with_the_schedule(capsys, studies,
                                                                          tmp_path) -> None:
    import hashlib

    folder = tmp_path / "bundle"
    rc, out, err = _run(capsys, "export", studies.tpe, "--db", studies.db, "--out",
                        str(folder), "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["bitstream"] == json.loads((folder / "manifest.json").read_text())["bitstream"]
    assert "VTA flow" in _run(capsys, "export", studies.tpe, "--db", studies.db, "--out",
                              str(tmp_path / "again"))[1]
    # a record of another layer, re-signed
    data = b'{"input": ["ext_dev -device=vta -keys=cpu -model=m", "dense_packed.vta", [], {}],' \
        b' "config": {"index": 0, "code_hash": null, "entity": []}, "result": [[1.0], 0, 1, 1],' \
        b' "version": 0.2, "tvm_version": "0.7.dev0"}\n'
    (folder / "autotvm.log").write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["autotvm.log"] = {"sha256": hashlib.sha256(data).hexdigest(),
                                        "bytes": len(data)}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    rc, out, _ = _run(capsys, "verify-export", str(folder))
    assert rc == 1
    assert out.splitlines()[-1].startswith("FAILED") and "fails autotvm" in out


@pytest.mark.parametrize("argv, message", [
    (["report", "nope"], "no study 'nope'"),
    (["report", "{empty}"], "has no trials yet"),
    (["report", "{nofit}"], "no feasible trial, so its front is empty"),
    (["compare", "{tpe}", "nope"], "no study 'nope'"),
    (["compare", "{nofit}"], "none of the studies has a feasible trial"),
    (["compare", "{tpe}", "{empty}"], "has no trials yet"),
    (["export", "{tpe}", "--pick", "9999"], "has no trial 9999"),
    (["export", "{tpe}", "--pick", "slowest"], "--pick must be one of"),
    (["export", "{nofit}", "--pick", "knee"], "no feasible trial"),
    (["export", "{empty}"], "has no trials yet"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, studies, argv, message) -> None:
    names = {"empty": studies.empty, "nofit": studies.nofit, "tpe": studies.tpe}
    argv = [a.format(**names) for a in argv] + ["--db", studies.db]
    rc, out, err = _run(capsys, *argv)
    lines = _one_error_line(err)
    assert rc == 2, out + err
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err


def test_compare_refuses_other_workloads(capsys, studies) -> None:
    from vtatune.store import CandidateRecord

    store = Store(studies.db)
    rec = store.trials(studies.tpe)[0].candidate
    other = CandidateRecord(**{**rec.__dict__, "key": "dense_m1_k16_n16|x", "workload":
                               "dense_m1_k16_n16"})
    store.save(other)
    info = store.study(studies.tpe)
    store.create_or_load_study("other-wl", other.workload, info.space, "random", info.objective,
                               info.board, 0)
    store.add_trial("other-wl", 0, other.key, "random", {}, False)
    rc, _, err = _run(capsys, "compare", studies.tpe, "other-wl", "--db", studies.db)
    lines = _one_error_line(err)
    assert rc == 2 and len(lines) == 1 and "differ in workload" in lines[0]


def test_verify_export_bad_input(capsys, tmp_path) -> None:
    rc, _, err = _run(capsys, "verify-export", str(tmp_path / "missing"))
    assert rc == 2 and "no such bundle folder" in err
    rc, _, err = _run(capsys, "verify-export", str(tmp_path))
    assert rc == 2 and "no manifest.json" in err and len(_one_error_line(err)) == 1


def test_default_output_folder() -> None:
    from vtatune.cli.report import default_out
    from vtatune.paths import project_root

    assert default_out("tpe") == project_root() / "reports" / "tpe"
    assert default_out("a/b c") == project_root() / "reports" / "a_b_c"
    assert default_out("s", "export-trial3") == project_root() / "reports" / "s" / "export-trial3"


# ---- network studies ----------------------------------------------------------------------

def test_report_compare_export_verify_of_network_studies(capsys, tmp_path,
                                                         network_studies) -> None:
    db, a, b = network_studies.db, network_studies.study, network_studies.other
    rc, out, err = _run(capsys, "report", a, "--db", db, "--out", str(tmp_path / "r"), "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["network"] == "tiny" and d["front"] and "breakdown.png" in d["files"]
    rc, out, err = _run(capsys, "compare", a, b, "--db", db, "--out", str(tmp_path / "c"),
                        "--json")
    assert rc == 0, err
    assert [s["study"] for s in json.loads(out)["studies"]] == [a, b]
    rc, out, err = _run(capsys, "export", a, "--pick", "fastest", "--db", db, "--out",
                        str(tmp_path / "e"), "--json")
    assert rc == 0, err
    e = json.loads(out)
    assert [la["name"] for la in e["layers"]] == ["a", "b", "a2", "fc"]
    assert e["seconds"] == pytest.approx(e["accelerator_seconds"] + e["host_seconds"])
    assert e["accelerator_seconds"] == pytest.approx(e["cycles"] / 100e6)
    assert e["stock_vta"] == (not e["stock_vta_problems"])
    schedule = json.loads((tmp_path / "e" / "schedule.json").read_text())
    net = schedule["network"]
    assert net["latency_ms"] == pytest.approx(net["accelerator_ms"] + net["host_ms"])
    assert net["host_ms"] == pytest.approx(sum(la["count"] * la["host_ms"]
                                               for la in net["layers"]))
    manifest = json.loads((tmp_path / "e" / "manifest.json").read_text())
    assert manifest["latency_ms"] == net["latency_ms"]
    assert (manifest["stock_vta"], manifest["stock_vta_problems"]) == (
        e["stock_vta"], e["stock_vta_problems"])
    config = json.loads((tmp_path / "e" / "vta_config.json").read_text())
    square = config.get("LOG_BLOCK_IN", config.get("LOG_BLOCK")) == config.get(
        "LOG_BLOCK_OUT", config.get("LOG_BLOCK"))
    assert ("LOG_BLOCK" in config) == square
    rc, out, err = _run(capsys, "verify-export", str(tmp_path / "e"))
    assert rc == 0, err
    assert "pass  functional fc" in out and "passes every check" in out
    assert e["bitstream"] == manifest["bitstream"] and "VTA flow" in _run(
        capsys, "export", a, "--db", db, "--pick", "knee",
        "--out", str(tmp_path / "e2"))[1]
    # a re-signed schedule.json whose layer is named with terminal escapes: exit 1, escaped
    import hashlib

    sched = json.loads((tmp_path / "e" / "schedule.json").read_text())
    sched["network"]["layers"][0]["name"] = "\x1b]0;owned\x07" + "x" * 5000
    data = json.dumps(sched).encode()
    (tmp_path / "e" / "schedule.json").write_bytes(data)
    manifest["files"]["schedule.json"] = {"sha256": hashlib.sha256(data).hexdigest(),
                                          "bytes": len(data)}
    (tmp_path / "e" / "manifest.json").write_text(json.dumps(manifest))
    rc, out, err = _run(capsys, "verify-export", str(tmp_path / "e"))
    assert rc == 1 and "FAIL  schedule" in out and "must be 1-64 letters" in out
    assert "\x1b" not in out + err and len(max(out.splitlines(), key=len)) < 300
    (tmp_path / "e" / "programs" / "a.bin").write_bytes(b"VTAPROG\0garbage")
    rc, out, _ = _run(capsys, "verify-export", str(tmp_path / "e"))
    assert rc == 1 and "FAIL  checksums" in out


def test_network_compare_prints_milliseconds_with_three_decimals(capsys, tmp_path,
                                                                 network_studies) -> None:
    # README: latency in ms with three decimals everywhere; the network compare table once
    # printed the raw float with four significant digits (and the hypervolume likewise).
    db, a, b = network_studies.db, network_studies.study, network_studies.other
    rc, out, err = _run(capsys, "compare", a, b, "--db", db, "--out", str(tmp_path / "j"),
                        "--json")
    assert rc == 0, err
    d = {s["study"]: s for s in json.loads(out)["studies"]}
    rc, out, err = _run(capsys, "compare", a, b, "--db", db, "--out", str(tmp_path / "t"))
    assert rc == 0, err
    for name in (a, b):
        row = next(ln.split() for ln in out.splitlines() if ln.split()[:1] == [name])
        assert row[4] == f"{d[name]['best_ms']:,.3f}"
        assert row[6] == f"{d[name]['hypervolume']:.3f}"
    assert any(ln.startswith("best ms: ") for ln in out.splitlines())


def test_compare_refuses_mixing_network_and_layer_studies(capsys, network_studies) -> None:
    from vtatune.store import Store

    store = Store(network_studies.db)
    rec = store.network_evals(network_studies.study)[0].candidate
    store.create_or_load_study("plain", rec.workload, {}, "random", "area-latency", "pynq-z1",
                               0)
    store.add_trial("plain", 0, rec.key, "random", {}, True)
    for argv, message in ((["plain", network_studies.study], "is a network study"),
                          ([network_studies.study, "plain"], "is not a network study")):
        rc, _, err = _run(capsys, "compare", *argv, "--db", network_studies.db)
        assert rc == 2 and message in err


def test_network_studies_compare_on_their_layers_and_board_not_host_ops(network_studies
                                                                        ) -> None:
    """compare's one rule (reports.data.require_comparable): a study that lists host
    operators compares with one made before they were listed; another board or other layers
    do not compare, in one line naming the difference."""
    from dataclasses import replace

    from vtatune.cli.compare import _compared_network, _short
    from vtatune.errors import UserError
    from vtatune.reports.data import require_comparable
    from vtatune.store import Store

    facets = [("network", _compared_network, _short), ("board", lambda i: i.board, str)]
    a = Store(network_studies.db).study(network_studies.study)
    net = a.space["network"]
    b = replace(a, name="b", space={**a.space, "network": {
        **net, "host_ops": [{"op": "Add", "count": 2, "shapes": []}]}})
    require_comparable([a, b], facets)
    with pytest.raises(UserError, match=r"^studies differ in board \(.*: pynq-z1, c: ultra96"):
        require_comparable([a, replace(a, name="c", board="ultra96")], facets)
    layers = [{**net["layers"][0], "count": 9}, *net["layers"][1:]]
    with pytest.raises(UserError, match=r"^studies differ in network \("):
        require_comparable([a, replace(b, space={**b.space, "network": {**net,
                                                                        "layers": layers}})],
                           facets)


def test_export_says_first_what_will_not_deploy_and_how_to_pick_what_does(
        capsys, studies, tmp_path) -> None:
    # a design stock VTA cannot build: export's first line says so and gives the command that
    # exports the knee of the designs that deploy through VTA's flow (stock hardware, and
    # schedules VTA's AutoTVM templates express when any feasible design has them)
    import shlex

    from vtatune.export.autotvm import NotInTemplate, task_of
    from vtatune.hardware.config import HwConfig
    from vtatune.hardware.stock import stock_of
    from vtatune.reports.data import front_points, knee
    from vtatune.workloads import from_signature

    store = Store(studies.db)
    info, trials = store.study(studies.random), store.trials(studies.random)

    def stock(t) -> bool:
        return bool(stock_of(t.candidate.hw, info.board).get("stock_vta"))

    def expressed(t) -> bool:
        try:
            task_of(from_signature(t.candidate.workload), HwConfig.from_params(t.candidate.hw),
                    t.candidate.knobs)
        except NotInTemplate:
            return False
        return True

    bad = next(t for t in trials if t.candidate.feasible and not stock(t))
    rc, out, err = _run(capsys, "export", studies.random, "--pick", str(bad.number), "--db",
                        studies.db, "--out", str(tmp_path / "bad"))
    assert rc == 0, err
    # first whether stock VTA builds it (issue 31's one place), then why it will not deploy
    # and the command that exports one that does
    lines = out.splitlines()
    assert lines[0].startswith("stock VTA: no, it cannot build this design as it is")
    first = lines[1]
    assert first.startswith("warning: this design will not deploy through VTA's own flow")
    assert "stock VTA cannot build it as it is (" in first
    cmd = shlex.split(first.rpartition("): ")[2])
    assert cmd[:3] == ["vtatune", "export", studies.random]
    assert cmd[3:6] == ["--pick", "knee", "--stock-vta"]
    pool = [t for t in trials if stock(t) and expressed(t)]
    if not any(t.candidate.feasible for t in pool):
        pool = [t for t in trials if stock(t)]
    want = knee(front_points(info, pool))
    assert f"is trial {want.trial} (" in first
    rc, out, err = _run(capsys, *cmd[1:], "--out", str(tmp_path / "good"), "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["trial"] == want.trial and d["stock_vta"] and d["stock_pick"]
    assert not any("stock VTA cannot build" in w for w in d["warnings"])
    # a trial number that is not such a design, with --stock-vta: one line, exit 2
    rc, out, err = _run(capsys, "export", studies.random, "--pick", str(bad.number),
                        "--stock-vta", "--db", studies.db, "--out", str(tmp_path / "x"))
    assert rc == 2 and "does not deploy through VTA's own flow" in err
    assert len(_one_error_line(err)) == 1


def test_layers_vta_runs_on_the_cpu_are_no_deployment_warning() -> None:
    """A network bundle leaves the stem and the classifier out of autotvm.log because VTA's
    flow never offloads them: that is no reason to warn; an offloaded layer left out is."""
    from types import SimpleNamespace

    from vtatune.cli.export import _flow_warnings

    stem = {"layers": ["C1"], "workload": "w1", "reason": "not offloaded by VTA's deploy flow"}
    refused = {"layers": ["C3"], "workload": "w3", "reason": "VTA's compiler refuses it"}
    layers = [{"layer": "C1", "offloaded": False, "in_log": False},
              {"layer": "C2", "offloaded": True, "in_log": True},
              {"layer": "C3", "offloaded": True, "in_log": False}]

    def warnings(not_in_log: list) -> list[str]:
        res = SimpleNamespace(stock_vta=True, stock_vta_problems=[], trial=0, vta_flow={
            "bitstream": "pynq_1x16_i8w8a32_15_15_18_17",
            "autotvm": {"not_in_log": not_in_log, "layers": layers}})
        info = SimpleNamespace(name="s")
        return _flow_warnings(res, info, ([], True), lambda *a: None, "knee", "db", None)

    assert warnings([stem]) == []
    (line,) = warnings([stem, refused])
    assert "schedule of 1 layer," in line and "C3" in line and "C1" not in line
