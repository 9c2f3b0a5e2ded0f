"""vtatune search: JSON result, schedule-only mode, one-line errors."""

from __future__ import annotations

import json
import re

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
    assert d["objective"] == "latency" and d["latency"] == "end-to-end"
    assert all(t["hw"]["LOG_BLOCK_IN"] == 3 for t in d["top"])
    # the fastest end to end first; each time per call splits into accelerator + host
    assert [t["seconds"] for t in d["top"]] == sorted(t["seconds"] for t in d["top"])
    for t in d["top"]:
        assert t["seconds"] == pytest.approx(t["accelerator_seconds"] + t["host_seconds"])
        assert t["host_seconds"] > 0
    rc, out, err = _run(capsys, "search", "dense", "--shape", "16,64,64", "--hw", "1x8x8",
                        "--trials", "4", "--sampler", "tpe", "--workers", "1", "--db", db,
                        "--latency", "accelerator", "--json")
    assert rc == 0, err
    acc = json.loads(out)
    assert acc["latency"] == "accelerator" and acc["study"] == d["study"][:-3] + "accelerator-tpe"
    assert [t["cycles"] for t in acc["top"]] == sorted(t["cycles"] for t in acc["top"])


@pytest.mark.parametrize("argv, message", [
    (["search", "--trials", "0"], "'-n': must be in 1.."),
    (["search", "--sampler", "anneal"], "unknown sampler 'anneal'"),
    (["search", "--board", "vcu9000"], "unknown board 'vcu9000'"),
    (["search", "gemm"], "unknown workload 'gemm'"),
    (["search", "--space", "missing.toml"], "no such file"),
    (["search", "missing.toml"], "network file 'missing.toml': no such file"),
    (["search", "resnet18", "nets/missing.toml"], "'nets/missing.toml': no such file"),
    (["search", "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none"], "database"),
    (["search", "--timeout", "-1"], "'--timeout': must be in (0, "),
    (["search", "--latency", "wall"], "--latency must be one of end-to-end, accelerator"),
    (["show", "nope", "--db", "sqlite:////tmp/vtatune-no-such.sqlite"], "no study 'nope'"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message) -> None:
    rc, out, err = _run(capsys, *argv)
    lines = [ln for ln in err.splitlines() if ln.strip() and "Warning" not in ln
             and not ln.startswith("  ")]
    assert rc == 2, err
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err


def test_search_with_passes_reimports_them_in_the_workers(capsys, tmp_path) -> None:
    """--passes: the worker process loads the file again; candidates carry its fingerprint;
    the verifier's problems are stored as reasons."""
    import sqlite3
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "passes" / "dram_rows.py"
    path = tmp_path / "s.sqlite"
    rc, out, err = _run(capsys, "search", "dense", "--shape", "16,64,64", "--hw", "default",
                        "--trials", "4", "--sampler", "random", "--seed", "1", "--workers", "1",
                        "--db", f"sqlite:///{path}", "--passes", str(example), "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert re.fullmatch(r"dense-dense_m16_k64_n64-sched-\S+-random-passes-[0-9a-f]{8}",
                        d["study"])
    rows = sqlite3.connect(path).execute("select key, status, reason from vt_candidates")
    rows = list(rows)
    assert len(rows) == 4 and all("|passes=" in key for key, _, _ in rows)
    for _, status, reason in rows:
        assert status == "ok" or reason.startswith("dram_rows_of_48_bytes")
    rc, _, err = _run(capsys, "search", "dense", "--passes", str(tmp_path / "none.py"))
    assert rc == 2 and "--passes" in err and err.count("\n") == 1
    # a study is for one pass set: continuing it without the passes is refused up front
    rc, _, err = _run(capsys, "search", "dense", "--shape", "16,64,64", "--hw", "default",
                      "--trials", "4", "--sampler", "random", "--study", d["study"],
                      "--db", f"sqlite:///{path}", "--json")
    assert rc == 2 and err.count("\n") == 1, err
    # the warm start learns only from results compiled with the same passes
    from vtatune.passes import user
    from vtatune.search import space as spaces
    from vtatune.search.runner import history
    from vtatune.store import Store
    from vtatune.studies import default_space

    records = Store(f"sqlite:///{path}").history("dense_m16_k64_n64")
    assert len(records) == 4

    def load(passes):
        return spaces.load(default_space("dense", "default"), shape="16,64,64",
                           workload="dense", hw="default", objective="latency", passes=passes)

    assert len(history(load(user.load(example)), records)) == 4
    assert history(load(None), records) == []
    # export rebuilds with the stock pipeline: a study with user passes is refused in one line
    rc, _, err = _run(capsys, "export", d["study"], "--db", f"sqlite:///{path}", "--out",
                      str(tmp_path / "bundle"))
    assert rc == 2 and "compiled with user passes" in err and err.count("\n") == 1, err


def test_the_end_of_a_search_says_what_to_do_next(capsys, tmp_path) -> None:
    # The end of a search once suggested show and optuna-dashboard only; a rerun of a
    # complete study said "0 new" and nothing about --trials being the study's total.
    import shlex

    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    space = tmp_path / "small.toml"  # every design buildable and on the board
    space.write_text('[workload]\nkind = "dense"\nshape = "16,64,64"\n[hardware]\n'
                     'LOG_WGT_BUFF_SIZE = [17, 18]\n')
    argv = ["search", "--space", str(space), "--trials", "8", "--sampler", "random",
            "--seed", "0", "--workers", "1", "--db", db]
    rc, out, err = _run(capsys, *argv)
    assert rc == 0, err
    lines = out.splitlines()
    assert "nothing new" not in out
    assert lines[1] == "workload: dense M=16, K=64, N=64"
    steps = lines[lines.index("next:") + 1:]
    commands = [shlex.split(ln.split("  #")[0]) for ln in steps if "vtatune " in ln]
    assert [c[1] for c in commands] == ["show", "report", "export"]
    assert any("optuna-dashboard " in ln for ln in steps)  # as installed, or how to get it
    for words in commands:  # every suggestion runs as printed
        if words[1] in ("report", "export"):
            words += ["--out", str(tmp_path / words[1])]
        rc, _, err = _run(capsys, *words[1:])
        assert rc == 0, (words, err)
    rc, out, err = _run(capsys, *argv)  # the same command again: the study is complete
    assert rc == 0, err
    assert "(0 new" in out
    assert ("nothing new: the study already holds 8 trials and --trials is the total it "
            "should hold; to search on, raise it (--trials 16) or start another study") in out


def test_stock_vta_option_screens_designs_and_the_front_is_marked(capsys, tmp_path) -> None:
    from vtatune.hardware import boards
    from vtatune.hardware.config import HwConfig
    from vtatune.hardware.stock import stock_problems

    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    base = ["search", "dense", "--shape", "16,64,64", "--trials", "6", "--sampler", "random",
            "--seed", "0", "--workers", "1", "--db", db]
    rc, out, err = _run(capsys, *base, "--json")
    assert rc == 0, err
    free = json.loads(out)
    board = boards.load("pynq-z1")

    def stock(row) -> bool:
        hw = HwConfig.from_params(row["hw"])
        return not stock_problems(hw, board)

    rows = free["pareto"] + free["top"]
    for r in rows:  # every front row says whether stock VTA builds it, and why not
        assert r["stock_vta"] is stock(r) and bool(r["stock_vta_problems"]) is not stock(r)
    assert free["screened"]["designs"] >= 0
    rc, out, err = _run(capsys, *base, "--stock-vta", "--json")
    assert rc == 0, err
    kept = json.loads(out)
    assert kept["study"] == "dense-dense_m16_k64_n64-stock-random" and kept["trials"] == 6
    assert all(r["stock_vta"] for r in kept["pareto"] + kept["top"])
    assert kept["screened"]["by_reason"].get("not_stock_vta", 0) >= 1
    rc, out, err = _run(capsys, "show", free["study"], "--db", db)
    assert rc == 0, err
    head = next(line for line in out.splitlines() if line.split()[:1] == ["trial"])
    assert "stock" in head.split()
    n = sum(r["stock_vta"] for r in free["pareto"])
    assert (f"builds {n} of these {len(free['pareto'])} designs" in out
            or "builds all" in out or "builds this design" in out or "not this design" in out)
    rc, out, err = _run(capsys, *base[:5], "7", *base[6:], "--stock-vta")
    assert rc == 0, err
    assert "screened before evaluation (not trials):" in out and "not_stock_vta" in out


def test_an_energy_objective_search_shows_energy_everywhere(capsys, tmp_path) -> None:
    """--objective latency-energy: a front of latency and the accelerator's energy in the
    JSON, show's table and studies, under a default name that says the objective."""
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    rc, out, err = _run(capsys, "search", "dense", "--shape", "16,64,64", "--trials", "6",
                        "--sampler", "random", "--seed", "0", "--workers", "1", "--db", db,
                        "--objective", "latency-energy", "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["study"] == "dense-dense_m16_k64_n64-latency-energy-random"
    assert d["objective"] == "latency-energy" and d["pareto"]
    pts = [(p["seconds"], p["accelerator_energy_j"]) for p in d["pareto"]]
    assert all(e is not None and e > 0 for _, e in pts)
    for a in pts:  # no listed point dominates another
        assert not any(b != a and b[0] <= a[0] and b[1] <= a[1] for b in pts)
    assert d["best_accelerator_energy_j"] == min(e for _, e in pts)
    rc, out, _ = _run(capsys, "show", d["study"], "--db", db)
    assert rc == 0
    assert "Pareto front, ms per call vs accelerator energy" in out
    assert "accel J" in out and "board J" in out
    rc, out, _ = _run(capsys, "studies", "--db", db, "--json")
    (s,) = json.loads(out)["studies"]
    assert s["best_accelerator_energy_j"] == d["best_accelerator_energy_j"]
    rc, out, err = _run(capsys, "search", "dense", "--shape", "16,64,64", "--trials", "2",
                        "--objective", "energy", "--db", db)
    assert rc == 2 and "energy" in err and "\n" not in err.strip()
