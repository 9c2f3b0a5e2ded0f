"""Network studies in the store: design trials with per-layer picks, their evaluations, stats."""

from __future__ import annotations

import numpy as np
import pytest

from tests.store.conftest import HW, HW_KEY, record
from vtatune.store import LayerResult, NetworkTrialRecord, Store


def _trial(number: int, status: str = "ok", cycles: int | None = 500_000, **kw) -> \
        NetworkTrialRecord:
    layers = (LayerResult("C2", "w2", 4, key="k2", knobs={"tile_h": np.int64(8)},
                          cycles=100_000, seconds=1e-3, bound_cycles=90_000.0, trials=6,
                          accelerator_seconds=np.float64(0.8e-3), host_seconds=0.2e-3),
              LayerResult("fc", "w9", 1, status="invalid", trials=3))
    values = dict(study="net", number=number, hw_key=HW_KEY, hw=dict(HW), hw_name="1x16x16",
                  status=status, area_mm2=30.0, cycles=cycles, seconds=5e-3,
                  accelerator_seconds=4e-3, host_seconds=1e-3, bound_cycles=450_000.0,
                  layers=layers, resources={"lut": np.float32(1.5)},
                  params={"LOG_BLOCK_IN": 4}, sampler="tpe", evaluated=7, cached=2)
    values.update(kw)
    return NetworkTrialRecord(**values)


def _study(store: Store, name: str = "net") -> None:
    store.create_or_load_study(name, "network:resnet18", {"network": {"name": "resnet18"}},
                               "tpe", "area-latency", "pynq-z1", 0)


def test_network_trials_round_trip_and_count_in_the_study(url: str) -> None:
    store = Store(url)
    _study(store)
    store.save_network_trial(_trial(0, status="running", cycles=None))
    assert store.study("net").n_trials == 0  # a running design is not a finished trial
    store.save_network_trial(_trial(0))
    store.save_network_trial(_trial(1, status="dominated", cycles=None, reason="by trial 0"))
    store.save_network_trial(_trial(2, cycles=400_000))
    got = store.network_trials("net")
    assert [t.number for t in got] == [0, 1, 2]
    t0 = got[0]
    assert t0.status == "ok" and t0.cycles == 500_000 and t0.hw == HW and t0.evaluated == 7
    assert t0.layers[0] == LayerResult("C2", "w2", 4, key="k2", knobs={"tile_h": 8},
                                       cycles=100_000, seconds=1e-3, bound_cycles=90_000.0,
                                       trials=6, accelerator_seconds=0.8e-3,
                                       host_seconds=0.2e-3)
    assert (t0.seconds, t0.accelerator_seconds, t0.host_seconds) == (5e-3, 4e-3, 1e-3)
    assert t0.layers[1].key is None and t0.layers[1].status == "invalid"
    assert got[1].reason == "by trial 0" and not got[1].feasible
    info = store.study("net")
    assert info.is_network and (info.n_trials, info.n_feasible, info.best_cycles) == (
        3, 2, 400_000)
    assert store.trials("net") == []  # candidate trials are a separate table


def test_network_evals_link_shared_candidates_in_order(url: str) -> None:
    store = Store(url)
    _study(store)
    recs = [record(i) for i in range(3)]
    store.save_many(recs)
    store.add_network_eval("net", 0, 0, recs[2].key, cached=False)
    store.add_network_eval("net", 0, 1, recs[0].key, cached=True)
    store.add_network_eval("net", 1, 0, recs[0].key, cached=True)
    store.add_network_eval("net", 0, 1, recs[1].key, cached=False)  # replaces seq 1
    evals = store.network_evals("net", 0)
    assert [(e.seq, e.candidate.key, e.cached) for e in evals] == [
        (0, recs[2].key, False), (1, recs[1].key, False)]
    assert len(store.network_evals("net")) == 3
    with pytest.raises(ValueError, match="not in the store"):
        store.add_network_eval("net", 0, 5, "missing", cached=False)
    # a record measured in an evaluation context is linked by (key, context)
    ctx = record(5, context="ctx1", model="m1", board="pynq-z1")
    store.save(ctx)
    with pytest.raises(ValueError, match="not in the store"):
        store.add_network_eval("net", 2, 0, ctx.key, cached=False)
    store.add_network_eval("net", 2, 0, ctx.key, cached=False, context="ctx1")
    assert store.network_evals("net", 2)[0].candidate.context == "ctx1"


def test_unknown_network_status_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown network trial status"):
        _trial(0, status="great")


def test_network_trials_stored_before_the_time_split_migrate_and_read(tmp_path) -> None:
    import sqlite3

    path = tmp_path / "net.sqlite"
    url = f"sqlite:///{path}"
    store = Store(url)
    _study(store)
    store.save_network_trial(_trial(0))
    del store
    with sqlite3.connect(path) as conn:  # as a database written before the split
        for col in ("accelerator_seconds", "host_seconds",
                    "accelerator_energy_j", "board_energy_j"):  # (energy: revision 0002)
            conn.execute(f"ALTER TABLE vt_network_trials DROP COLUMN {col}")
        for col in ("accelerator_energy_j", "board_energy_j", "energy"):
            conn.execute(f"ALTER TABLE vt_candidates DROP COLUMN {col}")
        conn.execute("DROP TABLE vt_alembic_version")  # vtatune 0.1: no schema revision
    (old,) = Store(url, readonly=True).network_trials("net")
    assert (old.seconds, old.accelerator_seconds, old.host_seconds) == (5e-3, None, None)
    store = Store(url)  # a writer adds the columns; the old row keeps its numbers
    store.save_network_trial(_trial(1))
    got = store.network_trials("net")
    assert [(t.seconds, t.accelerator_seconds, t.host_seconds) for t in got] == [
        (5e-3, None, None), (5e-3, 4e-3, 1e-3)]


def test_network_designs_are_slots_finished_once(url: str) -> None:
    """A design is claimed as a slot like an operator trial; finishing it stores the design
    and marks the slot done in one step, and a second finish (a process that took the design
    over finished it first) writes nothing."""
    store = Store(url)
    _study(store)
    a, b = store.register_owner(), store.register_owner()
    (slot,), _ = store.claim("net", a, [(HW_KEY, {"LOG_BLOCK_IN": 4})], 2)
    _, refused = store.claim("net", b, [(HW_KEY, {"LOG_BLOCK_IN": 4})], 2)
    assert refused == {HW_KEY}  # one design, one slot
    store.save_network_trial(_trial(slot.number, status="running", cycles=None))
    assert store.slot_counts("net") == (1, 1)
    store.retire_owner(a)  # dead: its design is b's to finish
    (taken,) = store.take_over("net", b, 3600.0, limit=2)
    assert taken.number == slot.number and taken.params == {"LOG_BLOCK_IN": 4}
    assert store.finish_network_trial(taken, _trial(slot.number, cycles=400_000))
    assert not store.finish_network_trial(slot, _trial(slot.number, cycles=1))  # too late
    (t,) = store.network_trials("net")
    assert t.status == "ok" and t.cycles == 400_000
    assert store.slot_counts("net") == (1, 0)


def test_network_trials_stored_before_slots_are_adopted(url: str) -> None:
    """Designs stored before they were slots get one: done when finished, running with no
    owner (anyone takes it over) when interrupted."""
    store = Store(url)
    _study(store)
    store.save_network_trial(_trial(0))
    store.save_network_trial(_trial(1, hw_key="other", status="running", cycles=None))
    assert store.adopt_network_trials("net") == 2
    assert store.adopt_network_trials("net") == 0
    assert store.slot_counts("net") == (2, 1)
    (taken,) = store.take_over("net", store.register_owner(), 3600.0)
    assert (taken.number, taken.key) == (1, "other")
    (nxt,), _ = store.claim("net", taken.owner, [("third", {})], 3)
    assert nxt.number == 2


def test_a_trial_of_several_networks_keeps_each_network(url: str) -> None:
    """``NetworkTrialRecord.networks`` round-trips (numpy numbers made plain); a single
    network's trial stores exactly what it stored before: no ``networks`` in its JSON."""
    import json
    import sqlite3

    from vtatune.store import NetworkResult

    store = Store(url)
    _study(store)
    pick = LayerResult("x", "w2", 3, key="k2", knobs={"tile_h": 8}, cycles=100_000,
                       seconds=1e-3, bound_cycles=90_000.0, trials=6,
                       accelerator_seconds=0.8e-3, host_seconds=0.2e-3)
    nets = (NetworkResult("a", 3.0, cycles=400_000, seconds=np.float64(4e-3),
                          accelerator_seconds=3.2e-3, host_seconds=0.8e-3,
                          bound_cycles=360_000.0, layers=(pick,)),
            NetworkResult("b", 1.0, layers=(LayerResult("fc", "w9", 1, status="invalid"),)))
    store.save_network_trial(_trial(0, networks=nets))
    store.save_network_trial(_trial(1))
    got = store.network_trials("net")
    assert got[0].networks == (NetworkResult("a", 3.0, cycles=400_000, seconds=4e-3,
                                             accelerator_seconds=3.2e-3,
                                             host_seconds=0.8e-3, bound_cycles=360_000.0,
                                             layers=(pick,)), nets[1])
    assert got[1].networks is None
    if url.startswith("sqlite"):
        rows = sqlite3.connect(url.removeprefix("sqlite:///")).execute(
            "select number, layers from vt_network_trials order by number").fetchall()
        assert "networks" in json.loads(rows[0][1])
        assert list(json.loads(rows[1][1])) == ["layers"]
