"""The documentation site's generated parts: the command reference is the CLI's own help, and
every page of docs/ is in mkdocs.yml's navigation (`make docs` builds the site itself)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]


def _hook() -> Any:
    spec = importlib.util.spec_from_file_location("mkdocs_cli_help",
                                                  ROOT / "tools" / "mkdocs_cli_help.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_command_reference_is_each_commands_help() -> None:
    from vtatune.cli.main import _register, app

    hook = _hook()
    page = hook.on_page_markdown("# Commands\n\n" + hook.MARKER + "\n", None, None, None)
    _register()
    names = [c.name for c in app.registered_commands]
    assert re.findall(r"^## vtatune (\S+)$", page, re.M) == names
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(hook.WIDTH)}
    for name in ("search", "verify-export"):
        out = subprocess.run([sys.executable, "-m", "vtatune", name, "--help"], env=env,
                             capture_output=True, text=True, timeout=120, check=True).stdout
        section = page.split(f"## vtatune {name}\n\n```text\n", 1)[1].split("\n```", 1)[0]
        assert section == out.rstrip().replace("python -m vtatune", "vtatune")


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1]
    listed = set(re.findall(r":\s*(\S+\.md)\s*$", nav, re.M))
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert listed == pages
