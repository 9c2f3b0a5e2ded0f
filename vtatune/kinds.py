"""Study kinds: what differs between an operator study and a network study, stated once.

Everything that runs a study (``studies.SearchJob``) or reads one (``reports.study``: show,
report, compare, the API, export) asks the study's kind (``of``, ``get``) instead of switching
on its name. A kind is a ``StudyKind`` registered by name (``register``); a new study kind is
one more ``StudyKind`` beside its evaluator (``search.loop.Evaluator``). Light to import: the
functions a kind names (``"module:function"``) load on first call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtatune.statuses import Status

if TYPE_CHECKING:
    from vtatune.store.records import StudyInfo


def _lazy(path: str) -> Callable[..., Any]:
    """The function at ``"module:function"``, imported when first called."""
    def call(*args: Any, **kw: Any) -> Any:
        import importlib

        module, _, name = path.partition(":")
        return getattr(importlib.import_module(module), name)(*args, **kw)

    return call


@dataclass(frozen=True)
class StudyKind:
    """One kind of study: how its trials are stored, judged, shown, reported and exported,
    and the module that runs one (``runner``: ``check_study(space, study, db)``,
    ``run(space, ...)``)."""

    name: str
    #: what one trial is called in messages
    noun: str
    runner: str
    #: (store, study) -> its trials as stored, by number
    records: Callable[[Any, str], list[Any]]
    #: a stored trial: finished (not running)? feasible? its end-to-end seconds
    finished: Callable[[Any], bool]
    feasible: Callable[[Any], bool]
    seconds: Callable[[Any], float | None]
    #: (info, trials) -> ``UserError`` unless a finished trial is feasible
    require_feasible: Callable[..., None]
    #: (info, trials) -> what ``show`` prints; (info, trials) -> ``reports.data.ReportData``
    summarize: Callable[..., dict[str, Any]]
    report_data: Callable[..., Any]
    #: [(info, finished trials)] -> ``reports.data.CompareData``
    compare_data: Callable[..., Any]
    #: (info, trials, pick) -> the trial ``export --pick`` means; (info, trials, pick,
    #: folder, url) -> the bundle written
    pick: Callable[..., Any]
    write_bundle: Callable[..., Any]
    #: info -> the host operators stored with the study (None: none), its networks
    host_ops: Callable[[StudyInfo], Any] = lambda info: None
    networks: Callable[[StudyInfo], tuple[Any, ...]] = lambda info: ()

    def run_module(self) -> Any:
        import importlib

        return importlib.import_module(self.runner)


_KINDS: dict[str, StudyKind] = {}


def register(kind: StudyKind) -> StudyKind:
    """Add ``kind`` to the registry (by its name)."""
    _KINDS[kind.name] = kind
    return kind


def get(name: str) -> StudyKind:
    """The kind named ``name`` (``KeyError`` names the known ones)."""
    if name not in _KINDS:
        raise KeyError(f"unknown study kind {name!r} (known: {', '.join(_KINDS)})")
    return _KINDS[name]


def of(info: StudyInfo) -> StudyKind:
    """The kind of a stored study."""
    return get("network" if info.is_network else "operator")


def of_space(space: Any) -> StudyKind:
    """The kind of study a search space makes (a ``NetworkSpace`` a network study)."""
    return get("network" if hasattr(space, "network") else "operator")


#: A trial is one candidate: a hardware design with an operator's schedule (``TrialRecord``).
OPERATOR = register(StudyKind(
    name="operator", noun="trial", runner="vtatune.search.runner",
    records=lambda store, study: store.trials(study), finished=lambda t: True,
    feasible=lambda t: bool(t.candidate.feasible), seconds=lambda t: t.candidate.seconds,
    require_feasible=_lazy("vtatune.reports.data:require_feasible"),
    summarize=_lazy("vtatune.search.summary:summarize"),
    report_data=_lazy("vtatune.reports.data:report_data"),
    compare_data=_lazy("vtatune.reports.data:compare_data"),
    pick=_lazy("vtatune.export.bundle:pick_trial"),
    write_bundle=_lazy("vtatune.export.bundle:write_bundle")))

#: A trial is one hardware design with every layer of one or more networks tuned
#: (``NetworkTrialRecord``, its layer results as children).
NETWORK = register(StudyKind(
    name="network", noun="design", runner="vtatune.networks.runner",
    records=lambda store, study: store.network_trials(study),
    finished=lambda t: t.status != Status.RUNNING, feasible=lambda t: bool(t.feasible),
    seconds=lambda t: t.seconds,
    require_feasible=_lazy("vtatune.reports.data:require_feasible_design"),
    summarize=_lazy("vtatune.networks.summary:summarize"),
    report_data=_lazy("vtatune.reports.data:network_report_data"),
    compare_data=_lazy("vtatune.reports.data:network_compare_data"),
    pick=_lazy("vtatune.export.bundle:pick_design"),
    write_bundle=_lazy("vtatune.export.bundle:write_network_bundle"),
    host_ops=_lazy("vtatune.reports.data:study_host_ops"),
    networks=_lazy("vtatune.reports.data:study_networks")))
