"""The study loop of every study kind: propose -> claim -> evaluate -> callbacks.

A trial is a design point new to the study: one candidate of an operator study
(``search.runner.CandidateEvaluator``), one hardware design with every layer tuned of a network
study (``networks.runner.DesignEvaluator``). ``run`` drives either: the loop owns the jobs in
flight, refreshing from the other processes, taking over dead ones' slots and the stop test;
an ``Evaluator`` is all a study kind supplies (a third kind is one new evaluator class):

1. **propose** (``StudyLoop.propose``): the sampler's next points, each screened first
   (``search.screen``: a screened point is no trial; the sampler is told it as infeasible and
   it counts towards the repeats below) and named by its key (a candidate's, a design's); a key
   the study holds is a repeat (discarded, the sampler asked again). After
   ``REPEATS_BEFORE_RANDOM`` repeats in a row, or when the sampler has nothing new, a seeded
   random unseen point is taken instead (the evaluator's ``unseen``: ``MAX_RANDOM_DRAWS``
   random draws, then the space's enumeration where it can be enumerated); none left: the
   study's space is exhausted.
2. **claim** (``StudyLoop.claim``): the points become trial slots on the study's database
   (``Store.claim``), atomically with every other process running the study: a study never
   holds more than its ``trials`` slots and never one key twice (a key another process holds
   is a repeat for this one).
3. **evaluate**: each claimed slot becomes the evaluator's ``Job``, which asks for candidates
   (one for an operator trial; a design's layers); the loop serves each from the store when a
   reusable record of it exists in the study's evaluation context, else sends it to the worker
   pool, keeping every worker busy, and tells the job the result.
4. **callbacks**, as MetaSchedule's measure callbacks, for every finished trial in order:
   ``StoreTrial`` (with its slot; another process that took the slot over and finished it
   first ends the chain), ``TellSampler``, ``CountTrial``, the kind's own (a network study's
   cost model: ``LearnLayers``), ``ReportProgress``; ``MirrorToOptuna`` keeps the Optuna copy
   while the run lasts. Trials an earlier run or another process stored go through the same
   callbacks (without the store).

While a process has nothing more to claim it waits for the others' slots
(``StudyLoop.take_over``), taking over those whose process died (``store.liveness``), and
the run ends when the study holds its trials and no slot is running anywhere.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vtatune.errors import StoreError
from vtatune.statuses import Status
from vtatune.store.records import TRANSIENT

if TYPE_CHECKING:
    from vtatune.search.samplers import Observation, Params, Sampler
    from vtatune.search.screen import Screen
    from vtatune.search.space import Candidate
    from vtatune.store import Store
    from vtatune.store.records import CandidateRecord, Slot

#: Seconds between heartbeats of a search process (``vt_owners``).
HEARTBEAT_S = 5.0
#: Seconds without a heartbeat after which a process on another host counts as dead and its
#: running slots are taken over (on the same host a dead process is seen at once).
GRACE_S = 60.0
#: Seconds between checks while waiting for other processes' slots to finish.
WAIT_S = 0.5
#: Seconds between reads of the trials other processes stored (learned before planning).
REFRESH_S = 0.5
#: Repeated (or screened) proposals in a row after which a random unseen point is taken.
REPEATS_BEFORE_RANDOM = 10
#: Random draws that must all be seen (or screened) before unseen points come from the
#: space's enumeration (or, for a space too large to enumerate, the space counts as exhausted).
MAX_RANDOM_DRAWS = 100
#: Hardware spaces of at most this many designs are enumerated for unseen designs (exactly
#: exhausted); larger ones are drawn from at random.
MAX_ENUMERATE = 100_000


@dataclass
class Progress:
    """Live state of a study run, passed to the progress callback after every event.

    ``done`` counts the study's finished trials (earlier runs' and other processes' too);
    ``evaluated`` and ``cached`` this run's evaluations: candidates for an operator study,
    layer candidates for a network study (whose trials are designs)."""

    total: int
    done: int = 0
    evaluated: int = 0
    cached: int = 0
    repeats: int = 0
    retries: int = 0
    feasible: int = 0
    best_cycles: int | None = None
    #: the least end-to-end seconds per call of a feasible trial (accelerator + host)
    best_seconds: float | None = None
    #: the least accelerator energy per call (joules) of a feasible trial with energy
    best_energy_j: float | None = None
    pareto_size: int = 0
    statuses: Counter = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)
    resumed_from: int = 0
    #: points screened before evaluation (not trials), by reason (``search.screen``)
    screened: Counter = field(default_factory=Counter)
    #: designs being tuned now (network studies)
    active: int = 0
    #: how far the designs being tuned are, in designs (each its share of its layer
    #: evaluation budget spent, below 1): a progress bar moves per layer evaluation
    partial: float = 0.0

    @property
    def rate(self) -> float:
        """This run's evaluations (served from the store or not) per second."""
        dt = time.monotonic() - self.started
        return (self.evaluated + self.cached) / dt if dt > 0 else 0.0

    @property
    def infeasible_share(self) -> float:
        n = sum(self.statuses.values())
        return 1.0 - self.statuses.get(Status.OK, 0) / n if n else 0.0


@dataclass(frozen=True)
class SearchResult:
    """What a finished (or exhausted) run of a study did (operator or network)."""

    study: str
    db: str
    trials: int  # the study's trials at the end
    new_trials: int  # trials this run finished
    evaluated: int
    cached: int
    repeats: int
    feasible: int
    best_cycles: int | None
    elapsed_s: float
    exhausted: bool
    best_seconds: float | None = None
    retries: int = 0
    mirror_error: str | None = None
    #: the least accelerator energy of a feasible trial with energy (J per call; a network
    #: study: per inference)
    best_energy_j: float | None = None
    #: operator studies: the candidates of an enumerated space that pass the screen; network
    #: studies: the designs of the hardware space, once enumerated (``MAX_ENUMERATE``)
    space_size: int | None = None
    #: the number of trials the study was asked to hold
    requested: int = 0
    #: points screened before evaluation (``Screen.describe``: not trials)
    screened: dict[str, Any] = field(default_factory=dict)
    #: operator studies: candidates of an enumerated space whose design the screen refuses
    space_screened: int | None = None
    #: network studies: the hardware space's designs that pass the screen, once enumerated
    space_passing: int | None = None


class Heartbeat:
    """A daemon thread marking ``owner`` alive every ``interval_s`` seconds."""

    def __init__(self, store: Any, owner: str, interval_s: float):
        import threading

        self.store, self.owner, self.interval_s = store, owner, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.store.heartbeat(self.owner)
            except Exception:  # noqa: BLE001 - a missed beat only delays others' takeover
                pass

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        self.store.close()


@contextmanager
def ownership(store: Store, heartbeat_s: float) -> Iterator[str]:
    """This process as an owner of trial slots while the block runs: registered, beating
    every ``heartbeat_s`` seconds, retired at the end (its unfinished slots then free to
    take over at once)."""
    from vtatune.store import Store as _Store

    owner = store.register_owner()
    beat = Heartbeat(_Store(store.url), owner, heartbeat_s)
    beat.start()
    try:
        yield owner
    finally:
        beat.stop()
        try:
            store.retire_owner(owner)
        except StoreError:
            pass  # the database is gone: the owner's heartbeat goes stale instead


#: A proposed point: (key, sampler params, the evaluator's realization of it).
Wanted = tuple[str, "Params", Any]


@dataclass
class Outcome:
    """A finished trial as the callbacks see it: one this run evaluated (``own``, with its
    ``slot``) or one an earlier run or another process stored (learned from the store)."""

    number: int
    key: str
    #: the sampler's params of the trial; None when they are not of its space
    params: Params | None
    record: Any  # the kind's record: CandidateRecord, NetworkTrialRecord
    #: what the sampler is told; None: the evaluator's ``observation`` of the record
    observation: Observation | None = None
    cached: bool = False
    slot: Slot | None = None
    #: stored by an earlier run (read when the run opens)
    replayed: bool = False

    @property
    def own(self) -> bool:
        return self.slot is not None


class Job(ABC):
    """One trial being evaluated (its slot claimed): the candidates it wants measured, then
    its outcome. The loop serves each candidate from the store (a reusable record in the
    study's evaluation context) or sends it to a worker, and tells the job the result."""

    slot: Slot

    @abstractmethod
    def next(self) -> Candidate | None:
        """A candidate to measure now; None when there is none now."""

    @abstractmethod
    def tell(self, cand: Candidate, rec: CandidateRecord, cached: bool) -> None:
        """The result of ``cand`` (``cached``: served from the store)."""

    @property
    @abstractmethod
    def done(self) -> bool:
        """Nothing in flight and nothing more to measure."""

    @abstractmethod
    def outcome(self) -> Outcome:
        """The finished trial (once ``done``), not stored yet."""


class Evaluator(ABC):
    """What a study kind supplies to the loop: its points (``key_of``, ``unseen``), how a
    claimed point is evaluated (``start``: a ``Job``), how its trials are stored, told and
    counted. Set up before the loop: ``smp`` (the outer sampler), ``screen``, ``context``
    (the ``EvalContext.key`` candidates are stored and served in), ``sampler`` (its name)."""

    smp: Sampler
    screen: Screen
    context: str
    sampler: str
    #: trials proposed at a time / evaluated at the same time (None: as the pool has room)
    batch: int | None = None
    max_active: int | None = None
    #: the objective scores energy: a stored feasible candidate without it (stored before
    #: energy was) is evaluated again instead of served
    needs_energy: bool = False

    def partial(self, active: list[Job]) -> float:
        """How far the trials being evaluated are, in trials (each below 1), so that progress
        moves between trials (a network design's layer evaluations); 0 by default."""
        return 0.0

    @abstractmethod
    def open(self, loop: StudyLoop, warm_start: bool) -> list[Outcome]:
        """Create or continue the study (``StoreError`` if it was made for something else);
        returns its stored trials (running ones included), which the loop replays."""

    @abstractmethod
    def key_of(self, params: Params) -> tuple[str, Any]:
        """A point's key (held once by a study) and realization (what ``start`` gets)."""

    @abstractmethod
    def unseen(self, taken: Callable[[str], bool]) -> list[Params]:
        """A random point that passes the screen, its key not ``taken`` ([] when none is)."""

    @abstractmethod
    def start(self, slot: Slot, realized: Any) -> Job:
        """The trial of ``slot`` (``realized`` None: a slot taken over from a dead process,
        continued with what it had stored)."""

    @abstractmethod
    def stored(self, exclude: set[int]) -> list[Outcome]:
        """The study's stored trials except those numbered ``exclude``."""

    @abstractmethod
    def complete(self, outcome: Outcome) -> bool:
        """Store an own trial with its slot; False (nothing written) when another process
        that took the slot over finished it first."""

    @abstractmethod
    def observation(self, rec: Any) -> Observation:
        """What the sampler learns of a stored trial's record."""

    @abstractmethod
    def count(self, progress: Progress, outcome: Outcome) -> None:
        """Count a finished trial (own or learned) in ``progress``."""

    @abstractmethod
    def pool(self, workers: int, timeout: float) -> Any:
        """The worker pool (``search.workers.WorkerPool``)."""

    def callbacks(self) -> list[Callback]:
        """The kind's own callbacks (after store, tell and count)."""
        return []

    def mirror(self, url: str, study: str, owner: str) -> Any:
        """The study's Optuna mirror (``search.dashboard``)."""
        return None

    def describe(self) -> dict[str, Any]:
        """The kind's fields of ``SearchResult`` (the space's size and the like)."""
        return {}


class Callback:
    """Something done after results, as MetaSchedule's measure callbacks: ``trial`` for every
    finished trial in the list's order (a trial of this run, ``outcome.own``, or one learned
    from the store), ``evaluation`` for every candidate a job was told, ``polled`` after the
    worker pool's results were told."""

    def trial(self, loop: StudyLoop, outcome: Outcome) -> bool | None:
        """False: the trial was not stored (the later callbacks are skipped)."""
        return None

    def evaluation(self, loop: StudyLoop, job: Job, rec: CandidateRecord,
                   cached: bool) -> None:
        pass

    def polled(self, loop: StudyLoop) -> None:
        pass

    def close(self) -> None:
        pass


class StoreTrial(Callback):
    """Stores an own trial with its slot (``Evaluator.complete``)."""

    def trial(self, loop: StudyLoop, outcome: Outcome) -> bool | None:
        if not outcome.own:
            return None
        if not loop.evaluator.complete(outcome):
            return False
        loop.mine += 1
        return True


class TellSampler(Callback):
    """Tells the outer sampler a finished trial."""

    def trial(self, loop: StudyLoop, outcome: Outcome) -> bool | None:
        if outcome.params is not None:
            obs = outcome.observation or loop.evaluator.observation(outcome.record)
            loop.smp.tell(outcome.params, obs)
        return None


class CountTrial(Callback):
    """Counts a finished trial in the run's progress (``Evaluator.count``)."""

    def trial(self, loop: StudyLoop, outcome: Outcome) -> bool | None:
        loop.evaluator.count(loop.progress, outcome)
        return None


class ReportProgress(Callback):
    """Reports the progress after each trial this run stored."""

    def trial(self, loop: StudyLoop, outcome: Outcome) -> bool | None:
        if outcome.own:
            loop.report()
        return None


class MirrorToOptuna(Callback):
    """Keeps an Optuna copy of the study for optuna-dashboard while the run lasts (a thread
    reading the store: ``search.dashboard``); ``error`` says why it stopped, if it did."""

    def __init__(self, mirror: Any):
        self.mirror = mirror

    @property
    def error(self) -> str | None:
        return self.mirror.error if self.mirror is not None else None

    def close(self) -> None:
        if self.mirror is not None:
            self.mirror.close()


class StudyLoop:
    """One run of a study (see the module docstring): the loop owns proposing, claiming,
    the jobs in flight, refreshing from the other processes, taking over dead ones' slots
    and the stop test; the ``evaluator`` supplies what its kind does, the ``callbacks``
    what happens after a result."""

    def __init__(self, store: Store, study: str, owner: str, grace_s: float,
                 evaluator: Evaluator, progress: Progress,
                 callbacks: Sequence[Callback] = (),
                 on_progress: Callable[[Progress], None] | None = None):
        self.store, self.study, self.owner, self.grace_s = store, study, owner, grace_s
        self.evaluator, self.progress = evaluator, progress
        self.smp, self.screen = evaluator.smp, evaluator.screen
        self.callbacks, self.on_progress = list(callbacks), on_progress
        self.repeats_in_a_row = 0
        self.exhausted = False
        self.mine = 0  # trials this run finished
        self.seen: set[str] = set()  # keys the study holds (not proposed again)
        self.told: set[int] = set()  # numbers of the finished trials the callbacks had
        self.active: list[Job] = []
        self.inflight: dict[int, tuple[Job, Candidate]] = {}  # worker task -> job
        self.pending: list[Slot] = []  # slots taken over, not started yet
        self.trials = progress.total
        self.slots = 0  # slots the study has or will have
        self.last_refresh = 0.0
        self._task = 0

    def report(self) -> None:
        if self.on_progress:
            self.progress.partial = self.evaluator.partial(self.active)
            self.on_progress(self.progress)

    # ---- propose ----------------------------------------------------------------------------
    def propose(self, want: int, taken: Callable[[str], bool]) -> list[Wanted]:
        """Up to ``want`` points new to the study (``taken``: keys it holds) that pass the
        screen; fewer (and ``exhausted`` set) when the space has no more."""
        wanted: list[Wanted] = []
        while len(wanted) < want and not self.exhausted:
            def busy(key: str, wanted: list[Wanted] = wanted) -> bool:
                return taken(key) or any(key == w[0] for w in wanted)

            if self.repeats_in_a_row >= REPEATS_BEFORE_RANDOM:
                proposals = self.evaluator.unseen(busy)
                self.repeats_in_a_row = 0
            else:
                # a sampler with nothing new (a finished grid) does not end the search while
                # the space has unseen points
                proposals = self.smp.ask(want - len(wanted)) or self.evaluator.unseen(busy)
            self.exhausted = not proposals
            for params in proposals:
                verdict = self.screen.check(params)
                if not verdict.passed:  # no trial: the sampler learns it
                    self.smp.tell(params, verdict.observation)
                    self.repeats_in_a_row += 1
                    self.progress.screened = Counter(self.screen.counts)
                    self.report()
                    continue
                key, realized = self.evaluator.key_of(params)
                if busy(key):
                    self.repeats_in_a_row += 1  # a repeat: no trial is spent on it
                    self.progress.repeats += 1
                    self.smp.discard(params)
                    continue
                self.repeats_in_a_row = 0
                wanted.append((key, params, realized))
        return wanted

    # ---- claim ------------------------------------------------------------------------------
    def claim(self, wanted: Sequence[Wanted], limit: int
              ) -> tuple[list[tuple[Slot, Wanted]], set[str], bool]:
        """Slots for ``wanted`` (at most ``limit`` in the study): (the granted slots with their
        points, the keys another process holds, whether the study is full). Points without a
        slot are discarded from the sampler; a key another process holds is a repeat."""
        granted, refused = self.store.claim(self.study, self.owner,
                                            [(k, p) for k, p, _ in wanted], limit)
        by_key = {s.key: s for s in granted}
        out = []
        for w in wanted:
            if w[0] in by_key:
                out.append((by_key[w[0]], w))
                continue
            self.smp.discard(w[1])
            if w[0] in refused:
                self.progress.repeats += 1
        full = len(granted) + len(refused) < len(wanted)
        return out, refused, full

    # ---- the callbacks ----------------------------------------------------------------------
    def finish(self, outcome: Outcome) -> bool:
        """Run the callbacks of a finished trial; False when one says it was not stored
        (another process finished the slot first: then the sampler forgets the point)."""
        for cb in self.callbacks:
            if cb.trial(self, outcome) is False:
                if outcome.params is not None:
                    self.smp.discard(outcome.params)
                return False
        self.told.add(outcome.number)
        return True

    def absorb(self, outcomes: Sequence[Outcome], replayed: bool) -> int:
        """Trials stored by earlier runs (``replayed``) or by other processes: the callbacks
        learn them like this run's; returns how many were new. A transient outcome an earlier
        run stored leaves its point open to a new trial."""
        new = 0
        for o in outcomes:
            if not (replayed and o.record.status in TRANSIENT):
                self.seen.add(o.key)
            if o.record.status == Status.RUNNING or o.number in self.told:
                continue
            o.replayed = replayed
            new += self.finish(o)
        return new

    def refresh(self) -> None:
        """Learn the trials the other processes finished."""
        self.last_refresh = time.monotonic()
        exclude = self.told | {j.slot.number for j in self.active}
        if self.absorb(self.evaluator.stored(exclude), replayed=False):
            self.report()

    # ---- the loop ---------------------------------------------------------------------------
    def run(self, trials: int, pool: Any) -> None:
        """Run until the study holds ``trials`` finished trials and none is running anywhere
        (or the space is exhausted), with the evaluations on ``pool``."""
        self.trials = trials
        # slots of processes that died (an interrupted run of this one) first
        self.pending += self.take_over(trials)
        self.slots = self.store.slot_counts(self.study)[0]
        last_check = 0.0
        while True:
            self._fill(pool)
            # an idle worker with more to claim: look for results without waiting
            hungry = pool.room > 0 and self._can_start()
            for task, rec in pool.poll(0.05 if self.inflight and not hungry else 0.0):
                job, cand = self.inflight.pop(task)
                self._tell(job, cand, rec, cached=False)
            for cb in self.callbacks:
                cb.polled(self)
            if self.active or self.pending or self._can_start():
                continue
            # nothing of ours to do: wait for the other processes' slots, taking over those
            # whose process died
            last_check = self.wait(last_check)
            self.pending += self.take_over(trials)
            self.slots, running = self.store.slot_counts(self.study)
            if not self.pending and running == 0 and (self.slots >= trials or self.exhausted):
                return
            self.refresh()

    def _can_start(self) -> bool:
        most = self.evaluator.max_active
        return (self.slots < self.trials and not self.exhausted
                and (most is None or len(self.active) < most))

    def _fill(self, pool: Any) -> None:
        """Give every worker with room a candidate (each worker's next one waits in its
        pipe), serving those the store has, starting trials as needed."""
        while pool.room > 0:
            got = self._next(pool)
            if got is None:
                break
            job, cand = got
            known = self.store.lookup(cand.key, self.evaluator.context)
            if known is not None and self.evaluator.needs_energy and known.feasible \
                    and known.accelerator_energy_j is None:
                known = None  # stored before energy: evaluated again (the row gains it)
            if known is not None:
                self._tell(job, cand, known, cached=True)
                continue
            self.inflight[self._task] = (job, cand)
            pool.submit(self._task, cand)
            self._task += 1
        self._settle()

    def _next(self, pool: Any) -> tuple[Job, Candidate] | None:
        """A candidate of an active job, starting trials (taken over ones first) as needed."""
        while True:
            for job in self.active:
                cand = job.next()
                if cand is not None:
                    return job, cand
            self._settle()
            if self.pending:
                self._start(self.pending.pop(0), None)
            elif not self._can_start() or not self._start_new(pool.room):
                return None

    def _start_new(self, room: int) -> bool:
        """Propose and claim new trials and start them; False when the space is exhausted."""
        if time.monotonic() - self.last_refresh >= REFRESH_S:
            self.refresh()  # learn what the other processes found before planning
        want = min(room, self.trials - self.slots, self.evaluator.batch or room)
        wanted = self.propose(want, self.seen.__contains__)
        if not wanted:
            return False
        granted, _, full = self.claim(wanted, self.trials)
        self.seen.update(k for k, _, _ in wanted)  # a key another process holds included
        if full:
            self.slots = self.store.slot_counts(self.study)[0]  # the study is full: by whom?
        else:
            self.slots += len(granted)  # others' claims show when the limit is met
        for slot, (_, _, realized) in granted:
            self._start(slot, realized)
        return True

    def _start(self, slot: Slot, realized: Any) -> None:
        self.seen.add(slot.key)
        self.active.append(self.evaluator.start(slot, realized))

    def _tell(self, job: Job, cand: Candidate, rec: CandidateRecord, cached: bool) -> None:
        job.tell(cand, rec, cached)
        for cb in self.callbacks:
            cb.evaluation(self, job, rec, cached)
        self._settle()

    def _settle(self) -> None:
        """Finish the done jobs (their callbacks), in the order they started."""
        for job in [j for j in self.active if j.done]:
            self.active.remove(job)
            self.finish(job.outcome())

    # ---- waiting for the others -------------------------------------------------------------
    def take_over(self, limit: int) -> list[Slot]:
        """Running slots of the study whose process died, now this one's to finish (those
        past ``limit`` released)."""
        return self.store.take_over(self.study, self.owner, self.grace_s, limit=limit)

    def wait(self, last_check: float) -> float:
        """Sleep until ``WAIT_S`` after ``last_check``; returns the time now."""
        now = time.monotonic()
        if now - last_check < WAIT_S:
            time.sleep(max(0.0, WAIT_S - (now - last_check)))
        return time.monotonic()


def run(evaluator: Evaluator, *, trials: int, study: str, db: str | None = None,
        workers: int = 1, timeout: float = 120.0, warm_start: bool = True,
        on_progress: Callable[[Progress], None] | None = None,
        heartbeat_s: float = HEARTBEAT_S, grace_s: float = GRACE_S) -> SearchResult:
    """Run ``study`` with ``evaluator`` until it holds ``trials`` trials, together with any
    other process running it; the callbacks: store, tell the sampler, count, the kind's own
    (``Evaluator.callbacks``), report; the Optuna mirror while the run lasts. Raises
    ``UserError`` for bad input only."""
    from vtatune.store import Store

    store = Store(db)
    progress = Progress(total=trials)
    with ownership(store, heartbeat_s) as owner:
        mirror = MirrorToOptuna(None)
        loop = StudyLoop(store, study, owner, grace_s, evaluator, progress,
                         [StoreTrial(), TellSampler(), CountTrial(), *evaluator.callbacks(),
                          ReportProgress(), mirror], on_progress)
        try:
            loop.trials = trials
            loop.absorb(evaluator.open(loop, warm_start), replayed=True)
            progress.resumed_from = progress.done
            progress.evaluated = progress.cached = 0
            progress.started = time.monotonic()
            mirror.mirror = evaluator.mirror(store.url, study, owner)
            if progress.done < trials:  # (else nothing to do: no workers, no TVM)
                with evaluator.pool(workers, timeout) as pool:
                    loop.run(trials, pool)
                loop.refresh()  # the trials the other processes finished meanwhile
        finally:
            evaluator.smp.close()
            for cb in loop.callbacks:
                cb.close()
    p = progress
    return SearchResult(
        study=study, db=store.display_url, trials=p.done, new_trials=loop.mine,
        evaluated=p.evaluated, cached=p.cached, repeats=p.repeats, feasible=p.feasible,
        best_cycles=p.best_cycles, best_seconds=p.best_seconds, best_energy_j=p.best_energy_j,
        elapsed_s=time.monotonic() - p.started, exhausted=loop.exhausted, requested=trials,
        retries=p.retries, mirror_error=mirror.error, screened=loop.screen.describe(),
        **evaluator.describe())
