"""Where report, compare and export write their files, and one-line errors when they cannot.

Shared by ``cli/report.py``, ``cli/compare.py`` and ``cli/export.py`` (a leaf, so those
modules need not import each other).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def default_out(study: str, kind: str = "") -> Path:
    """``reports/<study>/`` under the work root (``kind`` adds a subfolder)."""
    from vtatune.paths import work_root
    from vtatune.reports import safe_name

    folder = work_root() / "reports" / safe_name(study)
    return folder / kind if kind else folder


def write_files(write: Any, folder: Path) -> Any:
    """Run ``write()``; an unwritable folder is one line (exit 2), not a traceback."""
    from vtatune.errors import UserError
    from vtatune.escaping import shown

    try:
        return write()
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UserError(f"cannot write to {shown(str(folder))}: {reason}") from None
