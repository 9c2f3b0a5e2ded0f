"""A worker's collector settings (``worker_boot.settle``): the start-up's objects frozen, the
thresholds raised, in a worker of a real pool; its records equal those of an evaluation in
this process (the collector changes when memory is freed, never what a lowering emits)."""

from __future__ import annotations

import subprocess
import sys
import time

from vtatune.search import space as spaces
from vtatune.search import worker_boot
from vtatune.search.evaluate import evaluate
from vtatune.search.workers import WorkerPool


def test_settle_freezes_what_is_alive_and_raises_the_thresholds() -> None:
    code = ("import gc; from vtatune.search import worker_boot as w; before = gc.get_freeze_count(); "
            "w.settle(); print(before, gc.get_freeze_count(), *gc.get_threshold())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    before, frozen, *threshold = map(int, out)
    assert before == 0 and frozen > 10_000  # the imported modules' objects, at least
    assert tuple(threshold) == worker_boot.GC_THRESHOLD


def test_a_settled_worker_gives_the_records_this_process_gives() -> None:
    sp = spaces.load("conv2d")
    cands = [sp.realize({})[0]]
    for params in ({"LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "h_nthread": 2},
                   {"LOG_BLOCK_IN": 3, "LOG_BLOCK_OUT": 5, "oc_nthread": 2}):
        cand, _ = sp.realize(params)
        assert cand is not None
        cands.append(cand)
    got = {}
    with WorkerPool(1, sp.board, sp.fit_board, sp.max_area_mm2, warmup=cands[0]) as pool:
        for i, cand in enumerate(cands):
            pool.submit(i, cand)
            deadline = time.monotonic() + 300
            while i not in got and time.monotonic() < deadline:
                got.update(pool.poll(0.1))
    from vtatune.hardware.boards import load

    board = load(sp.board)
    for i, cand in enumerate(cands):
        mine, theirs = evaluate(cand, board), got[i]
        assert theirs.status == mine.status and theirs.cycles == mine.cycles, cand.key
        assert theirs.counters == mine.counters and theirs.reason == mine.reason
