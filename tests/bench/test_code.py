"""The code-size benchmark: line counts and the repeated-lines detector on hand-made files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from vtatune.bench import code

BLOCK = ["total = 0", "for x in xs:", "    if x > 0:", "        total += x", "    else:",
         "        total -= x"]


def _lines(*parts: list[str]) -> str:
    return "\n".join(line for part in parts for line in part) + "\n"


def test_normalize_drops_blank_comment_and_import_lines() -> None:
    text = "import os\nfrom a import b\n\n  # note\nx = 1  \n    y = 2\nfrom_here = 3\n"
    assert code.normalize(text) == [(5, "x = 1"), (6, "y = 2"), (7, "from_here = 3")]


def test_block_pasted_twice_is_two_runs_with_their_file_lines() -> None:
    a = _lines(["def f(xs):"], ["    " + s for s in BLOCK], ["    return total"])
    # the same block in another file, re-indented, with a blank line and a comment inside
    b = _lines(["import os", "", "def g(ys):", "    xs = ys"], BLOCK[:3], ["", "# why"],
               BLOCK[3:], ["print(total)"])
    runs = code.repeated_runs({"a.py": a, "b.py": b})
    assert runs == [code.Run("a.py", 2, 7, 6), code.Run("b.py", 5, 12, 6)]


def test_five_lines_are_not_a_repeat_and_unique_code_has_none() -> None:
    a = _lines(BLOCK[:5], ["a = 1"])
    b = _lines(BLOCK[:5], ["b = 2"])
    assert code.repeated_runs({"a.py": a, "b.py": b}) == []
    assert code.repeated_runs({"a.py": _lines([f"v{i} = {i}" for i in range(40)])}) == []


def test_overlapping_windows_merge_into_one_run_and_same_file_repeats_count() -> None:
    long = [f"step_{i}()" for i in range(9)]  # 9 repeated lines: windows 0..3 merge
    text = _lines(long, ["other()"], long)
    runs = code.repeated_runs({"m.py": text})
    assert runs == [code.Run("m.py", 1, 9, 9), code.Run("m.py", 11, 19, 9)]
    # two repeated blocks touching end to start in one file are one run of 12 lines
    a = _lines(BLOCK, [s.upper() for s in BLOCK])
    b = _lines(BLOCK, ["x = 0"], [s.upper() for s in BLOCK])
    got = code.repeated_runs({"a.py": a, "b.py": b})
    assert got[0] == code.Run("a.py", 1, 12, 12)
    assert [r.lines for r in got[1:]] == [6, 6]


def test_count_lines_is_wc_l_with_a_last_unterminated_line() -> None:
    assert code.count_lines({"a.py": "a\nb\n", "b.py": "c\n\nd", "c.py": ""}) == 5


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_package_files_reads_python_files_of_a_commit(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True,
                              capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    pkg = tmp_path / "vtatune"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text(_lines(BLOCK))
    (pkg / "notes.txt").write_text("not python\n")
    (tmp_path / "outside.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    first = git("rev-parse", "HEAD")
    (pkg / "sub" / "b.py").write_text(_lines(["é = 1"], BLOCK))
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two")
    assert code.package_files(tmp_path, first) == {"vtatune/a.py": _lines(BLOCK)}
    head = code.package_files(tmp_path, "HEAD")
    assert head == {"vtatune/a.py": _lines(BLOCK), "vtatune/sub/b.py": _lines(["é = 1"], BLOCK)}
    rows = code.bench_code(tmp_path, base=first)
    assert "6 -> 13 (+7; 1 -> 2 files)" in rows[0][1]
    assert rows[1][1] == "0 runs, 0 lines -> 2 runs, 12 lines"
    assert code.bench_code(tmp_path, base="0" * 40)[0][1].startswith("not measured")


def test_kind_figures_count_switches_and_network_definitions_outside_the_package() -> None:
    files = {"vtatune/a.py": 'if kind == "network":\n    pass\nif s.kind != \'operator\':\n'
                             "    pass\nif kind == other:\n    pass\n"
                             "def network_report():\n    pass\nclass NetworkRow:\n    pass\n",
             "vtatune/networks/b.py": "def network_space():\n    pass\n"}
    assert code.kind_figures(files) == (2, 2)
