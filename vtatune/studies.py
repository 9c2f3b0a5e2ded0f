"""What a search is before it runs: defaults, limits, the space file and the study's name.

``vtatune search`` (``cli/search.py``, ``cli/network.py``) and ``vtatune.api.search`` are two
faces over this module: the same defaults, the same ranges, the same default study names, and
the same ``vtatune.errors.UserError`` messages for bad input (the CLI prints them as one line
and exits with 2; Python callers catch them). Light to import: no TVM, no database.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtatune.errors import UserError
from vtatune.hardware.boards import DEFAULT_BOARD  # noqa: F401 - a study default too
from vtatune.search import objectives

if TYPE_CHECKING:
    from vtatune.networks.space import NetworkSpace
    from vtatune.search.space import SearchSpace

#: Sampler of single-operator searches when none is given. Chosen by measurement (README,
#: Benchmarks): within 2% of the exhaustive optimum in 20-24 trials on ResNet-18 C2/C8/C11
#: where TPE needs 16-120 and random 32->300.
DEFAULT_SAMPLER = "xgb"
#: Outer sampler (over hardware designs) of network searches when none is given.
DEFAULT_NETWORK_SAMPLER = "xgb"

#: Seeds numpy's and Optuna's generators accept: 0 .. 2^32 - 1.
SEED_MAX = 2**32 - 1
#: Most worker processes a command starts (more is a fork bomb, not a speed-up).
WORKERS_MAX = 256
#: Most trials one study may ask for (a million trials is days of evaluation).
TRIALS_MAX = 10**6
#: Longest evaluation timeout (seconds): one week.
TIMEOUT_MAX_S = 7 * 24 * 3600.0


# ---- numbers: finite, in range ----------------------------------------------------------------

def int_in(lo: int, hi: int) -> Callable[[int | None], int | None]:
    """A check refusing integers outside ``lo..hi`` (``UserError`` "must be in ..."; the
    caller names the option or argument). None passes."""

    def check(value: int | None) -> int | None:
        if value is not None and not lo <= value <= hi:
            raise UserError(f"must be in {lo:,}..{hi:,}, got {_num(value)}")
        return value

    return check


def finite_in(lo: float, hi: float, low_open: bool = True) -> Callable[[float | None],
                                                                        float | None]:
    """A check refusing NaN, infinities and numbers outside ``(lo, hi]`` (``[lo, hi]`` when
    ``low_open`` is False). None passes."""

    def check(value: float | None) -> float | None:
        if value is None:
            return value
        if not math.isfinite(value):
            raise UserError(f"must be a finite number, got {value}")
        if value < lo or (low_open and value == lo) or value > hi:
            side = "(" if low_open else "["
            raise UserError(f"must be in {side}{lo:g}, {hi:g}], got {value:g}")
        return value

    return check


#: The ranges of ``search``'s numeric arguments.
SEARCH_CHECKS: dict[str, Callable[[Any], Any]] = {
    "trials": int_in(1, TRIALS_MAX), "workers": int_in(0, WORKERS_MAX),
    "seed": int_in(0, SEED_MAX), "timeout": finite_in(0.0, TIMEOUT_MAX_S),
    "layer_trials": int_in(1, TRIALS_MAX)}


def check_numbers(**values: float | None) -> None:
    """Each of ``search``'s numeric arguments in its range (``SEARCH_CHECKS``), else a
    ``UserError`` naming the argument ("seed must be in 0..4,294,967,295, got -1")."""
    for name, value in values.items():
        try:
            SEARCH_CHECKS[name](value)
        except UserError as exc:
            raise UserError(f"{name} {exc}") from None


def _num(value: int) -> str:
    return str(value) if abs(value) < 10**30 else f"an integer of {len(str(abs(value)))} digits"


def refuse_memory_db(db: str | None) -> None:
    """``UserError`` for a database URL that names an in-memory database: a search would run
    to the end and its results vanish with the process."""
    if db is None:
        return
    text = db.strip()
    try:
        from sqlalchemy.engine import make_url

        url = make_url(text) if "://" in text else None
    except Exception:  # noqa: BLE001 - a malformed URL is reported by the store
        url = None
    memory = text == ":memory:" or (
        url is not None and url.get_backend_name() == "sqlite"
        and (url.database in (None, "", ":memory:") or "mode=memory" in text
             or ":memory:" in (url.database or "")))
    if memory:
        raise UserError("--db names an in-memory database: the results would be lost when "
                        "the search ends; give a file (e.g. --db db/vtatune.sqlite)")


# ---- what is searched: operator or network, its space file, its study's name ------------------

def search_target(workloads: Sequence[str], weights: object, space: str | None,
                  network_only: dict[str, object]) -> str | list[str] | None:
    """What ``vtatune search WORKLOAD... [--weights] [--space]`` (and ``api.search``) designs
    for: several networks (a list: one accelerator for all), one network's space file, model
    or set file (its path), or None for a single-operator search, where the options named in
    ``network_only`` (``{"--layer-trials": value, ...}``) must not be given."""
    from vtatune.escaping import shown

    if len(workloads) > 1 or weights is not None:
        if not workloads:
            raise UserError("--weights needs the networks (e.g. vtatune search resnet18 "
                            "mobilenet_v1 --weights 3,1)")
        if space is not None:
            raise UserError("--space applies to one network; for several give a network-set "
                            "file with its hardware space ([networks] members, [hardware], ...)")
        for w in workloads:
            operator = network_file(w, None) is None and not _is_file(w)
            if operator:
                check_workload(w)  # an operator or unknown name: names the known ones
            if len(workloads) == 1 and not _is_set(w):  # --weights weighs several networks
                raise UserError(f"--weights is for several networks, one accelerator for all "
                                f"(e.g. vtatune search resnet18 mobilenet_v1 --weights 3,1); "
                                f"{shown(w, 80)} is "
                                + ("an operator" if operator else "one network")
                                + ": search it without --weights")
            if operator:
                raise UserError(f"{shown(w, 80)} is an operator: several workloads must all "
                                "be networks (names, network files or ONNX models)")
        return list(workloads)
    network = network_file(workloads[0] if workloads else None, space)
    given = [k for k, v in network_only.items() if v is not None]
    if network is None and given:
        raise UserError(f"{' and '.join(given)} apply to network searches (e.g. vtatune "
                        "search resnet18)")
    return None if network is None else space or network


def _is_set(path: str) -> bool:
    """Whether ``path`` is a network-set file (several networks, which --weights weighs)."""
    from vtatune.networks.members import is_set_file

    return is_set_file(path)


def _is_file(path: str) -> bool:
    from pathlib import Path

    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def network_file(workload: str | None, space: str | None) -> str | None:
    """The network space file a search is about (``space`` or ``workload`` naming one:
    ``resnet18``, ``tiny.toml``), the ONNX model or network-set file ``workload`` names, else
    None (a single-operator search)."""
    from vtatune.models.space import is_model_path
    from vtatune.networks import space as nspace
    from vtatune.networks.members import is_set_file

    if workload is not None and is_set_file(workload):
        if space is not None:
            raise UserError("give a network-set file or --space, not both (the set file may "
                            "give the hardware space: [hardware], [objective], [constraints])")
        return workload
    if workload is not None and is_model_path(workload):
        if space is not None:
            raise UserError("give an ONNX model or --space, not both (to search a model in "
                            "other settings: vtatune import MODEL.onnx --out FILE.toml, edit "
                            "it, then vtatune search FILE.toml)")
        return workload
    return next((n for n in (space, workload) if n is not None and nspace.is_network_file(n)),
                None)


def check_workload(workload: str) -> None:
    """``UserError`` naming the known operators and networks for an unknown ``workload``."""
    from vtatune.escaping import shown
    from vtatune.networks import space as nspace
    from vtatune.workloads import registry

    if workload not in registry.kinds():
        if workload.endswith(".toml") or "/" in workload:  # a path, not a name
            raise UserError(f"network file {shown(workload)}: no such file")
        networks = ", ".join(nspace.builtin_names())
        raise UserError(f"unknown workload {shown(workload)} (known: "
                        f"{', '.join(registry.kinds())}; networks: {networks or 'none'})")


def check_sampler(sampler: str) -> None:
    """``UserError`` for an unknown sampler, or one whose optional dependency is missing."""
    from vtatune.escaping import shown
    from vtatune.search.samplers import names, require

    if sampler not in names():
        raise UserError(f"unknown sampler {shown(sampler)} (known: {', '.join(names())})")
    require(sampler)


def check_latency(latency: str | None) -> None:
    from vtatune.escaping import shown
    from vtatune.search.space import LATENCIES

    if latency is not None and latency not in LATENCIES:
        raise UserError(f"--latency must be one of {', '.join(LATENCIES)}, got "
                        f"{shown(latency, 40)}")


def default_space(workload: str, hw: str | None) -> str:
    """``spaces/<workload>[_schedule].toml``; an operator without its own space file is
    searched in conv2d's (its hardware choices; the workload is replaced)."""
    from vtatune.search.space import spaces_dir

    for kind in (workload, "conv2d"):
        if hw is not None and (spaces_dir() / f"{kind}_schedule.toml").exists():
            return f"{kind}_schedule"
        if (spaces_dir() / f"{kind}.toml").exists():
            return kind
    return workload


def study_name(sp: SearchSpace, sampler: str, hw: str | None, default_space: bool = True,
               stock_flag: bool = False) -> str:
    """``KIND-LAYER[-SPACE][-BOARD][-sched-HWNAME][-accelerator][-OBJECTIVE][-stock]-SAMPLER
    [-passes-FP]`` (``OBJECTIVE``: an objective with energy, e.g. ``edp``; ``stock``:
    ``--stock-vta``): searches that cannot share a study get different default names (a study
    refuses a continuation that differs)."""
    wl = sp.workload
    parts = [wl.kind, wl.name or wl.signature]
    if not default_space:
        parts.append(sp.name)
    if sp.board != DEFAULT_BOARD:
        parts.append(sp.board)
    if hw is not None:
        parts += ["sched", sp.hardware({}).name]
    if sp.latency != "end-to-end":
        parts.append(sp.latency)
    if objectives.uses_energy(sp.objective):
        parts.append(sp.objective)
    if stock_flag:
        parts.append("stock")
    parts.append(sampler)
    if sp.passes is not None:
        parts += ["passes", sp.passes.fingerprint[:8]]
    return "-".join(parts)


def network_study_name(sp: NetworkSpace, sampler: str, hw: str | None,
                       stock_flag: bool = False) -> str:
    """``network-NAME[-MODELFP][-sched][-OBJECTIVE][-stock]-SAMPLER``: the default name of a
    network study (an ONNX model's adds the first 8 hex digits of its fingerprint;
    ``OBJECTIVE`` one with energy; ``stock``: ``--stock-vta``). Several networks:
    ``network-A+B[-SET][-wWA_WB][-MODELFPS]...`` (a network-set file's name; the weights when
    they are not all 1)."""
    model = f"{sp.network.fingerprint[:8]}-" if sp.network.fingerprint else ""
    if sp.multi:  # NAME is A+B; a set file's name, weights other than 1 each follow it
        model = "".join(f"{m.network.fingerprint[:8]}-" for m in sp.networks
                        if m.network.fingerprint)
        if any(m.weight != 1.0 for m in sp.networks):
            model = "w" + "_".join(f"{m.weight:g}" for m in sp.networks) + "-" + model
        if sp.name != sp.network.name:
            model = f"{sp.name}-{model}"
    energy = f"{sp.objective}-" if objectives.uses_energy(sp.objective) else ""
    return (f"network-{sp.network.name}-{model}{'sched-' if hw else ''}{energy}"
            f"{'stock-' if stock_flag else ''}{sampler}")


def _check_run(trials: int, sampler: str, timeout: float, workers: int) -> None:
    """The options every search has: ``UserError`` before anything is printed or stored."""
    if trials < 1:
        raise UserError(f"--trials must be at least 1, got {trials}")
    check_sampler(sampler)  # gp without torch: one line, before anything is printed
    if timeout <= 0:
        raise UserError(f"--timeout must be positive, got {timeout:g}")
    if workers < 0:
        raise UserError(f"--workers must be 0 (one per core) or more, got {workers}")


@dataclass(frozen=True)
class SearchJob:
    """A search checked and resolved (``plan_search``; ``operator_search``,
    ``network_search``): its space (a ``SearchSpace``, or a ``NetworkSpace``: a trial is then
    one hardware design with every layer tuned), outer sampler and study name. ``check`` it,
    ``run`` it, ``describe`` it: the same for every target."""

    space: Any  # SearchSpace | NetworkSpace
    sampler: str
    study: str

    @property
    def network(self) -> bool:
        """A network study (one design per trial)?"""
        return hasattr(self.space, "network")

    def _runner(self) -> Any:
        from vtatune import kinds

        return kinds.of_space(self.space).run_module()

    def check(self, db: str | None) -> None:
        """Before anything runs or is printed: ``UserError`` for an in-memory database,
        ``StoreError`` (one line) for an unreachable one or a study of this name made for
        something else."""
        refuse_memory_db(db)
        self._runner().check_study(self.space, self.study, db)

    def run(self, *, trials: int, db: str | None = None, workers: int = 0,
            seed: int | None = None, timeout: float = 120.0, warm_start: bool = True,
            on_progress: Callable[[Any], None] | None = None) -> Any:
        """Run (or continue) the study until it holds ``trials`` trials (``workers`` 0: one
        per core); the ``search.loop.SearchResult``."""
        import os

        return self._runner().run(self.space, sampler=self.sampler, trials=trials,
                                  study=self.study, db=db, workers=workers or os.cpu_count() or 1,
                                  seed=seed, timeout=timeout, warm_start=warm_start,
                                  on_progress=on_progress)

    def describe(self, trials: int, workers: int, db: str) -> str:
        """The search in one line (``db`` as shown): what, how many trials, sampler,
        objective, board, workers."""
        from vtatune import formats

        sp, plural = self.space, "s" if workers != 1 else ""
        what = formats.counted(trials, "trial")
        if self.network:
            per = sp.evaluations_per_design
            why = ("" if per == sp.inner.trials else
                   f" (at least {sp.inner.min_per_layer} for each of "
                   f"{formats.counted(len(sp.units), 'distinct layer')})")
            what = (f"network {sp.network.name} "
                    f"({formats.counted(len(sp.network.layers), 'layer')}), up to "
                    f"{formats.counted(trials, 'design')} of "
                    f"{formats.counted(per, 'layer evaluation')}{why}")
            return (f"search {self.study}: {what}, sampler {self.sampler} (inner "
                    f"{sp.inner.sampler}), {sp.objective}, {sp.board}, {workers} "
                    f"worker{plural}; db {db}")
        return (f"search {self.study}: up to {what}, sampler {self.sampler}, {sp.objective}, "
                f"{sp.board}, {workers} worker{plural}; db {db}")


#: The names this module had for a search job of each kind.
OperatorSearch = NetworkSearch = SearchJob


def plan_search(workloads: str | Sequence[str] | None = None, *,
                weights: str | Sequence[float] | None = None, space: str | None = None,
                layer: str | None = None, shape: str | None = None, hw: str | None = None,
                board: str | None = None, trials: int = 100, sampler: str | None = None,
                objective: str | None = None, study: str | None = None, workers: int = 0,
                seed: int | None = None, timeout: float = 120.0, latency: str | None = None,
                passes: Any = None, layer_trials: int | None = None,
                inner_sampler: str | None = None, stock_vta: bool = False) -> SearchJob:
    """The search ``vtatune search WORKLOAD... [options]`` (and ``api.search``) runs, every
    option checked (``UserError`` before anything runs or is stored): an operator
    (``operator_search``), a network, a model, a network-set file or several networks
    (``network_search``); ``workloads`` None: the ``space`` file's, else conv2d."""
    check_numbers(trials=trials, workers=workers, seed=seed, timeout=timeout,
                  layer_trials=layer_trials)
    names = [] if workloads is None else [workloads] if isinstance(workloads, str) \
        else list(workloads)
    network = search_target(names, weights, space, {"--layer-trials": layer_trials,
                                                    "--inner-sampler": inner_sampler})
    if network is not None:
        return network_search(network, weights=weights, layer=layer, shape=shape, hw=hw,
                              board=board, trials=trials, sampler=sampler, objective=objective,
                              study=study, workers=workers, seed=seed, timeout=timeout,
                              layer_trials=layer_trials, inner_sampler=inner_sampler,
                              latency=latency, passes=passes, stock_vta=stock_vta)
    return operator_search(names[0] if names else None, layer=layer, shape=shape, space=space,
                           hw=hw, board=board, trials=trials, sampler=sampler,
                           objective=objective, study=study, workers=workers, timeout=timeout,
                           latency=latency, passes=passes, stock_vta=stock_vta)


def operator_search(workload: str | None, *, layer: str | None = None,
                    shape: str | None = None, space: str | None = None, hw: str | None = None,
                    board: str | None = None, trials: int = 100, sampler: str | None = None,
                    objective: str | None = None, study: str | None = None, workers: int = 0,
                    timeout: float = 120.0, latency: str | None = None,
                    passes: Any = None, stock_vta: bool = False) -> SearchJob:
    """Check a single-operator search's options (every ``UserError`` before anything runs or
    is stored) and load its space: ``space`` or the workload's default space file
    (``default_space``); ``passes`` a user pass file's path (or a ``PassSet``); ``stock_vta``
    adds the space file's ``[constraints] stock_vta = true`` (``--stock-vta``)."""
    from vtatune.passes.user import resolve
    from vtatune.search import space as spaces

    sampler = sampler or DEFAULT_SAMPLER
    if workload is not None:
        check_workload(workload)
    _check_run(trials, sampler, timeout, workers)
    if hw is not None and objective is None:
        objective = "latency"
    user = resolve(passes)
    path = space if space is not None else default_space(workload or "conv2d", hw)
    check_latency(latency)
    sp = spaces.load(path, layer=layer, shape=shape, workload=workload, hw=hw, board=board,
                     objective=objective, passes=user, latency=latency,
                     stock_vta=True if stock_vta else None)
    return SearchJob(space=sp, sampler=sampler,
                          study=study or study_name(sp, sampler, hw,
                                                    default_space=space is None,
                                                    stock_flag=stock_vta))


def network_search(path: str | Sequence[str], *, weights: str | Sequence[float] | None = None,
                   layer: str | None = None, shape: str | None = None,
                   hw: str | None = None, board: str | None = None, trials: int = 100,
                   sampler: str | None = None, objective: str | None = None,
                   study: str | None = None, workers: int = 0, seed: int | None = None,
                   timeout: float = 120.0, layer_trials: int | None = None,
                   inner_sampler: str | None = None, latency: str | None = None,
                   passes: str | None = None, stock_vta: bool = False) -> SearchJob:
    """Check a network search's options (every ``UserError`` before anything runs or is
    stored) and load its space: ``path`` a network (name, network file, ONNX model), a
    network-set file or a list of networks (one accelerator for all:
    ``networks.members``), weighted by ``weights`` (``--weights`` text "3,1" or numbers; 1
    each by default)."""
    from vtatune.escaping import shown
    from vtatune.networks import space as nspace

    if passes is not None:
        raise UserError("--passes applies to single-operator searches; a network search "
                        "compiles its layers with VTA's passes only")
    if layer is not None or shape is not None:
        raise UserError("--layer and --shape select one layer; a network search tunes every "
                        "layer of the network (edit its [network] table to change them)")
    sampler = sampler or DEFAULT_NETWORK_SAMPLER
    _check_run(trials, sampler, timeout, workers)
    if layer_trials is not None and layer_trials < 1:
        raise UserError(f"--layer-trials must be at least 1, got {layer_trials}")
    from vtatune.search.samplers import layer_names

    if inner_sampler is not None and inner_sampler not in layer_names():
        raise UserError(f"unknown --inner-sampler {shown(inner_sampler, 40)} (known: "
                        f"{', '.join(layer_names())})")
    if latency is not None and latency != nspace.LATENCY:
        raise UserError(f"--latency {shown(latency, 40)}: a network search minimizes the "
                        f"{nspace.LATENCY} seconds of a network run (every layer run is one "
                        "call, accelerator + host); --latency accelerator applies to "
                        "single-operator searches")
    if hw is not None and objective is None:
        objective = "latency"
    from vtatune.models import sets as sets_of_models
    from vtatune.models.space import is_model_path, network_space
    from vtatune.networks import members

    paths = [path] if isinstance(path, str) else list(path)
    if not paths:
        raise UserError("no network given")
    sets = [p for p in paths if members.is_set_file(p)]
    if sets and (len(paths) > 1 or weights is not None):
        raise UserError(f"{shown(sets[0], 80)} is a network-set file: search it alone (its "
                        "members and weights are in it), or give the networks and --weights "
                        "on the command line")
    if isinstance(weights, str):
        weights = members.parse_weights(weights, len(paths))
    opts: dict[str, Any] = dict(
        hw=hw, board=board, objective=objective, inner_trials=layer_trials,
        inner_sampler=inner_sampler, stock_vta=True if stock_vta else None)
    if sets:
        sp = sets_of_models.load_set(sets[0], **opts)
    elif len(paths) > 1 or weights is not None:
        sp = sets_of_models.load_members(paths, weights, **opts)
    elif is_model_path(path := paths[0]):
        sp, _ = network_space(path, hw=hw, board=board, objective=objective,
                              inner_trials=layer_trials, inner_sampler=inner_sampler,
                              stock_vta=True if stock_vta else None)
    else:
        sp = nspace.load(path, hw=hw, board=board, objective=objective,
                         inner_trials=layer_trials, inner_sampler=inner_sampler,
                         stock_vta=True if stock_vta else None)
    return SearchJob(space=sp, sampler=sampler,
                         study=study or network_study_name(sp, sampler, hw, stock_vta))


@dataclass(frozen=True)
class NetworkRun:
    """A finished network search run and its dashboard copy's fate (``mirror_error``: why
    the Optuna study was not updated, None when it was)."""

    result: Any  # search.loop.SearchResult
    mirror_error: str | None


def run_network(job: SearchJob, *, trials: int, db: str | None, workers: int,
                seed: int | None, timeout: float, warm_start: bool,
                on_progress: Callable[[Any], None] | None = None) -> NetworkRun:
    """Run the network search ``job`` (``SearchJob.run``), its dashboard copy's fate beside."""
    result = job.run(trials=trials, db=db, workers=workers, seed=seed, timeout=timeout,
                     warm_start=warm_start, on_progress=on_progress)
    return NetworkRun(result=result, mirror_error=result.mirror_error)
