"""The wheel and the sdist carry the shipped data: installed into fresh venvs (offline: no
dependencies installed, the running environment's packages are made visible by a .pth file),
``vtatune boards`` lists the boards and a small search runs and stores its results under the
current directory, not inside site-packages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "vtatune", "hwconfigs",
           "spaces", "examples")

pytestmark = pytest.mark.skipif(not (ROOT / "setup.py").is_file(),
                                reason="needs the project's sources (a checkout or an sdist)")


def _run(cmd: list[str | Path], cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, f"{cmd}: {res.stdout}\n{res.stderr}"
    return res


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel and the sdist, built from a copy of the sources (the checkout stays clean)."""
    tmp = tmp_path_factory.mktemp("dist")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(p, src / name)
    out = tmp / "out"
    built = {}
    for kind in ("sdist", "wheel"):  # one process each: setuptools keeps state between builds
        code = (f"import sys; from setuptools import build_meta as b; "
                f"print(b.build_{kind}(sys.argv[1]))")
        built[kind] = out / _run([sys.executable, "-c", code, out], cwd=src).stdout.split()[-1]
        assert built[kind].is_file()
    return built


def _venv(where: Path, dist: Path) -> Path:
    """A venv holding only ``dist``; dependencies come from this interpreter's site-packages."""
    _run([sys.executable, "-m", "venv", "--without-pip", where], cwd=where.parent)
    py = where / "bin" / "python"
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=where).stdout.strip())
    # a plain path line: the outer folder's own .pth files (an editable vtatune) stay unread
    (site / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", py, "install", "--quiet", "--no-deps",
          "--no-index", "--no-build-isolation", dist], cwd=where.parent, env=_env())
    return where / "bin"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VTATUNE_HOME")}


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_installed_package_finds_its_data(kind: str, dists: dict[str, Path], tmp_path: Path
                                          ) -> None:
    bin_ = _venv(tmp_path / "venv", dists[kind])
    work = tmp_path / "work"
    work.mkdir()
    env = _env()
    where = _run([bin_ / "python", "-c", "import vtatune.paths as p; "
                  "print(p.__file__); print(p.project_root()); print(p.work_root())"],
                 cwd=work, env=env).stdout.split()
    site = str(tmp_path / "venv")
    assert where[0].startswith(site) and where[1].startswith(site), where
    assert Path(where[2]) == work
    boards = json.loads(_run([bin_ / "vtatune", "boards", "--json"], cwd=work, env=env).stdout)
    assert {b["name"] for b in boards} >= {"pynq-z1", "ultra96", "zcu104", "de10-nano"}
    pynq = next(b for b in boards if b["name"] == "pynq-z1")
    assert {q["name"] for q in pynq["profiles"]} >= {"2019-07", "2019-08"}
    # the records the profiles were fitted on travel with them (the AutoTVM log too)
    measured = Path(where[1]) / "hwconfigs" / "timing" / "measured"
    assert (measured / "vta_pynq_measured.log").is_file()
    version = _run([bin_ / "vtatune", "--version"], cwd=work, env=env).stdout
    assert version.startswith("vtatune ") and "TVM 0.27" in version
    hw = _run([bin_ / "vtatune", "hw", "--list", "--json"], cwd=work, env=env).stdout
    assert "default" in hw


def test_installed_wheel_runs_a_search(dists: dict[str, Path], tmp_path: Path) -> None:
    bin_ = _venv(tmp_path / "venv", dists["wheel"])
    work = tmp_path / "work"
    work.mkdir()
    res = _run([bin_ / "vtatune", "search", "dense", "--shape", "16,64,64", "--hw", "default",
                "--trials", "3", "--sampler", "random", "--seed", "0", "--workers", "1",
                "--json"], cwd=work, env=_env())
    d = json.loads(res.stdout)
    assert d["trials"] == 3 and d["feasible"] >= 1
    assert (work / "db" / "vtatune.sqlite").is_file()
    assert not list((tmp_path / "venv").rglob("*.sqlite"))
    # the schema revisions ship in the wheel: the new database is stamped at the head
    import sqlite3

    from vtatune.store import migrations

    with sqlite3.connect(work / "db" / "vtatune.sqlite") as conn:
        (rev,) = conn.execute(f"SELECT version_num FROM {migrations.VERSION_TABLE}").fetchone()
    assert rev == migrations.head()
    installed = _run([bin_ / "python", "-c", "import vtatune.store.migrations as m; "
                      "print(m.VERSIONS)"], cwd=work, env=_env()).stdout.strip()
    assert str(tmp_path / "venv") in installed
