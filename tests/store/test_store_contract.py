"""The store's contract, run on every backend (SQLite; PostgreSQL when configured).

Round trips of the records, dedupe by key across studies, resume of trial numbering, study
bookkeeping, and the errors a caller can make.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
import pytest
from conftest import WORKLOAD

from vtatune.store import CandidateRecord, Store, StoreError
from vtatune.store import engine as store_mod

MakeRecord = Callable[..., CandidateRecord]
SPACE = {"name": "conv2d", "hardware": {"LOG_BLOCK_IN": [3, 4, 5]}, "knobs": ["tile_h"]}


def open_study(store: Store, name: str = "s1", workload: str = WORKLOAD, **kw: object):
    args = dict(workload=workload, space=SPACE, sampler="tpe", objective="area-latency",
                board="pynq-z1", seed=7)
    args.update(kw)
    return store.create_or_load_study(name, **args)  # type: ignore[arg-type]


def test_candidate_round_trip(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    rec = make_record(3)
    store.save(rec)
    got = store.lookup(rec.key)
    assert got is not None and got.created_at is not None
    assert got.created_at.tzinfo is not None
    assert got == CandidateRecord(**{**rec.__dict__, "created_at": got.created_at})
    assert got.feasible and got.hw["LOG_BLOCK_IN"] == 4 and got.resources["fits"] is True
    assert store.lookup("no|such|key") is None


def test_seconds_split_round_trip(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    rec = make_record(4, seconds=1.25e-3, accelerator_seconds=1.0e-3, host_seconds=0.25e-3)
    store.save(rec)
    got = store.lookup(rec.key)
    assert got is not None
    assert (got.seconds, got.accelerator_seconds, got.host_seconds) == (1.25e-3, 1e-3, 0.25e-3)


def test_infeasible_round_trip(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    rec = make_record(1, status="invalid", reason="sram: acc buffer overflows by 4096 bytes",
                      counters={}, bounds={}, resources={}, compile_ms=None, sim_ms=None)
    store.save(rec)
    got = store.lookup(rec.key)
    assert got is not None and not got.feasible
    assert (got.status, got.reason, got.cycles, got.area_mm2, got.counters) == (
        "invalid", rec.reason, None, None, {})


def test_numpy_values_are_stored_as_plain_json(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    rec = make_record(0, cycles=np.int64(123_456), seconds=np.float64(1.5e-3),
                      counters={"gemm": np.int64(7), "per_queue": np.array([1, 2])},
                      knobs={"tile_h": np.int64(7)})
    store.save(rec)
    got = store.lookup(rec.key)
    assert got is not None
    assert got.cycles == 123_456 and type(got.cycles) is int
    assert got.counters == {"gemm": 7, "per_queue": [1, 2]} and got.knobs == {"tile_h": 7}


def test_save_twice_is_one_row_and_updates(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    first = make_record(5, status="timeout", reason="timed out after 30 s")
    store.save(first)
    assert store.lookup(first.key) is None  # a transient outcome is never served
    created = store.history(WORKLOAD)[0].created_at
    store.save(first)
    store.save(make_record(5))  # re-evaluated with a longer timeout: now ok
    assert len(store.history(WORKLOAD)) == 1
    got = store.lookup(first.key)
    assert got is not None and got.status == "ok" and got.cycles == 100_000 + 37 * 5
    assert got.created_at == created  # first seen keeps its time


def test_a_transient_outcome_never_replaces_a_deterministic_one(url: str,
                                                               make_record: MakeRecord) -> None:
    store = Store(url)
    store.save(make_record(3))
    store.save(make_record(3, status="failed", reason="worker crashed"))
    got = store.lookup(make_record(3).key)
    assert got is not None and got.status == "ok"
    assert [r.status for r in store.history(WORKLOAD)] == ["ok"]


def test_only_the_same_context_is_served(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    store.save(make_record(1, context="ctxpynq", board="pynq-z1"))
    store.save(make_record(1, context="ctxzcu", board="zcu104", cycles=92_303))
    key = make_record(1).key
    assert store.lookup(key, "ctxpynq").board == "pynq-z1"  # type: ignore[union-attr]
    assert store.lookup(key, "ctxzcu").cycles == 92_303  # type: ignore[union-attr]
    assert store.lookup(key, "other") is None and store.lookup(key) is None
    assert set(store.lookup_many([key], "ctxzcu")) == {key}


def test_lookup_finds_a_candidate_across_studies(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    open_study(store, "a")
    open_study(store, "b", sampler="xgb")
    rec = make_record(2)
    store.save(rec)
    store.add_trial("a", 0, rec.key, "tpe", {"u_tile_h": 0.25}, cached=False)
    # study b proposes the same candidate: served from the store, not evaluated again
    hit = Store(url).lookup(rec.key)
    assert hit is not None and hit.cycles == rec.cycles
    store.add_trial("b", 0, hit.key, "xgb", {"u_tile_h": 0.3}, cached=True)
    assert len(store.history(WORKLOAD)) == 1
    a, b = store.trials("a"), store.trials("b")
    assert (a[0].cached, b[0].cached) == (False, True)
    assert a[0].candidate == b[0].candidate


def test_lookup_many(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    recs = [make_record(i) for i in range(1200)]  # more than one IN (...) chunk
    store.save_many(recs)
    keys = [r.key for r in recs[::2]] + ["missing|key"]
    found = store.lookup_many(keys)
    assert set(found) == {r.key for r in recs[::2]}
    assert found[recs[4].key].cycles == recs[4].cycles
    assert store.lookup_many([]) == {}


def test_history_is_per_workload_across_studies(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    open_study(store, "a")
    open_study(store, "other", workload="dense:1x512x1000")
    for i in range(4):
        store.save(make_record(i))
        store.add_trial("a", i, make_record(i).key, "tpe", {}, False)
    store.save(make_record(0, workload="dense:1x512x1000"))
    store.save(make_record(9, status="no_fit", reason="bram36 over"))  # stored, no trial
    hist = store.history(WORKLOAD)
    assert [r.key for r in hist] == [make_record(i).key for i in (0, 1, 2, 3, 9)]
    assert [r.status for r in hist][-1] == "no_fit"
    assert len(store.history("dense:1x512x1000")) == 1 and store.history("nothing") == []


def test_study_create_and_reopen(url: str) -> None:
    store = Store(url)
    info = open_study(store, "s1")
    assert (info.name, info.workload, info.sampler, info.objective, info.board, info.seed) == (
        "s1", WORKLOAD, "tpe", "area-latency", "pynq-z1", 7)
    assert info.space == SPACE and info.n_trials == 0 and info.n_feasible == 0
    assert info.optuna_study_name == "s1" and info.best_cycles is None
    assert isinstance(info.created_at, datetime) and info.created_at.tzinfo == UTC
    again = open_study(Store(url), "s1", sampler="xgb", seed=8)
    assert again.created_at == info.created_at and again.seed == 7  # continues the study
    assert again.sampler == "xgb"  # the sampler used last
    assert store.study("s1") == again
    named = open_study(store, "s2", optuna_study_name="vtatune/s2")
    assert named.optuna_study_name == "vtatune/s2"
    assert [s.name for s in store.studies()] == ["s1", "s2"]


def test_reopen_with_another_workload_or_objective_fails(url: str) -> None:
    store = Store(url)
    open_study(store, "s1")
    with pytest.raises(StoreError, match=r"study 's1' is for workload conv2d:.* not dense:1x2x3"):
        open_study(store, "s1", workload="dense:1x2x3")
    with pytest.raises(StoreError, match="objective area-latency, not latency"):
        open_study(store, "s1", objective="latency")


def test_unknown_study_lists_known_ones(url: str) -> None:
    store = Store(url)
    with pytest.raises(StoreError, match=r"no study 'x' in .* \(studies: none yet\)"):
        store.study("x")
    open_study(store, "alpha")
    open_study(store, "beta")
    for call in (store.study, store.trials, store.next_trial_number):
        with pytest.raises(StoreError, match=r"no study 'x' .*\(studies: alpha, beta\)"):
            call("x")


def test_resume_continues_trial_numbers(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    open_study(store)
    assert store.next_trial_number("s1") == 0
    for n in range(5):
        store.save(make_record(n))
        store.add_trial("s1", n, make_record(n).key, "tpe", {"n": n}, False)
    store.close()
    # a new process (a rerun of `vtatune search --study s1`) resumes after trial 4
    resumed = Store(url)
    info = open_study(resumed)
    assert info.n_trials == 5
    start = resumed.next_trial_number("s1")
    assert start == 5
    for n in range(start, start + 3):
        resumed.save(make_record(n))
        resumed.add_trial("s1", n, make_record(n).key, "tpe", {"n": n}, False)
    assert [t.number for t in resumed.trials("s1")] == list(range(8))
    assert resumed.next_trial_number("s1") == 8


def test_add_trial_again_replaces_it(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    open_study(store)
    store.save_many([make_record(0), make_record(1)])
    store.add_trial("s1", 0, make_record(0).key, "tpe", {"a": 1}, False)
    store.add_trial("s1", 0, make_record(1).key, "tpe", {"a": 2}, True)
    (t,) = store.trials("s1")
    assert (t.candidate.key, t.params, t.cached) == (make_record(1).key, {"a": 2}, True)


def test_add_trial_needs_a_saved_candidate(url: str) -> None:
    store = Store(url)
    open_study(store)
    with pytest.raises(ValueError, match="not in the store"):
        store.add_trial("s1", 0, "never|saved|key", "tpe", {}, False)
    assert store.trials("s1") == []


def test_study_statistics(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    open_study(store, "a")
    open_study(store, "b")
    statuses = ["ok", "invalid", "ok", "no_fit", "failed", "ok"]
    for n, status in enumerate(statuses):
        rec = make_record(n, status=status)
        store.save(rec)
        store.add_trial("a", n, rec.key, "tpe", {}, False)
    store.add_trial("a", 6, make_record(0).key, "tpe", {}, True)  # a cached repeat counts
    infos = {s.name: s for s in store.studies()}
    assert (infos["a"].n_trials, infos["a"].n_feasible, infos["a"].best_cycles) == (7, 4, 100_000)
    assert (infos["b"].n_trials, infos["b"].n_feasible, infos["b"].best_cycles) == (0, 0, None)
    assert store.study("a") == infos["a"]


def test_trial_records(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    open_study(store)
    for n in (2, 0, 1):  # workers finish out of order
        store.save(make_record(n))
        store.add_trial("s1", n, make_record(n).key, "random", {"u_tile_h": n / 4}, n == 1)
    trials = store.trials("s1")
    assert [(t.study, t.number, t.sampler, t.cached) for t in trials] == [
        ("s1", 0, "random", False), ("s1", 1, "random", True), ("s1", 2, "random", False)]
    assert trials[2].params == {"u_tile_h": 0.5} and trials[2].candidate.key == make_record(2).key
    assert all(t.created_at is not None and t.created_at.tzinfo for t in trials)


def test_store_pickles_for_worker_processes(url: str, make_record: MakeRecord) -> None:
    store = Store(url)
    store.save(make_record(0))
    clone = pickle.loads(pickle.dumps(store))
    assert clone.url == store.url and clone.lookup(make_record(0).key) is not None
    clone.save(make_record(1))
    assert store.lookup(make_record(1).key) is not None


def test_generic_upsert_path(url: str, make_record: MakeRecord,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Backends without INSERT ... ON CONFLICT get the same semantics (look up, then write)."""
    monkeypatch.setattr(store_mod, "_UPSERT_DIALECTS", ())
    test_save_twice_is_one_row_and_updates(url, make_record)
    test_add_trial_again_replaces_it(url.replace("vtatune.sqlite", "second.sqlite"), make_record)


def test_an_owner_declared_dead_is_registered_again_by_its_heartbeat(
        url: str, make_record: MakeRecord) -> None:
    # A stalled process whose row another process deleted (its slots taken over) comes back
    # with its next heartbeat: the slots it claims afterwards are not taken from it.
    store = Store(url)
    open_study(store)
    a, b = store.register_owner(), store.register_owner()
    (first,), _ = store.claim("s1", a, [(make_record(0).key, {})], 10)
    store.retire_owner(a)  # what take_over does to an owner it finds dead
    assert [s.number for s in store.take_over("s1", b, 3600.0)] == [first.number]
    store.heartbeat(a)
    (second,), _ = store.claim("s1", a, [(make_record(1).key, {})], 10)
    assert store.take_over("s1", b, 3600.0) == []
    store.heartbeat(a)  # an owner with a row only refreshes it
    assert store.take_over("s1", b, 3600.0) == [] and second.owner == a


def test_take_over_releases_dead_slots_past_the_limit(url: str, make_record: MakeRecord
                                                      ) -> None:
    """A dead process that queued work ahead held more slots than a resumed search wants:
    those past the limit are released (highest numbers first), the rest taken over."""
    store = Store(url)
    open_study(store)
    a, b = store.register_owner(), store.register_owner()
    slots, _ = store.claim("s1", a, [(make_record(i).key, {}) for i in range(5)], 10)
    store.complete(slots[0], make_record(0), "random", False, "")
    store.retire_owner(a)  # dead
    taken = store.take_over("s1", b, 3600.0, limit=3)  # 1 done + 2 to finish
    assert [s.number for s in taken] == [slots[1].number, slots[2].number]
    assert store.slot_counts("s1") == (3, 2)
    # a released slot's candidate may be claimed again (its number too: it holds no trial)
    (again,), refused = store.claim("s1", b, [(make_record(4).key, {})], 4)
    assert not refused and again.number == slots[3].number

