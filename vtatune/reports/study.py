"""One study model for every reader of a stored study (``show``, the API, ...).

A study's trials are design points whatever its kind: an operator study's trial is one
candidate (``TrialRecord``), a network study's trial one hardware design whose children are
its layer results (``NetworkTrialRecord.layers``). ``load`` reads a study, with its trials,
from the store once; the kind-specific parts (a network's host operators) hang off the model,
which also picks the kind's report data (``Study.report_data``, ``compare_data``), so
``report``, ``compare`` and ``export`` are one function each over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from vtatune.statuses import Status

if TYPE_CHECKING:
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
        return "network" if self.info.is_network else "operator"

    @property
    def operator_trials(self) -> list[TrialRecord]:
        """The trials of an operator study (empty for a network study)."""
        return [] if self.kind == "network" else list(self.trials)

    @property
    def designs(self) -> list[NetworkTrialRecord]:
        """The designs of a network study (empty for an operator study)."""
        return list(self.trials) if self.kind == "network" else []

    @property
    def finished(self) -> list[Any]:
        """The trials that are done (a network study's designs still running left out)."""
        if self.kind == "network":
            return [t for t in self.trials if t.status != Status.RUNNING]
        return list(self.trials)

    @property
    def has_feasible(self) -> bool:
        """Whether a finished trial is feasible."""
        if self.kind == "network":
            return any(t.feasible for t in self.finished)
        return any(t.candidate.feasible for t in self.trials)

    def feasible_seconds(self) -> list[float]:
        """End-to-end seconds of every feasible design point, in trial order."""
        if self.kind == "network":
            times = [t.seconds for t in self.trials if t.status == Status.OK]
        else:
            times = [t.candidate.seconds for t in self.trials if t.candidate.feasible]
        return [s for s in times if s is not None]

    @cached_property
    def host_ops(self) -> tuple[HostOp, ...] | None:
        """A network study's host operators as stored with it (None for an operator study
        or a network study made before they were recorded)."""
        from vtatune.reports.data import study_host_ops

        return study_host_ops(self.info) if self.kind == "network" else None

    @cached_property
    def networks(self) -> tuple[StudyNetwork, ...]:
        """A study of several networks: each network with its weight, layers and host
        operators (empty for one network or an operator study)."""
        from vtatune.reports.data import study_networks

        return study_networks(self.info) if self.kind == "network" else ()

    @property
    def noun(self) -> str:
        """What one trial of the study is called in messages."""
        return "design" if self.kind == "network" else "trial"

    def require_feasible(self) -> None:
        """``UserError`` (one line) unless the study has a finished feasible trial: without
        one it has no front to report, compare on its own, or export from."""
        from vtatune.reports import data

        check = data.require_feasible_design if self.kind == "network" else \
            data.require_feasible
        check(self.info, list(self.trials))

    def report_data(self) -> ReportData:
        """What ``report`` draws and tabulates (``reports.data``)."""
        from vtatune.reports import data

        build = data.network_report_data if self.kind == "network" else data.report_data
        return build(self.info, list(self.trials))


def compare_data(studies: list[Study]) -> CompareData:
    """Fronts, hypervolumes and convergence of ``studies`` (one kind) in one box."""
    from vtatune.reports import data

    build = data.network_compare_data if studies[0].kind == "network" else data.compare_data
    return build([(s.info, s.finished) for s in studies])


def load(study: str | StudyInfo, store: Store) -> Study:
    """Study ``study`` (a name, or the ``StudyInfo`` already read) of ``store`` with its
    trials (``StoreError`` if there is no such study)."""
    info = store.study(study) if isinstance(study, str) else study
    records = store.network_trials(info.name) if info.is_network else store.trials(info.name)
    return Study(info, tuple(records), store.display_url)


def best_ms(info: StudyInfo, store: Store) -> float | None:
    """The least latency of ``info``'s study in its own measure, as ``show`` and the reports
    give it: ms per call (per run for a network) end to end, the accelerator's cycles at the
    board's clock for an ``--latency accelerator`` study; None without a feasible trial."""
    if (info.space or {}).get("latency") == "accelerator":
        from vtatune.errors import UserError
        from vtatune.hardware import boards

        if info.best_cycles is None:
            return None
        try:
            return info.best_cycles / (boards.device(info.board).clock_mhz * 1e3)
        except UserError:  # a board this install does not know: no clock, no milliseconds
            return None
    times = load(info, store).feasible_seconds()
    return 1e3 * min(times) if times else None
