"""``vtatune search A B [--weights ...]`` and network-set files: one accelerator for several
networks from the command line; bad input is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.networks.tiny_space import OTHER, TINY, toml_text
from vtatune.cli.main import main
from vtatune.store import Store


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("nets")
    (d / "tiny.toml").write_text(toml_text(TINY))
    (d / "other.toml").write_text(toml_text(OTHER))
    return d / "tiny.toml", d / "other.toml"


def test_two_networks_json_front_carries_each_network(capsys, tmp_path, files) -> None:
    db = f"sqlite:///{tmp_path / 'm.sqlite'}"
    rc, out, err = _run(capsys, "search", str(files[0]), str(files[1]), "--weights", "3,1",
                        "--trials", "3", "--sampler", "random", "--seed", "0", "--workers",
                        "1", "--db", db, "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["study"] == "network-tiny+other-w3_1-random" and d["network"] == "tiny+other"
    assert d["trials"] == 3 and d["pareto"]
    store = Store(db)
    stored = {t.number: t for t in store.network_trials(d["study"])}
    for p in d["pareto"]:
        nets = p["networks"]
        assert [(n["network"], n["weight"]) for n in nets] == [("tiny", 3.0), ("other", 1.0)]
        assert p["seconds"] == pytest.approx(3 * nets[0]["seconds"] + nets[1]["seconds"])
        assert [la["name"] for la in nets[0]["layers"]] == ["a", "b", "a2", "fc"]
        assert [la["name"] for la in nets[1]["layers"]] == ["x", "y"]
        for n, rec in zip(nets, stored[p["trial"]].networks, strict=True):
            # as stored; the network's seconds from its own layers
            assert (n["cycles"], n["seconds"]) == (rec.cycles, rec.seconds)
            assert n["seconds"] == pytest.approx(
                sum(la["count"] * la["seconds"] for la in n["layers"]))
    # a rerun with other weights or without one network is refused, one line
    for argv in (("--weights", "1,1"), ()):
        rc, out, err = _run(capsys, "search", str(files[0]), str(files[1]), *argv,
                            "--study", d["study"], "--trials", "3", "--workers", "1",
                            "--db", db)
        assert rc == 2 and err.count("\n") == 1 and "vtatune: error: study" in err
    rc, _, err = _run(capsys, "search", str(files[0]), "--study", d["study"], "--trials", "3",
                      "--db", db)
    assert rc == 2 and "network:tiny+other, not network:tiny" in err


def test_a_single_network_json_has_no_networks(capsys, tmp_path, files) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    rc, out, err = _run(capsys, "search", str(files[0]), "--trials", "2", "--sampler",
                        "random", "--seed", "0", "--workers", "1", "--db", db, "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["study"] == "network-tiny-random" and "networks" not in d
    assert d["pareto"] and all("networks" not in p for p in d["pareto"])


def test_a_set_file_with_an_onnx_member(capsys, tmp_path, files) -> None:
    """A network-set file: an ONNX model (its fingerprint in the identity) beside a network
    file, the set's hardware space, a continuation with another model refused."""
    from tests.models.onnx_graphs import conv_model, save

    save(conv_model([1, 16, 8, 8], (16, 16, 3, 3), pads=[1] * 4), tmp_path / "cv.onnx")
    s = tmp_path / "pair.toml"
    s.write_text(toml_text({
        "networks": {"members": [{"network": "cv.onnx", "weight": 2},
                                 {"network": str(files[1])}]},
        "hardware": TINY["hardware"], "inner": {"trials": 5, "min_per_layer": 1}}))
    db = f"sqlite:///{tmp_path / 'o.sqlite'}"
    argv = ("search", str(s), "--trials", "2", "--sampler", "random", "--seed", "1",
            "--workers", "1", "--db", db, "--json")
    rc, out, err = _run(capsys, *argv)
    assert rc == 0, err
    d = json.loads(out)
    info = Store(db).study(d["study"])
    fp = info.space["networks"][0]["network"]["fingerprint"]
    assert len(fp) == 64 and info.identity["networks"][0] == {
        "network": "cv", "weight": 2.0, "model": fp}
    assert d["study"] == f"network-cv+other-pair-w2_1-{fp[:8]}-random"
    shared = "conv2d_n1_c16_h8_w8_o16_k3x3_p1_s1"  # the model's conv is other's x
    for t in Store(db).network_trials(d["study"]):
        if t.status == "ok":
            keys = {la.key for n in t.networks for la in n.layers if la.workload == shared}
            assert len(keys) == 1
    # the same name, another model: refused
    save(conv_model([1, 16, 8, 8], (16, 16, 3, 3), pads=[1] * 4, strides=[2, 2]),
         tmp_path / "cv.onnx")
    rc, _, err = _run(capsys, *argv[:-1], "--study", d["study"])
    assert rc == 2 and err.count("\n") == 1


@pytest.mark.parametrize(("extra", "message"), [
    (("--weights", "3"), "gives 1 weight for 2 networks"),
    (("--weights", "3,1,1"), "gives 3 weights for 2 networks"),
    (("--weights", "3,-1"), "positive finite"),
    (("--weights", "0,1"), "positive finite"),
    (("--weights", "nan,1"), "positive finite"),
    (("--weights", "1,inf"), "positive finite"),
    (("--weights", "1,x"), "is not a number"),
    (("--space", "resnet18"), "--space applies to one network"),
    (("conv2d",), "is an operator"),
    (("nosuchnet",), "unknown workload"),
    (("--layer", "C1"), "--layer and --shape select one layer"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, files, extra, message) -> None:
    argv = ["search", str(files[0]), str(files[1]), "--db",
            f"sqlite:///{tmp_path / 'e.sqlite'}"]
    if extra and not extra[0].startswith("-"):
        argv.insert(2, extra[0])
        extra = extra[1:]
    rc, out, err = _run(capsys, *argv, *extra)
    assert rc == 2 and out == ""
    assert err.startswith("vtatune: error: ") and err.count("\n") == 1 and message in err, err


def test_bad_sets_and_duplicates_are_one_line(capsys, tmp_path, files) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[networks]\nmembers = [{network = "resnet18", weight = 0}, '
                   '{weight = 1}]\n[fans]\nn = 1\n')
    for argv, message in (((str(bad),), "member 1: weight 0"),
                          ((str(bad), str(files[0])), "is a network-set file"),
                          ((str(files[0]), str(files[0])), "given twice"),
                          (("--weights", "1,2"), "--weights needs the networks")):
        rc, out, err = _run(capsys, "search", *argv, "--db",
                            f"sqlite:///{tmp_path / 'e.sqlite'}")
        assert rc == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_announced_evaluations_and_the_best_line_are_true(capsys, tmp_path, files) -> None:
    """The start line's layer evaluations per design are what each design gets (here the
    minimum over 3 distinct layers, 2 each, exceeds --layer-trials 4), and the last line's
    best ms and cycles are one design's."""
    db = f"sqlite:///{tmp_path / 'b.sqlite'}"
    rc, out, err = _run(capsys, "search", str(files[0]), "--trials", "2", "--layer-trials",
                        "4", "--sampler", "random", "--seed", "1", "--workers", "1", "--db",
                        db)
    assert rc == 0, err
    text = out + err
    assert "of 6 layer evaluations (at least 2 for each of 3 distinct layers)" in text, text
    trials = [t for t in Store(db).network_trials("network-tiny-random") if t.feasible]
    assert trials and all(t.evaluated + t.cached == 6 for t in trials)
    best = min(trials, key=lambda t: t.seconds)
    line = next(ln for ln in out.splitlines() if ln.startswith("study "))
    assert line.endswith(f"best (least end-to-end latency): {1e3 * best.seconds:,.3f} ms, "
                         f"trial {best.number} ({best.cycles:,} cycles)"), line


@pytest.mark.parametrize(("workload", "what"), [("conv2d", "'conv2d' is an operator"),
                                                ("resnet18", "'resnet18' is one network")])
def test_weights_for_one_workload_say_they_are_for_several_networks(capsys, tmp_path,
                                                                   workload, what) -> None:
    rc, out, err = _run(capsys, "search", workload, "--weights", "3", "--db",
                        f"sqlite:///{tmp_path / 'w.sqlite'}")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "--weights is for several networks" in err and what in err
    assert not (tmp_path / "w.sqlite").exists()  # nothing searched
