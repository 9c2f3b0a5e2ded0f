"""The operator study kind (``CandidateEvaluator``, run by the study loop ``search.loop.run``):
ask the sampler, serve known candidates from the store, evaluate the rest in isolated workers,
store every result, tell the sampler.

A trial is a candidate new to the study, as AutoTVM never re-measures a visited config
(proposing, screening, repeats and unseen points: ``search.loop``). Random parameters reach
some candidates rarely or never, so after ``MAX_RANDOM_DRAWS`` fruitless draws the unseen
candidates come from the space's enumeration (``search.enumeration``): every candidate is
reachable, and the search says the space is exhausted only when each one that passes the
screen has been evaluated.

Resuming: a study is continued by name until it holds the requested number of trials, and
only for what it was made for (``study_identity``: workload, board, hardware, knobs,
constraints, models; anything else is refused). Every finished trial is committed before the
sampler hears of it, so Ctrl-C or kill -9 loses at most the candidates in flight.

Reuse: a candidate already in the store — from any study — measured in the same evaluation
context (board, constraints, model fingerprint: ``store.identity``) with a deterministic
outcome is served instead of being compiled and simulated again. A ``failed`` or ``timeout``
evaluation is retried once at once (``MAX_ATTEMPTS``); if it fails again it is stored as the
trial's result, and later trials and studies evaluate the candidate afresh.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from vtatune.search import objectives
from vtatune.search.dashboard import OptunaMirror
from vtatune.search.evaluate import hw_invalid_record, objective_values, violation
from vtatune.search.loop import (  # noqa: F401 - the loop's names, as this module had them
    GRACE_S,
    HEARTBEAT_S,
    MAX_RANDOM_DRAWS,
    REFRESH_S,
    REPEATS_BEFORE_RANDOM,
    WAIT_S,
    Evaluator,
    Heartbeat,
    Job,
    Outcome,
    Progress,
    SearchResult,
    StudyLoop,
    ownership,
)
from vtatune.search.loop import run as loop_run
from vtatune.search.pareto import front_size
from vtatune.search.samplers import Observation, Params, make
from vtatune.search.space import NOT_STOCK, Candidate, SearchSpace
from vtatune.statuses import Status
from vtatune.store.identity import EvalContext
from vtatune.store.records import TRANSIENT, CandidateRecord, Slot

#: Evaluations of one candidate within a run before a ``failed``/``timeout`` outcome is kept.
MAX_ATTEMPTS = 2


def observation(space: SearchSpace, rec: CandidateRecord) -> Observation:
    values = objective_values(space, rec)
    return Observation(values, 0.0 if values is not None else violation(rec), rec.status)


def study_identity(space: SearchSpace, ctx: EvalContext) -> dict[str, Any]:
    """What a study is for; a continuation must match it exactly (``Store.create_or_load_study``).

    Hardware is named by its config when fixed (schedule-only), else by its choices; user
    passes by their fingerprint.
    """
    hardware: Any = ({k: list(v) for k, v in space.hw_choices.items()} if space.joint
                     else space.hardware({}).name)
    identity = {"workload": space.workload.signature, "objective": space.objective,
                "latency": space.latency, "hardware": hardware, "knobs": list(space.knobs),
                **ctx.describe()}
    if space.passes is not None:  # studies without user passes keep their identity
        identity["passes"] = space.passes.fingerprint
    return identity


def stamp(rec: CandidateRecord, ctx: EvalContext) -> CandidateRecord:
    """``rec`` marked as measured in ``ctx`` (what the store keys it by)."""
    return replace(rec, context=ctx.key, model=ctx.model_key, board=ctx.board)


def judged(space: SearchSpace, rec: CandidateRecord) -> CandidateRecord | None:
    """``rec`` (measured on the space's board and models) as the space's constraints judge it;
    None when that cannot be known or the outcome may be transient.

    Measured numbers (cycles, area, resources) depend on the board and models only, so a
    record from a study with other constraints transfers: a feasible design that breaks this
    space's constraints counts as ``no_fit``; a ``no_fit`` design that meets them was never
    measured, so it is left out. Under the ``stock_vta`` constraint a design stock VTA cannot
    build is ``hw_invalid``; without it, a design refused only for that reason is left out.
    """
    if rec.status in TRANSIENT:
        return None
    if rec.status == Status.HW_INVALID:
        # a design refused only for the stock_vta constraint may be one this space builds
        return rec if space.stock_vta or NOT_STOCK not in (rec.reason or "") else None
    if space.stock_vta and rec.hw:
        from vtatune.hardware.config import HwConfig

        problems = space.hardware_problems(HwConfig.from_params(rec.hw))
        if problems:
            return replace(rec, status=Status.HW_INVALID, cycles=None, seconds=None,
                           reason="hardware: " + "; ".join(problems))
    area, fits = rec.area_mm2, rec.resources.get("fits")
    breaks = ((space.fit_board and fits is False)
              or (space.max_area_mm2 is not None and area is not None
                  and area > space.max_area_mm2))
    if rec.status == Status.OK and breaks:
        return replace(rec, status=Status.NO_FIT, cycles=None, seconds=None,
                       reason="breaks this study's constraints")
    if rec.status == Status.NO_FIT and not breaks:
        return None
    return rec


def history(space: SearchSpace, records: list[CandidateRecord]) -> list[tuple[Params, Observation]]:
    """Stored records of the space's workload that lie inside the space (compiled with its
    user passes), as sampler history.

    ``records`` must come from the space's board and models (``Store.history(..., model=)``);
    each is judged by the space's constraints first (``judged``).
    """
    from vtatune.hardware.config import HwConfig

    out = []
    passes = space.passes.fingerprint if space.passes is not None else ""
    energy = objectives.uses_energy(space.objective)
    for stored in records:
        if stored.key.partition("|passes=")[2] != passes:
            continue  # compiled with other user passes (or none): another program
        rec = judged(space, stored)
        if rec is None:
            continue
        if energy and rec.feasible and rec.accelerator_energy_j is None:
            continue  # stored before energy, which the objective needs: nothing to learn
        if not rec.knobs or any(rec.hw.get(k) not in v for k, v in space.hw_choices.items()):
            continue
        hw = HwConfig.from_params(rec.hw)
        cand = Candidate(space.workload, hw, dict(rec.knobs))
        try:
            params = space.params_of(cand)
        except KeyError:
            continue
        out.append((params, observation(space, rec)))
    return out


def check_study(space: SearchSpace, study: str, db: str | None = None) -> None:
    """``StoreError`` (one line) if ``study`` exists in ``db`` for another workload, board,
    hardware, knobs, constraints or models: what ``run`` would refuse, checked up front."""
    from vtatune.store import Store
    from vtatune.store.identity import context

    ctx = context(space.board, space.constraints)
    Store(db).check_study(study, space.workload.signature, space.objective,
                          study_identity(space, ctx))


def run(space: SearchSpace, *, sampler: str, trials: int, study: str, db: str | None = None,
        workers: int = 1, seed: int | None = None, timeout: float = 120.0,
        warm_start: bool = True,
        on_progress: Callable[[Progress], None] | None = None,
        heartbeat_s: float = HEARTBEAT_S, grace_s: float = GRACE_S) -> SearchResult:
    """Run ``study`` up to ``trials`` trials, together with any other process running it
    (``search.loop.run`` with a ``CandidateEvaluator``). Raises ``UserError`` for bad input
    only.

    ``warm_start``: samplers that keep no state of their own (xgb) also learn from the stored
    results of the workload in other studies measured on the same board with the same models
    (judged by this study's constraints: ``judged``). ``heartbeat_s``/``grace_s``: how often
    this process says it is alive, and how long another host's silence means it died.
    """
    ev = CandidateEvaluator(space, sampler, study, seed)  # an unavailable sampler: no study
    return loop_run(ev, trials=trials, study=study, db=db, workers=workers, timeout=timeout,
                    warm_start=warm_start, on_progress=on_progress, heartbeat_s=heartbeat_s,
                    grace_s=grace_s)


class CandidateEvaluator(Evaluator):
    """An operator study's trials: one candidate each (hardware and schedule knobs), served
    from the store or evaluated by a worker (a ``failed``/``timeout`` outcome retried once:
    ``MAX_ATTEMPTS``)."""

    def __init__(self, space: SearchSpace, sampler: str, study: str, seed: int | None):
        from vtatune.search.screen import Screen
        from vtatune.store.identity import context

        self.space, self.sampler, self.study, self.seed = space, sampler, study, seed
        self.n_obj = objectives.count(space.objective)
        self.needs_energy = objectives.uses_energy(space.objective)
        self.smp = make(sampler, space, self.n_obj, seed)
        self.ctx = context(space.board, space.constraints)
        self.context = self.ctx.key
        self.screen = Screen(space)
        self._unseen = _Unseen(space, random.Random(seed), self.screen)
        self.points: list[tuple[float, ...]] = []  # objective values of feasible trials

    def open(self, loop: StudyLoop, warm_start: bool) -> list[Outcome]:
        from vtatune.search.workers import boot

        sp, store = self.space, loop.store
        self.store, self.progress = store, loop.progress
        wl = sp.workload
        store.create_or_load_study(self.study, wl.signature, sp.describe(), self.sampler,
                                   sp.objective, sp.board, self.seed,
                                   identity=study_identity(sp, self.ctx))
        store.adopt_trials(self.study)
        own = self.stored(set())
        if len(own) >= loop.trials:
            return own  # nothing to do: no workers, no warm start
        boot()  # the workers' fork server warms up while the sampler is set up
        # A resumed study replays its trials into the sampler; the cost-model sampler also
        # learns from the stored results of the workload on this board and models.
        if warm_start and self.smp.warm_starts:
            mine = {o.key for o in own}
            self.smp.warm_start(history(sp, [r for r in store.history(
                wl.signature, model=self.ctx.model_key) if r.key not in mine]))
        return own

    def key_of(self, params: Params) -> tuple[str, Any]:
        sp = self.space
        cand, why = sp.realize(params)
        rec = None if cand is not None else hw_invalid_record(sp.workload, sp.hardware(params),
                                                              why)
        return (cand.key if cand is not None else rec.key), (cand, rec)  # type: ignore

    def unseen(self, taken: Callable[[str], bool]) -> list[Params]:
        return self._unseen.take(taken)

    def start(self, slot: Slot, realized: Any) -> Job:
        cand, rec = realized if realized is not None else self.key_of(slot.params)[1]
        return _CandidateJob(self, slot, cand, rec)

    def stored(self, exclude: set[int]) -> list[Outcome]:
        missing = self.store.trial_numbers(self.study) - exclude
        names = set(self.space.param_space())
        return [Outcome(t.number, t.candidate.key,
                        t.params if set(t.params) == names else None, t.candidate,
                        cached=t.cached)
                for t in (self.store.trials(self.study, numbers=missing) if missing else [])]

    def complete(self, outcome: Outcome) -> bool:
        assert outcome.slot is not None
        return self.store.complete(outcome.slot, outcome.record, self.sampler, outcome.cached,
                                   self.ctx.key)

    def observation(self, rec: Any) -> Observation:
        return observation(self.space, rec)

    def count(self, progress: Progress, outcome: Outcome) -> None:
        rec = outcome.record
        _account(progress, rec, outcome.cached, own=outcome.own)
        values = objective_values(self.space, rec)
        if values is not None and rec.area_mm2 is not None:
            self.points.append(values)
            progress.pareto_size = front_size(self.points)

    def pool(self, workers: int, timeout: float) -> Any:
        from vtatune.search.workers import WorkerPool

        sp = self.space
        warmup, _ = sp.realize({})  # the base hardware with suggested knobs
        return WorkerPool(workers, sp.board, sp.fit_board, sp.max_area_mm2, timeout,
                          warmup=warmup, lazy=True)

    def mirror(self, url: str, study: str, owner: str) -> Any:
        return OptunaMirror(url, study, self.space, self.n_obj, owner)

    def describe(self) -> dict[str, Any]:
        return {"space_size": self._unseen.size, "space_screened": self._unseen.screened}


class _CandidateJob(Job):
    """One candidate: a hardware design the space cannot realize is its record at once."""

    def __init__(self, ev: CandidateEvaluator, slot: Slot, cand: Candidate | None,
                 rec: CandidateRecord | None):
        self.ev, self.slot, self.cand, self.rec = ev, slot, cand, rec
        self.cached = False
        self.attempts = 0
        self.want = rec is None

    def next(self) -> Candidate | None:
        if not self.want:
            return None
        self.want = False
        return self.cand

    def tell(self, cand: Candidate, rec: CandidateRecord, cached: bool) -> None:
        self.attempts += 1
        if rec.status in TRANSIENT and not cached and self.attempts < MAX_ATTEMPTS:
            self.ev.progress.retries += 1
            self.want = True  # again, at once
            return
        self.rec, self.cached = rec, cached

    @property
    def done(self) -> bool:
        return self.rec is not None

    def outcome(self) -> Outcome:
        assert self.rec is not None
        rec = self.rec if self.cached else stamp(self.rec, self.ev.ctx)
        return Outcome(self.slot.number, self.slot.key, self.slot.params, rec,
                       observation(self.ev.space, rec), cached=self.cached, slot=self.slot)


class _Unseen:
    """Unseen candidates for slots the sampler does not fill, in a seeded random order:
    random parameter draws first (cheap, and all a large space needs), then the space's
    enumeration, which reaches every candidate and makes exhaustion exact."""

    def __init__(self, space: SearchSpace, rng: random.Random, screen: Any):
        self.space, self.rng, self.screen = space, rng, screen
        self.size: int | None = None  # candidates in the space that pass the screen
        self.screened: int | None = None  # candidates whose design the screen refuses
        self._order: list[tuple[str, Params]] | None = None
        self._next = 0

    def take(self, taken: Callable[[str], bool]) -> list[Params]:
        """One parameter set whose candidate is not ``taken`` ([] when every candidate is,
        or, for a space too large to enumerate, when random draws find none)."""
        if self._order is None:
            found = self._draw(taken)
            if found is not None:
                return [found]
            from vtatune.search.enumeration import candidates

            everything = candidates(self.space)
            if everything is None:
                return []
            passing = [(k, p) for k, p in everything if self.screen.passes(p)]
            self.size, self.screened = len(passing), len(everything) - len(passing)
            everything = passing
            self.rng.shuffle(everything)
            self._order = everything
        while self._next < len(self._order):
            key, params = self._order[self._next]
            if not taken(key):
                return [dict(params)]
            self._next += 1  # taken candidates stay taken for the rest of the run
        return []

    def _draw(self, taken: Callable[[str], bool]) -> Params | None:
        kinds = self.space.param_space()
        for _ in range(MAX_RANDOM_DRAWS):
            params = {k: self.rng.choice(v) if kind == "categorical" else self.rng.random()
                      for k, (kind, v) in kinds.items()}
            if not self.screen.passes(params):
                continue
            cand, _ = self.space.realize(params)
            key = cand.key if cand is not None else hw_invalid_record(
                self.space.workload, self.space.hardware(params), "").key
            if not taken(key):
                return params
        return None


def _account(prog: Progress, rec: CandidateRecord, cached: bool, own: bool = True) -> None:
    """Count a trial of the study; ``own``: stored by this run (evaluated or served)."""
    prog.done += 1
    prog.statuses[rec.status] += 1
    if own and cached:
        prog.cached += 1
    elif own:
        prog.evaluated += 1
    if rec.feasible and rec.cycles is not None:
        prog.feasible += 1
        if prog.best_cycles is None or rec.cycles < prog.best_cycles:
            prog.best_cycles = rec.cycles
        if rec.seconds is not None and (prog.best_seconds is None
                                        or rec.seconds < prog.best_seconds):
            prog.best_seconds = rec.seconds
        e = rec.accelerator_energy_j
        if e is not None and (prog.best_energy_j is None or e < prog.best_energy_j):
            prog.best_energy_j = e

