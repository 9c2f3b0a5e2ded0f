"""Session fixtures: small studies built once (report, export and CLI tests), and a real
PostgreSQL server started once per test process (store and scale-out tests)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

_databases = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A throwaway PostgreSQL server (``vtatune.store.pgserver``) for this test process: on
    127.0.0.1 and a free port, in a temporary folder, as an unprivileged user when we are
    root. Never skipped: a machine without the server binaries fails here, saying so."""
    from vtatune.store.pgserver import PgServer

    server = PgServer().start()
    yield server
    server.stop()


@pytest.fixture()
def pg_url(pg_server: Any) -> str:
    """A fresh, empty database on the session's server."""
    return pg_server.create_database(f"t{next(_databases)}")


@dataclass(frozen=True)
class Studies:
    """A database holding small dense 16x64x64 studies on pynq-z1.

    ``random`` and ``tpe``: joint searches with feasible fronts; ``nofit``: trials, none
    feasible (hardware too big for the board, stored as a study made before the search
    screened such designs holds it); ``empty``: a study without trials.
    """

    db: str
    path: Path
    random: str = "rnd"
    tpe: str = "tpe"
    nofit: str = "nofit"
    empty: str = "empty"


@pytest.fixture(scope="session")
def studies(tmp_path_factory: pytest.TempPathFactory) -> Studies:
    from vtatune.search import runner, space
    from vtatune.store import Store

    folder = tmp_path_factory.mktemp("studies")
    db = f"sqlite:///{folder / 'studies.sqlite'}"
    sp = space.load("dense", shape="16,64,64")
    out = Studies(db=db, path=folder / "studies.sqlite")
    runner.run(sp, sampler="random", trials=40, study=out.random, db=db, workers=1, seed=0)
    runner.run(sp, sampler="tpe", trials=30, study=out.tpe, db=db, workers=1, seed=0)
    _store_unscreened(out.nofit, db)
    Store(db).create_or_load_study(out.empty, sp.workload.signature, sp.describe(), "random",
                                   sp.objective, sp.board, 0)
    return out


def _store_unscreened(study: str, db: str) -> None:
    """``study``: two trials of 2x32x32 designs, which need ~4x pynq-z1's LUTs, evaluated
    (``no_fit``) and stored as trials, as a study made before searches screened such designs
    holds them (a search now screens them out: search.screen)."""
    from vtatune.hardware import boards
    from vtatune.search import runner, space
    from vtatune.search.evaluate import evaluate
    from vtatune.store import Store
    from vtatune.store.identity import context

    raw = {"workload": {"kind": "dense", "shape": "16,64,64"},
           "hardware": {"LOG_BATCH": [1], "LOG_BLOCK_IN": [5], "LOG_BLOCK_OUT": [5],
                        "LOG_INP_BUFF_SIZE": [14, 15]},
           "objective": {"kind": "area-latency"}}
    big = space.from_dict(raw, "nofit.toml")
    ctx = context(big.board, big.constraints)
    store = Store(db)
    store.create_or_load_study(study, big.workload.signature, big.describe(), "random",
                               big.objective, big.board, 0,
                               identity=runner.study_identity(big, ctx))
    for n, inp in enumerate((14, 15)):
        params = {"LOG_INP_BUFF_SIZE": inp, **{f"u_{k}": 0.5 for k in big.knobs}}
        cand, why = big.realize(params)
        assert cand is not None, why
        rec = runner.stamp(evaluate(cand, boards.load(big.board)), ctx)
        assert rec.status == "no_fit", rec
        store.save(rec)
        store.add_trial(study, n, rec.key, "random", params, False, context=rec.context)


@dataclass(frozen=True)
class NetworkStudies:
    """A database holding network studies of the tiny network (tests/networks/tiny_space.py):
    ``study`` (random designs, every layer tuned) and ``other`` (another seed)."""

    db: str
    path: Path
    study: str = "net"
    other: str = "net2"


@pytest.fixture(scope="session")
def network_studies(tmp_path_factory: pytest.TempPathFactory) -> NetworkStudies:
    from tests.networks.tiny_space import TINY
    from vtatune.networks import runner
    from vtatune.networks import space as nspace

    folder = tmp_path_factory.mktemp("network-studies")
    out = NetworkStudies(db=f"sqlite:///{folder / 'net.sqlite'}", path=folder / "net.sqlite")
    sp = nspace.from_dict({**TINY, "inner": {"trials": 5, "min_per_layer": 1}}, "tiny.toml")
    runner.run(sp, sampler="random", trials=4, study=out.study, db=out.db, workers=1, seed=0,
               warm_start=False)
    runner.run(sp, sampler="random", trials=3, study=out.other, db=out.db, workers=1, seed=5,
               warm_start=False)
    return out


@pytest.fixture(scope="session")
def tiny() -> Any:
    """A tiny network space (tests/networks/tiny_space.py)."""
    from tests.networks.tiny_space import TINY
    from vtatune.networks import space as nspace

    return nspace.from_dict(TINY, "tiny.toml")
