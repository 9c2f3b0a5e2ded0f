"""The A/B part (``vtatune.bench.ab``): a release's tree taken out of git runs as itself, the
rows' ratios and medians come from the runs, and a real run of this tree records its workers'
CPU per compile step within their measured CPU time."""

from __future__ import annotations

import subprocess

from vtatune.bench import ab
from vtatune.bench.cpu import CpuSplit
from vtatune.compiler import steps
from vtatune.paths import project_root


def _run(wall: float, main: float, workers: float, evaluated: int,
         found: dict[str, float] | None = None) -> ab.Run:
    return ab.Run(CpuSplit(wall, 2, main, workers, ""), evaluated, found or {})


def test_export_tree_writes_the_files_of_the_ref(tmp_path) -> None:
    root = project_root()
    tree = ab.export_tree(ab.BASE, tmp_path, root)
    want = subprocess.run(["git", "-C", str(root), "show", f"{ab.BASE}:vtatune/__init__.py"],
                          capture_output=True, text=True, check=True).stdout
    assert (tree / "vtatune" / "__init__.py").read_text() == want
    # b689de0 predates the step records: its tree is the release's, not this one's
    assert not (tree / "vtatune" / "compiler" / "steps.py").exists()


def test_an_unknown_ref_is_a_row_saying_so_not_a_crash() -> None:
    rows = ab.bench_ab(ref="no-such-ref-anywhere", commands=())
    assert len(rows) == 1 and rows[0][1].startswith("not measured")


def test_rows_give_medians_and_ratios_of_the_runs() -> None:
    head = [_run(10.0, 2.0, 8.0, 100, {"schedule": 4.0, "build": 2.0}),
            _run(12.0, 2.0, 10.0, 100, {"schedule": 5.0, "build": 2.0}),
            _run(11.0, 1.0, 8.0, 90, {"schedule": 3.0, "build": 1.0})]
    base = [_run(20.0, 3.0, 17.0, 100), _run(22.0, 3.0, 21.0, 100), _run(21.0, 3.0, 19.0, 100)]
    rows = dict(ab.rows_for("search x", head, base, "REF"))
    wall = next(v for k, v in rows.items() if k.endswith("wall"))
    assert wall == "11.0 s vs 21.0 s (0.52x)"  # the median runs by wall time
    cpu = next(v for k, v in rows.items() if "CPU (search" in k)
    # the median run by CPU (10, 12 and 9 s: the first), its parts adding up to it
    assert cpu.startswith("10.0 s (2.0 + 8.0) vs 22.0 s (3.0 + 19.0) (0.45x)")
    per = next(v for k, v in rows.items() if "per evaluation" in k)
    assert per == "100.0 ms vs 220.0 ms (0.45x)"  # medians of 100, 120, 100 and 200, 240, 220
    share = next(v for k, v in rows.items() if "compile step" in k)
    # 12 of the 26 workers' CPU seconds in schedule, 5 in build, the other 9 the rest
    assert "schedule 46%" in share and "build 19%" in share and share.endswith("35%")


def test_a_real_run_records_steps_within_the_workers_cpu() -> None:
    run = ab.run_once(["search", "conv2d", "--trials", "4", "--workers", "2"], project_root(),
                      record_steps=True)
    assert run.evaluated == 4
    assert run.steps["schedule"] > 0 and run.steps["lower"] > 0
    # every step is a part of the workers' CPU time (getrusage of the reaped workers)
    assert sum(run.steps[s] for s in steps.STEPS) <= run.split.workers + 0.05
