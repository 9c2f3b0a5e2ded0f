"""vtatune.paths: data and output folders for a checkout, an installed package, VTATUNE_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from vtatune import paths


def test_checkout_finds_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VTATUNE_HOME", raising=False)
    root = Path(paths.__file__).resolve().parents[1]
    assert paths.checkout_root() == root
    assert paths.project_root() == root and paths.work_root() == root
    for d in paths.DATA_DIRS:
        assert (paths.project_root() / d).is_dir()


def test_installed_package_keeps_data_inside_and_output_in_cwd(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # an installed layout: site-packages/vtatune/{paths.py,hwconfigs,spaces}, no pyproject
    pkg = tmp_path / "site-packages" / "vtatune"
    for d in paths.DATA_DIRS:
        (pkg / d).mkdir(parents=True)
    monkeypatch.setattr(paths, "_PACKAGE", pkg)
    monkeypatch.delenv("VTATUNE_HOME", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert paths.checkout_root() is None
    assert paths.project_root() == pkg
    assert paths.work_root() == work


def test_vtatune_home_overrides_both(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VTATUNE_HOME", str(tmp_path))
    assert paths.project_root() == tmp_path and paths.work_root() == tmp_path


def test_default_database_follows_the_work_root(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    from vtatune.store import default_url

    monkeypatch.setenv("VTATUNE_HOME", str(tmp_path))
    assert default_url() == f"sqlite:///{tmp_path.resolve() / 'db' / 'vtatune.sqlite'}"

