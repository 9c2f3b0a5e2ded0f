"""``vtatune studies`` and ``vtatune show``: tables, JSON, empty studies, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vtatune.cli.main import main
from vtatune.formats import MISSING
from vtatune.store import CandidateRecord, Store

WL = "conv2d:1x64x56x56-64x3x3-p1s1"
HW = {"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0,
      "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15,
      "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}

#: (area_mm2, cycles) of the joint study's feasible trials; the front is trials 0, 2, 4.
JOINT = [(1.0, 900), (1.5, 950), (2.0, 500), (2.5, 600), (3.0, 400)]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def rec(tag: str, status: str = "ok", area: float | None = 1.0, cycles: int | None = 1000,
        block: int = 4) -> CandidateRecord:
    hw = {**HW, "LOG_BLOCK_IN": block, "LOG_BLOCK_OUT": block}
    ok = status == "ok"
    return CandidateRecord(
        key=f"{WL}|{block}|{tag}", workload=WL, hw_key="_".join(map(str, hw.values())), hw=hw,
        hw_name=f"1x{1 << block}x{1 << block}-i32w256a128u32", knobs={"tile_h": len(tag)},
        status=status, reason="" if ok else "sram: inp overflows", cycles=cycles if ok else None,
        seconds=cycles / 100e6 if ok and cycles else None, efficiency=0.5 if ok else None,
        area_mm2=area if ok else None)


def add(store: Store, study: str, n: int, r: CandidateRecord, cached: bool = False) -> None:
    store.save(r)
    store.add_trial(study, n, r.key, "tpe", {"n": n}, cached)


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    store = Store(url)
    store.create_or_load_study("joint", WL, {}, "tpe", "area-latency", "pynq-z1", 1)
    for n, (area, cycles) in enumerate(JOINT):
        add(store, "joint", n, rec(f"j{n}", area=area, cycles=cycles, block=3 + n % 2))
    add(store, "joint", 5, rec("bad", status="invalid"))
    add(store, "joint", 6, rec("j0", area=1.0, cycles=900, block=3), cached=True)  # repeat
    store.create_or_load_study("sched", WL, {}, "random", "latency", "zcu104", None)
    for n in range(12):
        add(store, "sched", n, rec(f"s{n}", area=2.0, cycles=5000 - 100 * ((n * 7) % 12)))
    store.create_or_load_study("empty", WL, {}, "xgb", "latency", "pynq-z1", None)
    store.create_or_load_study("nofit", WL, {}, "tpe", "area-latency", "pynq-z1", None)
    add(store, "nofit", 0, rec("nf", status="no_fit"))
    return url


def test_studies_table(capsys: pytest.CaptureFixture[str], db: str) -> None:
    rc, out, err = run(capsys, "studies", "--db", db)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["study", "trials", "feasible", "best", "ms", "best", "cycles",
                                "objective", "sampler", "board", "created", "workload"]
    # best ms: the least time per call end to end (here cycles / 100 MHz, no host time)
    assert lines[1].split()[:8] == ["joint", "7", "6", "0.004", "400", "area-latency", "tpe",
                                    "pynq-z1"]
    assert lines[2].split()[:8] == ["sched", "12", "12", "0.039", "3,900", "latency", "random",
                                    "zcu104"]
    assert lines[3].split()[:5] == ["empty", "0", "0", "-", "-"]
    assert all(WL in line for line in lines[1:5])
    assert lines[-1].startswith("4 studies in sqlite:///")


def test_studies_json(capsys: pytest.CaptureFixture[str], db: str) -> None:
    rc, out, _ = run(capsys, "studies", "--db", db, "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["db"] == db
    by_name = {s["name"]: s for s in d["studies"]}
    assert list(by_name) == ["joint", "sched", "empty", "nofit"]
    j = by_name["joint"]
    assert (j["trials"], j["feasible"], j["best_cycles"], j["objective"], j["sampler"],
            j["board"], j["workload"], j["seed"]) == (7, 6, 400, "area-latency", "tpe",
                                                      "pynq-z1", WL, 1)
    assert j["created_at"].endswith("+00:00") and j["optuna_study_name"] == "joint"
    assert j["best_ms"] == pytest.approx(400 / 100e6 * 1e3)
    assert by_name["empty"]["best_cycles"] is None and by_name["empty"]["best_ms"] is None


def test_studies_without_a_database_creates_nothing(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    path = tmp_path / "none" / "x.sqlite"
    rc, out, _ = run(capsys, "studies", "--db", str(path))
    assert rc == 0 and out.strip() == f"no studies in sqlite:///{path} (no database there yet)"
    rc, out, _ = run(capsys, "studies", "--db", str(path), "--json")
    assert rc == 0 and json.loads(out)["studies"] == []
    assert not path.exists() and not path.parent.exists()


def test_studies_default_database(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VTATUNE_HOME", str(tmp_path))
    Store().create_or_load_study("here", WL, {}, "tpe", "latency", "pynq-z1", None)
    rc, out, _ = run(capsys, "studies")
    assert rc == 0 and out.splitlines()[1].startswith("here ")
    assert f"in sqlite:///{tmp_path}/db/vtatune.sqlite" in out


def test_show_pareto(capsys: pytest.CaptureFixture[str], db: str) -> None:
    rc, out, err = run(capsys, "show", "joint", "--db", db)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"study joint: {WL} on pynq-z1, objective area-latency "
                               "(end-to-end latency), sampler tpe (sqlite:///")
    assert lines[1] == "7 trials, 6 feasible (infeasible: invalid 1), best 400 cycles"
    # why the infeasible ones are: per status, its first trial and reason
    assert lines[2] == "  invalid (1), e.g. trial 5 (1x16x16-i32w256a128u32): sram: inp overflows"
    lines = lines[:2] + lines[3:]
    assert lines[2] == "Pareto front, area vs ms per call (3 points):"
    assert lines[3].split() == ["trial", "cycles", "ms", "accel", "ms", "host", "ms", "mm²",
                                "eff.", "stock", "hardware", "knobs"]
    rows = [line.split() for line in lines[4:7]]
    # search's formats: cycles with separators, ms with 3 decimals, mm² with 2, efficiency %;
    # these records predate the accelerator/host split: its columns are missing
    M = MISSING
    assert [r[:7] for r in rows] == [["0", "900", "0.009", M, M, "1.00", "50.0%"],
                                     ["2", "500", "0.005", M, M, "2.00", "50.0%"],
                                     ["4", "400", "0.004", M, M, "3.00", "50.0%"]]
    assert rows[0][8] == "1x8x8-i32w256a128u32" and rows[0][9] == "tile_h=2"
    from vtatune.hardware.stock import stock_of

    stock = [stock_of(rec(f"j{n}", block=3 + n % 2).hw, "pynq-z1")["stock_vta"]
             for n in (0, 2, 4)]
    assert [r[7] for r in rows] == ["yes" if s else "no" for s in stock]
    assert lines[7].startswith("ms: time per call end to end") and "eff.: " in lines[7]
    assert lines[8].startswith("hardware names: BATCHxBLOCK_INxBLOCK_OUT-i<inp>w<wgt>")
    assert lines[9].startswith("stock: stock VTA (apache/tvm-vta) builds ")


def test_show_json(capsys: pytest.CaptureFixture[str], db: str) -> None:
    rc, out, _ = run(capsys, "show", "joint", "--db", db, "--json")
    assert rc == 0
    d = json.loads(out)
    assert (d["study"], d["objective"], d["trials"], d["feasible"], d["best_cycles"]) == (
        "joint", "area-latency", 7, 6, 400)
    assert [(p["trial"], p["area_mm2"], p["cycles"]) for p in d["pareto"]] == [
        (0, 1.0, 900), (2, 2.0, 500), (4, 3.0, 400)]
    p = d["pareto"][0]
    assert set(p) == {"trial", "hw", "hw_name", "knobs", "cycles", "seconds", "area_mm2",
                      "efficiency", "accelerator_seconds", "host_seconds", "stock_vta",
                      "stock_vta_problems", "timing_domain", "ties", "accelerator_energy_j",
                      "board_energy_j"}
    assert p["timing_domain"]["extrapolated"]  # a 1x8x8 design: not among the fitted
    assert p["accelerator_energy_j"] is None  # a record without energy (as stored before it)
    assert d["latency"] == "end-to-end"
    assert p["hw"]["LOG_BLOCK_IN"] == 3 and p["knobs"] == {"tile_h": 2}
    assert p["seconds"] == pytest.approx(9e-6) and p["efficiency"] == 0.5
    # the cached repeat of trial 0 (trial 6) is listed once
    assert [t["trial"] for t in d["top"]] == [4, 2, 3, 0, 1]
    assert d["statuses"] == {"ok": 6, "invalid": 1}


def test_show_latency_study_top_10(capsys: pytest.CaptureFixture[str], db: str) -> None:
    rc, out, _ = run(capsys, "show", "sched", "--db", db)
    assert rc == 0
    lines = out.splitlines()
    assert lines[2] == "top 10 by ms per call:"  # end to end (the default latency)
    cycles = [int(line.split()[1].replace(",", "")) for line in lines[4:14]]
    assert cycles == sorted(cycles) and len(cycles) == 10 and cycles[0] == 3900
    rc, out, _ = run(capsys, "show", "sched", "--db", db, "--json")
    d: dict[str, Any] = json.loads(out)
    assert [t["cycles"] for t in d["top"]] == cycles and d["best_cycles"] == 3900


@pytest.mark.parametrize(("study", "lines"), [
    ("empty", ["0 trials, 0 feasible"]),
    ("nofit", ["1 trial, 0 feasible (infeasible: no_fit 1)",  # one trial, not "1 trials"
               "  no_fit (1), e.g. trial 0 (1x16x16-i32w256a128u32): sram: inp overflows"])])
def test_show_no_feasible_trial(capsys: pytest.CaptureFixture[str], db: str, study: str,
                                lines: list[str]) -> None:
    rc, out, _ = run(capsys, "show", study, "--db", db)
    assert rc == 0
    assert out.splitlines()[1:] == [*lines, "no feasible trial yet"]
    rc, out, _ = run(capsys, "show", study, "--db", db, "--json")
    d = json.loads(out)
    assert rc == 0 and d["feasible"] == 0 and d["best_cycles"] is None
    assert d["pareto"] == [] and d["top"] == []


def test_show_unknown_study(capsys: pytest.CaptureFixture[str], db: str) -> None:
    rc, out, err = run(capsys, "show", "nope", "--db", db)
    assert rc == 2 and out == ""
    assert err.strip() == (f"vtatune: error: no study 'nope' in {db} (studies: joint, sched, "
                           "empty, nofit)")


def test_show_without_a_database(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, _, err = run(capsys, "show", "x", "--db", str(tmp_path / "none.sqlite"))
    assert rc == 2
    assert err.strip() == (f"vtatune: error: no study 'x': no database at "
                           f"sqlite:///{tmp_path}/none.sqlite")
    assert not (tmp_path / "none.sqlite").exists()


@pytest.mark.parametrize("argv", [["studies"], ["show", "joint"], ["studies", "--json"]])
@pytest.mark.parametrize(("url", "message"), [
    ("foo://x", "unsupported database 'foo://x'"),
    ("not a url", "malformed database 'not a url'"),
    ("postgresql+psycopg://vt@127.0.0.1:1/x", "cannot open database "
     "'postgresql+psycopg://vt@127.0.0.1:1/x': "),
])
def test_bad_database_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], url: str,
                                  message: str) -> None:
    rc, out, err = run(capsys, *argv, "--db", url)
    assert rc == 2 and err.startswith(f"vtatune: error: {message}") and err.count("\n") == 1
    # --json: the error as one object on stdout too; else nothing there
    assert (json.loads(out)["error"].startswith(message) if "--json" in argv else out == "")


def test_front_lists_designs_that_tie_once(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    # Two programs that differ only in which axis the virtual threads split can take the
    # same cycles on the same hardware: the front once listed both, as two rows of one point
    url = f"sqlite:///{tmp_path / 'ties.sqlite'}"
    store = Store(url)
    store.create_or_load_study("ties", WL, {}, "xgb", "area-latency", "pynq-z1", 1)
    a = rec("a", area=2.0, cycles=500)
    twin = CandidateRecord(**{**a.__dict__, "key": a.key + "|twin",
                              "knobs": {"tile_h": 1, "h_nthread": 2}})
    add(store, "ties", 0, rec("smaller", area=1.0, cycles=900))
    add(store, "ties", 1, a)
    add(store, "ties", 2, twin)
    add(store, "ties", 3, rec("slower", area=2.0, cycles=700))  # dominated
    rc, out, err = run(capsys, "show", "ties", "--db", url, "--json")
    assert rc == 0, err
    front = json.loads(out)["pareto"]
    assert [r["trial"] for r in front] == [0, 1]
    assert front[1]["ties"] == [{"trial": 2, "knobs": {"tile_h": 1, "h_nthread": 2}}]
    assert front[0]["ties"] == []
    rc, out, _ = run(capsys, "show", "ties", "--db", url)
    assert "Pareto front, area vs ms per call (2 points):" in out
    assert ("equal to a listed design (same hardware area and latency, other knobs): trial 2 "
            "= trial 1 (h_nthread=2)") in out
