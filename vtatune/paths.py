"""Where vtatune's shipped data lives (hwconfigs/, spaces/, db/, reports/)."""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The folder holding ``hwconfigs/`` and ``spaces/``.

    ``VTATUNE_HOME`` overrides it; otherwise it is the parent of the package folder, which is
    the repository root for the editable install ``make setup`` does.
    """
    env = os.environ.get("VTATUNE_HOME")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1]
