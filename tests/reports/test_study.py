"""The one study model (vtatune/reports/study.py): both kinds of study load through it."""

from __future__ import annotations

from typing import Any

import pytest

from vtatune.reports.study import load
from vtatune.store import Store, StoreError


def test_operator_study_trials_are_its_candidates(studies: Any) -> None:
    store = Store(studies.db, readonly=True)
    study = load(studies.random, store)
    records = store.trials(studies.random)
    assert study.kind == "operator" and study.name == studies.random
    assert [t.number for t in study.trials] == [t.number for t in records]
    assert study.designs == [] and study.host_ops is None
    want = [t.candidate.seconds for t in records if t.candidate.feasible]
    assert study.feasible_seconds() == [s for s in want if s is not None]
    assert len(study.feasible_seconds()) == study.info.n_feasible


def test_network_study_trials_are_designs_with_layer_children(network_studies: Any) -> None:
    store = Store(network_studies.db, readonly=True)
    study = load(network_studies.study, store)
    assert study.kind == "network" and study.operator_trials == []
    assert len(study.designs) == 4
    # each design's children are the network's layers, in the network's order
    assert all([la.name for la in d.layers] == ["a", "b", "a2", "fc"] for d in study.designs)
    ok = [d.seconds for d in study.designs if d.status == "ok"]
    assert study.feasible_seconds() == ok and len(ok) == study.info.n_feasible


def test_unknown_study_is_a_store_error(studies: Any) -> None:
    with pytest.raises(StoreError, match="no study 'nope'"):
        load("nope", Store(studies.db, readonly=True))
