"""The network study kind: a trial is one hardware design with every layer's schedule tuned
(``DesignEvaluator``, run by the study loop ``search.loop.run``).

Per design (the outer sampler -- any ``--sampler`` -- proposes hardware parameters):

1. **The screen first** (``search.screen``, no compile; the same checks as a single-operator
   study's): a design that cannot be built or encoded, that stock VTA cannot build (under the
   ``stock_vta`` constraint), that does not fit the board or is over the area budget is no
   trial: the outer sampler is told it as infeasible (its violation) and asked again, and the
   run counts it with its reason. ``trials`` designs are tuned unless the hardware space holds
   fewer that pass (then the search is exhausted and says how many were screened).
2. **Early stop by the lower bound**: every layer's physical bound (compute and compulsory
   memory traffic, ``simulator.bounds``) times its count gives a bound on the network's
   latency; a design whose (area, bound) is dominated by the study's current front cannot
   reach it and is recorded as ``dominated`` (the reason names the trial that dominates it).
3. **Inner tuning** (``tuner.DesignTuner``): the design's layer evaluations go to the worker
   pool (``search.workers``) in a stream that keeps every worker busy, up to two designs at a
   time. A layer candidate is the candidate a per-layer study of that shape would evaluate
   (same key), so one already in the store -- from any study -- is served, never compiled
   again. One cost model (``cost_model.NetworkCostModel``) learns from every layer of every
   design (and, with ``warm_start``, from every stored result of the network's layers).
4. The trial stores the network totals -- the count-weighted sums of the layers' best
   latencies in cycles and seconds (end to end per call: accelerator + host, and the two
   parts) -- and every layer's pick; the outer sampler is told
   (area, seconds) (or seconds alone for a ``latency`` objective) or, for an infeasible or
   dominated design, a constraint violation.

**Many processes, resume** as for every study (``search.loop``): designs are claimed as
slots; every layer result is committed as it arrives and linked to its design, and a design
whose process died is taken over by a live one with the layer results it had stored.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from vtatune.networks.cost_model import NetworkCostModel, NetworkFeatures
from vtatune.networks.space import NetworkSpace
from vtatune.networks.tuner import DesignTuner, Request
from vtatune.search import objectives
from vtatune.search.loop import (
    GRACE_S,
    HEARTBEAT_S,
    MAX_ENUMERATE,
    MAX_RANDOM_DRAWS,
    Callback,
    Evaluator,
    Job,
    Outcome,
    Progress,
    SearchResult,
    StudyLoop,
)
from vtatune.search.loop import run as loop_run
from vtatune.search.pareto import pareto_front
from vtatune.search.samplers import Observation, Params, make
from vtatune.statuses import Status
from vtatune.store.records import CandidateRecord, NetworkEval, NetworkTrialRecord, Slot

if TYPE_CHECKING:
    from vtatune.hardware.boards import Board
    from vtatune.hardware.config import HwConfig
    from vtatune.search.space import Candidate
    from vtatune.store import Store
    from vtatune.store.identity import EvalContext

#: Designs tuned at the same time (the next starts while the last one's results come in).
MAX_ACTIVE = 2
#: New layer observations after which the cost model is refit (or 10% more, if larger).
REFIT_EVERY = 32
#: Stored results per layer shape a warm start learns from (the most recent).
WARM_START_LIMIT = 5000


def study_workload(space: NetworkSpace) -> str:
    """The ``workload`` a network study is stored under (``network:A+B`` for several)."""
    return f"network:{space.network.name}"


def study_identity(space: NetworkSpace, ctx: EvalContext) -> dict[str, Any]:
    """What a network study is for (``search.runner.study_identity`` for networks): its layers
    and counts, objective, hardware choices, knobs, inner tuning, board, constraints and
    models (for several networks also each network's name, weight and model fingerprint;
    its ``layers`` are every network's, ``NETWORK.LAYER``); a continuation must match it
    exactly."""
    return {"workload": study_workload(space),
            "layers": [[la.name, la.workload.signature, la.count]
                       for la in space.network.layers],
            "objective": space.objective,
            "hardware": {k: list(v) for k, v in space.hw_choices.items()},
            "knobs": {u.signature: list(space.knobs[u.signature]) for u in space.units},
            "inner": space.inner.describe(), **ctx.describe(),
            **({"model": space.network.fingerprint} if space.network.fingerprint else {}),
            **({"networks": [{"network": m.network.name, "weight": m.weight,
                              **({"model": m.network.fingerprint}
                                 if m.network.fingerprint else {})}
                             for m in space.networks]} if space.multi else {})}


def check_study(space: NetworkSpace, study: str, db: str | None = None) -> None:
    """``StoreError`` (one line) if ``study`` exists in ``db`` for anything else: what ``run``
    would refuse, checked before any progress output."""
    from vtatune.store import Store
    from vtatune.store.identity import context

    ctx = context(space.board, space.hw_space.constraints)
    Store(db).check_study(study, study_workload(space), space.objective,
                          study_identity(space, ctx))


def run(space: NetworkSpace, *, sampler: str, trials: int, study: str, db: str | None = None,
        workers: int = 1, seed: int | None = None, timeout: float = 120.0,
        warm_start: bool = True,
        on_progress: Callable[[Progress], None] | None = None,
        heartbeat_s: float | None = None, grace_s: float | None = None
        ) -> SearchResult:
    """Run network study ``study`` until it holds ``trials`` designs, together with any other
    process running it (``search.loop.run`` with a ``DesignEvaluator``; see the module
    docstring). Raises ``UserError`` for bad input only. ``heartbeat_s``/``grace_s``: as
    ``search.runner.run``'s (its defaults when None)."""
    ev = DesignEvaluator(space, sampler, study, seed)
    return loop_run(ev, trials=trials, study=study, db=db, workers=workers, timeout=timeout,
                    warm_start=warm_start, on_progress=on_progress,
                    heartbeat_s=HEARTBEAT_S if heartbeat_s is None else heartbeat_s,
                    grace_s=GRACE_S if grace_s is None else grace_s)


class DesignEvaluator(Evaluator):
    """A network study's trials: one hardware design each, every layer tuned
    (``DesignTuner``) with its layer candidates served from the store or evaluated by the
    workers, up to ``MAX_ACTIVE`` designs at a time; one cost model learns every layer
    result (the ``LearnLayers`` callback)."""

    batch = 1
    max_active = MAX_ACTIVE

    def __init__(self, space: NetworkSpace, sampler: str, study: str, seed: int | None):
        from vtatune.hardware import boards
        from vtatune.search.screen import Screen
        from vtatune.store.identity import context

        self.space, self.sampler, self.study, self.seed = space, sampler, study, seed
        self.board: Board = boards.load(space.board)
        # layer candidates are stored and served in the study's evaluation context, exactly
        # as a per-layer study on this board, constraints and models would
        self.ctx = context(space.board, space.hw_space.constraints)
        self.context = self.ctx.key
        self.n_obj = objectives.count(space.objective)
        self.needs_energy = objectives.uses_energy(space.objective)
        #: the lower bound stops designs early only for objectives of area and latency: it
        #: bounds latency, not energy
        self.bounded = not self.needs_energy
        self.features = NetworkFeatures(space)
        self.model = NetworkCostModel(self.features, seed)
        self.smp = make(sampler, space.hw_space, self.n_obj, seed)
        self.screen = Screen(space.hw_space, schedules=False)
        self.space_size: int | None = None
        self.space_passing: int | None = None
        self._passing: list[tuple[str, Params]] | None = None  # (hw key, params) that pass
        self.rng = random.Random(seed)
        self.front: list[tuple[float, float, int]] = []  # (area, seconds, trial) of ok designs
        self.points: list[tuple[tuple[float, ...], int]] = []  # (objective values, trial)
        self.store: Store | None = None

    # ---- opening: the study, its cost model warm-started ------------------------------------
    def open(self, loop: StudyLoop, warm_start: bool) -> list[Outcome]:
        sp, store = self.space, loop.store
        self.store, self.progress = store, loop.progress
        store.create_or_load_study(self.study, study_workload(sp), sp.describe(),
                                   self.sampler, sp.objective, sp.board, self.seed,
                                   identity=study_identity(sp, self.ctx))
        store.adopt_network_trials(self.study)
        own = self.stored(set())
        if sum(o.record is not None and o.record.status != Status.RUNNING
               for o in own) >= loop.trials:
            return own  # nothing to do: the cost model need not learn anything
        evals = store.network_evals(self.study)
        mine = {e.candidate.key for e in evals}
        for e in evals:
            self.observe(e.candidate)
        if warm_start:  # every stored result of the layers on this board and models
            from vtatune.search.runner import judged

            for u in sp.units:
                unit_space = sp.unit_spaces[u.signature]
                history = [r for r in store.history(u.signature, model=self.ctx.model_key)
                           if r.key not in mine]
                for stored in history[-WARM_START_LIMIT:]:
                    rec = judged(unit_space, stored)  # by this study's constraints
                    if rec is not None:
                        self.observe(rec)
        if self.model.stale(1):
            self.model.fit()
        return own

    def observe(self, rec: CandidateRecord) -> None:
        """Teach the cost model a stored layer candidate of one of the network's units."""
        from vtatune.hardware.config import HwConfig
        from vtatune.search.space import Candidate

        sp = self.space.unit_spaces.get(rec.workload)
        if sp is None or not rec.knobs or rec.status == Status.HW_INVALID:
            return
        try:
            hw = HwConfig.from_params(rec.hw)
            params = sp.params_of(Candidate(sp.workload, hw, dict(rec.knobs)))
        except (KeyError, TypeError, ValueError):
            return
        point = self.features.point(rec.workload, params)
        latency = _latency(rec, self.board) if rec.feasible else None
        self.model.observe(rec.workload, point, latency, self.board.clock_hz)

    def callbacks(self) -> list[Callback]:
        return [LearnLayers()]

    def partial(self, active: list[Job]) -> float:
        """The designs being tuned, each by the share of its layer budget spent."""
        return sum(min(0.99, (j.evaluated + j.cached) / max(j.tuner.budget, 1))
                   for j in active if isinstance(j, DesignJob) and j.tuner is not None)

    # ---- points -----------------------------------------------------------------------------
    def key_of(self, params: Params) -> tuple[str, HwConfig]:
        hw = self.space.hw_space.hardware(params)
        return hw.key, hw

    def unseen(self, taken: Callable[[str], bool]) -> list[Params]:
        """A random design not ``taken`` that passes the screen ([] when none is): drawn from
        every design of the hardware space when there are at most ``MAX_ENUMERATE`` (then []
        means none is left), else by ``MAX_RANDOM_DRAWS`` random draws."""
        import itertools
        import math

        hw_space = self.space.hw_space
        kinds = hw_space.param_space()
        if math.prod(len(v) for _, v in kinds.values()) <= MAX_ENUMERATE:
            if self._passing is None:  # once per run: the screen does not change
                names = list(kinds)
                every = [dict(zip(names, combo, strict=True))
                         for combo in itertools.product(*(kinds[k][1] for k in names))]
                self._passing = [(hw_space.hardware(p).key, p) for p in every
                                 if self.screen.passes(p)]
                self.space_size, self.space_passing = len(every), len(self._passing)
            left = [p for key, p in self._passing if not taken(key)]
            return [self.rng.choice(left)] if left else []
        for _ in range(MAX_RANDOM_DRAWS):
            params = {k: self.rng.choice(v) for k, (_, v) in kinds.items()}
            if not taken(hw_space.hardware(params).key) and self.screen.passes(params):
                return [params]
        return []

    # ---- designs ----------------------------------------------------------------------------
    def start(self, slot: Slot, realized: Any) -> Job:
        """A design's job: screened first (a design taken over was screened by the run that
        started it), then recorded at once when its lower bound is dominated, else tuned
        (a design taken over keeps the layer results it had, in their order)."""
        from vtatune.hardware.config import HwConfig
        from vtatune.search.screen import screen

        assert self.store is not None
        replay: Sequence[NetworkEval] = ()
        params, hw = dict(slot.params), realized
        if hw is None:  # taken over
            if slot.params:
                hw = self.space.hw_space.hardware(slot.params)
            else:  # a design stored without its sampler params: its hardware is stored
                t = next(t for t in self.store.network_trials(self.study)
                         if t.number == slot.number)
                params, hw = dict(t.params), HwConfig.from_params(t.hw)
            replay = self.store.network_evals(self.study, slot.number)
        job = DesignJob(self, slot, params, hw)
        verdict = screen(self.space.hw_space, hw)
        if verdict.area_mm2 is not None:
            job.base.update(area_mm2=verdict.area_mm2, resources=verdict.resources)
        if not verdict.passed:
            return job.close(NetworkTrialRecord(status=verdict.status, reason=verdict.why,
                                                **job.base), verdict.violation)
        job.area_mm2, job.resources = float(verdict.area_mm2 or 0.0), verdict.resources
        hw_values = {k: hw.log_params()[k] for k in self.space.hw_choices}
        inner = self.space.inner
        tuner = DesignTuner(self.space, self.features, self.model, hw, hw_values, self.board,
                            budget=self.space.evaluations_per_design,
                            min_per_unit=inner.min_per_layer,
                            sampler=inner.sampler, seed=self.rng.randrange(2**31))
        bound_s = tuner.bound_seconds
        job.base["bound_cycles"] = tuner.bound_cycles
        by = self.dominated_by(job.area_mm2, bound_s) if self.bounded else None
        if by is not None and not replay:
            a, s, n = by
            return job.close(NetworkTrialRecord(
                status=Status.DOMINATED, layers=tuner.layers(), networks=tuner.networks(),
                reason=(
                    f"lower bound {1e3 * bound_s:.3f} ms at {job.area_mm2:.2f} mm² is "
                    f"dominated by trial {n} ({1e3 * s:.3f} ms at {a:.2f} mm²): layers not "
                    "tuned"), **job.base), max(bound_s / s - 1.0, 1e-3))
        job.tuner = tuner
        for e in replay:  # an interrupted design keeps what it had, in its order
            tuner.replay(e.candidate.workload, e.candidate)
            job.seq = e.seq + 1
            job.cached += e.cached
            job.evaluated += not e.cached
        self.store.save_network_trial(NetworkTrialRecord(status=Status.RUNNING, layers=(),
                                                         **job.base))
        self.progress.active += 1
        return job

    def dominated_by(self, area: float, bound_s: float) -> tuple[float, float, int] | None:
        """The front point that dominates (area, bound), if any."""
        for a, s, n in self.front:
            if self.n_obj == 2:
                if a <= area and s <= bound_s and (a < area or s < bound_s):
                    return a, s, n
            elif s <= bound_s:
                return a, s, n
        return None

    # ---- finished designs -------------------------------------------------------------------
    def stored(self, exclude: set[int]) -> list[Outcome]:
        assert self.store is not None
        names = set(self.space.hw_space.param_space())
        return [Outcome(t.number, t.hw_key, t.params if set(t.params) == names else None, t)
                for t in self.store.network_trials(self.study) if t.number not in exclude]

    def complete(self, outcome: Outcome) -> bool:
        assert self.store is not None and outcome.slot is not None
        return self.store.finish_network_trial(outcome.slot, outcome.record)

    def values(self, rec: Any) -> tuple[float, ...] | None:
        """The objective's values of a design (``search.objectives``; None unless ``ok``
        with every value it needs)."""
        if rec.status != Status.OK or rec.seconds is None:
            return None
        return objectives.values(self.space.objective, float(rec.area_mm2 or 0.0),
                                 float(rec.seconds), rec.accelerator_energy_j)

    def observation(self, rec: Any, violation: float = 1.0) -> Observation:
        values = self.values(rec)
        if values is not None:
            return Observation(values, 0.0, "ok")
        if rec.status == Status.NO_FIT and rec.resources:
            violation = _fit_violation(rec.resources, rec.area_mm2, self.space.max_area_mm2)
        elif rec.status == Status.DOMINATED and rec.bound_cycles:
            best = min((s for a, s, _ in self.front if a <= (rec.area_mm2 or 0.0)),
                       default=None)
            bound_s = rec.bound_cycles / self.board.clock_hz
            violation = max(bound_s / best - 1.0, 1e-3) if best else 1e-3
        return Observation(None, violation, rec.status)

    def count(self, progress: Progress, outcome: Outcome) -> None:
        rec, p = outcome.record, progress
        p.done += 1
        p.statuses[rec.status] += 1
        if rec.status == Status.OK and rec.seconds is not None:
            p.feasible += 1
            if p.best_seconds is None or rec.seconds < p.best_seconds:
                p.best_seconds, p.best_cycles = rec.seconds, rec.cycles
            e = rec.accelerator_energy_j
            if e is not None and (p.best_energy_j is None or e < p.best_energy_j):
                p.best_energy_j = e
            self.front.append((float(rec.area_mm2 or 0.0), float(rec.seconds), rec.number))
            pts = [(a, s) for a, s, _ in self.front]
            keep = pareto_front(pts) if self.n_obj == 2 else [
                min(range(len(pts)), key=lambda i: pts[i][1])]
            self.front = [self.front[i] for i in keep]
            p.pareto_size = len(self.front)
            values = self.values(rec)
            if not self.bounded and values is not None:  # the front of the objective's values
                self.points.append((values, rec.number))
                keep = pareto_front([v for v, _ in self.points])
                self.points = [self.points[i] for i in keep]
                p.pareto_size = len(self.points)

    def pool(self, workers: int, timeout: float) -> Any:
        from vtatune.search.workers import WorkerPool

        sp = self.space
        return WorkerPool(workers, sp.board, sp.fit_board, sp.max_area_mm2, timeout)

    def mirror(self, url: str, study: str, owner: str) -> Any:
        from vtatune.search.dashboard import NetworkOptunaMirror

        return NetworkOptunaMirror(url, study, self.space, self.n_obj, owner)

    def describe(self) -> dict[str, Any]:
        return {"space_size": self.space_size, "space_passing": self.space_passing}


class DesignJob(Job):
    """One hardware design being tuned: its layer candidates (``DesignTuner``), each result
    committed as it arrives and linked to the design."""

    def __init__(self, ev: DesignEvaluator, slot: Slot, params: Params, hw: HwConfig):
        self.ev, self.slot, self.params, self.hw = ev, slot, params, hw
        self.base: dict[str, Any] = dict(
            study=ev.study, number=slot.number, hw_key=hw.key, hw=hw.log_params(),
            hw_name=hw.name, params=params, sampler=ev.sampler)
        self.area_mm2 = 0.0
        self.resources: dict[str, Any] = {}
        self.tuner: DesignTuner | None = None
        self.requests: dict[str, list[Request]] = {}  # candidate key -> requests in flight
        self.record: NetworkTrialRecord | None = None
        self.violation = 0.0
        self.seq = self.evaluated = self.cached = 0
        self.last: Request | None = None  # the request told last (``LearnLayers``)

    def close(self, rec: NetworkTrialRecord, violation: float) -> DesignJob:
        self.record, self.violation = rec, violation
        return self

    def next(self) -> Candidate | None:
        req = self.tuner.next() if self.tuner is not None and self.record is None else None
        if req is None:
            return None
        self.requests.setdefault(req.candidate.key, []).append(req)
        return req.candidate

    def tell(self, cand: Candidate, rec: CandidateRecord, cached: bool) -> None:
        ev = self.ev
        assert ev.store is not None and self.tuner is not None
        req = self.requests[cand.key].pop(0)
        if not cached:
            from vtatune.search.runner import stamp

            rec = stamp(rec, ev.ctx)
            ev.store.save(rec)
        ev.store.add_network_eval(ev.study, self.slot.number, self.seq, rec.key, cached,
                                  context=rec.context)
        self.seq += 1
        if cached:
            self.cached += 1
            ev.progress.cached += 1
        else:
            self.evaluated += 1
            ev.progress.evaluated += 1
        self.tuner.tell(req, rec)
        self.last = req

    @property
    def done(self) -> bool:
        return self.record is not None or (self.tuner is not None and self.tuner.finished)

    def outcome(self) -> Outcome:
        if self.record is None:  # tuned: the network totals and every layer's pick
            t = self.tuner
            assert t is not None
            self.ev.progress.active -= 1
            split = t.split()
            base = dict(self.base, area_mm2=self.area_mm2, resources=self.resources,
                        bound_cycles=t.bound_cycles, layers=t.layers(), networks=t.networks(),
                        evaluated=self.evaluated, cached=self.cached)
            if split is None:
                missing = t.unsolved()
                self.close(NetworkTrialRecord(status=Status.NO_SCHEDULE, reason=(
                    f"no feasible schedule found for {', '.join(missing)} "
                    f"({t.issued} layer evaluations)"), **base), 1.0)
            else:
                self.close(NetworkTrialRecord(
                    status=Status.OK, cycles=split.cycles, seconds=split.seconds,
                    accelerator_seconds=split.accelerator_seconds,
                    host_seconds=split.host_seconds,
                    accelerator_energy_j=split.accelerator_energy_j,
                    board_energy_j=split.board_energy_j, **base), 0.0)
            t.forget()
        rec = self.record
        assert rec is not None
        params = rec.params if set(rec.params) == set(self.ev.space.hw_space.param_space()) \
            else None
        return Outcome(rec.number, rec.hw_key, params, rec,
                       self.ev.observation(rec, self.violation), slot=self.slot)


class LearnLayers(Callback):
    """The network cost model learns every layer result (this run's as they come, the other
    processes' with their designs) and is refit after every ``REFIT_EVERY`` new ones."""

    def evaluation(self, loop: StudyLoop, job: Job, rec: CandidateRecord,
                   cached: bool) -> None:
        ev: DesignEvaluator = loop.evaluator  # type: ignore[assignment]
        req = job.last  # type: ignore[attr-defined]
        assert req is not None
        latency = _latency(rec, ev.board) if rec.feasible else None
        ev.model.observe(req.sig, req.point, latency, ev.board.clock_hz)
        loop.report()

    def trial(self, loop: StudyLoop, outcome: Outcome) -> bool | None:
        ev: DesignEvaluator = loop.evaluator  # type: ignore[assignment]
        if not outcome.own and not outcome.replayed and ev.store is not None:
            for e in ev.store.network_evals(ev.study, outcome.number):
                ev.observe(e.candidate)
        return None

    def polled(self, loop: StudyLoop) -> None:
        ev: DesignEvaluator = loop.evaluator  # type: ignore[assignment]
        if ev.model.stale(REFIT_EVERY):
            ev.model.fit()


def _latency(rec: CandidateRecord, board: Board) -> float:
    """A feasible record's latency in seconds (end to end when the record has it)."""
    if rec.seconds is not None:
        return float(rec.seconds)
    assert rec.cycles is not None
    return rec.cycles / board.clock_hz


def _fit_violation(resources: dict[str, Any], area: float | None,
                   max_area: float | None) -> float:
    """How far a design is from fitting: the largest overflowing utilization - 1 (as
    ``search.evaluate.violation``), or the area over budget."""
    over = [u for k, u in resources.get("utilization", {}).items()
            if k in resources.get("over", []) and u is not None]
    if over:
        return max(max(u / 100.0 - 1.0 for u in over), 1e-3)
    if max_area is not None and area is not None and area > max_area:
        return max(area / max_area - 1.0, 1e-3)
    return 1.0
