"""Escaping for every sink: what each function lets through, checked against the sink itself
(a shell parses the quoted word back, csv and a formula check read the cell, matplotlib draws
the text, rich renders the progress line)."""

from __future__ import annotations

import io
import shlex
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vtatune import escaping

HOSTILE = ["\x1b[2J\x1b[31mred", "a\rb", "tab\there", "bell\x07", "\u202eevil", "\x9bcsi",
           "bad\udcffbyte", "line\nbreak", "del\x7f", "\u2028sep"]


@pytest.mark.parametrize("text", HOSTILE)
def test_terminal_leaves_no_character_a_terminal_interprets(text: str) -> None:
    out = escaping.terminal(text)
    assert out.isprintable(), repr(out)
    assert escaping.terminal(out) == out
    assert "\\" in out  # shown, not dropped


def test_terminal_shows_undecodable_bytes_as_the_bytes() -> None:
    assert escaping.terminal("caf\udce9") == "caf\\xe9"
    assert escaping.terminal("a\nb", keep_lines=True) == "a\nb"
    assert escaping.terminal("a\nb") == "a\\nb"
    assert escaping.terminal("plain ü 名前") == "plain ü 名前"


def test_shown_cuts_long_values_and_says_how_long() -> None:
    out = escaping.shown("x" * 1_048_576)
    assert len(out) < 200 and "1,048,576 characters" in out
    assert escaping.shown("ab") == "'ab'"
    assert escaping.shown("\x1b[31m") == "'\\x1b[31m'"


@given(st.text())
def test_shell_word_reads_back_as_the_same_word(word: str) -> None:
    quoted = escaping.shell_word(word)
    assert escaping.terminal(quoted) == quoted  # nothing left a terminal would interpret
    if quoted.startswith("$'"):
        return  # bash's quoting of control characters: read back by bash below
    assert shlex.split(quoted) == [word]


@pytest.mark.parametrize("word", ["st\x1b[2Judy", "a'b\\c", "tab\there", "x\udcffy"])
def test_ansi_c_quoted_words_read_back_in_bash(word: str) -> None:
    quoted = escaping.shell_word(word)
    assert quoted.isprintable()
    raw = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True,
                         check=True).stdout
    assert raw == word.encode("utf-8", "surrogateescape")


def test_shell_command_quotes_every_word() -> None:
    cmd = escaping.shell_command(["vtatune", "show", "a b; rm -rf ~ #", "--db", "x.sqlite"])
    assert shlex.split(cmd) == ["vtatune", "show", "a b; rm -rf ~ #", "--db", "x.sqlite"]


@pytest.mark.parametrize("cell", ["=HYPERLINK(\"http://x\")", "+1+2", "-2+3", "@SUM(A1)",
                                  "\tx", "\rx"])
def test_csv_cells_that_would_be_formulas_become_text(cell: str) -> None:
    import csv

    buf = io.StringIO()
    csv.writer(buf).writerow([escaping.csv_cell(cell), escaping.csv_cell(-5), "name"])
    first, number, _ = next(csv.reader(io.StringIO(buf.getvalue())))
    assert first == "'" + cell and number == "-5"


def test_html_escapes_markup_and_controls() -> None:
    assert escaping.html('<script>"x"</script>&') == \
        "&lt;script&gt;&quot;x&quot;&lt;/script&gt;&amp;"
    assert escaping.html("a\x1bb") == "a\\x1bb"


@pytest.mark.parametrize("name", ["$x^{2}$", "$\\undefinedcommand{$", "a $ b", "$$"])
def test_names_are_drawn_as_written_not_as_mathtext(name: str) -> None:
    from matplotlib.figure import Figure

    from vtatune.reports.plots import _plain_text

    @_plain_text
    def draw() -> Figure:
        fig = Figure()
        fig.suptitle(escaping.mpl_text(name))
        fig.add_subplot().plot([0], [0], label=name)
        fig.axes[0].legend()
        return fig

    fig = draw()
    for fmt in ("png", "svg"):
        fig.savefig(io.BytesIO(), format=fmt)  # an unparsable mathtext would raise here
    assert fig._suptitle.get_text().replace("\\$", "$") == name


def test_rich_markup_in_a_progress_description_is_shown() -> None:
    from rich.console import Console
    from rich.progress import Progress, TextColumn

    from vtatune.cli.console import markup_text

    out = Console(file=io.StringIO(), width=120)
    with Progress(TextColumn("[bold]{task.description}"), console=out) as bar:
        bar.add_task(markup_text("[/bold][red]x\x1b"), total=1)
    assert "[/bold][red]x\\x1b" in out.file.getvalue()
