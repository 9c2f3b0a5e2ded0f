"""Search benchmarks (part of ``make bench``).

- speed: wall time of ``vtatune search conv2d --trials 500`` (fresh database, default sampler);
- schedule quality: for ResNet-18 layers at the default config, every candidate of the knob
  space is compiled and simulated once (the exhaustive optimum); then each sampler, for several
  seeds, runs the real search loop as a new study whose trials are all served from that store.
  Reported: the median number of trials until a trial is within 2% of the optimum;
- joint quality: the same on a reduced joint hardware x schedule space, reporting the
  hypervolume of each sampler's (area, cycles) front after 100/250/500 trials as a share of the
  brute-force front's;
- held-out quality: on conv2d layers that are not in ResNet-18 (whose layers the samplers'
  defaults were tuned on: ``HELDOUT``), the default sampler's best after 32 trials of a
  schedule search at the default config (one worker, no warm start, 3 seeds) against the
  exhaustive optimum of the schedule space (``search.exhaustive``).

    python -m vtatune.bench.search [--quick]
"""

from __future__ import annotations

import importlib.util
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vtatune.bench.cpu import CpuSplit, measure
from vtatune.search import runner
from vtatune.search import space as spaces
from vtatune.search.space import Candidate, SearchSpace
from vtatune.store.records import CandidateRecord

#: gp only where torch is installed (the opt-in ``gp`` extra).
SAMPLERS = tuple(n for n in ("xgb", "tpe", "nsga2", "random", "grid", "gp")
                 if n != "gp" or importlib.util.find_spec("torch") is not None)
#: GP proposals cost ~0.2-1 s each on 2 cores (repeats included): it gets 60 trials, 1 seed.
GP_TRIALS = 60
SCHEDULE_LAYERS = ("C2", "C8", "C11")
#: Held-out conv2d layers (N,CIN,H,W,COUT,KH,KW,PAD,STRIDE), none in ResNet-18 and none used to
#: tune any sampler default: a stride-2 3x3 on 96 channels, a MobileNet-v2-like pointwise
#: projection (1x1, 144 -> 48 channels), an AlexNet-like 5x5 on an odd 27x27 map.
HELDOUT = {"stride-2 3x3": "1,96,16,16,96,3,3,1,2",
           "1x1 pointwise": "1,144,28,28,48,1,1,0,1",
           "5x5 on 27x27": "1,48,27,27,64,5,5,2,1"}
#: Trials after which the held-out benchmark reads the best found.
HELDOUT_TRIALS = 32
JOINT_SPACE = """
[study]
board = "pynq-z1"
[workload]
kind = "dense"
shape = "16,256,256"
[hardware]
LOG_BLOCK_IN = [3, 4]
LOG_BLOCK_OUT = [3, 4]
LOG_INP_BUFF_SIZE = [14, 15]
LOG_WGT_BUFF_SIZE = [16, 18]
LOG_ACC_BUFF_SIZE = [15, 17]
[schedule]
knobs = "all"
[objective]
kind = "area-latency"
"""


def all_candidates(space: SearchSpace) -> list[Candidate]:
    """Every realizable candidate of ``space``: each valid hardware choice x its knob space."""
    import itertools

    from vtatune import schedules
    from vtatune.hardware import config

    keys = list(space.hw_choices)
    out = []
    for combo in itertools.product(*(space.hw_choices[k] for k in keys)):
        hw = space.hardware(dict(zip(keys, combo, strict=True)))
        if config.problems_of(hw):
            continue
        base = schedules.suggest(space.workload, hw)
        for k in schedules.knob_space(space.workload, hw):
            knobs = {n: (k[n] if n in space.knobs else base[n]) for n in k}
            out.append(Candidate(space.workload, hw, knobs))
    return list({c.key: c for c in out}.values())


def fill(space: SearchSpace, db: str, workers: int) -> list[Any]:
    """Evaluate every candidate of ``space`` into the store at ``db``; their records."""
    from vtatune.search.workers import WorkerPool
    from vtatune.store import Store

    store = Store(db)
    todo = [c for c in all_candidates(space) if store.lookup(c.key) is None]
    with WorkerPool(workers, space.board, space.fit_board, space.max_area_mm2) as pool:
        pending = list(enumerate(todo))
        busy = 0
        while pending or busy:
            while pending and pool.idle:
                i, c = pending.pop()
                pool.submit(i, c)
                busy += 1
            for _, rec in pool.poll(0.05):
                store.save(rec)
                busy -= 1
    return [store.lookup(c.key) for c in all_candidates(space)]


def trials_to_within(db: str, study: str, target: float) -> int | None:
    """1-based index of the first trial whose cycles are <= ``target`` (None if none)."""
    from vtatune.store import Store

    for i, t in enumerate(Store(db).trials(study)):
        if t.candidate.feasible and t.candidate.cycles <= target:
            return i + 1
    return None


def _front_hv(points: list[tuple[float, float]], ref: tuple[float, float]) -> float:
    from vtatune.search.pareto import hypervolume_2d, pareto_front

    if not points:
        return 0.0
    return hypervolume_2d([points[i] for i in pareto_front(points)], ref)


def bench_schedule_quality(layers: tuple[str, ...] = SCHEDULE_LAYERS, seeds: int = 5,
                           max_trials: int = 300, workers: int = 2) -> list[tuple[str, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layer in layers:
            db = f"sqlite:///{tmp}/{layer}.sqlite"
            sp = spaces.load("conv2d_schedule", layer=layer)
            recs = fill(sp, db, workers)
            best = min(r.cycles for r in recs if r.feasible)
            cells = []
            for name in SAMPLERS:
                n_seeds, cap = (1, GP_TRIALS) if name == "gp" else (seeds, max_trials)
                hits = []
                for seed in range(n_seeds):
                    study = f"{name}-{seed}"
                    runner.run(sp, sampler=name, trials=cap, study=study, db=db, workers=1,
                               seed=seed, warm_start=False)
                    hit = trials_to_within(db, study, 1.02 * best)
                    hits.append(hit if hit is not None else cap + 1)
                med = statistics.median(hits)
                cells.append(f"{name} {med:g}" if med <= cap else f"{name} >{cap}")
            rows.append((f"schedule search, {layer} ({len(recs)} candidates, optimum "
                         f"{best:,} cycles): median trials to within 2% over {seeds} seeds "
                         f"(gp: 1 seed, {GP_TRIALS} trials)", ", ".join(cells)))
    return rows


def bench_joint_quality(seeds: int = 3, workers: int = 2) -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "joint.toml"
        path.write_text(JOINT_SPACE)
        sp = spaces.load(path)
        db = f"sqlite:///{tmp}/joint.sqlite"
        recs = fill(sp, db, workers)
        from vtatune.search.pareto import pareto_front

        pts = [(r.area_mm2, float(r.cycles)) for r in recs if r.feasible]
        front = [pts[i] for i in pareto_front(pts)]
        # reference: 1.1 x the nadir of the true front, so the measure is about the front's
        # region (1.1 x the worst design would let far-away slow designs dominate the box)
        ref = (1.1 * max(p[0] for p in front), 1.1 * max(p[1] for p in front))
        full = _front_hv(pts, ref)
        from vtatune.store import Store

        cells = []
        for name in SAMPLERS:
            n_seeds, cap = (1, 100) if name == "gp" else (seeds, 500)
            shares: dict[int, list[float]] = {100: [], 250: [], 500: []}
            for seed in range(n_seeds):
                study = f"{name}-{seed}"
                runner.run(sp, sampler=name, trials=cap, study=study, db=db, workers=1,
                           seed=seed, warm_start=False)
                trials = Store(db).trials(study)
                for n in shares:
                    if n > cap:
                        continue
                    got = [(t.candidate.area_mm2, float(t.candidate.cycles))
                           for t in trials[:n] if t.candidate.feasible]
                    shares[n].append(_front_hv(got, ref) / full)
            cells.append(f"{name} " + "/".join(
                f"{statistics.median(v):.2f}" if v else "-" for v in shares.values()))
        return [(f"joint search, dense 16x256x256 reduced space ({len(recs)} candidates): "
                 f"front hypervolume / brute force after 100/250/500 trials (median of "
                 f"{seeds} seeds; gp 1 seed, 100 trials; reference point 1.1 x the true "
                 f"front's nadir)", ", ".join(cells))]


def heldout_ratios(shape: str, seeds: int = 3, trials: int = HELDOUT_TRIALS,
                   workers: int = 2, sampler: str = "xgb") -> tuple[int, int, list[float]]:
    """(schedule-space size, exhaustive optimum in cycles, best-after-``trials`` / optimum per
    seed) of ``sampler`` on the conv2d ``shape`` at the default config.

    The reference is evaluated once (``workers`` processes) and stored in its evaluation
    context, so each seed's search (one worker, no warm start: nothing of the layer is learned
    beforehand) is served from the store: the same records a fresh evaluation gives.
    """
    from vtatune.search import exhaustive
    from vtatune.store import Store
    from vtatune.store.identity import context

    sp = spaces.load("conv2d_schedule", shape=shape)
    hw = sp.hardware({})
    ref = exhaustive.reference(sp.workload, hw, sp.board, fit_board=sp.fit_board,
                               workers=workers)
    assert ref.best is not None and ref.best.cycles is not None
    best = ref.best.cycles
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/heldout.sqlite"
        ctx = context(sp.board, sp.constraints)
        Store(db).save_many(runner.stamp(r, ctx) for r in ref.records)
        for seed in range(seeds):
            study = f"{sampler}-{seed}"
            runner.run(sp, sampler=sampler, trials=trials, study=study, db=db, workers=1,
                       seed=seed, warm_start=False)
            found = [t.candidate.cycles for t in Store(db).trials(study)
                     if t.candidate.feasible and t.candidate.cycles is not None]
            ratios.append(min(found) / best if found else math.inf)
    return len(ref.records), best, ratios


def bench_heldout_quality(quick: bool = False) -> list[tuple[str, str]]:
    layers = dict(list(HELDOUT.items())[:1]) if quick else HELDOUT
    cells = []
    for name, shape in layers.items():
        size, best, ratios = heldout_ratios(shape)
        cells.append(f"{name} `{shape}` ({size} candidates, optimum {best:,} cycles): "
                     f"{statistics.median(ratios):.3f}x (worst seed {max(ratios):.3f}x)")
    return [(f"schedule search on held-out conv2d layers (not in ResNet-18), default config: "
             f"default sampler's best after {HELDOUT_TRIALS} trials / exhaustive optimum, median "
             f"of 3 seeds (--workers 1, no warm start)", "; ".join(cells))]


def bench_compile_cache(quick: bool = False) -> list[tuple[str, str]]:
    """Compile-cache hit rate and compile speedup on the candidates a joint search evaluates:
    a seeded ``xgb`` search of the default conv2d joint space (200 trials, 60 quick), then
    its compiled candidates compiled again in this process, in trial order, each through one
    ``ProgramCache`` (lower each distinct program once, verify each candidate) and lowered
    afresh, the two timed in turn (so the machine's drift falls on both alike) after the
    PrimFuncs they share are built."""
    from vtatune.compiler import compile_candidate
    from vtatune.compiler.cache import ProgramCache
    from vtatune.compiler.compile import prim_func, program_key
    from vtatune.hardware.config import HwConfig
    from vtatune.store import Store

    n = 60 if quick else 200
    sp = spaces.load("conv2d")
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/cache.sqlite"
        runner.run(sp, sampler="xgb", trials=n, study="cache", db=db, workers=2, seed=0,
                   warm_start=False)
        recs = [t.candidate for t in Store(db).trials("cache")]
    cands = [(HwConfig.from_params(r.hw), dict(r.knobs))
             for r in recs if r.compile_ms is not None]
    compile_candidate(sp.workload, *cands[0])  # warm-up: TVM's first compile
    for hw, knobs in cands:  # the unscheduled PrimFuncs, memoized as lowering asks for them
        key = program_key(sp.workload, hw, knobs)
        prim_func(key.workload, key.hw, key.shift)
    cache = ProgramCache()
    took = {"cached": 0.0, "fresh": 0.0}
    ways = {"cached": cache.compile, "fresh": compile_candidate}
    # the two in turn, candidate by candidate, each first every other time: drift and
    # whatever the first of two lowerings of one program leaves warm fall on both alike
    for i, (hw, knobs) in enumerate(cands):
        for way in ("cached", "fresh") if i % 2 == 0 else ("fresh", "cached"):
            t = time.perf_counter()
            ways[way](sp.workload, hw, knobs)
            took[way] += time.perf_counter() - t
    cached, fresh = took["cached"], took["fresh"]
    st = cache.stats()
    return [(f"compile cache on a joint search's candidates (conv2d default joint space, xgb "
             f"seed 0, {n} trials: {len(cands)} compiled, one process)",
             f"hit rate {st.hit_rate:.0%} ({st.misses} distinct programs); compile time "
             f"{fresh:.1f} s fresh vs {cached:.1f} s cached ({fresh / cached:.1f}x)")]


#: Runs of ``make run``'s search the bench times (the figure is their median: one run on a
#: shared machine can be 15% off either way).
SPEED_RUNS = 3


def time_parts(split: CpuSplit, records: Sequence[CandidateRecord], workers: int
               ) -> dict[str, float]:
    """Where a search run's time went (``split``: the run's ``CpuSplit``; ``records``:
    the candidate records it evaluated; ``workers``: its worker processes).

    CPU seconds, which with the unused part fill the machine's ``capacity`` (wall x cores):
    ``main`` (the search process: start-up, sampler, cost model, store, progress),
    ``workers`` (its worker processes: the fork server's TVM import, each worker's warm-up and
    evaluations) and ``unused`` (idle cores, or other processes' time on a shared machine).
    Wall seconds inside the workers, as the records time their evaluations: ``compile``
    (compile+verify) and ``build`` (build+timing), within the workers' ``worker_wall``
    (workers x wall); on a contended machine they exceed the workers' CPU for the same
    work, so they are never subtracted from a CPU time."""
    return {"capacity": split.capacity, "main": split.main, "workers": split.workers,
            "unused": split.unused, "wall": split.wall,
            "compile": sum(r.compile_ms or 0.0 for r in records) / 1e3,
            "build": sum(r.sim_ms or 0.0 for r in records) / 1e3,
            "worker_wall": workers * split.wall}


def bench_search_speed(runs: int = SPEED_RUNS) -> list[tuple[str, str]]:
    """``make run``'s command, timed ``runs`` times (each in a fresh database): the median
    run's wall time (and the range), and where its time went (``time_parts``: the search
    process's and its workers' CPU, measured by ``vtatune.bench.cpu``, and the workers'
    evaluation wall times the stored records give)."""
    import json

    from vtatune.store import Store

    workers = os.cpu_count() or 1  # the command's default: one per core
    timed = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            db = f"sqlite:///{tmp}/speed.sqlite"
            split = measure(["search", "conv2d", "--trials", "500", "--seed", "0", "--db", db,
                             "--json"])
            d = json.loads(split.stdout)
            recs = [tr.candidate for tr in Store(db).trials(d["study"]) if not tr.cached]
        timed.append((split.wall, time_parts(split, recs, workers), d, vta_refusals(d, recs)))
    timed.sort(key=lambda r: r[0])
    wall, parts, d, refused = timed[len(timed) // 2]
    best = min((r["seconds"] for r in d["pareto"] if r.get("seconds")), default=None)
    spread = (f"; {len(timed)} runs {timed[0][0]:.1f}-{timed[-1][0]:.1f} s"
              if len(timed) > 1 else "")
    cores = os.cpu_count() or 1
    return [(f"`vtatune search conv2d --trials 500` wall time ({cores} cores, "
             f"{d['evaluated']} evaluated; the median of {len(timed)} runs)",
             f"{wall:.1f} s ({d['feasible']} feasible, best {d['best_cycles']:,} cycles, "
             f"front of {len(d['pareto'])}{spread})"),
            (f"the median run's core time (wall x {cores} cores): CPU of the search process "
             "(start-up, sampler, cost model, store), CPU of its worker processes (fork "
             "server's TVM import, workers' warm-up and evaluations), and core time the run "
             "left unused (idle, or other processes' on a shared machine)",
             f"{parts['capacity']:.1f} core-s = search process {parts['main']:.1f} s + workers "
             f"{parts['workers']:.1f} s + unused {parts['unused']:.1f} s"),
            (f"the median run's evaluations as the records time them: wall time inside the "
             f"{workers} workers (more than their CPU time when the machine is contended), of "
             f"their {workers} x wall",
             f"compile+verify {parts['compile']:.1f} s + build+timing {parts['build']:.1f} s "
             f"of {parts['worker_wall']:.1f} s"),
            ("the median run's proposals whose schedule VTA's compiler refuses (its DMA rules: "
             "screened before compiling, no trial) and trials it refuses (compiled, stored "
             "invalid); the best latency found keeping to VTA's rules",
             f"{refused[0]:,} screened + {refused[1]:,} invalid trials; best "
             + (f"{1e3 * best:.3f} ms per call" if best else "none")),
            refused_share()]


def refused_share() -> tuple[str, str]:
    """How much of ``search conv2d``'s schedule space (C8 on the default design) VTA's DMA
    rules take away: knob points that pass every other rule, and those VTA's compiler
    refuses (``Workload.vta_copy_problem``)."""
    import itertools

    from vtatune import schedules
    from vtatune.hardware import config
    from vtatune.workloads import RESNET18

    wl, hw = RESNET18["C8"], config.default()
    ks = schedules.knob_space(wl, hw)
    total = refused = 0
    for combo in itertools.product(*ks.axes.values()):
        k = dict(zip(ks.names, combo, strict=True))
        why = ks.constraint(k)
        if why is None or why == wl.vta_copy_problem(hw, k):
            total += 1
            refused += why is not None
    return ("schedules of `search conv2d`'s layer (C8, default design) that VTA's compiler "
            "refuses (its DMA rules; the search no longer proposes them)",
            f"{refused:,} of {total:,} ({100 * refused / total:.0f}%)")


def vta_refusals(d: dict[str, Any], records: Sequence[CandidateRecord]) -> tuple[int, int]:
    """(proposals the search screened because VTA's compiler refuses their schedule, trials
    stored ``invalid`` for VTA's rules) of a search's ``--json`` output ``d`` and records."""
    from vtatune.passes.vta_copy_rules import REFUSED

    screened = int((d.get("screened") or {}).get("by_reason", {}).get("vta_refuses", 0))
    return screened, sum(1 for r in records if REFUSED in (r.reason or ""))


def bench_search(quick: bool = False, heldout_quick: bool | None = None
                 ) -> list[tuple[str, str]]:
    """``heldout_quick``: the held-out part's own mode (default: ``quick``'s)."""
    rows = (bench_search_speed() + bench_compile_cache(quick)
            + bench_heldout_quality(quick if heldout_quick is None else heldout_quick))
    if quick:
        return rows + bench_schedule_quality(("C11",), seeds=2, max_trials=150)
    return rows + bench_schedule_quality() + bench_joint_quality()


def main() -> None:
    for a, b in bench_search("--quick" in sys.argv):
        print(f"| {a} | {b} |")


if __name__ == "__main__":
    main()
