"""The search speed row's time split (``vtatune.bench.cpu``, ``bench.search.time_parts``):
every part a real, non-negative CPU or core time, the parts adding up, on a small real
search (no assertion about how long anything takes)."""

from __future__ import annotations

import json
import subprocess

import pytest

from vtatune.bench.cpu import measure
from vtatune.bench.search import time_parts
from vtatune.store import Store

#: Clock resolution allowed in the sums (getrusage and perf_counter are read at different
#: instants around the same run).
TOL = 0.05


def test_a_small_search_splits_into_non_negative_parts_that_add_up(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    split = measure(["search", "conv2d", "--trials", "12", "--seed", "0", "--workers", "2",
                     "--db", db, "--json"], cores=2)
    d = json.loads(split.stdout)  # the command's own output comes through untouched
    assert d["trials"] == 12 and d["evaluated"] > 0
    recs = [t.candidate for t in Store(db).trials(d["study"]) if not t.cached]
    parts = time_parts(split, recs, workers=2)
    # CPU of the search process (imports alone take a CPU second) and of its workers (they
    # evaluated candidates), and what the run left of the cores: none negative
    assert parts["main"] > 0 and parts["workers"] > 0
    assert parts["unused"] >= -TOL
    assert parts["main"] + parts["workers"] + parts["unused"] == pytest.approx(
        parts["capacity"], abs=1e-9)
    assert parts["capacity"] == pytest.approx(2 * split.wall)
    # the records' evaluation times are wall time inside the workers: within workers x wall
    assert parts["compile"] > 0 and parts["build"] > 0
    assert parts["compile"] + parts["build"] <= parts["worker_wall"] + TOL
    # the search's own clock runs inside the measured wall time
    assert d["elapsed_s"] <= split.wall + TOL


def test_a_failing_command_raises_with_its_exit_code() -> None:
    with pytest.raises(subprocess.CalledProcessError) as exc:
        measure(["search", "conv2d", "--trials", "0"])
    assert exc.value.returncode == 2
    assert exc.value.stderr.startswith("vtatune: error:")


def test_the_wrapper_registers_its_report_before_multiprocessing_is_imported() -> None:
    # its atexit handler must run after multiprocessing's and the fork server's (those reap
    # the workers), so nothing importing it may have imported multiprocessing already
    import sys

    code = ("import sys, vtatune.bench.cpu; "
            "print(any(m.startswith('multiprocessing') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
