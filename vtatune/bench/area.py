"""Area model speed: ``estimate`` + ``fit`` per hardware candidate (part of ``make bench``)."""

from __future__ import annotations

import itertools
import statistics
import time

from vtatune.hardware import boards, config


def bench_area() -> list[tuple[str, str]]:
    """Median time of estimate+fit over every valid config of a parameter grid, per board."""
    from vtatune.area import estimate, fit

    grid = itertools.product(range(0, 2), range(3, 6), range(3, 6), range(13, 17),
                             range(16, 20), range(15, 19))
    cfgs = []
    for lb, bi, bo, inp, wgt, acc in grid:
        c = config.HwConfig(log_batch=lb, log_block_in=bi, log_block_out=bo,
                            log_inp_buff_size=inp, log_wgt_buff_size=wgt, log_acc_buff_size=acc)
        if not config.problems_of(c):
            cfgs.append(c)
    times = []
    for board in boards.all_boards():
        for c in cfgs:
            t = time.perf_counter()
            fit(estimate(c, board), board)
            times.append((time.perf_counter() - t) * 1e6)
    return [("area estimate + board fit per hardware candidate, median",
             f"{statistics.median(times):.0f} µs ({len(cfgs)} configs x "
             f"{len(boards.names())} boards)")]
