"""Network bundles: every layer rebuilt and verified; tampering is caught."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from vtatune.errors import UserError
from vtatune.export.bundle import pick_design, write_network_bundle
from vtatune.export.verify import bundle_kind, is_network_bundle, verify_network_bundle
from vtatune.store import Store


@pytest.fixture(scope="module")
def bundle(network_studies, tmp_path_factory):
    store = Store(network_studies.db)
    info = store.study(network_studies.study)
    trials = store.network_trials(network_studies.study)
    folder = tmp_path_factory.mktemp("bundle") / "knee"
    res = write_network_bundle(info, trials, "knee", folder, network_studies.db)
    return res, trials


def test_bundle_holds_every_layer(bundle) -> None:
    res, trials = bundle
    t = {x.number: x for x in trials}[res.trial]
    folder = res.folder
    assert is_network_bundle(folder)
    schedule = json.loads((folder / "schedule.json").read_text())
    layers = schedule["network"]["layers"]
    assert [(la["name"], la["count"]) for la in layers] == [(la.name, la.count)
                                                             for la in t.layers]
    # one program per distinct shape, shared by the layers of that shape
    assert layers[0]["program"] == layers[2]["program"] == "programs/a.bin"
    assert sorted(p.name for p in (folder / "programs").iterdir()) == ["a.bin", "b.bin",
                                                                       "fc.bin"]
    assert res.cycles == sum(la["count"] * la["cycles"] for la in layers) == t.cycles
    manifest = json.loads((folder / "manifest.json").read_text())
    assert set(manifest["files"]) == {"vta_config.json", "schedule.json", "resources.json",
                                      "autotvm.log", "programs/a.bin", "programs/b.bin",
                                      "programs/fc.bin"}


def test_bundle_kind(bundle, tmp_path) -> None:
    res, _ = bundle
    assert bundle_kind(res.folder) == "network"
    # no manifest, a missing folder, a name with a NUL: the operator checks say what is wrong
    assert bundle_kind(tmp_path) == "operator"
    assert bundle_kind(tmp_path / "missing") == "operator"
    assert bundle_kind(tmp_path / "a\0b") == "operator"


def test_autotvm_log_has_a_record_per_shape_vta_can_run(bundle) -> None:
    from vtatune.export import autotvm as at
    from vtatune.hardware import config

    res, _ = bundle
    folder = res.folder
    hw = config.load(folder / "vta_config.json")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["bitstream"] == at.model_name(hw)
    records = [json.loads(line) for line in (folder / "autotvm.log").read_text().splitlines()]
    left = manifest["autotvm"]["not_in_log"]
    # three shapes: each either a record or listed with the layers it stands for
    assert len(records) + len(left) == 3 == manifest["autotvm"]["records"] + len(left)
    assert {x["workload"] for x in left} <= {la["workload"] for la in
                                             json.loads((folder / "schedule.json").read_text())
                                             ["network"]["layers"]}
    if at.bitstream_name(hw) is None:
        assert records == [] and all("non-square" in x["reason"] for x in left)
    for r in records:
        assert r["input"][0] == at.target_string(hw)
        assert r["input"][1] in ("conv2d_packed.vta", "dense_packed.vta")
    for x in left:
        if "a" in x["layers"]:
            assert x["layers"] == ["a", "a2"]  # the layers of one shape, together


def test_bundle_verifies(bundle) -> None:
    res, _ = bundle
    report = verify_network_bundle(res.folder)
    assert report.ok, [c for c in report.checks if c.status == "FAIL"]
    names = [c.name for c in report.checks]
    for tag in ("a", "b", "fc"):
        for step in ("program", "rebuild", "cycles", "functional"):
            assert f"{step} {tag}" in names
    assert "network" in names
    assert all(c.status in ("pass", "info") for c in report.checks)


def test_tampering_is_caught(bundle, tmp_path) -> None:
    res, _ = bundle
    folder = tmp_path / "b"
    shutil.copytree(res.folder, folder)
    prog = folder / "programs" / "b.bin"
    data = bytearray(prog.read_bytes())
    data[-1] ^= 0xFF
    prog.write_bytes(bytes(data))
    sched = json.loads((folder / "schedule.json").read_text())
    sched["network"]["cycles"] += 1
    (folder / "schedule.json").write_text(json.dumps(sched))
    report = verify_network_bundle(folder, functional=False)
    failed = {c.name for c in report.failed}
    assert {"checksums", "rebuild b", "network"} <= failed
    assert "rebuild a" not in failed


def _resigned_schedule(bundle, tmp_path, tag, edit):
    res, _ = bundle
    folder = tmp_path / tag
    shutil.copytree(res.folder, folder)
    path = folder / "schedule.json"
    doc = json.loads(path.read_text())
    edit(doc)
    data = json.dumps(doc).encode()
    path.write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["schedule.json"] = {"sha256": hashlib.sha256(data).hexdigest(),
                                          "bytes": len(data)}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


@pytest.mark.parametrize("tag, field, value, why", [
    ("count_fraction", "count", 1.9, "count 1.9 must be an integer"),
    ("count_zero", "count", 0, "count 0 must be between 1 and"),
    ("count_bool", "count", True, "count True must be an integer"),
    ("name_path", "name", "../../../../etc/passwd", "name '../../../../etc/passwd' must be"),
    ("name_escape", "name", "a\x1b[31mred\x07", "name 'a\\x1b[31mred\\x07' must be"),
    ("name_long", "name", "n" * 5000, "must be 1-64 letters"),
    ("name_number", "name", 5, "name 5 must be"),
])
def test_resigned_schedules_break_the_network_file_rules(bundle, tmp_path, tag, field, value,
                                                          why) -> None:
    """The rules of network files for layer names and counts (networks.network) hold for a
    bundle's schedule.json: a failed check, with the value shown short and escaped."""
    def edit(doc):
        doc["network"]["layers"][1][field] = value

    report = verify_network_bundle(_resigned_schedule(bundle, tmp_path, tag, edit),
                                   functional=False)
    failed = {c.name: c.detail for c in report.failed}
    assert list(failed) == ["schedule"], failed
    assert failed["schedule"].startswith("layer 2: ") and why in failed["schedule"]
    assert "\x1b" not in failed["schedule"] and "\x07" not in failed["schedule"]
    assert len(failed["schedule"]) < 200
    statuses = {c.status for c in report.checks if c.name.split()[0] in (
        "program", "rebuild", "cycles", "network", "autotvm")}
    assert statuses == {"skip"}


def test_resigned_duplicate_layer_names_fail(bundle, tmp_path) -> None:
    def edit(doc):
        doc["network"]["layers"][1]["name"] = doc["network"]["layers"][0]["name"]

    report = verify_network_bundle(_resigned_schedule(bundle, tmp_path, "dup", edit),
                                   functional=False)
    assert [c.name for c in report.failed] == ["schedule"]
    assert "same name" in report.failed[0].detail
    def rename(doc):
        doc["network"]["name"] = "\x1b[2J" * 2000

    report = verify_network_bundle(_resigned_schedule(bundle, tmp_path, "net", rename),
                                   functional=False)
    assert [c.name for c in report.failed] == ["schedule"]
    assert report.failed[0].detail.startswith("network name '\\x1b[2J")
    assert len(report.failed[0].detail) < 200


def test_a_resigned_autotvm_log_must_match_the_schedule(bundle, tmp_path) -> None:
    res, _ = bundle
    folder = tmp_path / "log"
    shutil.copytree(res.folder, folder)
    data = b'{"input": ["ext_dev -device=vta -keys=cpu -model=x", "t", [], {}], ' \
        b'"config": {"index": 0, "code_hash": null, "entity": []}, "result": [[1.0], 0, 1, 1],' \
        b' "version": 0.2}\n'
    (folder / "autotvm.log").write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["autotvm.log"] = {"sha256": hashlib.sha256(data).hexdigest(),
                                        "bytes": len(data)}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    report = verify_network_bundle(folder, functional=False)
    assert [c.name for c in report.failed] == ["autotvm"]
    assert "is not a layer of schedule.json" in report.failed[0].detail


def test_incomplete_or_escaping_bundles_are_bad_input(bundle, tmp_path) -> None:
    res, _ = bundle
    folder = tmp_path / "c"
    shutil.copytree(res.folder, folder)
    (folder / "programs" / "fc.bin").unlink()
    with pytest.raises(UserError, match="missing 'programs/fc.bin'"):
        verify_network_bundle(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["../../etc/passwd"] = {"sha256": "0" * 64, "bytes": 1}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="outside the bundle"):
        verify_network_bundle(folder)


def test_picks(network_studies) -> None:
    store = Store(network_studies.db)
    info = store.study(network_studies.study)
    trials = store.network_trials(network_studies.study)
    ok = [t for t in trials if t.feasible]
    assert pick_design(info, trials, "fastest").seconds == min(t.seconds for t in ok)
    smallest = pick_design(info, trials, "smallest")
    assert smallest.area_mm2 == min(t.area_mm2 for t in ok)
    bad = [t for t in trials if not t.feasible]
    with pytest.raises(UserError, match="no trial 99"):
        pick_design(info, trials, "99")
    with pytest.raises(UserError, match="--pick must be one of"):
        pick_design(info, trials, "best")
    if bad:
        with pytest.raises(UserError, match="only feasible designs"):
            pick_design(info, trials, str(bad[0].number))


@pytest.mark.parametrize("fmt,message", [
    ("vtatune-network-bundle/3", "which this vtatune does not know (it reads "
                                 "'vtatune-network-bundle/2')"),
    ("vtatune-network-bundle/1", "made by an earlier vtatune"),
])
def test_a_network_bundle_of_a_format_not_read_here_is_refused(bundle, tmp_path, fmt: str,
                                                               message: str) -> None:
    from vtatune.export import verify_bundle

    folder = tmp_path / "b"
    shutil.copytree(bundle[0].folder, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "format": fmt}))
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        verify_bundle(folder, functional=False)
