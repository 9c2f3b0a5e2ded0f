"""The network search loop: a trial is one hardware design with every layer's schedule tuned.

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

**Many processes, resume.** Designs are claimed as slots on the study's database exactly as an
operator study's trials are (``Store.claim``): any number of processes, on any machines
sharing the database, run one study; each claims the next design it starts (a design another
process has is a repeat, never evaluated twice), learns the designs the others finished, and
the study ends with exactly ``trials`` designs. Every layer result is committed as it arrives
and linked to its design, and a finished design is committed with its slot; a design whose
process died (``store.liveness``) is taken over by a live one with the layer results it had
stored, so a rerun of a killed search continues where it stopped.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtatune.networks.cost_model import NetworkCostModel, NetworkFeatures
from vtatune.networks.space import NetworkSpace
from vtatune.networks.tuner import DesignTuner, Request
from vtatune.search.loop import (
    GRACE_S,
    HEARTBEAT_S,
    MAX_ENUMERATE,
    MAX_RANDOM_DRAWS,
    REFRESH_S,
    Progress,
    SearchResult,
    StudyLoop,
    ownership,
)
from vtatune.search.pareto import pareto_front
from vtatune.search.samplers import Observation, Params, make
from vtatune.statuses import Status
from vtatune.store.records import CandidateRecord, NetworkEval, NetworkTrialRecord, Slot

if TYPE_CHECKING:
    from vtatune.hardware.boards import Board
    from vtatune.hardware.config import HwConfig
    from vtatune.store import Store
    from vtatune.store.identity import EvalContext

#: Designs tuned at the same time (the next starts while the last one's results come in).
MAX_ACTIVE = 2
#: New layer observations after which the cost model is refit (or 10% more, if larger).
REFIT_EVERY = 32
#: Stored results per layer shape a warm start learns from (the most recent).
WARM_START_LIMIT = 5000


@dataclass
class _Design:
    slot: Slot
    number: int
    params: Params
    hw: HwConfig
    area_mm2: float
    resources: dict[str, Any]
    tuner: DesignTuner
    seq: int = 0
    evaluated: int = 0
    cached: int = 0


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
    process running it (see the module docstring). Raises ``UserError`` for bad input only.
    ``heartbeat_s``/``grace_s``: as ``search.runner.run``'s (its defaults when None)."""
    from vtatune.hardware import boards
    from vtatune.search.workers import WorkerPool
    from vtatune.store import Store

    store = Store(db)
    board = boards.load(space.board)
    with ownership(store, HEARTBEAT_S if heartbeat_s is None else heartbeat_s) as owner:
        loop = _Loop(space, store, board, sampler, study, seed, on_progress, owner,
                     GRACE_S if grace_s is None else grace_s)
        try:
            loop.open(warm_start, trials)
            loop.progress.total = trials
            if loop.progress.done < trials:  # (else nothing to do: no workers, no TVM)
                with WorkerPool(workers, space.board, space.fit_board, space.max_area_mm2,
                                timeout) as pool:
                    loop.drive(pool, trials)
                loop.refresh()  # the designs the other processes finished meanwhile
        finally:
            loop.smp.close()
    p = loop.progress
    return SearchResult(
        study=study, db=store.display_url, trials=p.done, new_trials=loop.core.mine,
        evaluated=p.evaluated, cached=p.cached, repeats=p.repeats, feasible=p.feasible,
        best_cycles=p.best_cycles, best_seconds=p.best_seconds,
        elapsed_s=time.monotonic() - p.started, exhausted=loop.core.exhausted,
        requested=trials, screened=loop.screen.describe(), space_size=loop.space_size,
        space_passing=loop.space_passing)


class _Loop:
    """State of one run of a network study (``run`` drives it)."""

    def __init__(self, space: NetworkSpace, store: Store, board: Board, sampler: str,
                 study: str, seed: int | None,
                 on_progress: Callable[[Progress], None] | None, owner: str,
                 grace_s: float):
        self.owner, self.grace_s = owner, grace_s
        self.space = space
        self.store = store
        self.board = board
        self.sampler = sampler
        self.study = study
        self.seed = seed
        self.on_progress = on_progress
        from vtatune.store.identity import context

        # layer candidates are stored and served in the study's evaluation context, exactly
        # as a per-layer study on this board, constraints and models would
        self.ctx = context(space.board, space.hw_space.constraints)
        self.n_obj = 2 if space.objective == "area-latency" else 1
        self.features = NetworkFeatures(space)
        self.model = NetworkCostModel(self.features, seed)
        self.smp = make(sampler, space.hw_space, self.n_obj, seed)
        from vtatune.search.screen import Screen

        self.screen = Screen(space.hw_space)
        self.space_size: int | None = None
        self.space_passing: int | None = None
        self._passing: list[tuple[str, Params]] | None = None  # (hw key, params) that pass
        self.rng = random.Random(seed)
        self.progress = Progress(total=0)
        self.core = StudyLoop(store, study, owner, grace_s, self.smp, self.screen,
                              self.progress, self._key_of, self._unseen, on_progress)
        self.front: list[tuple[float, float, int]] = []  # (area, seconds, trial) of ok designs
        self.seen: set[str] = set()  # hardware keys of the study's designs
        self.active: list[_Design] = []
        self.told: set[int] = set()  # numbers of the finished designs the samplers know
        self.slots = 0  # designs the study has or will have (claimed slots)
        self.last_refresh = 0.0

    # ---- opening: replay the study, warm-start the cost model -------------------------------
    def open(self, warm_start: bool, trials: int | None = None) -> None:
        """Replay the study; then, unless it holds ``trials`` designs already (nothing to
        do), teach the cost model what is stored."""
        sp = self.space
        self.store.create_or_load_study(self.study, study_workload(sp), sp.describe(),
                                        self.sampler, sp.objective, sp.board, self.seed,
                                        identity=study_identity(sp, self.ctx))
        self.store.adopt_network_trials(self.study)
        self._absorb(self.store.network_trials(self.study))
        self.progress.resumed_from = self.progress.done
        if trials is not None and self.progress.done >= trials:
            return
        evals = self.store.network_evals(self.study)
        mine = {e.candidate.key for e in evals}
        for e in evals:
            self._observe(e.candidate)
        if warm_start:  # every stored result of the layers on this board and models
            from vtatune.search.runner import judged

            for u in sp.units:
                unit_space = sp.unit_spaces[u.signature]
                history = [r for r in self.store.history(u.signature, model=self.ctx.model_key)
                           if r.key not in mine]
                for stored in history[-WARM_START_LIMIT:]:
                    rec = judged(unit_space, stored)  # by this study's constraints
                    if rec is not None:
                        self._observe(rec)
        if self.model.stale(1):
            self.model.fit()
        self.progress.evaluated = self.progress.cached = 0
        self.progress.started = time.monotonic()

    def _observe(self, rec: CandidateRecord) -> None:
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

    def _absorb(self, trials: Sequence[NetworkTrialRecord]) -> list[int]:
        """Finished designs stored by earlier runs or other processes: the outer sampler learns
        them like its own; returns the numbers new to this run."""
        params_names = set(self.space.hw_space.param_space())
        new = []
        for t in trials:
            self.seen.add(t.hw_key)
            if t.status == Status.RUNNING or t.number in self.told:
                continue
            self.told.add(t.number)
            new.append(t.number)
            if set(t.params) == params_names:
                self.smp.tell(t.params, self._observation(t))
            self._account(t)
        return new

    def refresh(self) -> None:
        """Learn the designs other processes finished (and their layers: the cost model)."""
        self.last_refresh = time.monotonic()
        mine = {d.number for d in self.active}
        new = self._absorb([t for t in self.store.network_trials(self.study)
                            if t.number not in mine])
        if new:
            for e in self.store.network_evals(self.study):
                if e.number in new:
                    self._observe(e.candidate)
            self._report()

    # ---- the loop -------------------------------------------------------------------------
    def drive(self, pool: Any, trials: int) -> None:
        inflight: dict[int, tuple[_Design, Request]] = {}
        task = 0
        last_check = 0.0
        # designs of processes that died (an interrupted run of this one included) first,
        # with the layer results they had
        for slot in self.core.take_over(trials):
            self._continue(slot)
        self.slots = self.store.slot_counts(self.study)[0]
        while True:
            while pool.room > 0:  # each worker's next candidate waits in its pipe
                got = self._next_request(trials)
                if got is None:
                    break
                design, req = got
                known = self.store.lookup(req.candidate.key, self.ctx.key)
                if known is not None:
                    self._result(design, req, known, cached=True)
                    continue
                inflight[task] = (design, req)
                pool.submit(task, req.candidate)
                task += 1
            self._finish_done()
            if not self.active and not inflight:
                if self.slots < trials and not self.core.exhausted:
                    continue
                # nothing of ours to do: wait for the other processes' designs, taking over
                # those whose process died
                last_check = self.core.wait(last_check)
                for slot in self.core.take_over(trials):
                    self._continue(slot)
                self.slots, running = self.store.slot_counts(self.study)
                if not self.active and running == 0 and (
                        self.slots >= trials or self.core.exhausted):
                    return
                self.refresh()
                continue
            for t, rec in pool.poll(0.05):
                design, req = inflight.pop(t)
                self._result(design, req, rec, cached=False)
            if self.model.stale(REFIT_EVERY):
                self.model.fit()

    def _next_request(self, trials: int) -> tuple[_Design, Request] | None:
        """A layer candidate of an active design, starting designs as needed."""
        while True:
            for d in self.active:
                req = d.tuner.next()
                if req is not None:
                    return d, req
            self._finish_done()
            if (self.slots >= trials or len(self.active) >= MAX_ACTIVE
                    or self.core.exhausted):
                return None
            self._start_design(trials)

    def _result(self, design: _Design, req: Request, rec: CandidateRecord, cached: bool
                ) -> None:
        if not cached:
            from vtatune.search.runner import stamp

            rec = stamp(rec, self.ctx)
            self.store.save(rec)
        self.store.add_network_eval(self.study, design.number, design.seq, rec.key, cached,
                                    context=rec.context)
        design.seq += 1
        if cached:
            design.cached += 1
            self.progress.cached += 1
        else:
            design.evaluated += 1
            self.progress.evaluated += 1
        design.tuner.tell(req, rec)
        latency = _latency(rec, self.board) if rec.feasible else None
        self.model.observe(req.sig, req.point, latency, self.board.clock_hz)
        self._report()

    # ---- designs ----------------------------------------------------------------------------
    def _start_design(self, trials: int) -> None:
        """Propose a new design that passes the screen (``StudyLoop.propose``), claim its slot
        and start it (or record it at once when it is dominated); a design another process
        holds is a repeat."""
        if time.monotonic() - self.last_refresh >= REFRESH_S:
            self.refresh()  # learn what the other processes found before planning
        while True:
            wanted = self.core.propose(1, self.seen.__contains__)
            if not wanted:
                return  # the hardware space is exhausted
            granted, refused, full = self.core.claim(wanted, trials)
            self.seen.add(wanted[0][0])
            if granted:
                slot, (_, params, hw) = granted[0]
                self.slots += 1
                self._begin(slot, params, hw, replay=())
                return
            if full:
                self.slots = self.store.slot_counts(self.study)[0]
                return

    def _key_of(self, params: Params) -> tuple[str, HwConfig]:
        hw = self.space.hw_space.hardware(params)
        return hw.key, hw

    def _continue(self, slot: Slot) -> None:
        """Finish the design of a slot taken over, with the layer results it had."""
        from vtatune.hardware.config import HwConfig

        self.seen.add(slot.key)
        if slot.params:
            params, hw = dict(slot.params), self.space.hw_space.hardware(slot.params)
        else:  # a design stored without its sampler params: its hardware is stored
            t = next(t for t in self.store.network_trials(self.study)
                     if t.number == slot.number)
            params, hw = dict(t.params), HwConfig.from_params(t.hw)
        self._begin(slot, params, hw,
                    replay=self.store.network_evals(self.study, slot.number))

    def _begin(self, slot: Slot, params: Params, hw: HwConfig,
               replay: Sequence[NetworkEval]) -> None:
        from vtatune.search.screen import screen

        number = slot.number
        base = dict(study=self.study, number=number, hw_key=hw.key, hw=hw.log_params(),
                    hw_name=hw.name, params=params, sampler=self.sampler)
        # a new design passed the screen; an interrupted one was started by an earlier run
        verdict = screen(self.space.hw_space, hw)
        if verdict.area_mm2 is not None:
            base.update(area_mm2=verdict.area_mm2, resources=verdict.resources)
        if not verdict.passed:
            self._close(slot, NetworkTrialRecord(status=verdict.status, reason=verdict.why,
                                                 **base), violation=verdict.violation)
            return
        area_mm2, resources = float(verdict.area_mm2 or 0.0), verdict.resources
        hw_values = {k: hw.log_params()[k] for k in self.space.hw_choices}
        inner = self.space.inner
        tuner = DesignTuner(self.space, self.features, self.model, hw, hw_values, self.board,
                            budget=inner.trials, min_per_unit=inner.min_per_layer,
                            sampler=inner.sampler, seed=self.rng.randrange(2**31))
        bound_s = tuner.bound_seconds
        base["bound_cycles"] = tuner.bound_cycles
        by = self._dominated_by(area_mm2, bound_s)
        if by is not None and not replay:
            a, s, n = by
            self._close(slot, NetworkTrialRecord(
                status=Status.DOMINATED, layers=tuner.layers(), networks=tuner.networks(),
                reason=(
                    f"lower bound {1e3 * bound_s:.3f} ms at {area_mm2:.2f} mm² is dominated by "
                    f"trial {n} ({1e3 * s:.3f} ms at {a:.2f} mm²): layers not tuned"), **base),
                violation=max(bound_s / s - 1.0, 1e-3))
            return
        design = _Design(slot, number, params, hw, area_mm2, resources, tuner)
        for e in replay:  # an interrupted design keeps what it had, in its order
            tuner.replay(e.candidate.workload, e.candidate)
            design.seq = e.seq + 1
            design.cached += e.cached
            design.evaluated += not e.cached
        self.store.save_network_trial(NetworkTrialRecord(status=Status.RUNNING, layers=(),
                                                         **base))
        self.active.append(design)
        self.progress.active = len(self.active)

    def _finish_done(self) -> None:
        for d in [d for d in self.active if d.tuner.finished]:
            self.active.remove(d)
            self.progress.active = len(self.active)
            self._in_flight()
            t = d.tuner
            split = t.split()
            base = dict(study=self.study, number=d.number, hw_key=d.hw.key,
                        hw=d.hw.log_params(), hw_name=d.hw.name, area_mm2=d.area_mm2,
                        resources=d.resources, params=d.params, sampler=self.sampler,
                        bound_cycles=t.bound_cycles, layers=t.layers(),
                        networks=t.networks(), evaluated=d.evaluated, cached=d.cached)
            if split is None:
                missing = t.unsolved()
                rec = NetworkTrialRecord(status=Status.NO_SCHEDULE, reason=(
                    f"no feasible schedule found for {', '.join(missing)} "
                    f"({t.issued} layer evaluations)"), **base)
                self._close(d.slot, rec, violation=1.0)
            else:
                self._close(d.slot, NetworkTrialRecord(
                    status=Status.OK, cycles=split.cycles, seconds=split.seconds,
                    accelerator_seconds=split.accelerator_seconds,
                    host_seconds=split.host_seconds, **base), violation=0.0)
            t.forget()

    def _close(self, slot: Slot, rec: NetworkTrialRecord, violation: float) -> None:
        """Store a finished design with its slot, then the loop's callbacks (tell the outer
        sampler, count, report) -- unless another process that took the design over finished
        it first: then it is learned from the store, as the others' designs are."""
        obs = self._observation(rec, violation)

        def account() -> None:
            self.told.add(rec.number)
            self._account(rec)

        params = rec.params if set(rec.params) == set(self.space.hw_space.param_space()) \
            else None
        self.core.finish(slot, self.store.finish_network_trial(slot, rec), params, obs,
                         account)

    def _observation(self, rec: NetworkTrialRecord, violation: float = 1.0) -> Observation:
        if rec.status == Status.OK and rec.seconds is not None:
            values = (float(rec.area_mm2 or 0.0), float(rec.seconds)) if self.n_obj == 2 \
                else (float(rec.seconds),)
            return Observation(values, 0.0, "ok")
        if rec.status == Status.NO_FIT and rec.resources:
            violation = _fit_violation(rec.resources, rec.area_mm2, self.space.max_area_mm2)
        elif rec.status == Status.DOMINATED and rec.bound_cycles:
            best = min((s for a, s, _ in self.front if a <= (rec.area_mm2 or 0.0)),
                       default=None)
            bound_s = rec.bound_cycles / self.board.clock_hz
            violation = max(bound_s / best - 1.0, 1e-3) if best else 1e-3
        return Observation(None, violation, rec.status)

    def _account(self, rec: NetworkTrialRecord) -> None:
        p = self.progress
        p.done += 1
        p.statuses[rec.status] += 1
        if rec.status == Status.OK and rec.seconds is not None:
            p.feasible += 1
            if p.best_seconds is None or rec.seconds < p.best_seconds:
                p.best_seconds, p.best_cycles = rec.seconds, rec.cycles
            self.front.append((float(rec.area_mm2 or 0.0), float(rec.seconds), rec.number))
            pts = [(a, s) for a, s, _ in self.front]
            keep = pareto_front(pts) if self.n_obj == 2 else [
                min(range(len(pts)), key=lambda i: pts[i][1])]
            self.front = [self.front[i] for i in keep]
            p.pareto_size = len(self.front)

    def _dominated_by(self, area: float, bound_s: float) -> tuple[float, float, int] | None:
        """The front point that dominates (area, bound), if any."""
        for a, s, n in self.front:
            if self.n_obj == 2:
                if a <= area and s <= bound_s and (a < area or s < bound_s):
                    return a, s, n
            elif s <= bound_s:
                return a, s, n
        return None

    # ---- the outer sampler ------------------------------------------------------------------
    def _unseen(self, taken: Callable[[str], bool]) -> list[Params]:
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

    def _report(self) -> None:
        self._in_flight()
        self.core.report()

    def _in_flight(self) -> None:
        """``progress.partial``: the designs being tuned, by their layer budget spent."""
        self.progress.partial = sum(
            min(0.99, (d.evaluated + d.cached) / max(d.tuner.budget, 1)) for d in self.active)


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
