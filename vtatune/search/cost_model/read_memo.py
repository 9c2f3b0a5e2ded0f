"""A memo for a pure function of a knob dict that reads only some of its knobs.

An operator's analytic DRAM traffic reads a few knobs (conv2d's: the output tiles, not the
reduction tile or the threads), so the ~10^4-10^5 schedules of a knob space have far fewer
distinct traffic values than schedules. ``ReadMemo`` learns which knobs a function reads
without being told: on a miss it calls the function once on the dict (the value it returns)
and once on a ``_Recorder`` (the knobs it reads, in order, and their values), and stores
the value under that read sequence in a trie. A later dict that agrees on every knob the
function read along the way gets the stored value: a deterministic function that reads its
argument only by subscription computes the same thing on both.

Anything else -- iterating the dict, asking its length, reading a knob it lacks, a value
that differs between the dict and the recorder, two runs that read different knobs after
the same reads -- turns the memo off for good (every later call is a plain call). So does a
low hit rate: a function that reads every knob gains nothing and would pay the recording.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

#: Calls after which a memo that served fewer than ``MIN_HIT_RATE`` of them stops.
TRIAL_CALLS = 512
MIN_HIT_RATE = 0.5


class _Refused(Exception):
    """The function used its argument other than by subscription of a present knob."""


class _Recorder(Mapping[str, int]):
    """A read-only view of a knob dict that records every knob read, in order."""

    def __init__(self, knobs: Mapping[str, int]):
        self._knobs = knobs
        self.reads: list[tuple[str, int]] = []

    def __getitem__(self, key: str) -> int:
        if key not in self._knobs:
            raise _Refused(key)
        v = self._knobs[key]
        self.reads.append((key, v))
        return v

    def __iter__(self) -> Iterator[str]:
        raise _Refused("iteration")

    def __len__(self) -> int:
        raise _Refused("len")


class ReadMemo:
    """``fn(knobs)`` memoized by the knobs it reads (see the module docstring)."""

    def __init__(self, fn: Callable[[dict[str, int]], Any]):
        self.fn = fn
        self.on = True
        self.calls = self.hits = 0
        # a node: (knob read next, {value: node}) or (None, the value)
        self._root: tuple[str | None, Any] | None = None

    def __call__(self, knobs: dict[str, int]) -> Any:
        if not self.on:
            return self.fn(knobs)
        self.calls += 1
        node = self._root
        while node is not None:
            key, nxt = node
            if key is None:
                self.hits += 1
                return nxt
            v = knobs.get(key)
            node = nxt.get(v) if key in knobs else None
        value = self.fn(knobs)
        self._learn(knobs, value)
        if self.calls >= TRIAL_CALLS and self.hits < MIN_HIT_RATE * self.calls:
            self.off()
        return value

    def off(self) -> None:
        self.on = False
        self._root = None

    def _learn(self, knobs: dict[str, int], value: Any) -> None:
        rec = _Recorder(knobs)
        try:
            again = self.fn(rec)  # type: ignore[arg-type]
        except _Refused:
            self.off()
            return
        if type(again) is not type(value) or again != value:
            self.off()
            return
        reads = rec.reads
        if self._root is None:
            self._root = self._path(reads, value)
            return
        node = self._root
        for i, (key, v) in enumerate(reads):
            k, nxt = node
            if k != key:  # another knob read after the same reads: not deterministic here
                self.off()
                return
            child = nxt.get(v)
            if child is None:
                nxt[v] = self._path(reads[i + 1:], value)
                return
            node = child
        self.off()  # the same reads stored already, yet the walk missed: refuse to guess

    @staticmethod
    def _path(reads: list[tuple[str, int]], value: Any) -> tuple[str | None, Any]:
        node: tuple[str | None, Any] = (None, value)
        for key, v in reversed(reads):
            node = (key, {v: node})
        return node
