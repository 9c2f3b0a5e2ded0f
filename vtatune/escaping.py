"""Names and values made safe for every place vtatune writes them.

Study names, file paths, config values and command-line words come from users (or from a
database someone else filled) and end up on a terminal, in HTML and SVG, in matplotlib
titles, in CSV files and in suggested shell commands. Each sink has its own dangerous
characters; one function per sink:

- ``terminal``: control characters (ANSI escape sequences, carriage returns, backspaces), the
  bidi overrides that reorder a line, and lone surrogates (undecodable bytes of a command
  line) become visible escapes such as ``\\x1b`` -- nothing a terminal interprets.
- ``shown``: a value echoed in a message: ``terminal``-escaped, quoted, and cut to a bounded
  length (a 1 MB value must not become a 1 MB error line).
- ``html``: ``&<>"'`` escaped, controls made visible (also valid XML, so SVG-safe).
- ``mpl_text``: text for a matplotlib title, label or legend: ``$`` escaped so that names are
  never parsed as mathtext (an unbalanced ``$`` or an unknown ``\\command`` raises inside
  matplotlib), controls made visible.
- ``csv_cell``: a cell that a spreadsheet would run as a formula (starting with ``= + - @``,
  tab or carriage return) gets a leading apostrophe, as OWASP's CSV-injection advice says.
- ``shell_word`` / ``shell_command``: a word quoted for a POSIX shell (``shlex.quote``);
  words with control characters use bash's ``$'...'`` quoting so that the suggestion stays
  one line and still names the right study.
"""

from __future__ import annotations

import re
import shlex
from typing import TypeVar

_T = TypeVar("_T")

#: Longest echo of a user value in a message (characters, before escaping).
SHOWN_CHARS = 120

# C0 controls, DEL, C1 controls, bidi embeddings/overrides/isolates, the line and paragraph
# separators, and lone surrogates (undecodable argv bytes under surrogateescape).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
_UNSAFE_KEEP_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e"
                                "\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(m: re.Match[str]) -> str:
    c = m.group()
    if c in _NAMED:
        return _NAMED[c]
    return _code(ord(c))


def _code(n: int) -> str:
    if 0xDC80 <= n <= 0xDCFF:  # an undecodable byte kept by surrogateescape: show the byte
        n -= 0xDC00
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def terminal(text: object, keep_lines: bool = False) -> str:
    """``text`` with every character a terminal would interpret made visible (``\\x1b``).

    ``keep_lines`` keeps newlines and tabs (multi-line output); otherwise the result is one
    line."""
    s = text if isinstance(text, str) else str(text)
    return (_UNSAFE_KEEP_LINES if keep_lines else _UNSAFE).sub(_visible, s)


def truncate(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """A user value for a message: quoted, escaped for the terminal, at most ``limit``
    characters of it (``'abc...' (1,048,576 characters)``)."""
    s = value if isinstance(value, str) else str(value)
    cut = len(s) > limit
    body = terminal(s[:limit]).replace("'", "\\'")
    return f"'{body}'" + (f"... ({len(s):,} characters)" if cut else "")


def html(text: object) -> str:
    """Text for HTML and XML (SVG): markup characters escaped, controls visible."""
    from html import escape

    return escape(terminal(text, keep_lines=True), quote=True)


def mpl_text(text: object) -> str:
    """Text for matplotlib (titles, labels, legends): never parsed as mathtext."""
    return terminal(text, keep_lines=True).replace("$", r"\$")


#: First characters that make a spreadsheet evaluate a cell (OWASP, CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: _T) -> _T | str:
    """A CSV cell a spreadsheet shows as text: strings starting like a formula get a leading
    ``'``. Numbers (including negative ones, which are not strings) are kept as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def shell_word(word: str) -> str:
    """``word`` quoted so that a POSIX shell reads it back as one word, unchanged."""
    if _UNSAFE.search(word) is None:
        return shlex.quote(word)
    # bash/zsh ANSI-C quoting: the control characters appear as escapes, not raw
    out = []
    for c in word:
        if c == "\\":
            out.append("\\\\")
        elif c == "'":
            out.append("\\'")
        elif _UNSAFE.match(c):
            out.append(_code(ord(c)))
        else:
            out.append(c)
    return "$'" + "".join(out) + "'"


def shell_command(words: list[str]) -> str:
    """A command line to suggest: every word quoted (see ``shell_word``)."""
    return " ".join(shell_word(w) for w in words)
