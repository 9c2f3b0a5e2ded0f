"""Compile once per distinct program: lowered programs kept by ``ProgramKey``.

Joint hardware x schedule searches propose many candidates that differ only in buffer sizes;
they share one lowered program (see ``compiler.compile``). ``ProgramCache.compile`` lowers a
program the first time its key is seen and verifies it against every candidate's own
hardware, so a reused compile gives exactly the ``CompileResult`` a fresh one gives (its
``stage_ms`` then holds the verification only, and ``reused`` is set).

One cache lives in each process (``default_cache``): the search's worker processes each keep
their own (a program lowered by one worker is lowered again by another that meets it).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vtatune.compiler.compile import (
    LoweredProgram,
    ProgramKey,
    lower_program,
    program_key,
    verify_program,
)
from vtatune.compiler.result import CompileResult
from vtatune.hardware.config import HwConfig
from vtatune.schedules.knobs import Knobs
from vtatune.workloads.base import DEFAULT_SHIFT, Workload

if TYPE_CHECKING:
    from vtatune.passes.user import PassSet

#: Lowered programs kept per process (a C2 program is ~0.1-1 MB of TIR).
DEFAULT_SIZE = 256


@dataclass(frozen=True)
class CacheStats:
    """Lookups of a ``ProgramCache``: ``hits`` reused a lowered program, ``misses`` lowered."""

    hits: int
    misses: int
    size: int

    @property
    def hit_rate(self) -> float:
        n = self.hits + self.misses
        return self.hits / n if n else 0.0


class ProgramCache:
    """Least-recently-used lowered programs by ``ProgramKey`` (one process, one thread)."""

    def __init__(self, size: int = DEFAULT_SIZE):
        self.size = size
        self._programs: OrderedDict[ProgramKey, LoweredProgram] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def lower(self, wl: Workload, hw: HwConfig, knobs: Knobs, shift: int = DEFAULT_SHIFT,
              passes: PassSet | None = None) -> tuple[LoweredProgram, bool]:
        """The lowered program of a candidate and whether it was already here."""
        key = program_key(wl, hw, knobs, shift, passes)
        low = self._programs.get(key)
        if low is not None:
            self._programs.move_to_end(key)
            self.hits += 1
            return low, True
        self.misses += 1
        low = lower_program(key)
        self._programs[key] = low
        if len(self._programs) > self.size:
            self._programs.popitem(last=False)
        return low, False

    def compile(self, wl: Workload, hw: HwConfig, knobs: Knobs, shift: int = DEFAULT_SHIFT,
                passes: PassSet | None = None) -> tuple[CompileResult, LoweredProgram]:
        """``compile_candidate(wl, hw, knobs, shift, passes)``, lowering only programs not
        seen yet."""
        low, reused = self.lower(wl, hw, knobs, shift, passes)
        return verify_program(low, hw, reused=reused), low

    def stats(self) -> CacheStats:
        return CacheStats(self.hits, self.misses, len(self._programs))

    def clear(self) -> None:
        self._programs.clear()
        self.hits = self.misses = 0


_DEFAULT = ProgramCache()


def default_cache() -> ProgramCache:
    """This process's cache."""
    return _DEFAULT
