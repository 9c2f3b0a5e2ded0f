"""Mirror a study into an Optuna study in the same database, for ``optuna-dashboard``.

vtatune's store is the source of truth; the Optuna study is a view of it that equals it: the
same trials with the same numbers, parameters as the real hardware and knob values
(``LOG_BLOCK_OUT = 4``, ``tile_co = 8``: not the samplers' internal log-positions, which go in
the ``vtatune_params`` user attribute), objective names set (``seconds`` or ``area_mm2``,
``seconds``; ``cycles`` for an accelerator-latency study). A feasible trial is ``COMPLETE`` with
its objective values and the constraint violation 0; an infeasible one has no measured
objective, so it is ``FAIL`` (Optuna's state for a trial without values) and carries its
constraint violation (> 0), with ``status`` and ``reason`` as user attributes: it is never
``COMPLETE`` with made-up infinite values. The violation is the list in the system attribute
``constraints`` (``CONSTRAINTS_ATTR``): the key optuna-dashboard shows (its ``_serializer.py``
reads ``trial.system_attrs["constraints"]``) and one Optuna reads as ``FrozenTrial.constraints``
(``{"0": violation}``); Optuna 5's own per-name keys (``constraints:violation``) are not shown
by optuna-dashboard 0.21.

Every trial has the times it ran (``trial_times``): it ends when the store got it and starts
its evaluation's compile and simulation time earlier; a trial served from the store took none.

A network study (``NetworkOptunaMirror``) is mirrored as one Optuna trial per hardware design:
its parameters are the searched hardware values, its values the network's area and latency,
and its layers are user attributes (``layer <name>``: count, cycles, ms per run, share of the
network's latency, knobs; ``layer <name> ms`` alone, sortable); it runs from the start of its
first layer evaluation to when it was stored.

Written by a background thread (so the search loop never waits for it), a batch of trials in one
transaction (``add_trials``) from what the store holds, in trial-number order. Of several processes
running one study only the holder of the study's mirror lease writes (a row in
``vt_mirror_leases``, renewed on each pass, expiring if its holder dies), so Optuna's own
numbering, which counts insertions, matches vtatune's. The mirror may lag; it catches up on
every pass and when each process stops. A failure is reported (``error``), never raised.
"""

from __future__ import annotations

import threading
import time
import warnings
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from vtatune.search.space import SearchSpace
from vtatune.statuses import Status

if TYPE_CHECKING:
    from vtatune.networks.space import NetworkSpace
    from vtatune.store.records import CandidateRecord, NetworkEval, NetworkTrialRecord

#: User attribute holding vtatune's trial number in the mirrored Optuna trial.
TRIAL_ATTR = "vtatune_trial"
#: Seconds between mirror passes.
FLUSH_S = 2.0
#: How long a mirror lease lasts without renewal (seconds).
LEASE_S = 30.0
#: Attempts at opening Optuna's storage (several processes creating its tables race).
OPEN_ATTEMPTS = 8
#: System attribute holding ``[violation]``: what optuna-dashboard shows as the trial's
#: constraints (optuna_dashboard/_serializer.py: ``CONSTRAINTS_KEY = "constraints"``) and
#: Optuna's ``_CONSTRAINTS_KEY`` (optuna/study/_constrained_optimization.py, read as a list).
CONSTRAINTS_ATTR = "constraints"
#: Characters of a layer name in a user attribute's key (Optuna's key column holds 512).
LAYER_NAME_CHARS = 200


def _local(dt: datetime) -> datetime:
    """A stored (UTC) time as Optuna keeps its own: local time without a zone
    (``datetime.now()``)."""
    return dt.astimezone().replace(tzinfo=None) if dt.tzinfo is not None else dt


def evaluation_seconds(c: CandidateRecord) -> float:
    """Wall seconds the candidate's evaluation took (compile + simulation; 0 if unknown)."""
    return ((c.compile_ms or 0.0) + (c.sim_ms or 0.0)) / 1e3


def trial_times(trial: Any) -> tuple[datetime, datetime] | None:
    """(start, end) of a ``TrialRecord``: stored at ``created_at`` after its evaluation's
    compile and simulation time; served from the store, it took none. None if the record
    has no time."""
    end = trial.created_at
    if end is None:
        return None
    took = 0.0 if trial.cached else evaluation_seconds(trial.candidate)
    return end - timedelta(seconds=took), end


def design_times(design: NetworkTrialRecord, evals: list[NetworkEval]
                 ) -> tuple[datetime, datetime] | None:
    """(start, end) of a network design: from the start of its first layer evaluation (when
    the trial got it less its compile and simulation time) to when the design was stored; a
    design refused before any layer ran (``hw_invalid``, ``no_fit``, ``dominated``) took no
    measurable time."""
    end = design.created_at
    if end is None:
        return None
    starts = [e.created_at - timedelta(seconds=0.0 if e.cached
                                       else evaluation_seconds(e.candidate))
              for e in evals if e.created_at is not None]
    return min([end, *starts]), end


def _set_times(ft: Any, times: tuple[datetime, datetime] | None) -> Any:
    if times is not None:
        ft.datetime_start, ft.datetime_complete = (_local(t) for t in times)
    return ft


def metric_names(objective: str, latency: str = "end-to-end") -> list[str]:
    """Names of the objective values (``evaluate.objective_values``): the latency is seconds
    per call end to end, or the accelerator's cycles; energy is the accelerator's joules
    (``search.objectives.label``)."""
    from vtatune.search import objectives

    return [objectives.label(t, latency) for t in objectives.terms(objective)]


def knob_bounds(space: SearchSpace) -> dict[str, int]:
    """The largest value each searched knob takes on any hardware of the space."""
    import itertools

    from vtatune import schedules

    shape_keys = ("LOG_BATCH", "LOG_BLOCK_IN", "LOG_BLOCK_OUT")
    combos = itertools.product(*(space.hw_choices.get(k, (None,)) for k in shape_keys))
    out: dict[str, int] = {}
    for combo in combos:
        params = {k: v for k, v in zip(shape_keys, combo, strict=True) if v is not None}
        try:
            axes = schedules.knob_space(space.workload, space.hardware(params)).axes
        except Exception:  # noqa: BLE001 - a shape no hardware can build has no knobs
            continue
        for knob in space.knobs:
            if knob in axes and knob not in space.thread_knobs:
                out[knob] = max(out.get(knob, 1), max(axes[knob]))
    return out


def optuna_trial(space: SearchSpace, trial: Any, bounds: dict[str, int],
                 n_objectives: int) -> Any:
    """The Optuna ``FrozenTrial`` showing a vtatune ``TrialRecord``."""
    import optuna
    from optuna.distributions import CategoricalDistribution, IntDistribution

    from vtatune.schedules.knobs import NTHREADS
    from vtatune.search.evaluate import objective_values, violation

    c = trial.candidate
    params: dict[str, Any] = {}
    dists: dict[str, Any] = {}
    for key, choices in space.searched_hw.items():
        if key in c.hw:
            params[key] = int(c.hw[key])
            dists[key] = CategoricalDistribution(list(choices))
    for knob in space.knobs:
        if knob not in c.knobs:
            continue
        value = int(c.knobs[knob])
        params[knob] = value
        threads = knob in space.thread_knobs
        top = max(NTHREADS) if threads else max(bounds.get(knob, 1), value)
        dists[knob] = IntDistribution(1, max(top, value, 1), log=not threads)
    attrs = {TRIAL_ATTR: trial.number, "status": c.status, "hw_name": c.hw_name,
             "cached": trial.cached, "vtatune_params": trial.params}
    if c.accelerator_energy_j is not None:
        attrs.update(accelerator_energy_j=c.accelerator_energy_j,
                     board_energy_j=c.board_energy_j)
    if c.reason:
        attrs["reason"] = c.reason[:1000]
    values = objective_values(space, c)
    if values is not None:
        ft = optuna.trial.create_trial(params=params, distributions=dists,
                                       values=list(values), user_attrs=attrs,
                                       system_attrs={CONSTRAINTS_ATTR: [0.0]})
    else:
        ft = optuna.trial.create_trial(
            state=optuna.trial.TrialState.FAIL, params=params, distributions=dists,
            user_attrs=attrs, system_attrs={CONSTRAINTS_ATTR: [max(violation(c), 1e-9)]})
    return _set_times(ft, trial_times(trial))


def network_optuna_trial(space: NetworkSpace, design: NetworkTrialRecord,
                         evals: list[NetworkEval], n_objectives: int,
                         others: list[NetworkTrialRecord]) -> Any:
    """The Optuna ``FrozenTrial`` showing one design of a network study; ``others`` are the
    study's finished designs (a ``dominated`` design's violation is how far its latency
    bound is from the fastest of them at no more area)."""
    import optuna
    from optuna.distributions import CategoricalDistribution

    from vtatune.search import objectives

    params = {k: int(design.hw[k]) for k in space.searched_hw if k in design.hw}
    dists = {k: CategoricalDistribution(list(space.searched_hw[k])) for k in params}
    attrs: dict[str, Any] = {
        TRIAL_ATTR: design.number, "status": design.status, "hw_name": design.hw_name,
        "cycles": design.cycles, "accelerator_seconds": design.accelerator_seconds,
        "host_seconds": design.host_seconds, "bound_cycles": design.bound_cycles,
        "accelerator_energy_j": design.accelerator_energy_j,
        "board_energy_j": design.board_energy_j,
        "layer_evaluations": design.evaluated, "layer_cached": design.cached,
        "vtatune_params": design.params}
    if design.reason:
        attrs["reason"] = design.reason[:1000]
    for la in design.layers:
        name = la.name[:LAYER_NAME_CHARS]
        ms = None if la.seconds is None else 1e3 * la.seconds
        share = (la.count * la.seconds / design.seconds) \
            if la.seconds is not None and design.seconds else None
        attrs[f"layer {name}"] = {"count": la.count, "cycles": la.cycles, "ms": ms,
                                  "share": share, "trials": la.trials, "status": la.status,
                                  "knobs": dict(la.knobs)}
        attrs[f"layer {name} ms"] = ms
    values = objectives.values(space.objective, float(design.area_mm2 or 0.0),
                               float(design.seconds), design.accelerator_energy_j) \
        if design.feasible and design.seconds is not None else None
    if values is not None:
        ft = optuna.trial.create_trial(params=params, distributions=dists, values=list(values),
                                       user_attrs=attrs, system_attrs={CONSTRAINTS_ATTR: [0.0]})
    else:
        ft = optuna.trial.create_trial(
            state=optuna.trial.TrialState.FAIL, params=params, distributions=dists,
            user_attrs=attrs,
            system_attrs={CONSTRAINTS_ATTR: [design_violation(space, design, others)]})
    return _set_times(ft, design_times(design, evals))


def design_violation(space: NetworkSpace, design: NetworkTrialRecord,
                     others: list[NetworkTrialRecord]) -> float:
    """How far an infeasible design is from feasible (> 0): a ``no_fit`` one by its largest
    overflowing resource (``search.evaluate.violation``) or the area over the budget; a
    ``dominated`` one by its latency bound over the fastest finished design with no more
    area; anything else 1."""
    from vtatune.hardware import boards
    from vtatune.search.evaluate import violation
    from vtatune.store.records import CandidateRecord

    if design.status == Status.NO_FIT:
        if design.resources.get("over"):
            rec = CandidateRecord(key="", workload="", hw_key=design.hw_key, hw=design.hw,
                                  hw_name=design.hw_name, knobs={}, status=Status.NO_FIT,
                                  resources=design.resources)
            return max(violation(rec), 1e-9)
        cap, area = space.max_area_mm2, design.area_mm2
        if cap and area and area > cap:
            return area / cap - 1.0
    if design.status == Status.DOMINATED and design.bound_cycles:
        best = min((t.seconds for t in others if t.feasible and t.seconds
                    and (t.area_mm2 or 0.0) <= (design.area_mm2 or 0.0)), default=None)
        if best:
            bound_s = design.bound_cycles / boards.load(space.board).clock_hz
            return max(bound_s / best - 1.0, 1e-3)
    return 1.0


def add_trials(store: Any, study_id: int, trials: list[Any]) -> None:
    """Optuna's ``Study.add_trials(trials)`` on the Optuna study ``study_id`` in ``store``'s
    database, in one transaction.

    The rows are those ``RDBStorage.create_new_trial`` writes (its tables, encodings and
    numbering: a trial's number counts the study's earlier trials), with its checks (each
    trial validated, a parameter's distribution compatible with the study's earlier ones), but
    without its ~40 queries and a commit per trial, and without the ORM: one insert a trial
    (for its id), then one multi-row insert per table. tests/search/test_dashboard.py compares
    the two writers.
    """
    import json

    from optuna.distributions import (
        check_distribution_compatibility,
        distribution_to_json,
        json_to_distribution,
    )
    from optuna.storages._rdb import models
    from sqlalchemy import func, insert, select

    if not trials:
        return
    tm, pm = models.TrialModel, models.TrialParamModel
    children: dict[Any, list[dict[str, Any]]] = {
        m: [] for m in (models.TrialValueModel, pm, models.TrialUserAttributeModel,
                        models.TrialSystemAttributeModel, models.TrialIntermediateValueModel)}
    with store.transaction() as s:
        # Optuna numbers trials under a lock of the study's row (SQLite: the write lock)
        s.execute(select(models.StudyModel.study_id)
                  .where(models.StudyModel.study_id == study_id).with_for_update())
        number = s.scalar(select(func.count(tm.trial_id)).where(tm.study_id == study_id))
        known: dict[str, list[Any]] = {}
        for name, dist in s.execute(select(pm.param_name, pm.distribution_json)
                                    .join(tm, pm.trial_id == tm.trial_id)
                                    .where(tm.study_id == study_id).distinct()):
            known.setdefault(name, []).append(json_to_distribution(dist))
        for ft in trials:  # every check before the first write
            ft._validate()
            for name, dist in ft.distributions.items():
                if dist not in known.setdefault(name, []):
                    for earlier in known[name]:
                        check_distribution_compatibility(earlier, dist)
                    known[name].append(dist)
        for ft in trials:
            trial_id = s.execute(insert(tm.__table__).values(
                study_id=study_id, number=number, state=ft.state,
                datetime_start=ft.datetime_start,
                datetime_complete=ft.datetime_complete)).inserted_primary_key[0]
            number += 1
            for objective, value in enumerate(ft.values if ft.values is not None else []):
                stored, kind = models.TrialValueModel.value_to_stored_repr(value)
                children[models.TrialValueModel].append(
                    {"trial_id": trial_id, "objective": objective, "value": stored,
                     "value_type": kind})
            for name, value in ft.params.items():
                dist = ft.distributions[name]
                children[pm].append({"trial_id": trial_id, "param_name": name,
                                     "param_value": dist.to_internal_repr(value),
                                     "distribution_json": distribution_to_json(dist)})
            for model, attrs in ((models.TrialUserAttributeModel, ft.user_attrs),
                                 (models.TrialSystemAttributeModel, ft.system_attrs)):
                children[model] += [{"trial_id": trial_id, "key": key,
                                     "value_json": json.dumps(value)}
                                    for key, value in attrs.items()]
            for step, value in ft.intermediate_values.items():
                stored, kind = models.TrialIntermediateValueModel.intermediate_value_to_stored_repr(
                    value)
                children[models.TrialIntermediateValueModel].append(
                    {"trial_id": trial_id, "step": step, "intermediate_value": stored,
                     "intermediate_value_type": kind})
        for model, rows in children.items():
            if rows:
                s.execute(insert(model.__table__), rows)


def trial_count(store: Any, study_id: int) -> int:
    """Trials in the Optuna study ``study_id``, counted by one query (Optuna's storage API
    loads every trial whole to count them)."""
    from optuna.storages._rdb import models
    from sqlalchemy import func, select

    tm = models.TrialModel
    with store.transaction(write=False) as s:
        return int(s.scalar(select(func.count(tm.trial_id)).where(tm.study_id == study_id))
                   or 0)


def mirrored_numbers(store: Any, study_id: int) -> set[Any]:
    """The vtatune trial numbers the Optuna study ``study_id`` shows (``TRIAL_ATTR``)."""
    import json

    from optuna.storages._rdb import models
    from sqlalchemy import select

    tm, am = models.TrialModel, models.TrialUserAttributeModel
    with store.transaction(write=False) as s:
        return {json.loads(v) for v in s.scalars(
            select(am.value_json).join(tm, am.trial_id == tm.trial_id)
            .where(tm.study_id == study_id, am.key == TRIAL_ATTR))}


class OptunaMirror:
    """Keeps the Optuna study ``name`` at ``url`` equal to the store's study (a thread)."""

    def __init__(self, url: str, name: str, space: SearchSpace, n_objectives: int,
                 owner: str = "", flush_s: float = FLUSH_S):
        self.url, self.name, self.space, self.n_objectives = url, name, space, n_objectives
        self.owner = owner or f"mirror-{id(self)}"
        self.flush_s = flush_s
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="optuna-mirror", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """A last pass (waiting a while for the lease if another process holds it), then stop."""
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        from vtatune.store import Store

        store = None
        try:
            store = Store(self.url)
            state = _State()
            while True:
                stopping = self._stop.wait(self.flush_s)
                deadline = time.monotonic() + (LEASE_S if stopping else 0.0)
                while True:
                    if store.acquire_mirror_lease(self.name, self.owner, LEASE_S):
                        try:
                            self._pass(store, state)
                        finally:
                            if stopping:
                                store.release_mirror_lease(self.name, self.owner)
                        break
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.2)
                if stopping:
                    return
        except Exception as exc:  # noqa: BLE001 - the dashboard view must never stop a search
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            if store is not None:
                store.close()

    def _pass(self, store: Any, state: _State) -> None:
        """Add the store's finished trials the Optuna study lacks, in number order, up to the
        first number not finished yet (so Optuna's numbers stay vtatune's)."""
        if state.study is None:
            state.study = self._open()
            self._prepare(state)
        study_id = state.study._study_id
        n = trial_count(store, study_id)
        if n != len(state.mirrored):  # a first pass, or another process mirrored some
            state.mirrored = mirrored_numbers(store, study_id)
        # Optuna numbers trials in the order they are added, from 0, as the store allocates
        # slot numbers (dense: a slot whose owner died is taken over, never dropped); so only
        # the run of finished numbers that continues the mirror is added. (Reading the running
        # slots beside the finished ones could not tell a slot claimed between the two reads.)
        todo = sorted(self._finished(store, state) - state.mirrored)
        ready = []
        for k in todo:
            if k != n + len(ready):
                break
            ready.append(k)
        if not ready:
            return
        numbers, frozen = self._frozen(store, state, ready)
        add_trials(store, study_id, frozen)
        state.mirrored.update(numbers)

    # ---- what a study kind mirrors (NetworkOptunaMirror overrides these) ----------------------
    @property
    def latency(self) -> str:
        """What the study's latency objective is (``metric_names``)."""
        return self.space.latency

    def _prepare(self, state: _State) -> None:
        state.bounds = knob_bounds(self.space)

    def _finished(self, store: Any, state: _State) -> set[int]:
        """Numbers of the study's finished trials."""
        return set(store.trial_numbers(self.name))

    def _frozen(self, store: Any, state: _State, numbers: list[int]
                ) -> tuple[list[int], list[Any]]:
        """The trials ``numbers`` as Optuna trials, in order (with their numbers)."""
        trials = store.trials(self.name, numbers=numbers)
        return ([t.number for t in trials],
                [optuna_trial(self.space, t, state.bounds, self.n_objectives) for t in trials])

    def _open(self) -> Any:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        last: Exception | None = None
        for attempt in range(OPEN_ATTEMPTS):
            try:
                study = optuna.create_study(storage=self.url, study_name=self.name,
                                            load_if_exists=True,
                                            directions=["minimize"] * self.n_objectives)
                names = metric_names(self.space.objective, self.latency)
                if study.metric_names != names:
                    with warnings.catch_warnings():  # "experimental" since Optuna 3.2
                        warnings.simplefilter("ignore")
                        study.set_metric_names(names)
                return study
            except Exception as exc:  # noqa: BLE001 - tables or study created concurrently
                last = exc
                time.sleep(0.2 * (attempt + 1))
        assert last is not None
        raise last


class NetworkOptunaMirror(OptunaMirror):
    """Keeps the Optuna study ``name`` equal to network study ``name``: one Optuna trial per
    finished hardware design (``network_optuna_trial``); a design being tuned waits."""

    def __init__(self, url: str, name: str, space: NetworkSpace, n_objectives: int,
                 owner: str = "", flush_s: float = FLUSH_S):
        super().__init__(url, name, space, n_objectives, owner, flush_s)  # type: ignore[arg-type]

    @property
    def latency(self) -> str:
        return "end-to-end"  # a network run, every layer call end to end

    def _prepare(self, state: _State) -> None:
        pass  # no knobs: the parameters are the searched hardware values

    def _finished(self, store: Any, state: _State) -> set[int]:
        state.designs = {t.number: t for t in store.network_trials(self.name)
                         if t.status != Status.RUNNING}
        return set(state.designs)

    def _frozen(self, store: Any, state: _State, numbers: list[int]
                ) -> tuple[list[int], list[Any]]:
        others = list(state.designs.values())
        frozen = [network_optuna_trial(self.space, state.designs[k],  # type: ignore[arg-type]
                                       store.network_evals(self.name, k), self.n_objectives,
                                       others) for k in numbers]
        return numbers, frozen


class _State:
    def __init__(self) -> None:
        self.study: Any = None
        self.bounds: dict[str, int] = {}
        self.mirrored: set[Any] = set()
        self.designs: dict[int, Any] = {}
