"""A study of several networks on one accelerator, read back: show (text, --json), report
(text, JSON, CSV, HTML), compare and the Python API give each design's per-network breakdown;
each network's latency is the count-weighted sum of its layers' stored latencies, and the
weights times those the objective. A single network's outputs stay as they were (their own
tests)."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from tests.reports.multi_study import WEIGHTS, make
from vtatune.cli.main import main
from vtatune.store import Store


@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    return make(tmp_path_factory.mktemp("multi"))


@pytest.fixture(scope="module")
def records(multi):
    return {t.number: t for t in Store(multi.db).network_trials(multi.study)}


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _expected(t) -> dict[str, float]:
    """Each network's latency in ms from the stored layer records: sum of count x latency."""
    out = {}
    for n in t.networks:
        out[n.network] = sum(la.count * la.seconds for la in n.layers) * 1e3
    return out


def test_records_add_up(records) -> None:
    """The reference itself: per network, the layers' sum; the weighted sum the objective."""
    for t in records.values():
        mine = _expected(t)
        assert set(mine) == set(WEIGHTS)
        assert math.isclose(sum(WEIGHTS[k] * v for k, v in mine.items()), 1e3 * t.seconds,
                            rel_tol=1e-9)


def test_show_json_and_text(capsys, multi, records) -> None:
    rc, out, _ = _run(capsys, "show", multi.study, "--db", multi.db, "--json")
    assert rc == 0
    doc = json.loads(out)
    assert doc["objective_latency"] == "weighted sum of the networks' latencies"
    nets = {n["network"]: n for n in doc["networks"]}
    assert {k: n["weight"] for k, n in nets.items()} == WEIGHTS
    assert nets["tiny"]["host_ops"] == []
    assert nets["other"]["host_ops"] == [{"op": "MaxPool", "count": 2,
                                          "shapes": ["1x16x8x8"]}]
    assert doc["host_ops"] == nets["other"]["host_ops"]  # every network's
    assert doc["pareto"]
    for row in doc["pareto"]:
        mine = _expected(records[row["trial"]])
        got = {n["network"]: 1e3 * n["seconds"] for n in row["networks"]}
        assert got == pytest.approx(mine, rel=1e-9)
        for n in row["networks"]:
            assert sum(la["share"] for la in n["layers"]) == pytest.approx(1.0)
    rc, out, _ = _run(capsys, "show", multi.study, "--db", multi.db)
    assert rc == 0
    assert "networks: tiny (weight 3), other (weight 1); latency: the weighted sum" in out
    assert "other: host operators (run on the host, not on VTA; their time is not in the " \
           "latency): MaxPool x2 (1x16x8x8)" in out
    for row in doc["pareto"]:
        t = records[row["trial"]]
        assert f"trial {t.number}: {t.hw_name}, {1e3 * t.seconds:.3f} ms weighted sum" in out
        for name, ms in _expected(t).items():
            assert f"network {name} (weight {WEIGHTS[name]:g}): {ms:.3f} ms per run" in out


def test_report_json_csv_html(capsys, multi, records, tmp_path) -> None:
    rc, out, _ = _run(capsys, "report", multi.study, "--db", multi.db, "--out",
                      str(tmp_path / "r"), "--json")
    assert rc == 0
    doc = json.loads(out)
    assert [(n["network"], n["weight"]) for n in doc["networks"]] == list(WEIGHTS.items())
    assert doc["networks"][1]["host_ops"][0]["op"] == "MaxPool"
    assert doc["networks"][0]["layers"] == ["a", "b", "a2", "fc"]
    for p in doc["front"]:
        t = records[p["trial"]]
        got = {n["network"]: n["latency_ms"] for n in p["networks"]}
        assert got == pytest.approx(_expected(t), rel=1e-9)
        assert sum(WEIGHTS[n["network"]] * n["latency_ms"] for n in p["networks"]) == \
            pytest.approx(p["latency_ms"], rel=1e-9)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "r" / "designs.csv").read_text())))
    assert len(rows) == len(records)
    for r in rows:
        mine = _expected(records[int(r["trial"])])
        assert float(r["tiny_latency_ms"]) == pytest.approx(mine["tiny"], rel=1e-9)
        assert float(r["other_latency_ms"]) == pytest.approx(mine["other"], rel=1e-9)
        assert float(r["tiny_weight"]) == 3.0
    front = list(csv.DictReader(io.StringIO((tmp_path / "r" / "front.csv").read_text())))
    assert "tiny.a_share" in front[0] and "other_latency_ms" in front[0]
    html = (tmp_path / "r" / "index.html").read_text()
    assert "latency is the weighted sum of the networks&#x27; latencies" in html \
        or "latency is the weighted sum of the networks' latencies" in html
    assert "MaxPool x2" in html and "weighted sum (ms)" in html
    rc, out, _ = _run(capsys, "report", multi.study, "--db", multi.db, "--out",
                      str(tmp_path / "r2"))
    assert rc == 0 and "networks: tiny (weight 3), other (weight 1)" in out


def test_compare_refuses_other_weights(capsys, multi, tmp_path) -> None:
    other = make(tmp_path, study="w11", weights=(1, 1), trials=2, seed=5, db=multi.db)
    rc, _, err = _run(capsys, "compare", multi.study, other.study, "--db", multi.db,
                      "--out", str(tmp_path / "c"))
    assert rc == 2
    assert "studies differ in networks and weights (m: 3 x tiny + 1 x other, w11: 1 x tiny + " \
           "1 x other)" in err
    rc, out, _ = _run(capsys, "compare", multi.study, multi.study, "--db", multi.db, "--out",
                      str(tmp_path / "c"), "--json")
    assert rc == 0
    doc = json.loads(out)
    assert doc["networks"] == [{"network": k, "weight": v} for k, v in WEIGHTS.items()]
    assert doc["objective_latency"] == "weighted sum of the networks' latencies"
    html = (tmp_path / "c" / "index.html").read_text()
    assert "latency: the weighted sum of the networks' latencies (3 × tiny + 1 × other)" in html


def test_api_front_and_layers(multi, records) -> None:
    from vtatune import api

    df = api.front(multi.study, multi.db)
    for _, row in df.iterrows():
        mine = _expected(records[int(row["trial"])])
        assert row["tiny_latency_ms"] == pytest.approx(mine["tiny"], rel=1e-9)
        assert row["other_latency_ms"] == pytest.approx(mine["other"], rel=1e-9)
        assert 3 * row["tiny_latency_ms"] + row["other_latency_ms"] == \
            pytest.approx(row["latency_ms"], rel=1e-9)
    la = api.layers(multi.study, multi.db)
    first = la[la["trial"] == 0]
    assert list(zip(first["network"], first["layer"], strict=True)) == [
        ("tiny", "a"), ("tiny", "b"), ("tiny", "a2"), ("tiny", "fc"), ("other", "x"),
        ("other", "y")]
    for net in WEIGHTS:
        mine = first[first["network"] == net]
        assert mine["total_ms"].sum() == pytest.approx(_expected(records[0])[net], rel=1e-9)
        assert mine["share"].sum() == pytest.approx(1.0)


def test_studies_name_the_weights(capsys, multi) -> None:
    rc, out, _ = _run(capsys, "studies", "--db", multi.db)
    assert rc == 0 and "network:tiny+other (weights 3,1)" in out
    rc, out, _ = _run(capsys, "studies", "--db", multi.db, "--json")
    mine = next(s for s in json.loads(out)["studies"] if s["name"] == multi.study)
    assert mine["networks"] == [{"network": k, "weight": v} for k, v in WEIGHTS.items()]


def test_search_end_lists_each_network(capsys, multi, records) -> None:
    """The end of a search (here a rerun that adds nothing) prints each network's ms."""
    rc, out, _ = _run(capsys, "search", *map(str, multi.files), "--weights", "3,1", "--trials",
                      "3", "--sampler", "random", "--db", multi.db, "--study", multi.study)
    assert rc == 0
    assert "ms: the weighted sum of the networks' latencies (3 x tiny + 1 x other)" in out
    head = next(ln for ln in out.splitlines() if ln.lstrip().startswith("trial"))
    assert head.split()[:6] == ["trial", "ms", "tiny", "ms", "other", "ms"]
    rows = [ln.split() for ln in out.splitlines() if ln.split() and ln.split()[0].isdigit()]
    assert rows
    for cells in rows:
        t = records[int(cells[0])]
        mine = _expected(t)
        assert cells[1:4] == [f"{1e3 * t.seconds:.3f}", f"{mine['tiny']:.3f}",
                              f"{mine['other']:.3f}"]
