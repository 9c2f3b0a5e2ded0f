"""One study model for every reader of a stored study (``show``, the API, ...).

A study's trials are design points whatever its kind: an operator study's trial is one
candidate (``TrialRecord``), a network study's trial one hardware design whose children are
its layer results (``NetworkTrialRecord.layers``). ``load`` reads a study, with its trials,
from the store once; the kind-specific parts (a network's host operators) hang off the model,
which asks its kind (``vtatune.kinds``) for what differs (``Study.report_data``,
``compare_data``, ``summary``), so ``report``, ``compare`` and ``export`` are one function
each over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from vtatune import kinds

if TYPE_CHECKING:
    from vtatune.kinds import StudyKind
    from vtatune.networks.network import HostOp
    from vtatune.reports.data import CompareData, ReportData, StudyNetwork
    from vtatune.store import Store
    from vtatune.store.records import NetworkTrialRecord, StudyInfo, TrialRecord

Kind = Literal["operator", "network"]


@dataclass(frozen=True)
class Study:
    """A stored study: what it is for (``info``), its trials in order, and where it lives.

    ``trials`` holds ``TrialRecord``s for an operator study and ``NetworkTrialRecord``s
    (designs with their layer results as children) for a network study."""

    info: StudyInfo
    trials: tuple[Any, ...]
    display_url: str

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def kind(self) -> Kind:
        return self.of.name  # type: ignore[return-value]

    @property
    def of(self) -> StudyKind:
        """The study's kind (``vtatune.kinds``): what differs between kinds."""
        return kinds.of(self.info)

    @property
    def operator_trials(self) -> list[TrialRecord]:
        """The trials of an operator study (empty for a network study)."""
        return list(self.trials) if self.kind == "operator" else []

    @property
    def designs(self) -> list[NetworkTrialRecord]:
        """The designs of a network study (empty for an operator study)."""
        return list(self.trials) if self.kind == "network" else []

    @property
    def finished(self) -> list[Any]:
        """The trials that are done (a network study's designs still running left out)."""
        return [t for t in self.trials if self.of.finished(t)]

    @property
    def has_feasible(self) -> bool:
        """Whether a finished trial is feasible."""
        return any(self.of.feasible(t) for t in self.finished)

    def feasible_seconds(self) -> list[float]:
        """End-to-end seconds of every feasible design point, in trial order."""
        times = [self.of.seconds(t) for t in self.finished if self.of.feasible(t)]
        return [s for s in times if s is not None]

    @cached_property
    def host_ops(self) -> tuple[HostOp, ...] | None:
        """A network study's host operators as stored with it (None for an operator study
        or a network study made before they were recorded)."""
        return self.of.host_ops(self.info)

    @cached_property
    def networks(self) -> tuple[StudyNetwork, ...]:
        """A study of several networks: each network with its weight, layers and host
        operators (empty for one network or an operator study)."""
        return self.of.networks(self.info)

    @property
    def noun(self) -> str:
        """What one trial of the study is called in messages."""
        return self.of.noun

    def require_feasible(self) -> None:
        """``UserError`` (one line) unless the study has a finished feasible trial: without
        one it has no front to report, compare on its own, or export from."""
        self.of.require_feasible(self.info, list(self.trials))

    def summary(self) -> dict[str, Any]:
        """What ``show`` prints (``show --json``)."""
        return self.of.summarize(self.info, list(self.trials))

    def report_data(self) -> ReportData:
        """What ``report`` draws and tabulates (``reports.data``)."""
        return self.of.report_data(self.info, list(self.trials))


def compare_data(studies: list[Study]) -> CompareData:
    """Fronts, hypervolumes and convergence of ``studies`` (one kind) in one box."""
    return studies[0].of.compare_data([(s.info, s.finished) for s in studies])


def load(study: str | StudyInfo, store: Store) -> Study:
    """Study ``study`` (a name, or the ``StudyInfo`` already read) of ``store`` with its
    trials (``StoreError`` if there is no such study)."""
    info = store.study(study) if isinstance(study, str) else study
    return Study(info, tuple(kinds.of(info).records(store, info.name)), store.display_url)
