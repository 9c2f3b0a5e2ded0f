"""``--json`` prints one JSON object on stdout whatever happens: on bad input it is
``{"error": ...}`` beside the one stderr line and exit 2, for every command that takes it."""

from __future__ import annotations

import json

import pytest

from vtatune.cli.main import app, main

#: One bad invocation of every command that takes --json (the command is the first word).
BAD = [
    ["search", "nope"], ["search", "conv2d", "--trials", "0"], ["show", "nope"],
    ["studies", "--db", "sqlite:///:memory:", "--bad"], ["report", "nope"],
    ["compare", "a", "b"], ["export", "nope"], ["verify-export", "/nonexistent/b"],
    ["import", "/nonexistent/m.onnx"], ["compile", "dense", "--shape", "x"],
    ["simulate", "conv2d", "--board", "zz"], ["calibrate", "/nonexistent/m.json"],
    ["space", "nope"], ["hw", "--board", "zz"], ["operators", "--bad"],
    ["area", "--board", "zz"], ["boards", "--bad"],
]


def test_every_command_with_json_is_listed() -> None:
    import typer.main

    from vtatune.cli.main import _register

    _register()
    group = typer.main.get_command(app)
    with_json = {name for name, cmd in group.commands.items()
                 if any("--json" in p.opts for p in cmd.params)}
    assert with_json == {argv[0] for argv in BAD}


@pytest.mark.parametrize("argv", BAD, ids=lambda a: " ".join(a))
def test_bad_input_with_json_is_one_error_object(capsys, argv: list[str]) -> None:
    rc = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert rc == 2
    assert err.startswith("vtatune: error: ") and err.count("\n") == 1
    assert json.loads(out) == {"error": err.removeprefix("vtatune: error: ").rstrip("\n")}


def test_without_json_stdout_stays_empty(capsys) -> None:
    assert main(["show", "nope"]) == 2
    assert capsys.readouterr().out == ""
