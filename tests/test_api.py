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
    # energy: per trial in the frames, the least in the summary, an objective of its own study
    ok = df[df["feasible"]]
    assert ok["accelerator_energy_j"].notna().all() and (
        ok["board_energy_j"] > ok["accelerator_energy_j"]).all()
    assert res.best_accelerator_energy_j == pytest.approx(ok["accelerator_energy_j"].min())
    edp = vt.search("dense", shape="16,64,64", hw="default", trials=3, sampler="random",
                    seed=0, db=db, workers=1, objective="edp")
    assert edp.study.endswith("-edp-random") and edp.cached == 3
    front = vt.front(edp.study, db)
    assert len(front) >= 1 and front["accelerator_energy_j"].notna().all()


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


# ---- network studies ---------------------------------------------------------------------------

def _network_space_file(folder: Path) -> Path:
    import json

    from tests.networks.tiny_space import TINY

    lines = ["[network]", f'name = "{TINY["network"]["name"]}"']
    for la in TINY["network"]["layers"]:
        lines.append("[[network.layers]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in la.items()]
    for section in ("hardware", "objective", "inner"):
        lines.append(f"[{section}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in TINY[section].items()]
    path = folder / "tiny.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def network_search(tmp_path_factory):
    folder = tmp_path_factory.mktemp("api-network")
    space = _network_space_file(folder)
    db = str(folder / "net.sqlite")
    res = vt.search(str(space), trials=4, layer_trials=5, sampler="random", seed=0, db=db,
                    workers=1)
    return res, db


def _show_json(study: str, db: str) -> dict:
    import json

    code = ("import sys; from vtatune.cli.main import main; "
            f"sys.exit(main(['show', {study!r}, '--db', {db!r}, '--json']))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout
    return json.loads(out)


def test_network_search_from_python(network_search) -> None:
    res, db = network_search
    # the CLI's default name and the network's name; a trial is one hardware design
    assert res.study == "network-tiny-random" and res.network == "tiny"
    assert res.trials == 4 and res.new_trials == 4
    df = vt.trials(res.study, db)
    assert list(df["trial"]) == [0, 1, 2, 3]
    assert df["feasible"].sum() == res.feasible >= 1
    ok = df[df["feasible"]]
    assert res.best_seconds == pytest.approx(ok["latency_ms"].min() / 1e3)
    assert res.best_cycles == ok["cycles"].min()
    studies = vt.studies(db)
    row = studies[studies["study"] == res.study].iloc[0]
    assert row["trials"] == 4 and row["best_ms"] == pytest.approx(ok["latency_ms"].min())


def test_network_designs_and_layers_equal_show_json(network_search) -> None:
    res, db = network_search
    shown = _show_json(res.study, db)
    designs = vt.trials(res.study, db).set_index("trial")
    layers = vt.layers(res.study, db)
    records = {t.number: t for t in Store(db).network_trials(res.study)}
    assert set(designs.index) == set(records)
    for n, t in records.items():
        d = designs.loc[n]
        assert (d["status"], d["hw_name"], d["feasible"]) == (t.status, t.hw_name, t.feasible)
        assert d["block_in"] == 2 ** t.hw["LOG_BLOCK_IN"]
        assert d["wgt_kib"] * 1024 == 2 ** t.hw["LOG_WGT_BUFF_SIZE"]
        assert d["layers"] == len(t.layers) and d["layer_evaluations"] == t.evaluated
        own = layers[layers["trial"] == n]
        assert list(own["layer"]) == [la.name for la in t.layers]
        if t.feasible:
            # the network's totals are the count-weighted sums of its layers'
            assert d["cycles"] == (own["count"] * own["cycles"]).sum()
            assert d["latency_ms"] == pytest.approx((own["count"] * own["latency_ms"]).sum())
            assert own["share"].sum() == pytest.approx(1.0)
        else:
            assert d["reason"] and pd.isna(d["latency_ms"])
    # every front design of show --json, number for number
    front = vt.front(res.study, db)
    assert list(front["trial"]) == [p["trial"] for p in shown["pareto"]]
    assert list(front["area_mm2"]) == sorted(front["area_mm2"]) and front["knee"].sum() == 1
    for p in shown["pareto"]:
        d = designs.loc[p["trial"]]
        assert d["cycles"] == p["cycles"] and d["hw_name"] == p["hw_name"]
        assert d["latency_ms"] == pytest.approx(1e3 * p["seconds"], rel=1e-12)
        assert d["area_mm2"] == pytest.approx(p["area_mm2"], rel=1e-12)
        assert d["efficiency"] == pytest.approx(p["efficiency"], rel=1e-12)
        assert d["host_seconds"] == pytest.approx(p["host_seconds"], rel=1e-12)
        own = layers[layers["trial"] == p["trial"]].to_dict("records")
        assert [r["layer"] for r in own] == [la["name"] for la in p["layers"]]
        for r, la in zip(own, p["layers"], strict=True):
            assert (r["count"], r["cycles"], r["trials"]) == (la["count"], la["cycles"],
                                                             la["trials"])
            assert r["latency_ms"] == pytest.approx(1e3 * la["seconds"], rel=1e-12)
            assert r["share"] == pytest.approx(la["share"], rel=1e-12)
            assert {k: r[k] for k in la["knobs"]} == la["knobs"]


def test_network_search_by_name_and_bad_input(tmp_path) -> None:
    db = str(tmp_path / "x.sqlite")
    # the CLI's network names are accepted (not "unknown workload"); bad network options
    # are one-line errors before anything is stored
    with pytest.raises(UserError, match="--layer and --shape select one layer"):
        vt.search("resnet18", layer="C8", db=db)
    with pytest.raises(UserError, match="unknown --inner-sampler"):
        vt.search("resnet18", inner_sampler="tpe", db=db)
    with pytest.raises(UserError, match="layer_trials must be in 1"):
        vt.search("resnet18", layer_trials=0, db=db)
    with pytest.raises(UserError, match="apply to network searches"):
        vt.search("dense", shape="16,64,64", layer_trials=3, db=db)
    with pytest.raises(UserError, match="unknown workload 'resnet19'.*networks: .*resnet18"):
        vt.search("resnet19", db=db)
    assert not (tmp_path / "x.sqlite").exists()


def test_layers_of_an_operator_study_is_one_line(studies) -> None:
    with pytest.raises(UserError, match="single-operator study"):
        vt.layers(studies.random, studies.db)


def test_several_networks_from_python(tmp_path) -> None:
    """``search([A, B], weights=...)``: one accelerator for both, as the CLI's
    ``search A B --weights``; the trials' seconds are the weighted sums of the networks'."""
    from tests.networks.tiny_space import OTHER, TINY, toml_text

    a, b = tmp_path / "tiny.toml", tmp_path / "other.toml"
    a.write_text(toml_text(TINY))
    b.write_text(toml_text(OTHER))
    db = str(tmp_path / "m.sqlite")
    run = vt.search([str(a), str(b)], weights=[2, 1], trials=2, sampler="random", seed=0,
                    db=db, layer_trials=8)
    assert run.study == "network-tiny+other-w2_1-random" and run.network == "tiny+other"
    assert run.trials == 2
    for t in Store(db).network_trials(run.study):
        if t.status == "ok":
            assert t.seconds == pytest.approx(2 * t.networks[0].seconds + t.networks[1].seconds)
    for kw in ({"weights": [1, float("nan")]}, {"weights": [1]}, {"weights": [0, 1]}):
        with pytest.raises(UserError):
            vt.search([str(a), str(b)], db=db, **kw)
    with pytest.raises(UserError):
        vt.search([str(a), str(b)], space=str(a), db=db)
