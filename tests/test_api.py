"""vtatune.api: DataFrames checked against the store's records and direct computations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import vtatune.api as vt
from vtatune.errors import StoreError, UserError
from vtatune.store import Store

ROOT = Path(__file__).resolve().parents[1]


def test_studies_lists_every_study(studies) -> None:
    df = vt.studies(studies.db)
    infos = {i.name: i for i in Store(studies.db).studies()}
    assert set(df["study"]) == set(infos)
    for row in df.itertuples():
        i = infos[row.study]
        assert (row.trials, row.feasible, row.board) == (i.n_trials, i.n_feasible, i.board)
        if i.best_cycles is not None:
            assert row.best_cycles == i.best_cycles
            # the study's latency, end to end per call: as show and the reports give it
            feasible = [t.candidate for t in Store(studies.db).trials(i.name)
                        if t.candidate.feasible]
            assert row.best_ms == pytest.approx(1e3 * min(c.seconds for c in feasible))
            assert row.best_ms > i.best_cycles / 1e5  # host time on top of the cycles


def test_trials_decode_hardware_and_knobs(studies) -> None:
    records = Store(studies.db).trials(studies.random)
    df = vt.trials(studies.random, studies.db)
    assert list(df["trial"]) == [t.number for t in records]
    assert set(df["status"]) <= {"ok", "invalid", "no_fit", "failed", "timeout", "hw_invalid"}
    for t, row in zip(records, df.to_dict("records"), strict=True):
        c = t.candidate
        assert row["status"] == c.status and row["reason"] == c.reason
        assert row["feasible"] == c.feasible and row["cached"] == t.cached
        assert row["batch"] == 2 ** c.hw["LOG_BATCH"]
        assert row["block_in"] == 2 ** c.hw["LOG_BLOCK_IN"]
        assert row["block_out"] == 2 ** c.hw["LOG_BLOCK_OUT"]
        assert row["inp_kib"] * 1024 == 2 ** c.hw["LOG_INP_BUFF_SIZE"]
        assert row["wgt_kib"] * 1024 == 2 ** c.hw["LOG_WGT_BUFF_SIZE"]
        assert row["acc_kib"] * 1024 == 2 ** c.hw["LOG_ACC_BUFF_SIZE"]
        assert row["uop_kib"] * 1024 == 2 ** c.hw["LOG_UOP_BUFF_SIZE"]
        assert row["acc_bits"] == 32 and row["inp_bits"] == 8
        for k, v in c.knobs.items():
            assert row[k] == v
        if c.feasible:
            assert row["cycles"] == c.cycles
            # end to end per call: the accelerator's cycles at 100 MHz plus the host's share
            assert row["latency_ms"] == pytest.approx(1e3 * c.seconds)
            assert row["accelerator_seconds"] == pytest.approx(c.cycles / 1e8)
            assert row["latency_ms"] == pytest.approx(
                1e3 * (row["accelerator_seconds"] + row["host_seconds"]))
            assert row["area_mm2"] == pytest.approx(c.area_mm2)
            assert 0 < row["efficiency"] <= 1
            assert row["cycles"] >= row["bound_cycles"]  # never faster than physics allows
        else:
            assert row["reason"] and pd.isna(row["cycles"]) and pd.isna(row["latency_ms"])
    # a rejected design keeps its decoded hardware and its reason (designs a search screens
    # are no trials: the infeasible ones are in the study made before the screen)
    bad = vt.trials(studies.nofit, studies.db)
    assert len(bad) and not bad["feasible"].any() and bad["reason"].str.len().gt(0).all()
    assert (bad["block_in"] == 32).all()


def test_front_is_the_non_dominated_set_with_one_knee(studies) -> None:
    from vtatune.reports import data as rd

    df = vt.front(studies.tpe, studies.db)
    t = vt.trials(studies.tpe, studies.db)
    ok = t[t["feasible"]].drop_duplicates("key")
    # the study minimizes end-to-end latency: its front is in (area, latency_ms)
    pts = list(zip(ok["area_mm2"], ok["latency_ms"], ok["trial"], strict=True))
    expect = {n for a, c, n in pts
              if not any(a2 <= a and c2 <= c and (a2 < a or c2 < c) for a2, c2, _ in pts)}
    assert set(df["trial"]) == expect and expect
    assert list(df["area_mm2"]) == sorted(df["area_mm2"])
    assert df["knee"].sum() == 1
    info = Store(studies.db).study(studies.tpe)
    knee = rd.knee(rd.front_points(info, Store(studies.db).trials(studies.tpe)))
    assert int(df.loc[df["knee"], "trial"].iloc[0]) == knee.trial


def test_bad_input_is_one_line(studies, tmp_path) -> None:
    missing = tmp_path / "none.sqlite"
    with pytest.raises(StoreError, match="no database"):
        vt.trials("x", str(missing))
    assert not missing.exists()  # reading never creates a database
    with pytest.raises(UserError, match="rnd"):  # an unknown study names the known ones
        vt.front("no-such-study", studies.db)
    with pytest.raises(UserError, match="unknown sampler"):
        vt.search("dense", shape="16,64,64", sampler="nope", db=str(tmp_path / "x.sqlite"))



@pytest.mark.parametrize(("kw", "message"), [
    ({"timeout": float("nan")}, "timeout must be a finite number"),
    ({"timeout": float("inf")}, "timeout must be a finite number"),
    ({"seed": -1}, "seed must be in 0..4,294,967,295"),
    ({"seed": 10**20}, "seed must be in"),
    ({"trials": 0}, "trials must be in 1..1,000,000"),
    ({"workers": 10**6}, "workers must be in 0..256"),
    ({"db": "sqlite:///:memory:"}, "in-memory database"),
    ({"latency": "wall"}, "latency must be one of end-to-end, accelerator"),
])
def test_search_checks_its_arguments_as_the_cli_does(kw, message, tmp_path) -> None:
    args = {"trials": 1, "db": str(tmp_path / "x.sqlite"), **kw}
    with pytest.raises(UserError, match=message):
        vt.search("dense", shape="16,64,64", **args)
    assert not (tmp_path / "x.sqlite").exists()  # refused before anything is stored


def test_search_from_python(tmp_path) -> None:
    db = str(tmp_path / "api.sqlite")
    res = vt.search("dense", shape="16,64,64", hw="default", trials=3, sampler="random",
                    seed=0, db=db, workers=1)
    assert isinstance(res, vt.SearchSummary)
    # the CLI's default name: the fixed hardware is part of it
    assert res.study == "dense-dense_m16_k64_n64-sched-1x16x16-i32w256a128u32-random"
    assert res.trials == 3
    df = vt.trials(res.study, db)
    assert len(df) == 3 and df["feasible"].sum() == res.feasible
    assert (df["block_in"] == 16).all() and (df["inp_kib"] == 32).all()  # the default config
    # the accelerator-only objective is its own study (the latency is part of its identity)
    acc = vt.search("dense", shape="16,64,64", hw="default", trials=2, sampler="random",
                    seed=0, db=db, workers=1, latency="accelerator")
    assert acc.study != res.study and acc.cached == 2  # same candidates, served from the store


def test_import_is_light() -> None:
    code = ("import sys, vtatune.api; "
            "print(sorted(m for m in ('pandas', 'tvm', 'numpy', 'sqlalchemy', 'optuna') "
            "if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.strip() == "[]"


def test_example_script_runs(tmp_path) -> None:
    db = tmp_path / "example.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, str(ROOT / "examples" / "api_tour.py"), "--trials",
                          "6", "--workers", "1", "--db", str(db)], capture_output=True,
                         text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr
    assert "study api-tour: 6 trials" in res.stdout
    assert "knee" in res.stdout and "hw_name" in res.stdout
    assert len(vt.trials("api-tour", str(db))) == 6
