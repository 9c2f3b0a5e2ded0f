"""vtatune search NETWORK, show and studies of network studies; one-line errors (their report,
compare, export and verify-export: tests/cli/test_report_cli.py)."""

from __future__ import annotations

import json

import pytest

from tests.networks.tiny_space import TINY
from vtatune.cli.main import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _toml(raw: dict) -> str:
    """TINY as a space file (only the shapes of TOML it uses)."""
    lines = ['[network]', f'name = "{raw["network"]["name"]}"']
    for la in raw["network"]["layers"]:
        lines.append("[[network.layers]]")
        lines += [f'{k} = {json.dumps(v)}' for k, v in la.items()]
    for section in ("hardware", "objective", "inner"):
        lines.append(f"[{section}]")
        lines += [f'{k} = {json.dumps(v)}' for k, v in raw[section].items()]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def space_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("spaces") / "tiny.toml"
    p.write_text(_toml(TINY))
    return p


def test_network_search_json_show_and_studies(capsys, tmp_path, space_file) -> None:
    db = f"sqlite:///{tmp_path / 'n.sqlite'}"
    rc, out, err = _run(capsys, "search", "--space", str(space_file), "--trials", "3",
                        "--layer-trials", "5", "--sampler", "random", "--seed", "0",
                        "--workers", "1", "--db", db, "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["study"] == "network-tiny-random" and d["trials"] == 3 and d["network"] == "tiny"
    assert d["feasible"] >= 1 and d["pareto"]
    for p in d["pareto"]:
        assert set(p) >= {"hw", "hw_name", "area_mm2", "cycles", "seconds", "layers"}
        assert [la["name"] for la in p["layers"]] == ["a", "b", "a2", "fc"]
        for la in p["layers"]:
            assert set(la) >= {"name", "count", "knobs", "cycles", "seconds"}
        assert p["cycles"] == sum(la["count"] * la["cycles"] for la in p["layers"])
        assert p["seconds"] == pytest.approx(sum(la["count"] * la["seconds"]
                                                 for la in p["layers"]))
        # seconds are end to end per call, as simulate's: every layer run pays the host
        for la in p["layers"]:
            assert la["host_seconds"] > 0
            assert la["seconds"] == pytest.approx(la["accelerator_seconds"] + la["host_seconds"])
            assert la["accelerator_seconds"] == pytest.approx(la["cycles"] / 100e6)
        assert p["seconds"] == pytest.approx(p["accelerator_seconds"] + p["host_seconds"])
        assert p["host_seconds"] == pytest.approx(sum(la["count"] * la["host_seconds"]
                                                      for la in p["layers"]))
    assert d["latency"] == "end-to-end"
    assert d["best_seconds"] == min(p["seconds"] for p in d["pareto"])
    rc, out, _ = _run(capsys, "show", d["study"], "--db", db, "--json")
    shown = json.loads(out)
    assert rc == 0 and shown["pareto"] == d["pareto"] and shown["trials"] == 3
    rc, out, _ = _run(capsys, "show", d["study"], "--db", db)
    assert rc == 0 and "Pareto front, area_mm2 vs network latency" in out
    assert "fc" in out and "share" in out and "ms per run (accelerator " in out
    rc, out, _ = _run(capsys, "studies", "--db", db, "--json")
    (s,) = json.loads(out)["studies"]
    assert s["workload"] == "network:tiny" and s["trials"] == 3
    # a rerun continues the study
    rc, out, err = _run(capsys, "search", "--space", str(space_file), "--trials", "4",
                        "--layer-trials", "5", "--sampler", "random", "--seed", "0",
                        "--workers", "1", "--db", db, "--json")
    assert rc == 0, err
    assert json.loads(out)["trials"] == 4 and json.loads(out)["new_trials"] == 1


@pytest.mark.parametrize("argv, message", [
    (["search", "resnet18", "--layer", "C1"], "a network search tunes every layer"),
    (["search", "resnet18", "--layer-trials", "0"], "'--layer-trials': must be in 1.."),
    (["search", "resnet18", "--inner-sampler", "tpe"], "unknown --inner-sampler 'tpe'"),
    (["search", "resnet18", "--sampler", "anneal"], "unknown sampler 'anneal'"),
    (["search", "resnet18", "--trials", "0"], "'--trials' / '-n': must be in 1.."),
    (["search", "conv2d", "--layer-trials", "4"], "apply to network searches"),
    (["search", "resnet19"], "networks: dcgan, mobilenet_v1, resnet18, resnet34, resnet50, vgg16"),
    (["search", "resnet18", "--latency", "accelerator"], "applies to single-operator searches"),
])
def test_bad_network_input_is_one_line_and_exit_2(capsys, argv, message) -> None:
    rc, out, err = _run(capsys, *argv)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2, err
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err


@pytest.mark.parametrize("text, message", [
    ('[network]\nname = "x"\n', "has no layers"),
    ('[network]\n[[network.layers]]\nname = "a"\nkind = "conv2d"\nlayer = "C2"\ncount = 0\n',
     "count 0"),
    ('[network]\n[[network.layers]]\nname = "a"\nkind = "pool"\nshape = "1,2"\n',
     "unknown workload 'pool'"),
    ('[network]\n[[network.layers]]\nname = "a"\nkind = "dense"\nshape = "1,2"\n',
     "takes 3 comma-separated integers"),
    ('[network]\n[[network.layers]]\nname = "a"\nkind = "conv2d"\nlayer = "C2"\n'
     '[objective]\nlatency = "accelerator"\n', "latency must be 'end-to-end' for a network"),
    ('[network]\n[[network.layers]]\nname = "a"\nkind = "conv2d"\nlayer = "C2"\n'
     '[[network.host_ops]]\nop = "Max Pool"\ncount = 1\n', "host op 1: op 'Max Pool'"),
    ('[network]\n[[network.layers]]\nname = "a"\nkind = "conv2d"\nlayer = "C2"\n'
     '[[network.host_ops]]\nop = "Add"\ncount = 1.5\n', "host op 1: count 1.5"),
    ('[network]\n[[network.layers]]\nname = "a"\nkind = "conv2d"\nlayer = "C2"\n'
     '[[network.host_ops]]\nop = "Add"\ncount = 2\nshapes = ["1x2x\\u001b[31m"]\n',
     "host op 1: shapes"),
])
def test_bad_network_files_are_one_line_and_exit_2(capsys, tmp_path, text, message) -> None:
    p = tmp_path / "bad.toml"
    p.write_text(text)
    rc, out, err = _run(capsys, "search", "--space", str(p))
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and message in lines[0], err


def test_network_search_with_stock_vta_marks_and_screens(capsys, tmp_path, space_file) -> None:
    db = f"sqlite:///{tmp_path / 'n.sqlite'}"
    base = ["search", "--space", str(space_file), "--trials", "3", "--layer-trials", "4",
            "--sampler", "random", "--seed", "0", "--workers", "1", "--db", db]
    rc, out, err = _run(capsys, *base, "--stock-vta", "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["study"] == "network-tiny-stock-random" and d["trials"] == 3
    assert d["screened"]["by_reason"].get("not_stock_vta", 0) >= 1
    rows = d["pareto"] + d["top"]
    assert rows and all(r["stock_vta"] is True and r["stock_vta_problems"] == [] for r in rows)
    # text: the front table has a stock-VTA column, show says it per design
    rc, out, err = _run(capsys, *base[:4], "4", *base[5:], "--stock-vta")
    assert rc == 0, err
    head = next(line for line in out.splitlines() if line.split()[:1] == ["trial"])
    assert "stock VTA" in head and "screened before evaluation (not trials)" in out
    assert "stopped after 4 of 4" not in out
    rc, out, err = _run(capsys, "show", "network-tiny-stock-random", "--db", db)
    assert rc == 0, err
    assert "stock VTA: yes" in out and "stock VTA: no" not in out
    # without the option the same space has designs stock VTA cannot build, marked so
    rc, out, err = _run(capsys, *base[:4], "8", *base[5:], "--json")
    assert rc == 0, err
    free = json.loads(out)
    marks = {r["stock_vta"] for r in free["pareto"] + free["top"]}
    assert marks <= {True, False} and free["trials"] == 8
    for r in free["pareto"] + free["top"]:
        assert r["stock_vta"] == (r["hw"]["LOG_BLOCK_IN"] == r["hw"]["LOG_BLOCK_OUT"])


def test_show_gives_the_reason_of_designs_that_are_not_feasible(capsys, tmp_path) -> None:
    # A study made before the screen holds a 1x8x16 design with VTA's default buffers (a
    # 139-bit GEMM instruction): show once said "hw_invalid 1" and nothing about why; the
    # same holds for designs that are trials today (no_schedule, dominated)
    from vtatune.store import Store
    from vtatune.store.records import NetworkTrialRecord

    db = f"sqlite:///{tmp_path / 'n.sqlite'}"
    store = Store(db)
    store.create_or_load_study("old", "network:tiny", {"network": TINY["network"]}, "random",
                               "area-latency", "pynq-z1", 0)
    why = ("hardware: GEMM instruction needs 139 bits with 64-bit word alignment > 128")
    for number, status, reason in ((0, "hw_invalid", why), (1, "no_schedule", "layer b: x"),
                                   (2, "no_schedule", "layer b: y")):
        store.save_network_trial(NetworkTrialRecord(
            study="old", number=number, hw_key=f"k{number}", hw={}, hw_name="1x8x16-i32w256a128u32",
            status=status, reason=reason))
    rc, out, err = _run(capsys, "show", "old", "--db", db)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[1].startswith("3 designs, 0 feasible (not feasible: no_schedule 2, "
                               "hw_invalid 1)")
    assert lines[2] == ("  no_schedule (2; 2 different reasons), e.g. trial 1 "
                        "(1x8x16-i32w256a128u32): layer b: x")
    assert lines[3] == f"  hw_invalid (1), e.g. trial 0 (1x8x16-i32w256a128u32): {why}"
    rc, out, _ = _run(capsys, "show", "old", "--db", db, "--json")
    rows = json.loads(out)["not_feasible"]
    assert [(r["status"], r["count"], r["reasons"], r["trial"]) for r in rows] == [
        ("no_schedule", 2, 2, 1), ("hw_invalid", 1, 1, 0)]
    assert rows[1]["reason"] == why


def test_a_rerun_that_adds_nothing_says_how_to_search_on(capsys, tmp_path) -> None:
    raw = {**TINY, "hardware": {"LOG_BLOCK_IN": [4], "LOG_BLOCK_OUT": [4]},
           "inner": {"trials": 2, "min_per_layer": 1}}
    (tmp_path / "one.toml").write_text(_toml(raw))
    db = f"sqlite:///{tmp_path / 'n.sqlite'}"
    argv = ["search", "--space", str(tmp_path / "one.toml"), "--trials", "1", "--workers", "1",
            "--db", db, "--study", "one"]
    rc, out, err = _run(capsys, *argv)
    assert rc == 0, err
    assert "1 design (1 new" in out  # one design, not "1 designs"
    assert f"  vtatune show one --db {db}  # every front design, layer by layer" in out
    rc, out, err = _run(capsys, *argv)
    assert rc == 0, err
    assert ("nothing new: the study already holds 1 design and --trials is the total it "
            "should hold; to search on, raise it (--trials 2)") in out


def test_show_and_report_state_the_host_operators(capsys, tmp_path) -> None:
    """A network's host operators (kind, count, tensor sizes) are stated by show and report,
    which say that their time is not in the latency."""
    text = _toml(TINY).replace("[hardware]", '[[network.host_ops]]\nop = "MaxPool"\ncount = 1\n'
                               'shapes = ["1x16x16x16"]\n[[network.host_ops]]\nop = "Add"\n'
                               'count = 3\nshapes = ["1x16x8x8", "1x32x4x4"]\n[hardware]', 1)
    space = tmp_path / "tiny.toml"
    space.write_text(text)
    db = f"sqlite:///{tmp_path / 'h.sqlite'}"
    rc, _, err = _run(capsys, "search", "--space", str(space), "--trials", "2", "--layer-trials",
                      "3", "--sampler", "random", "--seed", "0", "--workers", "1", "--db", db)
    assert rc == 0, err
    want = [{"op": "MaxPool", "count": 1, "shapes": ["1x16x16x16"]},
            {"op": "Add", "count": 3, "shapes": ["1x16x8x8", "1x32x4x4"]}]
    line = ("host operators (run on the host, not on VTA; their time is not in the latency): "
            "MaxPool x1 (1x16x16x16); Add x3 (1x16x8x8, 1x32x4x4)")
    rc, out, err = _run(capsys, "show", "network-tiny-random", "--db", db)
    assert rc == 0 and line in out.splitlines(), err
    rc, out, err = _run(capsys, "show", "network-tiny-random", "--db", db, "--json")
    assert json.loads(out)["host_ops"] == want
    rc, out, err = _run(capsys, "report", "network-tiny-random", "--db", db, "--out",
                        str(tmp_path / "r"))
    assert rc == 0 and line in out.splitlines(), err
    assert line in (tmp_path / "r" / "index.html").read_text()
    rc, out, err = _run(capsys, "report", "network-tiny-random", "--db", db, "--out",
                        str(tmp_path / "r"), "--json")
    assert json.loads(out)["host_ops"] == want


def test_a_study_made_before_host_ops_were_recorded_says_so(capsys, tmp_path) -> None:
    from vtatune.store import Store

    db = f"sqlite:///{tmp_path / 'o.sqlite'}"
    Store(db).create_or_load_study("old", "network:tiny", {"network": TINY["network"]},
                                   "random", "area-latency", "pynq-z1", 0)
    rc, out, err = _run(capsys, "show", "old", "--db", db)
    assert rc == 0, err
    assert ("host operators (run on the host, not on VTA; their time is not in the latency): "
            "not recorded with this study") in out
    rc, out, err = _run(capsys, "show", "old", "--db", db, "--json")
    assert json.loads(out)["host_ops"] is None
