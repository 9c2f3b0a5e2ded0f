"""Tune every layer of a network on one hardware design, within a budget of layer evaluations.

``DesignTuner`` hands out layer candidates (``next``) and learns their results (``tell``); the
search loop (``networks.runner``) sends them to the worker pool and the store, so the tuner
never sees either. Each distinct layer shape (*unit*) is tuned once; the network runs it
``count`` times.

**Budget.** ``budget`` layer evaluations per design (served-from-the-store ones included).
Every unit first gets ``min_per_unit``; after that the next evaluation goes to the unit whose
share of the budget lags most behind its share of the design's current network time
(count x its best latency so far), so the budget follows where the network's time goes. A
unit without any feasible schedule yet goes first; a unit whose candidates are all evaluated
gets no more.

**Proposals** come from each unit's ``LayerSampler`` (the ``[inner] sampler``, an open
family as the outer samplers: ``search.samplers.layer_class``). With ``xgb`` a unit's
candidates (its whole knob space on the design minus the ones whose analytic SRAM footprint
overflows) are ranked by the shared
``NetworkCostModel`` -- re-ranked when the model is refit -- and taken best first, with a
share ``eps`` of uniformly random picks so the model keeps seeing what it does not favour.
Before the model is ready (too few feasible results in the whole study) the first proposal
of a unit is the template's suggestion (least analytic DRAM traffic that fits) and each later
one the next in the analytic order of its candidates (``cost_model.analytic.order``), or a
random one (``INITIAL_EPS``). ``random``
proposes uniformly at random throughout (a baseline).
"""

from __future__ import annotations

import statistics
from abc import abstractmethod
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from vtatune import schedules
from vtatune.networks.network import Network, Unit
from vtatune.search.cost_model.analytic import INITIAL_EPS, order
from vtatune.search.cost_model.features import Point
from vtatune.search.samplers import Observation, Params, Sampler
from vtatune.search.space import Candidate, SearchSpace
from vtatune.simulator import bounds
from vtatune.statuses import Status
from vtatune.store.records import CandidateRecord, LayerResult, NetworkResult

if TYPE_CHECKING:
    from vtatune.hardware.boards import Board
    from vtatune.hardware.config import HwConfig
    from vtatune.networks.cost_model import CandidatePool, NetworkCostModel, NetworkFeatures
    from vtatune.networks.space import NetworkSpace

#: Share of random proposals once the cost model ranks them.
EPS = 0.1
#: Evaluations a unit with no feasible schedule may still get once the budget is spent.
UNSOLVED_EXTRA = 8
#: Latency / lower bound assumed for a unit with no feasible result yet (when others have
#: none either); otherwise the median of the units that have one.
DEFAULT_INEFFICIENCY = 2.0


@dataclass(frozen=True)
class NetworkTime:
    """A network's time on one design: ``cycles`` of the accelerator; ``seconds`` end to end
    (one call per layer run: ``accelerator_seconds + host_seconds``); ``host_seconds`` is None
    when a layer's record predates the split."""

    cycles: int
    seconds: float
    accelerator_seconds: float
    host_seconds: float | None
    #: energy per inference (joules): count-weighted sums of the picks' energies, None when
    #: a pick has none (a record stored before energy)
    accelerator_energy_j: float | None = None
    board_energy_j: float | None = None


@dataclass(frozen=True)
class Request:
    """One layer candidate the tuner wants measured."""

    sig: str
    candidate: Candidate
    point: Point


class LayerSampler(Sampler):
    """Proposes schedules of one unit on one design, from its candidates on that design (the
    ``Sampler`` contract; the tuner asks through ``propose``, which gives the cost model's
    point of the proposal, and the shared ``NetworkCostModel`` learns every result, so
    ``tell`` has nothing to add). Subclasses choose which remaining candidate comes next.

    A tuner's units share its random generator: one stream per design, whatever the order.
    """

    warm_starts = False

    def __init__(self, space: SearchSpace, n_objectives: int = 1, seed: int | None = None, *,
                 unit: Unit, features: NetworkFeatures, model: NetworkCostModel,
                 hw: HwConfig, hw_values: dict[str, int], board: Board,
                 rng: np.random.Generator, issued: set[Hashable]):
        super().__init__(space, n_objectives, seed)
        self.unit = unit
        self.features = features
        self.model = model
        self.hw = hw
        self.hw_values = hw_values
        self.board = board
        self.rng = rng
        self.issued = issued  # the unit's issued candidates (the tuner adds to it)
        #: candidates not yet issued, in proposal order (``NetworkFeatures.pool``)
        self.pool: CandidatePool | list[Point] | None = None

    @property
    def exhausted(self) -> bool:
        return self.pool is not None and not self.pool

    def has_more(self) -> bool:
        self._fill()
        return bool(self.pool)

    def propose(self) -> Point | None:
        """The next candidate (taken from the pool), None when none is left."""
        self._fill()
        if not self.pool:
            return None
        i = self._index()  # may reorder the pool: pop from the list it leaves
        return self.pool.pop(i)

    def ask(self, n: int) -> list[Params]:
        out: list[Params] = []
        while len(out) < n and (p := self.propose()) is not None:
            out.append(p.params)
        return out

    def tell(self, params: Params, obs: Observation) -> None:
        """Nothing: the network's cost model learns every result (``NetworkCostModel``)."""

    def drop(self, key: Hashable) -> None:
        """A candidate issued before (a replayed result): never propose it."""
        from vtatune.networks.cost_model import CandidatePool

        if isinstance(self.pool, CandidatePool):
            self.pool = self.pool.without({key})
        elif self.pool is not None:
            self.pool = [p for p in self.pool if p.key != key]

    def forget(self) -> None:
        """Free the pool (the design is finished)."""
        self.pool = [] if self.pool is not None else None

    def _fill(self) -> None:
        if self.pool is None:
            self.pool = self.features.pool(self.unit.signature,
                                           self.hw_values).without(self.issued)

    @abstractmethod
    def _index(self) -> int:
        """Index of the next proposal in the (non-empty) pool."""


class RandomLayerSampler(LayerSampler):
    """``random``: uniformly at random throughout (a baseline)."""

    name = "random"

    def _index(self) -> int:
        assert self.pool
        return int(self.rng.integers(len(self.pool)))


class RankedLayerSampler(LayerSampler):
    """``xgb``: the network cost model's ranking with an ``EPS`` random share; before the
    model is ready the template's suggestion first, then the analytic initial design (the
    module docstring)."""

    name = "xgb"

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.ranked_with = -1  # model version of the pool's order (-1: knob-space order)

    def _index(self) -> int:
        assert self.pool
        if self.model.ready:
            if self.ranked_with != self.model.version:
                self.pool = self.model.rank(self.unit.signature, self.pool)
                self.ranked_with = self.model.version
            return int(self.rng.integers(len(self.pool))) if self.rng.random() < EPS else 0
        if not self.issued:
            return self._suggestion_index()
        return self._analytic_index()

    def _analytic_index(self) -> int:
        """Before the model is ready: the unit's pool in the analytic order
        (``cost_model.analytic.order``, once: ``ranked_with`` 0, the version before the first
        fit), best first, or (``INITIAL_EPS`` of the time) a random candidate. Not the best of
        ``INITIAL_POOL`` random ones, as the per-layer sampler does: a unit's pool here is its
        whole knob space on the design (thousands of settings), where the best of 32 random
        draws lands about 1/33 of the way down the order, past the few near-optimal ones."""

        from vtatune.networks.cost_model import CandidatePool

        pool = self.pool or []
        if self.ranked_with != 0:
            knobs = [p.knobs or {} for p in pool]
            at = order(self.unit.workload, self.hw, knobs, self.board.name)
            self.pool = pool = (pool.reordered(np.asarray(at, dtype=np.int64))
                                if isinstance(pool, CandidatePool) else [pool[i] for i in at])
            self.ranked_with = 0
        return int(self.rng.integers(len(pool))) if self.rng.random() < INITIAL_EPS else 0

    def _suggestion_index(self) -> int:

        from vtatune.networks.cost_model import CandidatePool

        want = schedules.suggest(self.unit.workload, self.hw, self.space.stock_vta)
        if isinstance(self.pool, CandidatePool):
            at = self.pool.index_of(want)
            if at is not None:
                return at
        else:
            for i, p in enumerate(self.pool or []):
                if p.knobs == want:
                    return i
        return int(self.rng.integers(len(self.pool or [0])))


@dataclass
class _UnitState:
    unit: Unit
    space: SearchSpace
    bound_cycles: float
    sampler: LayerSampler
    issued: set[Hashable]
    inflight: int = 0
    records: list[CandidateRecord] = field(default_factory=list)
    best: CandidateRecord | None = None

    @property
    def pool(self) -> list[Point] | None:
        """Candidates not yet issued (the sampler's)."""
        return self.sampler.pool

    @property
    def exhausted(self) -> bool:
        return self.sampler.exhausted


class DesignTuner:
    """Tunes every unit of ``space`` on hardware ``hw`` (see the module docstring)."""

    def __init__(self, space: NetworkSpace, features: NetworkFeatures,
                 model: NetworkCostModel, hw: HwConfig, hw_values: dict[str, int],
                 board: Board, *, budget: int, min_per_unit: int, sampler: str = "xgb",
                 seed: int | None = None):

        self.space = space
        self.features = features
        self.model = model
        self.hw = hw
        self.hw_values = dict(hw_values)
        self.board = board
        self.budget = budget
        self.min_per_unit = min_per_unit
        self.sampler = sampler
        self.rng = np.random.default_rng(seed)
        self.issued = 0
        self.units: dict[str, _UnitState] = {}
        from vtatune.search.samplers import layer_class

        cls = layer_class(sampler)
        for u in space.units:
            b = bounds(u.workload.macs, u.workload.compulsory_bytes(hw), hw, board)
            sp = space.unit_spaces[u.signature]
            issued: set[Hashable] = set()
            smp = cls(sp, unit=u, features=features, model=model, hw=hw,
                      hw_values=self.hw_values, board=board, rng=self.rng, issued=issued)
            self.units[u.signature] = _UnitState(u, sp, b.cycles, smp, issued)

    # ---- bounds and totals ------------------------------------------------------------------
    @property
    def bound_cycles(self) -> float:
        """Physical lower bound of the network's latency on this design (cycles): the
        count-weighted sum of every unit's compute/memory bound (for several networks, the
        weighted sum of the networks' bounds)."""
        w = self.space.unit_weights
        return sum(w[sig] * s.bound_cycles for sig, s in self.units.items())

    @property
    def bound_seconds(self) -> float:
        return self.bound_cycles / self.board.clock_hz

    @property
    def inflight(self) -> int:
        """Requests handed out whose result has not been told yet."""
        return sum(s.inflight for s in self.units.values())

    @property
    def finished(self) -> bool:
        """Nothing in flight and nothing more to ask."""
        return self.inflight == 0 and not self._has_more()

    @property
    def feasible(self) -> bool:
        return all(s.best is not None for s in self.units.values())

    def layers(self, network: Network | None = None) -> tuple[LayerResult, ...]:
        """Per layer of ``network`` (default: the space's; in the network's order): its
        unit's best schedule."""
        out = []
        for layer in (network or self.space.network).layers:
            s = self.units[layer.workload.signature]
            b = s.best
            status = Status.OK if b is not None else (
                Counter(r.status for r in s.records).most_common(1)[0][0] if s.records
                else Status.NO_CANDIDATE)
            out.append(LayerResult(
                name=layer.name, workload=layer.workload.signature, count=layer.count,
                key=b.key if b else None, knobs=dict(b.knobs) if b else {},
                cycles=b.cycles if b else None, seconds=_seconds(b, self.board) if b else None,
                accelerator_seconds=_accelerator_seconds(b, self.board) if b else None,
                host_seconds=b.host_seconds if b else None,
                accelerator_energy_j=b.accelerator_energy_j if b else None,
                board_energy_j=b.board_energy_j if b else None,
                bound_cycles=s.bound_cycles, trials=len(s.records), status=status))
        return tuple(out)

    def totals(self) -> tuple[int | None, float | None]:
        """(network cycles, network seconds end to end): count-weighted sums of the units'
        best, None while a unit has no feasible schedule."""
        split = self.split()
        if split is None:
            return None, None
        return split.cycles, split.seconds

    def split(self) -> NetworkTime | None:
        """The network's time on this design (count-weighted sums of the units' best), None
        while a unit has no feasible schedule."""
        if not self.feasible:
            return None
        if not self.space.multi:
            return self._time(self.space.units)
        times = [(m.weight, self._time(m.network.units())) for m in self.space.networks]
        host: float | None = 0.0
        for w, t in times:
            host = None if host is None or t.host_seconds is None else host + w * t.host_seconds
        return NetworkTime(int(sum(w * t.cycles for w, t in times)),
                           sum(w * t.seconds for w, t in times),
                           sum(w * t.accelerator_seconds for w, t in times), host,
                           _weighted([(w, t.accelerator_energy_j) for w, t in times]),
                           _weighted([(w, t.board_energy_j) for w, t in times]))

    def networks(self) -> tuple[NetworkResult, ...] | None:
        """Per network of a study of several (None for one): its weight, time, bound and
        layers on this design (its time None while a unit has no feasible schedule)."""
        if not self.space.multi:
            return None
        out = []
        for m in self.space.networks:
            units = m.network.units()
            t = self._time(units) if all(self.units[u.signature].best is not None
                                         for u in units) else None
            out.append(NetworkResult(
                network=m.network.name, weight=m.weight,
                cycles=None if t is None else t.cycles,
                seconds=None if t is None else t.seconds,
                accelerator_seconds=None if t is None else t.accelerator_seconds,
                host_seconds=None if t is None else t.host_seconds,
                accelerator_energy_j=None if t is None else t.accelerator_energy_j,
                board_energy_j=None if t is None else t.board_energy_j,
                bound_cycles=sum(u.count * self.units[u.signature].bound_cycles
                                 for u in units),
                layers=self.layers(m.network)))
        return tuple(out)

    def _time(self, units: tuple[Unit, ...]) -> NetworkTime:
        """Count-weighted sums of the best latencies of ``units`` (each feasible)."""
        cycles = seconds = accel = 0.0
        host: float | None = 0.0
        for u in units:
            s = self.units[u.signature]
            assert s.best is not None and s.best.cycles is not None
            n = u.count
            cycles += n * s.best.cycles
            seconds += n * _seconds(s.best, self.board)
            accel += n * _accelerator_seconds(s.best, self.board)
            h = s.best.host_seconds
            # a record stored before the split: the network's host time is unknown
            host = None if host is None or h is None else host + n * float(h)
        bests = [(u.count, self.units[u.signature].best) for u in units]
        return NetworkTime(int(cycles), seconds, accel, host,
                           _weighted([(n, b.accelerator_energy_j) for n, b in bests if b]),
                           _weighted([(n, b.board_energy_j) for n, b in bests if b]))

    def unsolved(self) -> list[str]:
        """Names of the units without a feasible schedule."""
        return [s.unit.name for s in self.units.values() if s.best is None]

    # ---- asking and telling -----------------------------------------------------------------
    def next(self) -> Request | None:
        """The next layer candidate to measure, or None (budget issued, or every unit
        exhausted; results may still be in flight)."""
        while True:
            s = self._pick()
            if s is None:
                return None
            point = s.sampler.propose()
            if point is None:
                continue  # that unit just ran out of candidates: pick again
            s.issued.add(point.key)
            s.inflight += 1
            self.issued += 1
            assert point.knobs is not None
            return Request(s.unit.signature, Candidate(s.unit.workload, self.hw,
                                                       dict(point.knobs)), point)

    def tell(self, req: Request, rec: CandidateRecord) -> None:
        """The result of ``req`` (from a worker or the store)."""
        s = self.units[req.sig]
        s.inflight -= 1
        self._learn(s, rec)

    def replay(self, sig: str, rec: CandidateRecord) -> None:
        """A result this design got before (a resumed study): counted against the budget."""
        s = self.units[sig]
        point = self.point_of(sig, rec)
        if point is None or point.key in s.issued:
            return
        s.issued.add(point.key)
        s.sampler.drop(point.key)
        self.issued += 1
        self._learn(s, rec)

    def point_of(self, sig: str, rec: CandidateRecord) -> Point | None:
        """The cost model's point of a stored candidate of unit ``sig`` on this design."""
        s = self.units[sig]
        if not rec.knobs:
            return None
        try:
            params = s.space.params_of(Candidate(s.unit.workload, self.hw, dict(rec.knobs)))
        except KeyError:
            return None
        p = self.features.point(sig, params)
        return p if p.valid else None

    def _learn(self, s: _UnitState, rec: CandidateRecord) -> None:
        s.records.append(rec)
        if rec.feasible and rec.cycles is not None:
            if s.best is None or _seconds(rec, self.board) < _seconds(s.best, self.board):
                s.best = rec

    # ---- which unit, which candidate --------------------------------------------------------
    def _pick(self) -> _UnitState | None:
        open_ = [s for s in self.units.values() if not s.exhausted]
        if not open_:
            return None
        for s in open_:  # every unit first gets its minimum
            if len(s.issued) < self.min_per_unit:
                return s
        for s in open_:  # a unit with nothing feasible yet and nothing in flight goes first
            if s.best is None and s.inflight == 0 and (
                    self.issued < self.budget
                    or len(s.issued) < self.min_per_unit + UNSOLVED_EXTRA):
                return s
        if self.issued >= self.budget:
            return None
        unit_weights = self.space.unit_weights
        weights = {id(s): unit_weights[s.unit.signature] * self._estimate(s) for s in open_}
        total = sum(weights.values()) or 1.0
        spent = self.issued + 1
        return max(open_, key=lambda s: (spent * weights[id(s)] / total - len(s.issued),
                                         -len(s.issued)))

    def _estimate(self, s: _UnitState) -> float:
        """The unit's latency on this design as known now (seconds)."""
        if s.best is not None:
            return _seconds(s.best, self.board)
        ratios = [_seconds(o.best, self.board) * self.board.clock_hz / o.bound_cycles
                  for o in self.units.values() if o.best is not None and o.bound_cycles > 0]
        ratio = statistics.median(ratios) if ratios else DEFAULT_INEFFICIENCY
        return ratio * s.bound_cycles / self.board.clock_hz

    def _has_more(self) -> bool:
        while True:
            s = self._pick()
            if s is None:
                return False
            if s.sampler.has_more():
                return True

    def forget(self) -> None:
        """Free the candidate pools and cached feature rows (the design is finished)."""
        for s in self.units.values():
            s.sampler.forget()
        for f in self.features.featurizers.values():
            f.forget_rows()


def _weighted(terms: list[tuple[float, float | None]]) -> float | None:
    """sum(weight x value), None when a value is None (energy a record does not have)."""
    if any(v is None for _, v in terms):
        return None
    return sum(w * float(v) for w, v in terms if v is not None)


def _seconds(rec: CandidateRecord, board: Board) -> float:
    """A record's latency in seconds (end to end when the record has it; else at the clock)."""
    if rec.seconds is not None:
        return float(rec.seconds)
    assert rec.cycles is not None
    return rec.cycles / board.clock_hz


def _accelerator_seconds(rec: CandidateRecord, board: Board) -> float:
    """A record's accelerator time in seconds (its cycles at the board's clock when the record
    predates the split)."""
    if rec.accelerator_seconds is not None:
        return float(rec.accelerator_seconds)
    assert rec.cycles is not None
    return rec.cycles / board.clock_hz
