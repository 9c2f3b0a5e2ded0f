"""Identity of stored results: every input a record depends on changes its context key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vtatune.store import identity

CONS = {"fit_board": True, "max_area_mm2": None}
HW = {"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0,
      "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15,
      "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}


def test_same_inputs_same_key() -> None:
    a, b = identity.context("pynq-z1", CONS), identity.context("pynq-z1", dict(CONS))
    assert a == b and a.key == b.key and len(a.key) == identity.KEY_HEX


def test_same_key_in_another_process() -> None:
    code = ("from vtatune.store import identity; "
            "print(identity.context('pynq-z1', {'fit_board': True, 'max_area_mm2': None}).key)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "PYTHONHASHSEED": "123"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.strip()
    assert out == identity.context("pynq-z1", CONS).key


def test_another_board_changes_the_key() -> None:
    assert identity.context("zcu104", CONS).key != identity.context("pynq-z1", CONS).key
    assert (identity.context("zcu104", CONS).model_key
            != identity.context("pynq-z1", CONS).model_key)


def test_constraints_change_the_key_but_not_the_model() -> None:
    base = identity.context("pynq-z1", CONS)
    for cons in ({"fit_board": False, "max_area_mm2": None},
                 {"fit_board": True, "max_area_mm2": 30.0},
                 {**CONS, "stock_vta": True}):
        other = identity.context("pynq-z1", cons)
        assert other.key != base.key and other.model_key == base.model_key


@pytest.mark.parametrize("module, name", [("vtatune.simulator.timing", "MODEL_VERSION"),
                                          ("vtatune.area", "MODEL_VERSION"),
                                          ("vtatune.compiler.version", "COMPILER_VERSION")])
def test_a_model_version_bump_changes_the_key(module: str, name: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    before = identity.context("pynq-z1", CONS)
    mod = importlib.import_module(module)
    monkeypatch.setattr(mod, name, getattr(mod, name) + 1)
    after = identity.context("pynq-z1", CONS)
    assert after.key != before.key and after.model_key != before.model_key


def test_a_changed_timing_constant_changes_the_key(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from vtatune.paths import project_root

    before = identity.context("pynq-z1", CONS)
    home = tmp_path / "home"
    shutil.copytree(project_root() / "hwconfigs", home / "hwconfigs")
    monkeypatch.setenv("VTATUNE_HOME", str(home))
    assert identity.context("pynq-z1", CONS).key == before.key  # same contents, same key
    timing = home / "hwconfigs" / "timing" / "pynq-z1.json"
    raw = json.loads(timing.read_text())
    timing.write_text(json.dumps(raw, indent=7))  # formatting alone changes nothing
    assert identity.context("pynq-z1", CONS).key == before.key
    other = next(n for n in raw["profiles"] if n != raw["default_profile"])
    raw["profiles"][other]["params"]["dma_row_cycles"] += 1  # another profile's constant
    timing.write_text(json.dumps(raw))
    assert identity.context("pynq-z1", CONS).key == before.key
    raw["profiles"][raw["default_profile"]]["params"]["dma_row_cycles"] += 1
    timing.write_text(json.dumps(raw))
    assert identity.context("pynq-z1", CONS).key != before.key


def test_each_profile_has_its_own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vtatune.hardware import timing_profiles

    monkeypatch.setenv("VTATUNE_DATA", str(tmp_path / "data"))
    names = [p.name for p in timing_profiles.shipped("pynq-z1")]
    assert len(names) >= 2
    keys = {identity.context(f"pynq-z1@{n}", CONS).model_key for n in names}
    assert len(keys) == len(names)
    fp = [identity.model_fingerprint(f"pynq-z1@{n}")["timing_file"] for n in names]
    assert len(set(fp)) == len(fp) and "missing" not in fp
    # the default profile named or not: the same constants, the same timing fingerprint
    assert identity.model_fingerprint("pynq-z1")["timing_file"] == fp[0]
    # a user profile with the default's constants is still its own profile
    content = timing_profiles.resolve("pynq-z1", names[0]).content
    timing_profiles.save("pynq-z1", "mine", content)
    assert identity.model_fingerprint("pynq-z1@mine")["timing_file"] not in fp


def test_single_profile_boards_keep_their_keys() -> None:
    # a timing file of one profile is hashed as a whole, as before profiles existed
    from vtatune.paths import project_root

    path = project_root() / "hwconfigs" / "timing" / "ultra96.json"
    assert identity.model_fingerprint("ultra96")["timing_file"] == identity.file_digest(path)


@pytest.mark.parametrize("path", ["boards/pynq-z1.json", "area/coefficients.toml"])
def test_board_file_and_area_coefficients_are_part_of_the_key(
        path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vtatune.paths import project_root

    before = identity.context("pynq-z1", CONS)
    home = tmp_path / "home"
    shutil.copytree(project_root() / "hwconfigs", home / "hwconfigs")
    monkeypatch.setenv("VTATUNE_HOME", str(home))
    target = home / "hwconfigs" / path
    target.write_text(target.read_text() + ("\n# changed\nextra = 1\n" if path.endswith(".toml")
                                            else " "))
    if path.endswith(".json"):
        raw = json.loads(target.read_text())
        raw["clock_mhz"] = raw["clock_mhz"] + 1
        target.write_text(json.dumps(raw))
    assert identity.context("pynq-z1", CONS).key != before.key


def test_differences_name_what_changed() -> None:
    old = {"board": "pynq-z1", "hardware": "1x16x16", "model": {"timing_model": 1}}
    new = {"board": "pynq-z1", "hardware": "1x8x8", "model": {"timing_model": 2}}
    assert identity.differences(old, new) == ["hardware 1x16x16, not 1x8x8",
                                              "model timing_model 1, not 2"]
    assert identity.differences(old, old) == []
