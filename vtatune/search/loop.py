"""The study loop shared by operator and network studies: propose -> claim -> evaluate ->
callbacks.

A trial is a design point new to the study: one candidate of an operator study
(``search.runner``), one hardware design with every layer tuned of a network study
(``networks.runner``). Both runners are this loop with their own evaluation:

1. **propose** (``StudyLoop.propose``): the sampler's next points, each screened first
   (``search.screen``: a screened point is no trial; the sampler is told it as infeasible and
   it counts towards the repeats below) and named by its key (a candidate's, a design's); a key
   the study holds is a repeat (discarded, the sampler asked again). After
   ``REPEATS_BEFORE_RANDOM`` repeats in a row, or when the sampler has nothing new, a seeded
   random unseen point is taken instead (the runner's ``unseen``: ``MAX_RANDOM_DRAWS`` random
   draws, then the space's enumeration where it can be enumerated); none left: the study's
   space is exhausted.
2. **claim** (``StudyLoop.claim``): the points become trial slots on the study's database
   (``Store.claim``), atomically with every other process running the study: a study never
   holds more than its ``trials`` slots and never one key twice (a key another process holds
   is a repeat for this one).
3. **evaluate**: the runner's (a worker pool; the layers of a design).
4. **callbacks** (``StudyLoop.finish``), as MetaSchedule's measure callbacks: the result is
   stored with its slot (``store``: False when another process that took the slot over
   finished it first -- then nothing else happens), the sampler is told, the progress counted
   and reported, in that order.

While a process has nothing more to claim it waits for the others' slots
(``StudyLoop.take_over``), taking over those whose process died (``store.liveness``), and
the run ends when the study holds its trials and no slot is running anywhere.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vtatune.errors import StoreError
from vtatune.statuses import Status

if TYPE_CHECKING:
    from vtatune.search.samplers import Params, Sampler
    from vtatune.search.screen import Screen
    from vtatune.store import Store
    from vtatune.store.records import Slot

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


#: A proposed point: (key, sampler params, the runner's realization of it).
Wanted = tuple[str, "Params", Any]


class StudyLoop:
    """The parts of a run both kinds share (see the module docstring); a runner supplies
    ``key_of`` (a point's key and realization) and ``unseen`` (random unseen points)."""

    def __init__(self, store: Store, study: str, owner: str, grace_s: float, smp: Sampler,
                 screen: Screen, progress: Progress,
                 key_of: Callable[[Params], tuple[str, Any]],
                 unseen: Callable[[Callable[[str], bool]], list[Params]],
                 on_progress: Callable[[Progress], None] | None = None):
        self.store, self.study, self.owner, self.grace_s = store, study, owner, grace_s
        self.smp, self.screen, self.progress = smp, screen, progress
        self.key_of, self.unseen, self.on_progress = key_of, unseen, on_progress
        self.repeats_in_a_row = 0
        self.exhausted = False
        self.mine = 0  # trials this run finished

    def report(self) -> None:
        if self.on_progress:
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
                proposals = self.unseen(busy)
                self.repeats_in_a_row = 0
            else:
                # a sampler with nothing new (a finished grid) does not end the search while
                # the space has unseen points
                proposals = self.smp.ask(want - len(wanted)) or self.unseen(busy)
            self.exhausted = not proposals
            for params in proposals:
                verdict = self.screen.check(params)
                if not verdict.passed:  # no trial: the sampler learns it
                    self.smp.tell(params, verdict.observation)
                    self.repeats_in_a_row += 1
                    self.progress.screened = Counter(self.screen.counts)
                    self.report()
                    continue
                key, realized = self.key_of(params)
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

    # ---- callbacks --------------------------------------------------------------------------
    def finish(self, slot: Slot, stored: bool, params: Params | None, observation: Any,
               account: Callable[[], None]) -> bool:
        """The callbacks of a finished trial, after ``store`` (``stored``: False when another
        process finished the slot first; then the sampler forgets the point): tell the
        sampler (``params``: None when the point is not of its space), count, report."""
        if not stored:
            if params is not None:
                self.smp.discard(params)
            return False
        self.mine += 1
        if params is not None:
            self.smp.tell(params, observation)
        account()
        self.report()
        return True

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
