"""Frozen records: what the rest of vtatune reads and writes through the store.

The search, the samplers and the reports only ever see these dataclasses, never a database
session (STYLE: algorithms receive frozen records). Units: ``cycles`` in accelerator clock
cycles, ``seconds`` at the board clock, ``area_mm2`` in mm^2 at the area model's node,
``compile_ms``/``sim_ms`` in wall-clock milliseconds. Times are timezone-aware UTC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from vtatune.statuses import (  # noqa: F401 - the store's vocabulary, re-exported
    CANDIDATE_STATUSES,
    DETERMINISTIC,
    NETWORK_STATUSES,
    TRANSIENT,
    Status,
)

#: Every candidate status. Only ``ok`` is feasible; the others say why not:
#: ``invalid`` (the compile path's verification rejected it, e.g. SRAM overflow),
#: ``no_fit`` (does not fit the board), ``failed`` (compile or simulation crashed),
#: ``timeout`` (evaluation exceeded ``--timeout``), ``hw_invalid`` (hardware cannot be built).
STATUSES = CANDIDATE_STATUSES
#: ``DETERMINISTIC``: outcomes that evaluating the same candidate in the same context always
#: gives again: only these are served from the store. ``TRANSIENT``: ``failed`` and ``timeout``
#: may be transient (a crashed worker, a loaded machine) and are evaluated again by later
#: trials. (Both, and ``Status``, are defined in ``vtatune.statuses``.)


@dataclass(frozen=True)
class CandidateRecord:
    """One evaluated (workload, hardware, knobs) point; ``key`` is ``Candidate.key``.

    ``context`` is the evaluation context's key (board, constraints, model fingerprint:
    ``store.identity.EvalContext.key``) and ``model`` its model key; both are empty for rows
    written before contexts existed (never served). ``board`` names the board measured on.

    ``hw``: the ten ``LOG_*`` parameters; ``counters``: the simulator's counters;
    ``bounds``: ``compute_cycles`` and ``memory_cycles`` (physical lower bounds);
    ``efficiency``: best bound / cycles in (0, 1]; ``resources``: the area model's totals
    (lut, ff, bram, uram, dsp, fits, over, ...). Fields a failed evaluation could not
    measure are None (numbers) or empty (dicts); ``reason`` says why.
    """

    key: str
    workload: str
    hw_key: str
    hw: dict[str, int]
    hw_name: str
    knobs: dict[str, int]
    status: str
    reason: str = ""
    cycles: int | None = None
    seconds: float | None = None
    counters: dict[str, Any] = field(default_factory=dict)
    bounds: dict[str, Any] = field(default_factory=dict)
    efficiency: float | None = None
    area_mm2: float | None = None
    resources: dict[str, Any] = field(default_factory=dict)
    compile_ms: float | None = None
    sim_ms: float | None = None
    created_at: datetime | None = None
    context: str = ""
    model: str = ""
    board: str = ""
    #: ``seconds`` (end to end per call) split into the accelerator's time (``cycles`` at the
    #: board clock) and the host's (``vtatune.simulator.timing``); None in older records.
    accelerator_seconds: float | None = None
    host_seconds: float | None = None
    #: Energy per call in joules with the energy model's central constants
    #: (``vtatune.energy.estimate``): the accelerator's (what the design changes) and the
    #: board's (accelerator + processor and board baseline); None in records stored before
    #: energy was (or of an infeasible candidate). ``energy``: their ``low``/``high`` range,
    #: the components' central joules and the model's ``note`` (empty when None).
    accelerator_energy_j: float | None = None
    board_energy_j: float | None = None
    energy: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown candidate status {self.status!r} (known: "
                             f"{', '.join(STATUSES)})")

    @property
    def feasible(self) -> bool:
        return self.status == Status.OK

    @property
    def reusable(self) -> bool:
        """True when the outcome is deterministic (may be served instead of re-evaluated)."""
        return self.status in DETERMINISTIC


@dataclass(frozen=True)
class TrialRecord:
    """Trial ``number`` (from 0) of a study: the candidate it evaluated and how it was proposed.

    ``params`` are the sampler's parameters; ``cached`` is True when the candidate was served
    from the store instead of being compiled and simulated again.
    """

    study: str
    number: int
    candidate: CandidateRecord
    sampler: str
    params: dict[str, Any]
    cached: bool
    created_at: datetime | None = None


@dataclass(frozen=True)
class StudyInfo:
    """A study and its progress.

    ``space`` is the search space's description (``SearchSpace.describe()``); ``sampler`` is the
    one used last; ``best_cycles`` is the fewest cycles of any feasible trial (None if none).
    ``optuna_study_name`` names the Optuna study kept in the same database. ``identity`` is
    what the study is for (workload, board, hardware, knobs, constraints, model fingerprint);
    None for studies made before it was recorded.
    """

    name: str
    workload: str
    space: dict[str, Any]
    sampler: str
    objective: str
    board: str
    seed: int | None
    n_trials: int
    n_feasible: int
    created_at: datetime | None
    optuna_study_name: str
    best_cycles: int | None = None
    identity: dict[str, Any] | None = None
    #: the least accelerator energy (J per call; per inference for a network) of a feasible
    #: trial with energy (None without)
    best_accelerator_energy_j: float | None = None

    @property
    def is_network(self) -> bool:
        """A network study: its trials are hardware designs (``Store.network_trials``)."""
        return "network" in self.space


@dataclass(frozen=True)
class Slot:
    """Trial ``number`` of ``study``, allocated to ``owner`` (a search process) for candidate
    ``key`` proposed with sampler ``params``; its trial is stored by ``Store.complete``."""

    study: str
    number: int
    key: str
    params: dict[str, Any]
    owner: str


#: Statuses of a network trial (one hardware design). ``ok``: every layer has a feasible
#: schedule and the totals are known; ``hw_invalid`` / ``no_fit``: as for candidates, found
#: before any layer is compiled; ``dominated``: the design's lower bound on network latency
#: cannot reach the study's front, so its layers were not tuned (``reason`` names the trial
#: that dominates it); ``no_schedule``: a layer got no feasible schedule within the design's
#: budget; ``running``: being tuned (or interrupted; a rerun continues it).
#: (``NETWORK_STATUSES`` is imported above.)


@dataclass(frozen=True)
class LayerResult:
    """One layer of a network design: the best schedule its shape got on the design.

    ``key`` is the ``vt_candidates`` key of that schedule (None when no feasible one was
    found); ``cycles``/``seconds`` are for one run of the layer (the network runs it
    ``count`` times; ``seconds`` is end to end per call, ``accelerator_seconds`` +
    ``host_seconds``, as ``CandidateRecord``'s; the split is None in rows stored before it);
    ``trials`` counts the evaluations its shape got for this design;
    ``bound_cycles`` is its physical lower bound on the design; ``status`` is ``ok`` or,
    without a feasible schedule, the most frequent failure.
    """

    name: str
    workload: str
    count: int
    key: str | None = None
    knobs: dict[str, int] = field(default_factory=dict)
    cycles: int | None = None
    seconds: float | None = None
    bound_cycles: float | None = None
    trials: int = 0
    status: str = Status.OK
    accelerator_seconds: float | None = None
    host_seconds: float | None = None
    #: energy of one run of the layer (joules; its pick's, None without energy)
    accelerator_energy_j: float | None = None
    board_energy_j: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "workload": self.workload, "count": self.count,
                "key": self.key, "knobs": dict(self.knobs), "cycles": self.cycles,
                "seconds": self.seconds, "accelerator_seconds": self.accelerator_seconds,
                "host_seconds": self.host_seconds, "bound_cycles": self.bound_cycles,
                "trials": self.trials, "status": self.status,
                **_energy_dict(self.accelerator_energy_j, self.board_energy_j)}


@dataclass(frozen=True)
class NetworkResult:
    """One network of a study of several on one design (``NetworkTrialRecord.networks``).

    ``network`` is its name, ``weight`` its weight in the study's objective; ``cycles``
    (accelerator cycles, an integer), ``seconds`` (end to end, one call per layer run),
    ``accelerator_seconds`` and ``host_seconds`` are its totals on the design: the
    count-weighted sums over its layers of their best schedule's (exactly a single network
    study's totals; None while one of its layers has no feasible schedule; ``host_seconds``
    None when a layer's record predates the split); ``bound_cycles`` its physical lower
    bound (sum of count x layer bound); ``layers`` one ``LayerResult`` per layer of the
    network, in its order, under the network's own layer names (a layer whose shape another
    network has too carries the same pick: the shape is tuned once per design).
    """

    network: str
    weight: float
    cycles: int | None = None
    seconds: float | None = None
    accelerator_seconds: float | None = None
    host_seconds: float | None = None
    bound_cycles: float | None = None
    layers: tuple[LayerResult, ...] = ()
    #: energy per inference (joules): count-weighted sums of its layers' (None if one lacks it)
    accelerator_energy_j: float | None = None
    board_energy_j: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"network": self.network, "weight": self.weight, "cycles": self.cycles,
                "seconds": self.seconds, "accelerator_seconds": self.accelerator_seconds,
                "host_seconds": self.host_seconds, "bound_cycles": self.bound_cycles,
                **_energy_dict(self.accelerator_energy_j, self.board_energy_j),
                "layers": [la.as_dict() for la in self.layers]}


@dataclass(frozen=True)
class NetworkTrialRecord:
    """Trial ``number`` of a network study: one hardware design with every layer tuned.

    ``cycles``/``seconds`` are network totals (sum over layers of count x the layer's best);
    ``seconds`` is end to end (one call per layer run), ``accelerator_seconds`` +
    ``host_seconds`` (None in rows stored before the split); ``bound_cycles`` is the
    network's physical lower bound on this design (the same sum over the layers' bounds);
    ``evaluated``/``cached`` count the layer candidates compiled or served from the store
    for it. Units as ``CandidateRecord``.

    **Several networks** (one accelerator for all: ``networks.members``): ``networks`` is
    one ``NetworkResult`` per network, in the study's order, with its weight, totals, bound
    and layers; ``cycles``, ``seconds``, ``accelerator_seconds``, ``host_seconds`` and
    ``bound_cycles`` are the WEIGHTED SUMS of the networks' (``cycles`` truncated to an
    integer): ``seconds`` is the study's objective. ``layers`` then lists every layer of
    every network, named ``NETWORK.LAYER``, with its count in that network. ``networks`` is
    None for a single network's study (and in rows stored before it existed).

    Stored in ``vt_network_trials.layers`` (JSON): ``{"layers": [LayerResult.as_dict(),
    ...]}`` and, for several networks only, ``"networks": [NetworkResult.as_dict(), ...]``
    beside it (``{network, weight, cycles, seconds, accelerator_seconds, host_seconds,
    bound_cycles, layers: [LayerResult.as_dict(), ...]}``); a single network's row is
    exactly as before.
    """

    study: str
    number: int
    hw_key: str
    hw: dict[str, int]
    hw_name: str
    status: str
    reason: str = ""
    area_mm2: float | None = None
    cycles: int | None = None
    seconds: float | None = None
    bound_cycles: float | None = None
    layers: tuple[LayerResult, ...] = ()
    accelerator_seconds: float | None = None
    host_seconds: float | None = None
    resources: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    sampler: str = ""
    evaluated: int = 0
    cached: int = 0
    created_at: datetime | None = None
    networks: tuple[NetworkResult, ...] | None = None
    #: energy per inference (joules, central constants): the count-weighted sums over the
    #: layers of their picks' energies, as ``seconds`` (weighted sums over the networks for
    #: several); None when a layer's pick has none (stored before energy) or not ``ok``
    accelerator_energy_j: float | None = None
    board_energy_j: float | None = None

    def __post_init__(self) -> None:
        if self.status not in NETWORK_STATUSES:
            raise ValueError(f"unknown network trial status {self.status!r} (known: "
                             f"{', '.join(NETWORK_STATUSES)})")

    @property
    def feasible(self) -> bool:
        return self.status == Status.OK


def _energy_dict(accelerator_j: float | None, board_j: float | None
                 ) -> dict[str, float | None]:
    """The energy keys of a layer's or network's stored JSON (absent without energy, so a
    row of an older vtatune reads back as it was)."""
    if accelerator_j is None and board_j is None:
        return {}
    return {"accelerator_energy_j": accelerator_j, "board_energy_j": board_j}


@dataclass(frozen=True)
class NetworkEval:
    """One layer candidate network trial ``number`` evaluated (``cached``: served from the
    store), in the order the trial asked for them (``seq``)."""

    number: int
    seq: int
    candidate: CandidateRecord
    cached: bool
    #: when the trial got it (stored); None where a caller built the record itself
    created_at: datetime | None = None
