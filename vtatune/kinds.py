"""Study kinds: what differs between an operator study and a network study, stated once.

Everything that runs a study (``studies.SearchJob``) or reads one (``reports.study``: show,
report, compare, the API, export) asks the study's kind (``of``, ``get``) instead of switching
on its name. A kind is a ``StudyKind`` registered by name (``register``); a new study kind is
one new ``StudyKind`` beside its evaluator (``search.loop.Evaluator``). Light to import: every
heavy module loads on first use.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from vtatune.statuses import Status

if TYPE_CHECKING:
    from vtatune.networks.network import HostOp
    from vtatune.reports.data import CompareData, ReportData, StudyNetwork
    from vtatune.store import Store
    from vtatune.store.records import StudyInfo


class StudyKind(ABC):
    """One kind of study: how its trials are stored, judged and reported, and the module
    that runs one (``runner``: ``check_study(space, study, db)`` and ``run(space, ...)``)."""

    #: the kind's name (``Study.kind``)
    name: str
    #: what one trial is called in messages
    noun: str
    #: the module running a study of the kind
    runner: str

    @abstractmethod
    def records(self, store: Store, study: str) -> list[Any]:
        """The study's trials as stored, by number."""

    def finished(self, trials: list[Any]) -> list[Any]:
        """The trials that are done (those still running left out)."""
        return list(trials)

    @abstractmethod
    def feasible(self, trial: Any) -> bool:
        """Whether a finished trial is feasible."""

    @abstractmethod
    def seconds(self, trial: Any) -> float | None:
        """A feasible trial's end-to-end seconds (per call; a network's per run)."""

    def host_ops(self, info: StudyInfo) -> tuple[HostOp, ...] | None:
        """The host operators stored with the study (None: the kind has none)."""
        return None

    def networks(self, info: StudyInfo) -> tuple[StudyNetwork, ...]:
        """The networks of a study of several (empty for one, or for an operator study)."""
        return ()

    @abstractmethod
    def require_feasible(self, info: StudyInfo, trials: list[Any]) -> None:
        """``UserError`` unless a finished trial is feasible."""

    @abstractmethod
    def summarize(self, info: StudyInfo, trials: list[Any]) -> dict[str, Any]:
        """What ``show`` prints (``show --json``)."""

    @abstractmethod
    def report_data(self, info: StudyInfo, trials: list[Any]) -> ReportData:
        """What ``report`` draws and tabulates (``reports.data``)."""

    @abstractmethod
    def compare_data(self, studies: list[tuple[StudyInfo, list[Any]]]) -> CompareData:
        """What ``compare`` draws of studies of this kind."""

    @abstractmethod
    def pick(self, info: StudyInfo, trials: list[Any], pick: str) -> Any:
        """The trial ``export --pick`` means (``UserError`` for a bad pick)."""

    @abstractmethod
    def write_bundle(self, info: StudyInfo, trials: list[Any], pick: str, folder: Any,
                     url: str) -> Any:
        """Write the deployment bundle of the picked trial (``export.bundle``)."""

    def run_module(self) -> Any:
        import importlib

        return importlib.import_module(self.runner)


class OperatorKind(StudyKind):
    """A trial is one candidate: a hardware design with an operator's schedule
    (``TrialRecord``)."""

    name, noun, runner = "operator", "trial", "vtatune.search.runner"

    def records(self, store: Store, study: str) -> list[Any]:
        return store.trials(study)

    def feasible(self, trial: Any) -> bool:
        return bool(trial.candidate.feasible)

    def seconds(self, trial: Any) -> float | None:
        return trial.candidate.seconds

    def require_feasible(self, info: StudyInfo, trials: list[Any]) -> None:
        from vtatune.reports.data import require_feasible

        require_feasible(info, trials)

    def summarize(self, info: StudyInfo, trials: list[Any]) -> dict[str, Any]:
        from vtatune.search.summary import summarize

        return summarize(info, trials)

    def report_data(self, info: StudyInfo, trials: list[Any]) -> ReportData:
        from vtatune.reports.data import report_data

        return report_data(info, trials)

    def compare_data(self, studies: list[tuple[StudyInfo, list[Any]]]) -> CompareData:
        from vtatune.reports.data import compare_data

        return compare_data(studies)

    def pick(self, info: StudyInfo, trials: list[Any], pick: str) -> Any:
        from vtatune.export.bundle import pick_trial

        return pick_trial(info, trials, pick)

    def write_bundle(self, info: StudyInfo, trials: list[Any], pick: str, folder: Any,
                     url: str) -> Any:
        from vtatune.export.bundle import write_bundle

        return write_bundle(info, trials, pick, folder, url)


class NetworkKind(StudyKind):
    """A trial is one hardware design with every layer of one or more networks tuned
    (``NetworkTrialRecord``, its layer results as children)."""

    name, noun, runner = "network", "design", "vtatune.networks.runner"

    def records(self, store: Store, study: str) -> list[Any]:
        return store.network_trials(study)

    def finished(self, trials: list[Any]) -> list[Any]:
        return [t for t in trials if t.status != Status.RUNNING]

    def feasible(self, trial: Any) -> bool:
        return bool(trial.feasible)

    def seconds(self, trial: Any) -> float | None:
        return trial.seconds

    def host_ops(self, info: StudyInfo) -> tuple[HostOp, ...] | None:
        from vtatune.reports.data import study_host_ops

        return study_host_ops(info)

    def networks(self, info: StudyInfo) -> tuple[StudyNetwork, ...]:
        from vtatune.reports.data import study_networks

        return study_networks(info)

    def require_feasible(self, info: StudyInfo, trials: list[Any]) -> None:
        from vtatune.reports.data import require_feasible_design

        require_feasible_design(info, trials)

    def summarize(self, info: StudyInfo, trials: list[Any]) -> dict[str, Any]:
        from vtatune.networks.summary import summarize

        return summarize(info, trials)

    def report_data(self, info: StudyInfo, trials: list[Any]) -> ReportData:
        from vtatune.reports.data import network_report_data

        return network_report_data(info, trials)

    def compare_data(self, studies: list[tuple[StudyInfo, list[Any]]]) -> CompareData:
        from vtatune.reports.data import network_compare_data

        return network_compare_data(studies)

    def pick(self, info: StudyInfo, trials: list[Any], pick: str) -> Any:
        from vtatune.export.bundle import pick_design

        return pick_design(info, trials, pick)

    def write_bundle(self, info: StudyInfo, trials: list[Any], pick: str, folder: Any,
                     url: str) -> Any:
        from vtatune.export.bundle import write_network_bundle

        return write_network_bundle(info, trials, pick, folder, url)


_KINDS: dict[str, StudyKind] = {}


def register(kind: StudyKind) -> StudyKind:
    """Add ``kind`` to the registry (by its name)."""
    _KINDS[kind.name] = kind
    return kind


def get(name: str) -> StudyKind:
    """The kind named ``name`` (``KeyError`` names the known ones)."""
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"unknown study kind {name!r} (known: {', '.join(_KINDS)})") from None


def names() -> list[str]:
    return list(_KINDS)


def of(info: StudyInfo) -> StudyKind:
    """The kind of a stored study."""
    return get("network" if info.is_network else "operator")


def of_space(space: Any) -> StudyKind:
    """The kind of study a search space makes (a ``NetworkSpace`` a network study)."""
    return get("network" if hasattr(space, "network") else "operator")


register(OperatorKind())
register(NetworkKind())
