"""``--help`` of every command: no text lost (square brackets are text, not markup), no
``<bool>`` metavar on flags, nothing cut at 80 columns, and examples that parse."""

from __future__ import annotations

import re
import shlex

import pytest
import typer

from vtatune.cli import main as cli_main

cli_main._register()
GROUP = typer.main.get_command(cli_main.app)
assert hasattr(GROUP, "commands")
COMMANDS = sorted(GROUP.commands)
#: The commands a newcomer starts with: their help ends with examples.
WITH_EXAMPLES = ("search", "show", "report", "compare", "export", "verify-export", "compile",
                 "simulate")


def _help(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
          *argv: str, columns: int = 80) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert cli_main.main([*argv, "--help"]) == 0
    return capsys.readouterr().out


def _squash(text: str) -> str:
    """``text`` without whitespace: wrapping may move line breaks, never drop a character."""
    return re.sub(r"\s+", "", text.replace("\b", ""))


def _sources(name: str) -> list[str]:
    """What the command's help is written from: its docstring and every parameter's help."""
    cmd = GROUP.commands[name]
    texts = [cmd.help or ""]
    texts += [p.help for p in cmd.params if getattr(p, "help", None)]
    return texts


def test_the_sources_hold_brackets() -> None:
    # the test below is only as strong as the texts it checks: search's help is written with
    # [network], [objective] and [inner]
    joined = " ".join(_sources("search"))
    for word in ("[network]", "[objective]", "[inner]"):
        assert word in joined


@pytest.mark.parametrize("name", COMMANDS)
def test_help_loses_no_text(capsys, monkeypatch, name: str) -> None:
    text = _help(capsys, monkeypatch, name)
    squashed = _squash(text)
    for source in _sources(name):
        assert _squash(source) in squashed, source
    for word in re.findall(r"\[[A-Za-z_.]+\]", " ".join(_sources(name))):
        assert word in text, word  # a bracketed word is never read as markup


@pytest.mark.parametrize("name", COMMANDS)
def test_help_has_no_bool_metavar_and_fits_80_columns(capsys, monkeypatch, name: str) -> None:
    text = _help(capsys, monkeypatch, name)
    assert "<bool>" not in text
    assert "…" not in text  # nothing cut with an ellipsis
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("name", ["search", "compile", "simulate", "space"])
def test_shape_metavar_whole_at_80_columns(capsys, monkeypatch, name: str) -> None:
    text = _help(capsys, monkeypatch, name, columns=80)
    assert "N,CIN,H,W,COUT,KH,KW,PAD,STRIDE;" in text.split()


def test_root_help_lists_every_command(capsys, monkeypatch) -> None:
    text = _help(capsys, monkeypatch)
    for name in COMMANDS:
        assert re.search(rf"^\s+{re.escape(name)}\s", text, re.M), name


def _examples(text: str) -> list[str]:
    """The example command lines under ``Examples:`` (comments and pipes cut off)."""
    part = text.split("Examples:", 1)[1].split("\nArguments:")[0].split("\nOptions:")[0]
    lines = [ln.strip() for ln in part.splitlines() if ln.strip().startswith("vtatune ")]
    return [ln.split(" #")[0].split(" | ")[0].strip() for ln in lines]


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_main_commands_show_examples_that_parse(capsys, monkeypatch, name: str) -> None:
    text = _help(capsys, monkeypatch, name)
    examples = _examples(text)
    assert examples, f"{name} --help has no examples"
    for example in examples:
        argv = shlex.split(example)[1:]
        cmd = GROUP.commands[argv[0]]
        # every option exists and every value parses (nothing runs)
        with cmd.make_context(argv[0], argv[1:], resilient_parsing=False) as ctx:
            assert ctx.command is cmd
