"""vtatune search: JSON result, schedule-only mode, one-line errors."""

from __future__ import annotations

import json

import pytest

from vtatune.cli.main import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_search_json(capsys, tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    rc, out, err = _run(capsys, "search", "dense", "--shape", "16,64,64", "--trials", "6",
                        "--sampler", "random", "--seed", "0", "--workers", "1", "--db", db,
                        "--json")
    assert rc == 0, err
    d = json.loads(out)
    for key in ("study", "trials", "feasible", "best_cycles", "pareto"):
        assert key in d
    assert d["trials"] == 6 and d["study"] == "dense-dense_m16_k64_n64-random"
    for p in d["pareto"]:
        assert set(p) >= {"hw", "knobs", "cycles", "area_mm2"}
    rc, out, _ = _run(capsys, "show", d["study"], "--db", db, "--json")
    assert rc == 0 and json.loads(out)["trials"] == 6


def test_schedule_only_search_with_fixed_hardware(capsys, tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    rc, out, err = _run(capsys, "search", "dense", "--shape", "16,64,64", "--hw", "1x8x8",
                        "--trials", "4", "--sampler", "tpe", "--workers", "1", "--db", db,
                        "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["objective"] == "latency"
    assert all(t["hw"]["LOG_BLOCK_IN"] == 3 for t in d["top"])


@pytest.mark.parametrize("argv, message", [
    (["search", "--trials", "0"], "'-n': must be in 1.."),
    (["search", "--sampler", "anneal"], "unknown sampler 'anneal'"),
    (["search", "--board", "vcu9000"], "unknown board 'vcu9000'"),
    (["search", "gemm"], "unknown workload 'gemm'"),
    (["search", "--space", "missing.toml"], "no such file"),
    (["search", "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none"], "database"),
    (["search", "--timeout", "-1"], "'--timeout': must be in (0, "),
    (["show", "nope", "--db", "sqlite:////tmp/vtatune-no-such.sqlite"], "no study 'nope'"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message) -> None:
    rc, out, err = _run(capsys, *argv)
    lines = [ln for ln in err.splitlines() if ln.strip() and "Warning" not in ln
             and not ln.startswith("  ")]
    assert rc == 2, err
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err
