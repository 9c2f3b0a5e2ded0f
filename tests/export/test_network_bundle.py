"""Network bundles: every layer rebuilt and verified; tampering is caught."""

from __future__ import annotations

import json
import shutil

import pytest

from vtatune.errors import UserError
from vtatune.export.network import (
    is_network_bundle,
    pick_design,
    verify_network_bundle,
    write_network_bundle,
)
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
                                      "programs/a.bin", "programs/b.bin", "programs/fc.bin"}


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
