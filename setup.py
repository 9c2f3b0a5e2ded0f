"""Packages for setuptools; everything else is in pyproject.toml.

The shipped data folders stay at the repository's top level and go into the wheel as data-only
packages (``hwconfigs/`` -> ``vtatune/hwconfigs/``, ``spaces/`` -> ``vtatune/spaces/``, mapped
in pyproject.toml's package-dir). ``packages.find`` cannot name folders mapped from elsewhere,
so the list is made here: every vtatune package, plus each data folder (named once, in
``vtatune.paths.DATA_DIRS``, a module that imports nothing heavy) and its subfolders.
"""

import sys
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from vtatune.paths import DATA_DIRS  # noqa: E402


def data_packages() -> list[str]:
    found = []
    for top in DATA_DIRS:
        for folder in sorted([HERE / top, *(p for p in (HERE / top).rglob("*") if p.is_dir())]):
            rel = folder.relative_to(HERE).parts
            if "__pycache__" not in rel:
                found.append(".".join(("vtatune", *rel)))
    return found


setup(packages=find_packages(include=["vtatune", "vtatune.*"]) + data_packages())
