"""vtatune space --simulate: the whole table (JSON, CSV), stored so that a search of the same
schedule space is served from it; one-line errors."""

from __future__ import annotations

import csv
import json

import pytest

from vtatune.cli.main import main

DENSE = ["dense", "--shape", "4,32,64"]  # 30 schedules on the default config


def test_simulate_json_csv_and_db_serve_a_search(capsys, tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'ref.sqlite'}"
    table = tmp_path / "all.csv"
    assert main(["space", *DENSE, "--simulate", "--jobs", "1", "--db", db, "--csv", str(table),
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["size"] == len(d["candidates"]) == 30 and d["statuses"] == {"ok": 30}
    fastest = min(d["candidates"], key=lambda c: c["cycles"])
    assert d["best"] == fastest
    rows = list(csv.DictReader(table.open()))
    assert [int(r["cycles"]) for r in rows] == [c["cycles"] for c in d["candidates"]]
    assert [{k: int(r[k]) for k in c["knobs"]} for r, c in zip(rows, d["candidates"],
                                                               strict=True)] == \
        [c["knobs"] for c in d["candidates"]]

    # everything is stored: a rerun evaluates nothing and says the same
    assert main(["space", *DENSE, "--simulate", "--db", db]) == 0
    out = capsys.readouterr().out
    assert f"{fastest['cycles']:,} cycles" in out and "30 candidates built and timed" in out
    # a schedule search of the same space on the same board is served from the reference
    assert main(["search", *DENSE, "--hw", "default", "--trials", "30", "--sampler", "grid",
                 "--workers", "1", "--db", db, "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["cached"] == 30 and s["evaluated"] == 0 and s["best_cycles"] == fastest["cycles"]


@pytest.mark.parametrize("argv, message", [
    (["space", *DENSE, "--csv", "x.csv"], "--csv and --db go with --simulate"),
    (["space", *DENSE, "--simulate", "--csv", "/no/such/folder/x.csv"], "--csv"),
    (["space", *DENSE, "--simulate", "--board", "vcu9000"], "unknown board 'vcu9000'"),
    (["space", *DENSE, "--simulate", "--db", "sqlite://"], "in-memory database"),
    (["space", *DENSE, "--simulate", "--timeout", "nan"], "--timeout"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message) -> None:
    rc = main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and message in lines[0], err
