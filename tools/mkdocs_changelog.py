"""MkDocs hook: the page holding ``<!-- changelog -->`` shows CHANGELOG.md (kept at the
repository's top level, where Keep a Changelog puts it), under the page's own title."""

from __future__ import annotations

from pathlib import Path
from typing import Any

MARKER = "<!-- changelog -->"
CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    body = CHANGELOG.read_text().split("\n", 1)[1]  # its own '# Changelog' title dropped
    return markdown.replace(MARKER, body.strip() + "\n")
