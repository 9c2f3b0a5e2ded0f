"""A design of several networks exported as ONE bundle (one vta_config.json, each network's
schedule, shared programs), verified; damaged bundles fail as a single network's do."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from tests.reports.multi_study import WEIGHTS, make
from vtatune.cli.main import main
from vtatune.errors import UserError
from vtatune.export.bundle import write_network_bundle
from vtatune.export.verify import verify_network_bundle
from vtatune.store import Store


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    multi = make(tmp_path_factory.mktemp("multi"))
    store = Store(multi.db)
    info = store.study(multi.study)
    trials = store.network_trials(multi.study)
    folder = tmp_path_factory.mktemp("bundle") / "knee"
    res = write_network_bundle(info, trials, "knee", folder, multi.db)
    return res, {t.number: t for t in trials}[res.trial], multi


def test_one_bundle_with_each_network(bundle) -> None:
    res, t, _ = bundle
    folder = res.folder
    manifest = json.loads((folder / "manifest.json").read_text())
    assert sorted(p.name for p in folder.glob("*.json")) == [
        "manifest.json", "resources.json", "schedule.json", "vta_config.json"]
    assert sorted(p.name for p in (folder / "networks").iterdir()) == ["other.json",
                                                                        "tiny.json"]
    nets = {m["network"]: m for m in manifest["networks"]}
    assert {k: m["weight"] for k, m in nets.items()} == WEIGHTS
    for n in t.networks:  # each network's latency: its stored layers' count x latency
        mine = sum(la.count * la.seconds for la in n.layers) * 1e3
        assert nets[n.network]["latency_ms"] == pytest.approx(mine, rel=1e-6)
        assert nets[n.network]["cycles"] == sum(la.count * la.cycles for la in n.layers)
        doc = json.loads((folder / nets[n.network]["schedule"]).read_text())
        assert [(la["name"], la["count"]) for la in doc["network"]["layers"]] == [
            (la.name, la.count) for la in n.layers]
        assert all((folder / la["program"]).is_file() for la in doc["network"]["layers"])
    assert manifest["weighted"]["latency_ms"] == pytest.approx(1e3 * t.seconds, rel=1e-6)
    # energy per inference: the weighted sum of the networks' count-weighted layer energies,
    # each layer's the rebuilt program's = the stored pick's
    energy = manifest["energy"]
    by_net = {m["network"]: m for m in energy["networks"]}
    for n in t.networks:
        rows = by_net[n.network]["layers"]
        assert [(r["name"], r["count"]) for r in rows] == [(la.name, la.count)
                                                             for la in n.layers]
        for r, la in zip(rows, n.layers, strict=True):
            assert r["accelerator_j"]["value"] == pytest.approx(la.accelerator_energy_j,
                                                                 rel=1e-9)
        assert by_net[n.network]["accelerator_j"]["value"] == pytest.approx(
            n.accelerator_energy_j, rel=1e-9)
    assert energy["per_inference"]["accelerator_j"]["value"] == pytest.approx(
        t.accelerator_energy_j, rel=1e-9)
    assert energy["per_inference"]["board_j"]["value"] == pytest.approx(t.board_energy_j,
                                                                        rel=1e-9)
    # the shape tiny.a, tiny.a2 and other.x share: one program
    union = json.loads((folder / "schedule.json").read_text())
    progs = {la["name"]: la["program"] for la in union["network"]["layers"]}
    assert progs["tiny.a"] == progs["tiny.a2"] == progs["other.x"]
    assert len(list((folder / "programs").iterdir())) == 4


def test_bundle_verifies(bundle, capsys) -> None:
    res, _, _ = bundle
    report = verify_network_bundle(res.folder)
    assert report.ok, [c for c in report.failed]
    assert "networks" in [c.name for c in report.checks]
    assert main(["verify-export", str(res.folder)]) == 0
    assert "tiny x3: 4 layers" in capsys.readouterr().out


def test_export_cli_names_each_network(bundle, capsys, tmp_path) -> None:
    res, t, multi = bundle
    rc = main(["export", multi.study, "--db", multi.db, "--out", str(tmp_path / "b"),
               "--pick", str(t.number)])
    out = capsys.readouterr().out
    assert rc == 0
    for n in t.networks:
        ms = sum(la.count * la.seconds for la in n.layers) * 1e3
        assert f"network {n.network} (weight {n.weight:g}): {ms:.3f} ms per run" in out
    assert f"weighted sum (the study's objective): {1e3 * t.seconds:.3f} ms" in out
    assert "note: the study measured" not in out


def _resign(folder, name, edit):
    path = folder / name
    doc = json.loads(path.read_text())
    edit(doc)
    data = json.dumps(doc).encode()
    path.write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    (folder / "manifest.json").write_text(json.dumps(manifest))


def _set(path, value):
    def edit(doc):
        *keys, last = path
        for k in keys:
            doc = doc[k]
        doc[last] = value
    return edit


@pytest.mark.parametrize("tag, name, edit, check, why", [
    ("member_path", "schedule.json", _set(("networks", 1, "network"), "../../etc/passwd"),
     "schedule", "network 2: name '../../etc/passwd' must be"),
    ("member_escape", "schedule.json", _set(("networks", 0, "network"), "a\x1b[31m"),
     "schedule", "network 1: name 'a\\x1b[31m' must be"),
    ("member_number", "schedule.json", _set(("networks", 0, "network"), 7), "schedule",
     "network 1: name 7 must be"),
    ("weight_text", "schedule.json", _set(("networks", 0, "weight"), "3"), "schedule",
     "weight '3' must be a positive number"),
    ("weight_zero", "schedule.json", _set(("networks", 1, "weight"), 0), "schedule",
     "weight 0 must be a positive number"),
    ("weight_nan", "schedule.json", _set(("networks", 1, "weight"), float("nan")), "schedule",
     "NaN is not a number JSON allows"),
    ("schedule_escape", "schedule.json", _set(("networks", 1, "schedule"), "../x.json"),
     "schedule", "must be networks/other.json"),
    ("union_name", "schedule.json", _set(("network", "name"), "tiny+evil"), "schedule",
     "must be its networks' names joined by '+' (tiny+other)"),
    ("one_member", "schedule.json", lambda d: d["networks"].pop(), "schedule",
     "networks must list two or more networks"),
    ("member_layer_count", "networks/tiny.json",
     _set(("network", "layers", 1, "count"), 1.5), "networks", "layer 2: count 1.5 must be"),
    ("member_layer_path", "networks/other.json",
     _set(("network", "layers", 0, "name"), "../x"), "networks", "layer 1: name '../x'"),
    ("member_layer_cycles", "networks/other.json",
     lambda d: d["network"]["layers"][1].update(cycles=d["network"]["layers"][1]["cycles"] + 1),
     "networks", "is not the union's other.y"),
    ("member_total", "networks/tiny.json",
     lambda d: d["network"].update(cycles=d["network"]["cycles"] + 1), "networks",
     "its layers add up to"),
    ("member_layer_dropped", "networks/tiny.json", lambda d: d["network"]["layers"].pop(),
     "networks", "its layers are not the union's tiny.* layers"),
    ("member_renamed", "networks/tiny.json", _set(("network", "name"), "other"), "networks",
     "network name 'other' is not tiny"),
])
def test_damaged_multi_bundles_fail(bundle, tmp_path, tag, name, edit, check, why) -> None:
    res, _, _ = bundle
    folder = tmp_path / tag
    shutil.copytree(res.folder, folder)
    _resign(folder, name, edit)
    report = verify_network_bundle(folder, functional=False)
    failed = {c.name: c.detail for c in report.failed}
    assert list(failed) == [check], failed
    assert why in failed[check]
    assert "\x1b" not in failed[check] and len(failed[check]) < 400


def test_unsigned_or_missing_member_files(bundle, tmp_path) -> None:
    res, _, _ = bundle
    folder = tmp_path / "m"
    shutil.copytree(res.folder, folder)
    doc = json.loads((folder / "networks" / "tiny.json").read_text())
    doc["network"]["layers"][0]["count"] += 1
    (folder / "networks" / "tiny.json").write_text(json.dumps(doc))
    assert "checksums" in {c.name for c in verify_network_bundle(folder,
                                                                  functional=False).failed}
    (folder / "networks" / "other.json").unlink()
    with pytest.raises(UserError, match="missing 'networks/other.json'"):
        verify_network_bundle(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["networks/../../x.json"] = {"sha256": "0" * 64, "bytes": 1}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="outside the bundle"):
        verify_network_bundle(folder)
