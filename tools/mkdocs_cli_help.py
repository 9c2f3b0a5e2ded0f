"""MkDocs hook: the command reference is the CLI's own ``--help``, rendered at build time.

A page holding the line ``<!-- cli-help -->`` gets, in its place, ``vtatune --help`` and then
every command's ``vtatune COMMAND --help`` in the order ``--help`` lists them, each under its
own heading: what a user's terminal prints, never a hand copy that drifts.
"""

from __future__ import annotations

import os
from typing import Any

MARKER = "<!-- cli-help -->"

#: Width of the rendered help (the terminal's width is not the page's).
WIDTH = 90


def _help(args: list[str]) -> str:
    """What ``vtatune ARGS --help`` prints (the app itself, run in this process)."""
    import contextlib
    import io

    import typer

    from vtatune.cli.main import _register, app

    _register()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            app(args=[*args, "--help"], prog_name="vtatune", standalone_mode=False)
        except typer.Exit:
            pass
    return out.getvalue().rstrip()


def cli_reference() -> str:
    """``vtatune --help`` and every command's help, as Markdown."""
    os.environ["COLUMNS"] = str(WIDTH)  # click wraps to the terminal's width
    root = _help([])
    commands = root.split("\nCommands:\n", 1)[1].splitlines()
    names = [line.split()[0] for line in commands if line.startswith("  ") and line.split()]
    parts = ["## vtatune", "", "```text", root, "```", ""]
    for name in names:
        parts += [f"## vtatune {name}", "", "```text", _help([name]), "```", ""]
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())
