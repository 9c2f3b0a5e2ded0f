"""A search asked for more trials than its space holds reaches every candidate, whatever the
sampler, and says that the space is exhausted."""

from __future__ import annotations

import json

import pytest

from vtatune.cli.main import main
from vtatune.search import runner
from vtatune.search import space as spaces
from vtatune.search.enumeration import candidates
from vtatune.store import Store

SHAPE = "4,32,64"  # dense on the default config: 30 schedules, tens of ms each


def _space():
    return spaces.load("dense", shape=SHAPE, hw="default", objective="latency")


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('exhaust') / 'search.sqlite'}"


@pytest.mark.parametrize("sampler", ["grid", "random", "xgb"])
def test_every_sampler_reaches_every_candidate(db: str, sampler: str) -> None:
    sp = _space()
    size = len(candidates(sp) or [])
    assert size == 30
    r = runner.run(sp, sampler=sampler, trials=size + 10, study=sampler, db=db, workers=1,
                   seed=0)
    keys = {t.candidate.key for t in Store(db).trials(sampler)}
    assert r.exhausted and r.space_size == size and r.trials == size == len(keys)
    assert keys == {k for k, _ in candidates(sp) or []}


def test_asking_for_exactly_the_space_is_not_exhaustion(db: str) -> None:
    r = runner.run(_space(), sampler="grid", trials=30, study="exact", db=db, workers=1, seed=1)
    assert r.trials == 30 and not r.exhausted


def test_cli_says_the_space_is_exhausted(db: str, capsys) -> None:
    args = ["search", "dense", "--shape", SHAPE, "--hw", "default", "--trials", "50",
            "--sampler", "random", "--seed", "2", "--workers", "1", "--db", db, "--study", "cli"]
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["exhausted"] is True and d["space_size"] == 30 and d["trials"] == 30
    assert main(args) == 0  # resumed: nothing left to evaluate, and it says so again
    assert ("space exhausted after 30 of 50 requested trials: every candidate of the space "
            "(30) has been evaluated") in capsys.readouterr().out


def test_the_python_api_reports_the_space_size(db: str) -> None:
    import vtatune.api as vt

    res = vt.search("dense", shape=SHAPE, hw="default", objective="latency", trials=40,
                    sampler="random", seed=3, db=db, study="api", workers=1)
    assert res.exhausted and res.space_size == 30 and res.trials == 30
    short = vt.search("dense", shape=SHAPE, hw="default", objective="latency", trials=5,
                      sampler="random", seed=3, db=db, study="api-short", workers=1)
    assert not short.exhausted and short.space_size is None
