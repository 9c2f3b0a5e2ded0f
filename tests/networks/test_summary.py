"""A network study's summary: its best design is one design, all its numbers that design's."""

from __future__ import annotations

from vtatune.networks.summary import best_text, summarize
from vtatune.store.records import NetworkTrialRecord, StudyInfo


def _info() -> StudyInfo:
    return StudyInfo(name="s", workload="network:n", space={"network": {"name": "n"}},
                     sampler="random", objective="latency", board="pynq-z1", seed=0,
                     n_trials=3, n_feasible=2, created_at=None, optuna_study_name="s")


def _design(number: int, cycles: int, seconds: float) -> NetworkTrialRecord:
    return NetworkTrialRecord(study="s", number=number, hw_key=f"hw{number}", hw={},
                              hw_name=f"design{number}", status="ok", area_mm2=1.0,
                              cycles=cycles, seconds=seconds)


def test_best_is_the_fastest_design_and_its_own_cycles() -> None:
    # the fewest cycles (trial 0, a slower clock and more host time) is not the fastest design
    trials = [_design(0, 33_528_771, 0.380), _design(1, 34_878_975, 0.364298),
              _design(2, 40_000_000, 0.500),
              NetworkTrialRecord(study="s", number=3, hw_key="x", hw={}, hw_name="x",
                                 status="no_fit")]
    data = summarize(_info(), trials)
    assert (data["best_trial"], data["best_seconds"], data["best_cycles"]) == (
        1, 0.364298, 34_878_975)
    assert best_text(data) == ("best (least end-to-end latency): 364.298 ms, trial 1 "
                               "(34,878,975 cycles)")
    assert data["top"][0]["trial"] == data["best_trial"]


def test_no_feasible_design_has_no_best() -> None:
    data = summarize(_info(), [NetworkTrialRecord(study="s", number=0, hw_key="x", hw={},
                                                  hw_name="x", status="no_fit")])
    assert data["best_trial"] is None and best_text(data) is None
