"""The sampler contract every search strategy follows.

A sampler proposes parameter sets of a ``SearchSpace`` (``space.param_space()``: categorical
hardware parameters and thread counts, floats in [0, 1] for tile-knob log-positions) and is
told what each one gave. It never sees the store or a database session: the search loop stores
results and calls ``tell`` (STYLE: the strategy only proposes and is notified).

Objectives are minimized. An infeasible result (hardware that cannot be built or does not fit
the board, SRAM overflow, failed compile) comes as ``Observation(values=None, violation>0)``:
a constraint violation, never a made-up latency.

Samplers are not thread-safe; the search loop owns one per study and calls it from one thread.
``ask`` must be deterministic for a given seed and sequence of ``tell`` calls.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtatune.statuses import Status

if TYPE_CHECKING:
    from vtatune.search.space import SearchSpace

Params = dict[str, Any]


@dataclass(frozen=True)
class Observation:
    """What evaluating one proposal gave.

    ``values``: objective values to minimize (``(cycles,)`` or ``(area_mm2, cycles)``), None
    when infeasible. ``violation``: 0 when feasible, else a positive measure of how far the
    candidate is from feasible (e.g. overflowing bytes / capacity; 1.0 when unknown).
    """

    values: tuple[float, ...] | None
    violation: float = 0.0
    status: str = Status.OK

    @property
    def feasible(self) -> bool:
        return self.values is not None and self.violation <= 0


class Sampler(ABC):
    """Proposes parameter sets; learns from observations."""

    #: Name used by ``--sampler``.
    name: str = ""
    #: Whether the search loop warm-starts it with the workload's stored results of other
    #: studies (``warm_start``); a resumed study replays its own trials either way.
    warm_starts: bool = True

    @classmethod
    def check_available(cls) -> None:
        """``UserError`` (one line saying how to install it) when a library this sampler
        needs is not installed; checked before a search prints or stores anything."""
        return None  # the default samplers need only the default install

    def __init__(self, space: SearchSpace, n_objectives: int, seed: int | None = None):
        self.space = space
        self.n_objectives = n_objectives
        self.seed = seed

    @abstractmethod
    def ask(self, n: int) -> list[Params]:
        """Up to ``n`` new proposals (fewer only when the space is exhausted)."""

    @abstractmethod
    def tell(self, params: Params, obs: Observation) -> None:
        """The result of a proposal returned by ``ask`` (or replayed by ``warm_start``)."""

    def discard(self, params: Params) -> None:  # noqa: B027 - optional hook
        """Drop a proposal from ``ask`` that will not be evaluated (its candidate was seen).

        The sampler must not count it as an observation; samplers that track pending
        proposals release it here.
        """

    def warm_start(self, history: list[tuple[Params, Observation]]) -> None:
        """Learn from earlier results (same workload, possibly other studies)."""
        for params, obs in history:
            self.tell(params, obs)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (e.g. an Optuna storage)."""
