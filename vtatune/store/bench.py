"""Store speed on SQLite (part of ``make bench``; alone: ``python -m vtatune.store.bench``).

What the search does per trial: ``save`` a candidate and ``add_trial``; per proposal batch:
``lookup_many``. Measured on a fresh file in a temporary folder, one process, then two
processes writing at once (the search's workers).
"""

from __future__ import annotations

import multiprocessing
import tempfile
import time
from pathlib import Path

from vtatune.store.records import CandidateRecord
from vtatune.store.store import Store

HW = {"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0,
      "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15,
      "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}


def _record(i: int) -> CandidateRecord:
    knobs = {"tile_b": 1, "tile_h": 1 + i % 56, "tile_w": 1 + i // 56 % 56, "tile_co": 4,
             "tile_ci": 4, "h_nthread": 1, "oc_nthread": 1 + i % 2}
    key = "conv2d:bench|3_3_5_0_4_4_15_15_18_17|" + ",".join(f"{k}={v}" for k, v in
                                                             sorted(knobs.items()))
    return CandidateRecord(
        key=key, workload="conv2d:bench", hw_key="3_3_5_0_4_4_15_15_18_17", hw=HW,
        hw_name="1x16x16-i32w256a128u32", knobs=knobs, status="ok", cycles=100_000 + i,
        seconds=1e-3, counters={f"c{j}": j * i for j in range(12)},
        bounds={"compute_cycles": 90_000, "memory_cycles": 40_000}, efficiency=0.9,
        area_mm2=2.0, resources={"lut": 23_000.0, "ff": 11_000.0, "bram": 116.0, "uram": 0.0,
                                 "dsp": 0.0, "fits": True, "over": []},
        compile_ms=20.0, sim_ms=5.0)


def _write(url: str, study: str, first: int, n: int) -> tuple[float, float]:
    """Save ``n`` candidates and trials; (start, end) wall-clock times of the writes."""
    store = Store(url)
    store.create_or_load_study(study, "conv2d:bench", {}, "random", "area-latency", "pynq-z1", 0)
    start = time.time()
    for i in range(first, first + n):
        rec = _record(i)
        store.save(rec)
        store.add_trial(study, i - first, rec.key, "random", {"u_tile_h": 0.5}, False)
    return start, time.time()


def bench_store(n: int = 1000) -> list[tuple[str, str]]:
    """Rates of the store's hot calls on SQLite, as (figure, value) rows."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.sqlite'}"
        start, end = _write(url, "one", 0, n)
        one = n / (end - start)
        store = Store(url)
        keys = [_record(i).key for i in range(n)]
        t = time.perf_counter()
        for k in keys[:200]:
            store.lookup(k)
        lookup_ms = (time.perf_counter() - t) / 200 * 1e3
        t = time.perf_counter()
        store.lookup_many(keys[:64] + [f"miss{i}" for i in range(64)])
        many_ms = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        store.trials("one")
        trials_ms = (time.perf_counter() - t) * 1e3
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(2) as pool:
            spans = pool.starmap(_write, [(url, "two-a", n, n), (url, "two-b", 2 * n, n)])
        two = 2 * n / (max(e for _, e in spans) - min(s for s, _ in spans))
    return [
        ("store: save + add_trial, one process (SQLite, WAL)", f"{one:,.0f} trials/s"),
        ("store: save + add_trial, two processes at once (total)",
         f"{two:,.0f} trials/s"),
        ("store: lookup by key", f"{lookup_ms:.2f} ms"),
        ("store: lookup_many, 128 keys (64 hits)", f"{many_ms:.1f} ms"),
        (f"store: trials() of a {n:,}-trial study", f"{trials_ms:.0f} ms"),
    ]


def main() -> None:
    for name, value in bench_store():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
