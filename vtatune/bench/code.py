"""Size and repetition of the package's code, read from git (part of ``make bench``; alone:
``python -m vtatune.bench.code [BASE]``).

Two figures, each at the base commit ``BASE`` (issue 24's starting point) and at ``HEAD``
(and, ``bench_kinds``, issue 32's: lines, switches on a study's kind, network-named
definitions outside ``vtatune/networks/``, at ``MERGE_BASE`` and ``HEAD``):

- **lines**: every line of every ``*.py`` file under ``vtatune/`` as git stores it at that
  commit (``wc -l``: blank lines, comments and docstrings included);
- **repeated runs of six or more lines**: each file's lines are *normalized* -- leading and
  trailing white space stripped; blank lines, comment-only lines and ``import``/``from ...
  import`` lines dropped -- and every window of ``WINDOW`` (6) consecutive normalized lines is
  hashed. A window is *repeated* when the same six lines occur at another place in the package
  (the same file or another). Overlapping or touching repeated windows of one file merge into
  one *run*; every place counts (a block pasted twice is two runs). The figure is the number of
  runs and the normalized lines they cover.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: Issue 24's base commit: the package before benchmarks, loop and reports were unified.
BASE = "b689de0"
#: Issue 32's base commit: operator and network studies still twins (two loops, kind switches).
MERGE_BASE = "ebd9cab"
#: A switch on a study's kind by its name (kind compared with "network" or "operator").
KIND_SWITCH = re.compile(r"""kind\s*[!=]=\s*["'](network|operator)["']""")
#: A definition named after networks outside ``vtatune/networks/``: most are the network twin
#: of an operator function (``network_report_data`` beside ``report_data``).
NETWORK_DEF = re.compile(r"^\s*(def|class)\s+\w*[Nn]etwork\w*", re.M)
#: Lines in a window: a repeat shorter than this is not counted.
WINDOW = 6
PACKAGE = "vtatune"


def normalize(text: str) -> list[tuple[int, str]]:
    """``(line number, normalized line)`` of the lines the detector compares (see the module
    docstring): stripped, without blank, comment-only and import lines."""
    out = []
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("import ") or (line.startswith("from ") and " import " in line):
            continue
        out.append((no, line))
    return out


@dataclass(frozen=True)
class Run:
    """One repeated run: ``path`` lines ``first``..``last`` (1-based, as in the file),
    ``lines`` normalized lines."""

    path: str
    first: int
    last: int
    lines: int


def repeated_runs(files: Mapping[str, str], window: int = WINDOW) -> list[Run]:
    """Every repeated run of ``window`` or more normalized lines in ``files`` (path -> text)."""
    norm = {path: normalize(text) for path, text in files.items()}
    places: dict[bytes, list[tuple[str, int]]] = defaultdict(list)
    for path, lines in norm.items():
        for i in range(len(lines) - window + 1):
            key = hashlib.blake2b("\n".join(s for _, s in lines[i:i + window]).encode(),
                                  digest_size=16).digest()
            places[key].append((path, i))
    repeated: dict[str, set[int]] = defaultdict(set)
    for where in places.values():
        if len(where) > 1:
            for path, i in where:
                repeated[path].add(i)
    runs = []
    for path in sorted(repeated):
        lines = norm[path]
        starts = sorted(repeated[path])
        lo = hi = starts[0]
        for s in starts[1:] + [None]:
            if s is not None and s <= hi + window:  # overlapping or touching windows
                hi = s
                continue
            end = hi + window - 1
            runs.append(Run(path, lines[lo][0], lines[end][0], end - lo + 1))
            if s is not None:
                lo = hi = s
    return runs


def count_lines(files: Mapping[str, str]) -> int:
    """Lines of ``files`` as ``wc -l`` counts them (a last line without a newline counts)."""
    return sum(len(text.splitlines()) for text in files.values())


def _git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                          check=True).stdout


def package_files(root: Path, rev: str, package: str = PACKAGE) -> dict[str, str]:
    """``{path: text}`` of every ``*.py`` file under ``package/`` at commit ``rev``."""
    listing = _git(root, "ls-tree", "-r", "-z", rev, "--", f"{package}/").split(b"\0")
    blobs = []
    for entry in listing:
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        if meta.split()[1] == b"blob" and path.endswith(b".py"):
            blobs.append((path.decode(), meta.split()[2].decode()))
    batch = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"],
                           input="".join(f"{sha}\n" for _, sha in blobs).encode(),
                           capture_output=True, check=True).stdout
    files, pos = {}, 0
    for path, _ in blobs:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        files[path] = batch[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
        pos = header_end + 1 + size + 1  # the blob and its trailing newline
    return files


def bench_code(root: Path | None = None, base: str = BASE) -> list[tuple[str, str]]:
    """The two rows (lines; repeated runs), base commit vs ``HEAD``."""
    from vtatune.paths import project_root

    root = root or project_root()
    what = f"`{PACKAGE}/` at {base} (issue 24's base) -> HEAD"
    try:
        head = _git(root, "rev-parse", "--short", "HEAD").decode().strip()
        before, after = package_files(root, base), package_files(root, "HEAD")
    except (OSError, subprocess.CalledProcessError):
        return [(f"lines of {what}", "not measured (needs a git checkout holding both "
                 "commits)")]
    what = f"`{PACKAGE}/` at {base} (issue 24's base) -> HEAD ({head})"
    n0, n1 = count_lines(before), count_lines(after)
    r0, r1 = repeated_runs(before), repeated_runs(after)
    l0, l1 = sum(r.lines for r in r0), sum(r.lines for r in r1)
    return [
        (f"lines of Python in {what} (every line, as `wc -l`)",
         f"{n0:,} -> {n1:,} ({n1 - n0:+,}; {len(before)} -> {len(after)} files)"),
        (f"repeated runs of {WINDOW} or more lines in {what} (normalized lines; see "
         "`vtatune/bench/code.py`): runs, lines they cover",
         f"{len(r0):,} runs, {l0:,} lines -> {len(r1):,} runs, {l1:,} lines"),
    ]


def kind_figures(files: Mapping[str, str]) -> tuple[int, int]:
    """(switches on a study's kind by name, network-named definitions outside
    ``vtatune/networks/``) in ``files``."""
    switches = sum(len(KIND_SWITCH.findall(text)) for text in files.values())
    defs = sum(len(NETWORK_DEF.findall(text)) for path, text in files.items()
               if not path.startswith(f"{PACKAGE}/networks/"))
    return switches, defs


def bench_kinds(root: Path | None = None, base: str = MERGE_BASE) -> list[tuple[str, str]]:
    """Issue 32's figures, ``base`` vs ``HEAD``: lines, kind switches, network-named
    definitions."""
    from vtatune.paths import project_root

    root = root or project_root()
    try:
        head = _git(root, "rev-parse", "--short", "HEAD").decode().strip()
        before, after = package_files(root, base), package_files(root, "HEAD")
    except (OSError, subprocess.CalledProcessError):
        return [(f"study kinds at {base} -> HEAD", "not measured (needs a git checkout "
                 "holding both commits)")]
    what = f"`{PACKAGE}/` at {base} (issue 32's base) -> HEAD ({head})"
    (s0, d0), (s1, d1) = kind_figures(before), kind_figures(after)
    n0, n1 = count_lines(before), count_lines(after)
    return [(f"lines of Python in {what}", f"{n0:,} -> {n1:,} ({n1 - n0:+,})"),
            (f"switches on a study's kind by name (kind compared with a kind's name) in {what}",
             f"{s0} -> {s1}"),
            (f"network-named definitions outside `{PACKAGE}/networks/` in {what}",
             f"{d0} -> {d1}")]


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    for a, b in bench_code(base=args[0] if args else BASE) + bench_kinds():
        print(f"| {a} | {b} |")


if __name__ == "__main__":
    main()
