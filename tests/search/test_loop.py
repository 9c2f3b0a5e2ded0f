"""The study loop both runners share (``search.loop``): proposals screened, deduplicated and
completed from unseen points, slots claimed against other processes, the callbacks' order."""

from __future__ import annotations

import itertools

import pytest

from vtatune.search import loop as lp
from vtatune.search.samplers import make
from vtatune.search.screen import Screen
from vtatune.store import Store


@pytest.fixture
def core(tiny, tmp_path):
    """A StudyLoop over the tiny network's hardware space (8 designs, all passing the
    screen) with a grid sampler, on a fresh SQLite study."""
    hw_space = tiny.hw_space
    store = Store(f"sqlite:///{tmp_path / 'l.sqlite'}")
    store.create_or_load_study("s", "network:tiny", {}, "grid", "area-latency", tiny.board, 0)
    kinds = hw_space.param_space()
    every = [dict(zip(kinds, combo, strict=True))
             for combo in itertools.product(*(v for _, v in kinds.values()))]

    def key_of(params):
        hw = hw_space.hardware(params)
        return hw.key, hw

    def unseen(taken):
        left = [p for p in every if not taken(key_of(p)[0])]
        return left[:1]

    class Points:  # only what propose and claim ask of an evaluator
        smp, screen = make("grid", hw_space, 2, 0), Screen(hw_space)

    Points.key_of, Points.unseen = staticmethod(key_of), staticmethod(unseen)
    progress = lp.Progress(total=8)
    c = lp.StudyLoop(store, "s", store.register_owner(), 60.0, Points(), progress)  # type: ignore[arg-type]
    c.every = [key_of(p)[0] for p in every]
    return c


def test_proposals_are_new_distinct_and_end_when_the_space_does(core) -> None:
    assert len(set(core.every)) == 8
    taken: set[str] = set()
    got = []
    while not core.exhausted:
        batch = core.propose(3, taken.__contains__)
        assert len({k for k, _, _ in batch}) == len(batch)
        taken.update(k for k, _, _ in batch)
        got += batch
    assert sorted(k for k, _, _ in got) == sorted(core.every)  # each design once, then none
    assert core.propose(1, taken.__contains__) == []


def test_a_held_key_is_a_repeat_and_a_full_study_says_so(core) -> None:
    store = core.store
    other = store.register_owner()
    first = core.propose(2, lambda key: False)
    store.claim("s", other, [(first[0][0], first[0][1])], 8)  # another process has it
    granted, refused, full = core.claim(first, 8)
    assert [s.key for s, _ in granted] == [first[1][0]] and refused == {first[0][0]}
    assert core.progress.repeats == 1 and not full
    more = core.propose(1, {first[0][0], first[1][0]}.__contains__)
    granted, refused, full = core.claim(more, 2)  # the study holds its 2 slots already
    assert granted == [] and refused == set() and full


def test_callbacks_run_in_order_and_stop_at_a_trial_another_process_stored(core) -> None:
    from vtatune.search.samplers import Observation

    (key, params, _), = core.propose(1, lambda key: False)
    (slot, _), = core.claim([(key, params, None)], 8)[0]
    calls = []
    stored = iter([False, True])

    class Store(lp.Callback):
        def trial(self, loop, outcome):
            calls.append("store")
            return next(stored)

    class Count(lp.Callback):
        def trial(self, loop, outcome):
            calls.append("count")

    core.callbacks = [Store(), lp.TellSampler(), Count()]
    told = []
    core.smp.tell = lambda p, obs: told.append(p)
    rec = type("Rec", (), {"status": "ok"})()
    out = lp.Outcome(slot.number, key, params, rec, Observation((1.0, 2.0), 0.0, "ok"),
                     slot=slot)
    assert not core.finish(out)  # another process stored it: nothing after the store
    assert calls == ["store"] and told == [] and slot.number not in core.told
    assert core.finish(out)
    assert calls == ["store", "store", "count"] and told == [params]
    assert slot.number in core.told
