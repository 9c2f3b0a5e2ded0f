"""ReadMemo: a memo keyed by the knobs a function reads gives what the function gives."""

from __future__ import annotations

import itertools

from vtatune.schedules.knobs import split_sizes
from vtatune.search.cost_model.read_memo import TRIAL_CALLS, ReadMemo

AXES = {"a": (1, 2, 3, 5), "b": (1, 4, 7), "c": (1, 2), "d": (3, 6, 9, 12)}


def _all() -> list[dict[str, int]]:
    return [dict(zip(AXES, v, strict=True)) for v in itertools.product(*AXES.values())]


def _check(fn) -> ReadMemo:
    memo = ReadMemo(fn)
    for _ in range(2):  # the second pass is served from the memo where it is on
        for k in _all():
            assert memo(k) == fn(k), k
    return memo


def test_a_function_of_some_knobs_is_served_by_them() -> None:
    def tiles(k):  # reads a and b only: 12 distinct values of 96 dicts
        return len(split_sizes(56, k["a"])) * sum(split_sizes(14, k["b"]))

    memo = _check(tiles)
    assert memo.on and memo.hits == 2 * len(_all()) - 12


def test_reads_that_depend_on_values_read_before() -> None:
    def branchy(k):  # reads d only when a > 2, c only when b == 4
        x = k["a"] * (k["d"] if k["a"] > 2 else 1)
        return x + (k["c"] if k["b"] == 4 else -k["b"])

    memo = _check(branchy)
    assert memo.on and memo.hits > len(_all())


def test_a_constant_and_a_function_of_every_knob() -> None:
    assert _check(lambda k: 7).hits == 2 * len(_all()) - 1  # (the first call learns)
    def every(k):
        return k["a"] + 10 * k["b"] + 100 * k["c"] + 1000 * k["d"]

    memo = ReadMemo(every)
    space = [dict(zip("abcd", v, strict=True)) for v in itertools.product(range(6), repeat=4)]
    assert len(space) > TRIAL_CALLS
    for k in space:  # each schedule once, as a table asks: nothing to serve
        assert memo(k) == every(k)
    assert not memo.on  # it stopped recording after TRIAL_CALLS calls: plain calls then


def test_other_uses_of_the_dict_turn_it_off() -> None:
    for fn in (lambda k: sum(k.values()), lambda k: len(k), lambda k: k.get("z", 0) + k["a"],
               lambda k: sorted(k)[0]):
        memo = _check(fn)
        assert not memo.on and memo.hits == 0
