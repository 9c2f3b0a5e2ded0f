"""CPU per compile step (``vtatune.compiler.steps``): every step of a real compile and build is
counted, the counts never exceed the process's own CPU time, and a worker's totals reach the
folder ``VTATUNE_STEP_CPU`` names."""

from __future__ import annotations

import json
import time

from vtatune.compiler import steps
from vtatune.compiler.cache import ProgramCache
from vtatune.hardware import boards, config
from vtatune.schedules import suggest
from vtatune.search.evaluate import measure
from vtatune.workloads import RESNET18


def test_a_compile_and_build_count_each_step_within_the_process_cpu() -> None:
    wl, hw = RESNET18["C8"], config.default()
    steps.reset()
    t = time.process_time()
    res, low = ProgramCache().compile(wl, hw, suggest(wl, hw))
    assert res.ok
    measure(low, wl, hw, res.knobs, boards.load("pynq-z1"))
    spent = time.process_time() - t
    got = steps.totals()
    assert set(got) == set(steps.STEPS)
    for step in steps.STEPS:  # each ran (a clock of ~1 us resolution; every step takes more)
        assert got[step] > 0, step
    # physical bound: the steps are disjoint parts of this process's CPU time
    assert sum(got.values()) <= spent + 1e-3


def test_dump_writes_only_where_the_environment_says_and_collect_adds_up(tmp_path,
                                                                          monkeypatch) -> None:
    steps.reset()
    monkeypatch.delenv(steps.ENV, raising=False)
    steps.dump()
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "steps-1.json").write_text(json.dumps({"schedule": 1.5, "build": 0.25}))
    (tmp_path / "steps-2.json").write_text(json.dumps({"schedule": 0.5, "other": 9.0}))
    monkeypatch.setenv(steps.ENV, str(tmp_path))
    steps.dump()  # this process: zeros
    got = steps.collect(tmp_path)
    assert got["schedule"] == 2.0 and got["build"] == 0.25 and got["lower"] == 0.0
    assert "other" not in got and len(list(tmp_path.glob("steps-*.json"))) == 3
