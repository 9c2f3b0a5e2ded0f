"""One version: ``vtatune.__version__`` is what pyproject builds, what ``--version`` prints,
the top entry of CHANGELOG.md and no older than the newest schema revision."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from vtatune import __version__

ROOT = Path(__file__).parents[1]


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def test_the_version_is_written_once() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "vtatune.__version__"}


def test_version_option_prints_it() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "vtatune", "--version"], capture_output=True,
                         text=True, env=env, timeout=120, check=True).stdout
    assert out.startswith(f"vtatune {__version__} (TVM ")


def test_the_changelog_names_it_first() -> None:
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$",
                          (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert releases and releases[0][0] == __version__, releases[:1]
    assert [_tuple(v) for v, _ in releases] == sorted((_tuple(v) for v, _ in releases),
                                                      reverse=True)
    assert [d for _, d in releases] == sorted((d for _, d in releases), reverse=True)


def test_no_schema_revision_is_newer_than_the_version() -> None:
    from vtatune.store import migrations

    for rev in migrations.known():
        written = migrations.written_by(rev)
        assert written is not None and _tuple(written) <= _tuple(__version__), rev
