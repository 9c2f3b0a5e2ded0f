"""Bundles: export -> verify round-trips; tampering, bad picks and broken bundles are caught."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from vtatune.errors import UserError
from vtatune.export import BUNDLE_FILES, pick_trial, read_manifest, verify_bundle, write_bundle
from vtatune.store import Store


@pytest.fixture(scope="module")
def bundle(studies, tmp_path_factory):
    store = Store(studies.db)
    info, trials = store.study(studies.tpe), store.trials(studies.tpe)
    folder = tmp_path_factory.mktemp("bundle")
    return write_bundle(info, trials, "knee", folder, db=studies.db), trials


def _copy(bundle, tmp_path):
    dst = tmp_path / "b"
    shutil.copytree(bundle[0].folder, dst)
    return dst


def test_bundle_files_and_manifest(bundle, studies) -> None:
    from vtatune.hardware import config

    res, trials = bundle
    trial = next(t for t in trials if t.number == res.trial)
    manifest = read_manifest(res.folder)
    for name in BUNDLE_FILES:
        data = (res.folder / name).read_bytes()
        assert manifest["files"][name] == {"sha256": hashlib.sha256(data).hexdigest(),
                                           "bytes": len(data)}
    assert manifest["source"]["study"] == studies.tpe
    assert manifest["source"]["trial"] == res.trial and manifest["source"]["pick"] == "knee"
    assert set(manifest["versions"]) >= {"vtatune", "tvm", "python"}
    hw = config.load(res.folder / "vta_config.json")  # VTA's own format, validated
    assert hw.log_params() == trial.candidate.hw
    raw = json.loads((res.folder / "vta_config.json").read_text())
    blocks = {"LOG_BLOCK_IN", "LOG_BLOCK_OUT"}
    square = trial.candidate.hw["LOG_BLOCK_IN"] == trial.candidate.hw["LOG_BLOCK_OUT"]
    keys = set(trial.candidate.hw) - blocks | {"LOG_BLOCK"} if square else set(
        trial.candidate.hw)  # stock VTA's one LOG_BLOCK where it applies
    assert set(raw) == {"TARGET", "HW_VER", *keys} and raw["TARGET"] == "pynq"
    sched = json.loads((res.folder / "schedule.json").read_text())
    (sig, entry), = sched["workloads"].items()
    assert sig == trial.candidate.workload and entry["knobs"] == trial.candidate.knobs
    assert entry["cycles"] == trial.candidate.cycles == res.cycles
    res_json = json.loads((res.folder / "resources.json").read_text())
    assert res_json["area_mm2"] == trial.candidate.area_mm2 and res_json["fits"] is True
    # energy of the rebuilt program = what the search stored for the trial (its own path)
    energy = manifest["energy"]
    assert energy["accelerator_j"]["value"] == pytest.approx(
        trial.candidate.accelerator_energy_j, rel=1e-9)
    assert energy["board_j"]["value"] == pytest.approx(trial.candidate.board_energy_j, rel=1e-9)
    assert energy["accelerator_j"]["low"] <= energy["accelerator_j"]["value"] <= \
        energy["accelerator_j"]["high"]
    assert "estimate" in energy["note"]


def test_export_then_verify_passes_every_check(bundle) -> None:
    report = verify_bundle(bundle[0].folder)
    assert report.ok, report.failed
    assert [c.name for c in report.checks if c.status == "pass"] == [
        "checksums", "vta_config", "schedule", "program.bin", "rebuild", "cycles", "functional",
        "autotvm", "resources"]


def test_verify_for_another_board_reports_cycles_and_checks_the_fit(bundle) -> None:
    report = verify_bundle(bundle[0].folder, "ultra96", functional=False)
    status = {c.name: c.status for c in report.checks}
    assert report.ok and report.board == "ultra96"
    assert status["cycles"] == "info" and status["fit"] == "pass"
    assert "ultra96" in next(c.detail for c in report.checks if c.name == "cycles")


def test_a_tampered_file_fails_its_checksum(bundle, tmp_path) -> None:
    folder = _copy(bundle, tmp_path)
    data = bytearray((folder / "program.bin").read_bytes())
    data[-1] ^= 0xFF  # the last micro-op word
    (folder / "program.bin").write_bytes(bytes(data))
    report = verify_bundle(folder, functional=False)
    status = {c.name: c.status for c in report.checks}
    assert not report.ok and status["checksums"] == "FAIL" and status["rebuild"] == "FAIL"
    assert "program.bin" in next(c.detail for c in report.checks if c.name == "checksums")


def test_changed_cycles_fail_even_with_fixed_checksums(bundle, tmp_path) -> None:
    folder = _copy(bundle, tmp_path)
    path = folder / "schedule.json"
    doc = json.loads(path.read_text())
    (entry,) = doc["workloads"].values()
    entry["cycles"] -= 1
    path.write_text(json.dumps(doc))
    manifest = json.loads((folder / "manifest.json").read_text())
    data = path.read_bytes()
    manifest["files"]["schedule.json"] = {"sha256": hashlib.sha256(data).hexdigest(),
                                          "bytes": len(data)}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    report = verify_bundle(folder, functional=False)
    assert [c.name for c in report.failed] == ["cycles"]


def test_an_invalid_vta_config_fails_and_skips_what_needs_it(bundle, tmp_path) -> None:
    folder = _copy(bundle, tmp_path)
    (folder / "vta_config.json").write_text('{"LOG_BLOCK_IN": 99}')
    report = verify_bundle(folder)
    status = {c.name: c.status for c in report.checks}
    assert status["checksums"] == status["vta_config"] == "FAIL"
    assert {status[n] for n in ("schedule", "program.bin", "rebuild", "cycles", "resources")} \
        == {"skip"}


def test_broken_bundles_are_bad_input(bundle, tmp_path) -> None:
    with pytest.raises(UserError, match="no such bundle"):
        read_manifest(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no manifest.json"):
        read_manifest(tmp_path / "empty")
    folder = _copy(bundle, tmp_path)
    (folder / "program.bin").unlink()
    with pytest.raises(UserError, match="missing program.bin"):
        read_manifest(folder)
    (folder / "manifest.json").write_text("{not json")
    with pytest.raises(UserError, match="manifest.json.: is not valid JSON"):
        read_manifest(folder)
    (folder / "manifest.json").write_text('{"format": "other"}')
    with pytest.raises(UserError, match="not a vtatune bundle"):
        read_manifest(folder)
    (folder / "manifest.json").write_text('{"format": "vtatune-network-bundle/1"}')
    with pytest.raises(UserError, match="earlier vtatune without autotvm.log: export it again"):
        read_manifest(folder)


def test_a_bundle_timed_on_a_boards_profile_verifies(tmp_path) -> None:
    """A manifest naming a board with its timing profile (``pynq-z1@2019-07``) is a known
    board; its cycles are the profile's, and another profile reports its own."""
    from dataclasses import replace

    from vtatune.export.bundle import build, write_design
    from vtatune.hardware import boards
    from vtatune.hardware.config import default
    from vtatune.workloads.dense import Dense

    board = boards.load("pynq-z1@2019-07")
    built = build(Dense(16, 64, 64), replace(default(), target="pynq"),
                  {"tile_b": 16, "tile_ci": 2, "tile_co": 2, "oc_nthread": 2}, board)
    write_design(tmp_path / "b", built, board, {"test": True}, "h")
    assert read_manifest(tmp_path / "b")["board"] == "pynq-z1@2019-07"
    report = verify_bundle(tmp_path / "b", functional=False)
    assert report.ok, report.failed
    assert f"{built.timing.cycles:,} cycles on pynq-z1@2019-07" in next(
        c.detail for c in report.checks if c.name == "cycles")
    other = verify_bundle(tmp_path / "b", "pynq-z1@2019-08", functional=False)
    assert other.ok and {c.name: c.status for c in other.checks}["cycles"] == "info"


def test_a_board_without_timing_parameters_is_bad_input(bundle, tmp_path) -> None:
    """verify-export --board FILE of a board vtatune has no timing for: exit 2, not a failed
    cycles check (the bundle is not to blame)."""
    from vtatune.hardware.boards import boards_dir

    raw = json.loads((boards_dir() / "pynq-z1.json").read_text())
    board = tmp_path / "my-board.json"
    board.write_text(json.dumps({**raw, "name": "my-board"}))
    with pytest.raises(UserError, match="no timing parameters for board 'my-board'"):
        verify_bundle(bundle[0].folder, str(board))


def test_picks(studies) -> None:
    store = Store(studies.db)
    info, trials = store.study(studies.tpe), store.trials(studies.tpe)
    feas = [t for t in trials if t.candidate.feasible]
    fastest = pick_trial(info, trials, "fastest")
    # the study's latency (end to end per call by default), the report's fastest too
    assert fastest.candidate.seconds == min(t.candidate.seconds for t in feas)
    from vtatune.reports.data import report_data

    assert report_data(info, trials).fastest.trial == fastest.number
    smallest = pick_trial(info, trials, "smallest")
    least = min(t.candidate.area_mm2 for t in feas)
    assert smallest.candidate.area_mm2 == least
    # ties of area go to the least latency in the study's measure (end to end per call), as
    # the front keeps them
    assert smallest.candidate.seconds == min(t.candidate.seconds for t in feas
                                             if t.candidate.area_mm2 == least)
    assert pick_trial(info, trials, str(feas[0].number)) == feas[0]
    # an infeasible trial (a search screens designs that do not fit: one from a study made
    # before the screen, numbered after the study's)
    import dataclasses

    bad = dataclasses.replace(store.trials(studies.nofit)[0], number=len(trials))
    assert not bad.candidate.feasible
    for pick, message in [("9999", "no trial 9999"), ("banana", "--pick must be one of"),
                          (str(bad.number), "only feasible trials")]:
        with pytest.raises(UserError, match=message):
            pick_trial(info, [*trials, bad], pick)
    for name, message in [(studies.nofit, "no feasible trial"), (studies.empty, "no trials")]:
        with pytest.raises(UserError, match=message):
            pick_trial(store.study(name), store.trials(name), "knee")


def test_the_shared_program_and_functional_checks_fail_when_they_should() -> None:
    """``same_program`` and ``bit_exact`` (used by operator and network bundles alike) pass
    the program as built and fail a changed one / another requantization shift."""
    from dataclasses import replace

    from vtatune.export.bundle import build, same_program
    from vtatune.export.verify import _Failed, bit_exact
    from vtatune.hardware import boards
    from vtatune.hardware.config import default
    from vtatune.workloads.dense import Dense

    wl = Dense(16, 64, 64)
    built = build(wl, replace(default(), target="pynq"),
                  {"tile_b": 16, "tile_ci": 2, "tile_co": 2, "oc_nthread": 2},
                  boards.load("pynq-z1"))
    raw = built.program_bytes
    assert same_program(raw, built) is None
    changed = raw[:10] + bytes([raw[10] ^ 1]) + raw[11:]
    assert same_program(changed, built) == (f"sizes {len(raw):,} vs {len(raw):,} bytes, "
                                            "first difference at byte 10")
    assert "first difference at byte" in same_program(raw[:-1], built)
    assert bit_exact(built.program, wl, built.shift) == 16 * 64
    with pytest.raises(_Failed, match="outputs differ from numpy"):
        bit_exact(built.program, wl, built.shift + 3)


def test_a_bundle_of_a_user_profile_verifies_where_the_profile_is_not(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundle exported with a user profile (``pynq-z1@mylab``) carries the profile's
    constants: it verifies, cycles included, on a machine without that profile."""
    from dataclasses import replace

    from vtatune.export.bundle import build, write_design
    from vtatune.hardware import boards, timing_profiles
    from vtatune.hardware.config import default
    from vtatune.workloads.dense import Dense

    monkeypatch.setenv("VTATUNE_DATA", str(tmp_path / "here"))
    content = timing_profiles.resolve("pynq-z1").content
    slower = {**content["params"], "insn_cycles": 3 * content["params"]["insn_cycles"]}
    timing_profiles.save("pynq-z1", "mylab", {**content, "params": slower})
    wl, hw = Dense(16, 64, 64), replace(default(), target="pynq")
    knobs = {"tile_b": 16, "tile_ci": 2, "tile_co": 2, "oc_nthread": 2}
    board = boards.load("pynq-z1@mylab")
    built = build(wl, hw, knobs, board)
    # the profile's constants make the cycles (else carrying them would prove nothing)
    assert built.timing.cycles != build(wl, hw, knobs, boards.load("pynq-z1")).timing.cycles
    write_design(tmp_path / "b", built, board, {"test": True}, "h")

    monkeypatch.setenv("VTATUNE_DATA", str(tmp_path / "elsewhere"))
    with pytest.raises(UserError, match="board 'pynq-z1' is known, but its timing profile "
                                        "'mylab' is not here"):
        boards.load("pynq-z1@mylab")
    report = verify_bundle(tmp_path / "b", functional=False)
    assert report.ok, report.failed
    assert next(c.detail for c in report.checks if c.name == "cycles").startswith(
        f"{built.timing.cycles:,} cycles on pynq-z1@mylab")
    # a manifest without the constants (an earlier vtatune's) names what is missing
    path = tmp_path / "b" / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["timing_profile"]
    path.write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="manifest.json.: .*board 'pynq-z1' is known, but its "
                                        "timing profile 'mylab' is not here"):
        verify_bundle(tmp_path / "b", functional=False)
