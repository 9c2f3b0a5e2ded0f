"""Where vtatune's shipped data (hwconfigs/, spaces/) and its output (db/, reports/) live.

Three ways to run vtatune, one answer each:

- a checkout (``make setup``'s editable install, or ``PYTHONPATH`` on the repository): data and
  output both under the repository root, whatever the current directory;
- an installed wheel or sdist: data inside the package (setup.py maps the top-level folders to
  ``vtatune/hwconfigs`` and ``vtatune/spaces``), output under the current directory — never
  inside site-packages;
- ``VTATUNE_HOME`` set: a folder laid out like the checkout, used for both.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The shipped data folders (setup.py carries the same list into the wheel).
DATA_DIRS = ("hwconfigs", "spaces")

_PACKAGE = Path(__file__).resolve().parent


def checkout_root() -> Path | None:
    """The repository root when vtatune runs from a checkout, else None."""
    root = _PACKAGE.parent
    if (root / "pyproject.toml").is_file() and all((root / d).is_dir() for d in DATA_DIRS):
        return root
    return None


def project_root() -> Path:
    """The folder holding ``hwconfigs/`` and ``spaces/``.

    ``VTATUNE_HOME`` overrides it; otherwise the checkout's root, or the installed package
    folder (a wheel carries the data as ``vtatune/hwconfigs`` and ``vtatune/spaces``).
    """
    env = os.environ.get("VTATUNE_HOME")
    if env:
        return Path(env)
    return checkout_root() or _PACKAGE


def work_root() -> Path:
    """The folder under which ``db/`` and ``reports/`` go by default.

    ``VTATUNE_HOME`` if set, else the checkout's root, else the current directory (an
    installed vtatune writes where it is run, never into site-packages).
    """
    env = os.environ.get("VTATUNE_HOME")
    if env:
        return Path(env)
    return checkout_root() or Path.cwd()
