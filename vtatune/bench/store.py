"""Store speed on SQLite and PostgreSQL (part of ``make bench``; alone:
``python -m vtatune.bench.store [--quick]``).

What the search does per trial: ``claim`` a slot, ``complete`` it (record + trial + slot in one
transaction); per proposal batch: ``lookup_many``. Measured on a fresh SQLite file in a
temporary folder and on a throwaway PostgreSQL server (``pgserver``, skipped with a note when
no server binaries exist), with 1, 4 and 16 writer processes at once on one study. Then the
whole search: a 200-trial ``vtatune search`` run by one process, and by two processes sharing
the study (wall time ratio).
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vtatune.statuses import Status
from vtatune.store.records import CandidateRecord
from vtatune.store.store import Store

HW = {"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0,
      "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15,
      "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}
CONTEXT = "benchcontext0000"


def _record(i: int) -> CandidateRecord:
    knobs = {"tile_b": 1, "tile_h": 1 + i % 56, "tile_w": 1 + i // 56 % 56, "tile_co": 4,
             "tile_ci": 4 + i // 3136, "h_nthread": 1, "oc_nthread": 1 + i % 2}
    key = "conv2d:bench|3_3_5_0_4_4_15_15_18_17|" + ",".join(f"{k}={v}" for k, v in
                                                             sorted(knobs.items()))
    return CandidateRecord(
        key=key, workload="conv2d:bench", hw_key="3_3_5_0_4_4_15_15_18_17", hw=HW,
        hw_name="1x16x16-i32w256a128u32", knobs=knobs, status=Status.OK, cycles=100_000 + i,
        seconds=1e-3, counters={f"c{j}": j * i for j in range(12)},
        bounds={"compute_cycles": 90_000, "memory_cycles": 40_000}, efficiency=0.9,
        area_mm2=2.0, resources={"lut": 23_000.0, "ff": 11_000.0, "bram": 116.0, "uram": 0.0,
                                 "dsp": 0.0, "fits": True, "over": []},
        compile_ms=20.0, sim_ms=5.0, context=CONTEXT, model="benchmodel", board="pynq-z1")


def _open(url: str, study: str) -> Store:
    store = Store(url)
    store.create_or_load_study(study, "conv2d:bench", {}, "random", "area-latency", "pynq-z1",
                               0, identity={"board": "pynq-z1"})
    return store


def _write(url: str, study: str, first: int, n: int, limit: int) -> tuple[float, float]:
    """Claim and complete ``n`` slots of ``study`` (the search's per-trial writes); (start,
    end) wall-clock times."""
    store = _open(url, study)
    owner = store.register_owner()
    start = time.time()
    for i in range(first, first + n):
        rec = _record(i)
        (slot,), _ = store.claim(study, owner, [(rec.key, {"u_tile_h": 0.5})], limit)
        store.complete(slot, rec, "random", False, CONTEXT)
    end = time.time()
    store.retire_owner(owner)
    return start, end


def _throughput(url: str, writers: int, per_writer: int) -> float:
    """Trials/s stored by ``writers`` processes at once on one study."""
    study = f"w{writers}"
    _open(url, study).close()
    if writers == 1:
        start, end = _write(url, study, 0, per_writer, per_writer)
        return per_writer / (end - start)
    ctx = multiprocessing.get_context("spawn")
    total = writers * per_writer
    with ctx.Pool(writers) as pool:
        spans = pool.starmap(_write, [(url, study, 1_000_000 * (w + 1), per_writer, total)
                                      for w in range(writers)])
    return total / (max(e for _, e in spans) - min(s for s, _ in spans))


def bench_backend(name: str, url: str, quick: bool) -> list[tuple[str, str]]:
    per = 40 if quick else 200
    rows = []
    for writers in (1, 4, 16):
        rate = _throughput(url, writers, per if writers == 1 else max(per // writers, 10))
        rows.append((f"store: trials stored, {writers} writer process"
                     f"{'es' if writers > 1 else ''} at once ({name})", f"{rate:,.0f} trials/s"))
    return rows


def bench_lookups(url: str, n: int) -> list[tuple[str, str]]:
    store = Store(url)
    store.save_many([_record(i) for i in range(n)])
    keys = [_record(i).key for i in range(n)]
    t = time.perf_counter()
    for k in keys[:200]:
        store.lookup(k, CONTEXT)
    lookup_ms = (time.perf_counter() - t) / min(200, n) * 1e3
    t = time.perf_counter()
    store.lookup_many(keys[:64] + [f"miss{i}" for i in range(64)], CONTEXT)
    many_ms = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    store.trials("w1")
    trials_ms = (time.perf_counter() - t) * 1e3
    return [("store: lookup by key (SQLite)", f"{lookup_ms:.2f} ms"),
            ("store: lookup_many, 128 keys (64 hits) (SQLite)", f"{many_ms:.1f} ms"),
            ("store: trials() of the 1-writer study (SQLite)", f"{trials_ms:.0f} ms")]


def _search(url: str, trials: int, study: str, seed: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "vtatune", "search", "dense", "--shape", "16,64,64",
         "--trials", str(trials), "--sampler", "random", "--seed", str(seed), "--workers", "1",
         "--db", url, "--study", study, "--json"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})


def bench_shared_search(folder: Path, trials: int) -> list[tuple[str, str]]:
    """Wall time of a ``trials``-trial search by one process, then by two sharing it. Each
    case has a database of its own (nothing is served from the other case's results) and
    each process its own seed (two processes do not propose the same candidates)."""
    walls = []
    for n_procs in (1, 2):
        url = f"sqlite:///{folder / f'search-{n_procs}.sqlite'}"
        t = time.perf_counter()
        procs = [_search(url, trials, "search", seed) for seed in range(1, n_procs + 1)]
        codes = [p.wait() for p in procs]
        walls.append(time.perf_counter() - t)
        if any(codes):
            raise RuntimeError(f"shared-search bench: a search exited with {codes}")
    return [(f"search: {trials} trials by 1 process (SQLite, 1 worker each)",
             f"{walls[0]:.1f} s"),
            ("search: the same by 2 processes sharing the study (wall time ratio 2/1)",
             f"{walls[1]:.1f} s ({walls[1] / walls[0]:.2f}x)")]


def bench_store(quick: bool = False) -> list[tuple[str, str]]:
    """The store's figures, as (figure, value) rows."""
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.sqlite'}"
        rows += bench_backend("SQLite", url, quick)
        rows += bench_lookups(url, 200 if quick else 1000)
        try:
            from vtatune.store.pgserver import PgServer, PgServerError
        except ImportError:  # pragma: no cover
            PgServer = None  # noqa: N806
        if PgServer is not None:
            try:
                with PgServer() as pg:
                    rows += bench_backend("PostgreSQL", pg.create_database("bench"), quick)
            except (PgServerError, ImportError) as exc:
                rows.append(("store: PostgreSQL", f"not measured ({exc})"))
        rows += bench_shared_search(Path(tmp), 40 if quick else 200)
    return rows


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer trials per figure")
    for name, value in bench_store(ap.parse_args().quick):
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
