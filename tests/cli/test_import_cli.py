"""vtatune import (text, --json, --out) and search MODEL.onnx."""

from __future__ import annotations

import json
from collections import Counter

from tests.models.onnx_graphs import helper, model, save, weight
from vtatune.cli.main import main
from vtatune.models import examples
from vtatune.networks import space as nspace


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _sigs(net) -> Counter:
    c: Counter = Counter()
    for la in net.layers:
        c[la.workload.signature] += la.count
    return c


def test_import_text_json_and_network_file(capsys, tmp_path) -> None:
    path = tmp_path / "mobilenet.onnx"
    examples.build("mobilenet_v1", batch="N", weights="external", path=path)
    rc, out, err = _run(capsys, "import", str(path))
    assert rc == 0, err
    assert "batch 1 (the default; --batch N)" in out
    assert "network mobilenet: 20 layers (28 runs)" in out
    assert "BatchNormalization 27" in out and "Relu 27" in out

    rc, out, err = _run(capsys, "import", str(path), "--json", "--batch", "2", "--name", "mb")
    assert rc == 0, err
    d = json.loads(out)
    assert d["network"] == "mb" and d["batch"] == 2
    assert all(set(la) == {"name", "kind", "shape", "count"} for la in d["layers"])
    assert sum(la["count"] for la in d["layers"]) == 28
    assert {la["kind"] for la in d["layers"]} == {"conv2d", "group_conv2d", "dense"}
    dw = next(la for la in d["layers"] if la["count"] == 5 and la["kind"] == "group_conv2d")
    assert dw["shape"] == "2,512,14,14,512,3,3,1,1,512"  # as --shape takes it
    host = {h["op"]: h["count"] for h in d["host_ops"]}
    assert host == {"BatchNormalization": 27, "Relu": 27, "GlobalAveragePool": 1, "Flatten": 1}
    assert all(set(h) >= {"op", "count"} for h in d["host_ops"])

    out_file = tmp_path / "mb.toml"
    rc, out, err = _run(capsys, "import", str(path), "--out", str(out_file))
    assert rc == 0, err
    text = out_file.read_text()
    assert "# from ONNX nodes: dw7, dw8, dw9, dw10, dw11" in text
    assert "# from ONNX node: conv1" in text
    assert f"# model sha256 (graph and shapes, without the weights): {_fp(path)}" in text
    written = nspace.load(out_file)
    assert _sigs(written.network) == _sigs(nspace.load("mobilenet_v1").network)
    # the file's settings are the shipped networks'
    assert written.hw_choices == nspace.load("resnet18").hw_choices


def _fp(path) -> str:
    from vtatune.models import reader

    return reader.read(path).fingerprint


def test_host_op_reasons_are_shown(capsys, tmp_path) -> None:
    ok = helper.make_node("Conv", ["x", "w"], ["a"], name="good", pads=[1] * 4)
    dil = helper.make_node("Conv", ["a", "w"], ["y"], name="dilated", pads=[2] * 4,
                           dilations=[2, 2])
    m = model([ok, dil], {"x": [1, 16, 8, 8]}, [weight("w", (16, 16, 3, 3))])
    path = save(m, tmp_path / "m.onnx")
    rc, out, err = _run(capsys, "import", str(path))
    assert rc == 0, err
    assert "on the host, though VTA runs Conv: 1 node (dilated): dilations 2x2" in out
    rc, out, err = _run(capsys, "import", str(path), "--json")
    d = json.loads(out)
    assert d["host_ops"] == [{"op": "Conv", "count": 1, "reason": d["host_ops"][0]["reason"],
                              "nodes": ["dilated"]}]
    assert "dilations 2x2" in d["host_ops"][0]["reason"]


def test_bad_models_are_one_line(capsys, tmp_path) -> None:
    p = tmp_path / "x.onnx"
    p.write_bytes(b"not a model at all")
    for argv in (["import", str(p)], ["import", str(tmp_path / "missing.onnx")],
                 ["search", str(p), "--trials", "1"]):
        rc, out, err = _run(capsys, *argv)
        assert rc == 2 and out == ""
        assert err.startswith("vtatune: error: ") and err.count("\n") == 1, err


def _tiny(tmp_path, name: str, extra_relu: bool = False):
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="c", pads=[1] * 4)]
    if extra_relu:
        nodes.append(helper.make_node("Relu", ["y"], ["z"]))
    m = model(nodes, {"x": [1, 16, 8, 8]}, [weight("w", (16, 16, 3, 3))])
    return save(m, tmp_path / name)


def test_search_a_model_and_its_fingerprint_in_the_study(capsys, tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    a = _tiny(tmp_path, "tiny.onnx")
    common = ["--hw", "default", "--trials", "1", "--layer-trials", "2", "--workers", "1",
              "--db", db]
    rc, out, err = _run(capsys, "search", str(a), *common, "--json")
    assert rc == 0, err
    d = json.loads(out)
    fp = _fp(a)
    assert d["network"] == "tiny" and d["study"] == f"network-tiny-{fp[:8]}-sched-xgb"
    assert d["trials"] == 1
    # the same layers from another graph (a ReLU more): another model, refused as a
    # continuation of the study
    (tmp_path / "other").mkdir()
    b = _tiny(tmp_path / "other", "tiny.onnx", extra_relu=True)
    rc, out, err = _run(capsys, "search", str(b), *common, "--study", d["study"], "--json")
    assert rc == 2 and err.startswith("vtatune: error: "), err
    assert f"model {fp}" in err and _fp(b) in err, err
    # the same model again continues it (a fixed design: nothing new to search)
    rc, out, err = _run(capsys, "search", str(a), *common, "--study", d["study"], "--json")
    assert rc == 0 and json.loads(out)["study"] == d["study"], err
    # a model and --space: refused
    rc, out, err = _run(capsys, "search", str(a), "--space", "resnet18", "--trials", "1",
                        "--db", db)
    assert rc == 2 and "not both" in err


def test_batch_limit_is_the_library_s() -> None:
    from vtatune.cli import import_
    from vtatune.models import graph

    assert import_.MAX_BATCH == graph.MAX_BATCH


def test_a_zoo_network_named_to_import_points_to_search(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # (no file of that name here)
    rc, out, err = _run(capsys, "import", "resnet18")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "no such file; resnet18 is a network of vtatune's zoo" in err
    assert "`vtatune search resnet18`" in err
    rc, out, err = _run(capsys, "import", "resnet99")  # not a zoo name: the plain message
    assert rc == 2 and "zoo" not in err and "no such file" in err
