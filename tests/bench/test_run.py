"""The bench's command line and README writer (the parts that take no measurement)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vtatune.bench import run


def test_unknown_also_part_is_one_error_listing_the_parts(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        run.main(["--quick", "--also", "timing,nosuch"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--also: unknown part nosuch" in err
    for part in (*run.ALSO, *run.OPTIONAL):
        assert part in err
    assert {"zoo-speed", "multi-speed", "zoo-quality", "scaleout"} <= set(run.ALSO + run.OPTIONAL)


def test_write_readme_replaces_only_the_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# t\nbefore\n{run.BEGIN}\nold table\n{run.END}\nafter\n")
    run.write_readme("| a | b |", readme)
    assert readme.read_text() == f"# t\nbefore\n{run.BEGIN}\n| a | b |\n{run.END}\nafter\n"
    readme.write_text("no markers\n")
    with pytest.raises(SystemExit):
        run.write_readme("x", readme)
