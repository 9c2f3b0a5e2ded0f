"""The network scale-out benchmark: its study check on hand-made records, and a tiny run on a
real PostgreSQL server (figures, or the refusal while network studies run on one process)."""

from __future__ import annotations

from pathlib import Path

from vtatune.bench import scaleout
from vtatune.bench.store import _record
from vtatune.statuses import Status
from vtatune.store.records import NetworkEval, NetworkTrialRecord


def _trial(number: int, hw_key: str, status: Status = Status.OK) -> NetworkTrialRecord:
    return NetworkTrialRecord(study="s", number=number, hw_key=hw_key, hw={}, hw_name=hw_key,
                              status=status)


def _eval(number: int, seq: int, i: int, cached: bool = False) -> NetworkEval:
    return NetworkEval(number=number, seq=seq, candidate=_record(i), cached=cached)


def test_check_study_counts_designs_and_repeats() -> None:
    trials = [_trial(0, "a"), _trial(1, "b"), _trial(2, "c", Status.NO_FIT)]
    evals = [_eval(0, 0, 1), _eval(0, 1, 2), _eval(1, 0, 1), _eval(1, 1, 1, cached=True)]
    assert scaleout.check_study(trials, evals, 3) == {
        "designs": 3, "exact": True, "running": [], "designs_twice": 0, "evals_twice": 0}
    # design "a" tuned again as trial 3, still running; trial 0 compiled candidate 2 twice
    trials.append(_trial(3, "a", Status.RUNNING))
    evals.append(_eval(0, 2, 2))
    assert scaleout.check_study(trials, evals, 3) == {
        "designs": 4, "exact": False, "running": [3], "designs_twice": 1, "evals_twice": 1}


TINY_TOML = """
[network]
name = "tiny"
[[network.layers]]
name = "a"
kind = "conv2d"
shape = "1,16,8,8,16,3,3,1,1"
count = 2
[[network.layers]]
name = "fc"
kind = "dense"
shape = "1,32,16"
count = 3
[hardware]
LOG_BLOCK_IN = [3, 4]
LOG_BLOCK_OUT = [3, 4]
LOG_ACC_BUFF_SIZE = [15]
LOG_WGT_BUFF_SIZE = [15, 16]
[objective]
kind = "area-latency"
[inner]
trials = 4
min_per_layer = 1
"""


def test_tiny_scale_out_on_postgresql(tmp_path: Path) -> None:
    net = tmp_path / "tiny.toml"
    net.write_text(TINY_TOML)
    rows = scaleout.bench_scaleout(network=str(net), designs=3)
    assert len(rows) == 2, rows
    assert "not measured" not in rows[0][1], rows
    if scaleout.NEEDS in rows[0][1]:  # network studies on one process: the refusal, quoted
        assert "another process" in rows[0][1] and rows[1][1] == scaleout.NEEDS
    else:
        assert "designs 3 and 3 (exactly 3: yes)" in rows[0][1], rows
        value = rows[1][1]
        if "not measured" not in value:  # a tiny design may end before it can be killed
            assert "3 designs (exactly 3: yes; 0 left running)" in value, rows
            assert "twice: 0 designs, 0 layer candidates" in value, rows
