"""Network benchmarks (part of ``make bench``).

- **speed**: wall time of ``vtatune search resnet18 --trials 100`` (fresh database, defaults);
- **multi-network speed**: wall time of ``vtatune search resnet18 mobilenet_v1 --trials 100``
  (one accelerator for both), or "needs multi-network search" where ``search`` refuses it;
- **quality** on a reduced network space whose every design's optimum is known: the network
  is ResNet-18's last stage and classifier (C9, C10, C11 x3, fc); the hardware space varies
  the GEMM shape and the input, weight and accumulator buffers.

**The exhaustive reference.** A program depends on the workload, the GEMM shape, the data
widths, the micro-op buffer (kernel placement) and the knobs -- not on the input, weight and
accumulator buffer sizes, which only decide whether it fits (``schedules.footprint`` gives
exactly the compiled SRAM bytes; tests/compiler checks it). So every candidate of every layer
is compiled, simulated and stored on the *maximal* designs of each program group (no other
design of the group has a larger buffer in every dimension); a smaller design's optimum is
the best of those candidates whose footprint fits its buffers. That is every layer's whole
schedule space on every design, at the cost of the few maximal designs; it is stored in
``db/bench-network-reference.sqlite`` and reused by later runs (a build copies a candidate
it lacks from another stored reference of the checkout, ``db/bench-network-reference*.sqlite``,
that holds it measured in the same context: ResNet-50's ``conv5_b`` is ResNet-18's C11, and a
full reference's maximal designs include the quick one's). The benchmark then checks the
premise on real data: every layer candidate the searches evaluate on the smaller designs must
give exactly the cycles (and feasibility) the reference derived for it -- the mismatch count
is reported.

Reported, for the default network search (``xgb`` outside, the cross-layer cost model inside)
after 100 designs, median over seeds: how far each found design's network latency is from
that design's optimum, the hypervolume of the found front over the exhaustive front's
(reference point 1.1 x the true front's nadir), the designs stopped early by their lower
bound (and that every such bound was indeed below the design's optimum).

    python -m vtatune.bench.networks [--quick]
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# FIT_ONLY: buffer parameters a program does not depend on (they only decide whether it fits);
# TRANSIENT: statuses that say nothing about a candidate (a crash or a timeout): measured again
from vtatune.networks.cost_model import FIT_ONLY
from vtatune.statuses import TRANSIENT, Status

#: The reduced network space of the quality benchmark.
REFERENCE_SPACE = """
[study]
board = "pynq-z1"
[network]
name = "resnet18-stage4"
[[network.layers]]
name = "C9"
kind = "conv2d"
layer = "C9"
count = 1
[[network.layers]]
name = "C10"
kind = "conv2d"
layer = "C10"
count = 1
[[network.layers]]
name = "C11"
kind = "conv2d"
layer = "C11"
count = 3
[[network.layers]]
name = "fc"
kind = "dense"
shape = "1,512,1000"
count = 1
[hardware]
base = "default"
LOG_BLOCK_IN = [3, 4]
LOG_BLOCK_OUT = [3, 4]
LOG_INP_BUFF_SIZE = [13, 14, 15]
LOG_WGT_BUFF_SIZE = [15, 16, 17, 18]
LOG_ACC_BUFF_SIZE = [14, 15, 16, 17]
[objective]
kind = "area-latency"
"""

#: ``--quick``: one GEMM shape, a few buffer sizes, two layers.
QUICK_SPACE = """
[study]
board = "pynq-z1"
[network]
name = "resnet18-c11-fc"
[[network.layers]]
name = "C11"
kind = "conv2d"
layer = "C11"
count = 3
[[network.layers]]
name = "fc"
kind = "dense"
shape = "1,512,1000"
count = 1
[hardware]
base = "default"
LOG_INP_BUFF_SIZE = [13, 14, 15]
LOG_WGT_BUFF_SIZE = [16, 17, 18]
LOG_ACC_BUFF_SIZE = [15, 16, 17]
[objective]
kind = "area-latency"
"""

#: An evaluation of the reference may take this long (a loaded machine is slow, not wrong).
FILL_TIMEOUT_S = 1800.0
#: How close to its optimum a found design should be (the issue's aim).
AIM_GAP = 0.03


@dataclass(frozen=True)
class DesignOptimum:
    """One design of the reference space: its area and exhaustive network optimum (None
    when some layer has no feasible schedule on it)."""

    hw_key: str
    hw_name: str
    area_mm2: float
    seconds: float | None
    cycles: int | None
    unit_best: dict[str, tuple[int, float] | None]  # signature -> (cycles, seconds)


@dataclass(frozen=True)
class Reference:
    """The exhaustive reference: every design's optimum, and every candidate's derived
    result per design (``derived[(hw_key, signature, knobs)] = cycles or None``)."""

    designs: dict[str, DesignOptimum]
    derived: dict[tuple[str, str, tuple[tuple[str, int], ...]], int | None]
    evaluated: int
    maximal: frozenset[str]  # hardware keys whose candidates were all evaluated
    measured: int = 0  # candidates evaluated by this build (the others were stored already)
    copied: int = 0  # candidates copied by this build from another stored reference


def reference_db(name: str = "bench-network-reference") -> str:
    from vtatune.paths import work_root

    path = work_root() / "db" / f"{name}.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def build_reference(space: Any, db: str, workers: int = 2, reuse: Sequence[str] = ()
                    ) -> Reference:
    """Every design's optimum over every layer's whole schedule space (module docstring).

    ``reuse``: other stored references (database URLs) whose records of a missing candidate,
    measured in the same evaluation context, are copied instead of evaluated again (a
    deterministic outcome: the same candidate in the same context gives the same record)."""
    from vtatune import schedules
    from vtatune.area import estimate, fit
    from vtatune.hardware import boards, config
    from vtatune.search.space import Candidate
    from vtatune.store import Store

    board = boards.load(space.board)
    keys = list(space.hw_choices)
    designs = []
    for combo in itertools.product(*(space.hw_choices[k] for k in keys)):
        hw = space.hw_space.hardware(dict(zip(keys, combo, strict=True)))
        if config.problems_of(hw) or not fit(estimate(hw, board), board).fits:
            continue
        designs.append(hw)
    groups: dict[tuple[int, ...], list[Any]] = {}
    for hw in designs:
        logs = hw.log_params()
        groups.setdefault(tuple(v for k, v in logs.items() if k not in FIT_ONLY), []).append(hw)
    maximal = {g: [h for h in hws if not any(_bigger(o, h) for o in hws)]
               for g, hws in groups.items()}
    todo = [Candidate(u.workload, hw, dict(k)) for hws in maximal.values() for hw in hws
            for u in space.units for k in schedules.knob_space(u.workload, hw)]
    measured, copied = _fill(todo, db, space, workers, reuse)
    store = Store(db)
    recs = store.lookup_many((c.key for c in todo), _context(space).key)
    derived: dict[tuple[str, str, tuple[tuple[str, int], ...]], int | None] = {}
    out: dict[str, DesignOptimum] = {}
    for g, hws in groups.items():
        for hw in hws:
            cover = next(m for m in maximal[g] if not _smaller_than(m, hw))
            unit_best: dict[str, tuple[int, float] | None] = {}
            for u in space.units:
                best: tuple[int, float] | None = None
                for k in schedules.knob_space(u.workload, hw):
                    # a candidate that failed or timed out twice has no record: unmeasured
                    rec = recs.get(Candidate(u.workload, cover, dict(k)).key)
                    fp = schedules.footprint(u.workload, hw, k)
                    fits = (fp["inp"] <= hw.inp_buff_bytes and fp["wgt"] <= hw.wgt_buff_bytes
                            and fp["acc"] <= hw.acc_buff_bytes)
                    ok = (rec is not None and rec.feasible and fits
                          and rec.cycles is not None)
                    derived[(hw.key, u.signature, tuple(sorted(k.items())))] = \
                        rec.cycles if ok else None
                    if ok and (best is None or rec.seconds < best[1]):
                        best = (int(rec.cycles), float(rec.seconds))
                unit_best[u.signature] = best
            if all(b is not None for b in unit_best.values()):
                seconds = sum(u.count * unit_best[u.signature][1] for u in space.units)
                cycles = sum(u.count * unit_best[u.signature][0] for u in space.units)
            else:
                seconds = cycles = None
            out[hw.key] = DesignOptimum(hw.key, hw.name, estimate(hw, board).area_mm2, seconds,
                                        cycles, unit_best)
    return Reference(out, derived, len(todo),
                     frozenset(h.key for hws in maximal.values() for h in hws), measured, copied)


def _context(space: Any) -> Any:
    """The evaluation context of the space's layer candidates (as the search stores them: a
    reference measured with other models is never reused)."""
    from vtatune.store.identity import context

    return context(space.board, space.hw_space.constraints)


def _bigger(a: Any, b: Any) -> bool:
    """``a`` has every fit-only buffer at least ``b``'s and one larger."""
    la, lb = a.log_params(), b.log_params()
    return all(la[k] >= lb[k] for k in FIT_ONLY) and any(la[k] > lb[k] for k in FIT_ONLY)


def _smaller_than(m: Any, hw: Any) -> bool:
    """``m`` cannot cover ``hw``: some buffer of ``m`` is smaller."""
    lm, lh = m.log_params(), hw.log_params()
    return any(lm[k] < lh[k] for k in FIT_ONLY)


def _fill(todo: Sequence[Any], db: str, space: Any, workers: int, reuse: Sequence[str] = ()
          ) -> tuple[int, int]:
    """Store a record of every candidate of ``todo`` at ``db``: copied from the ``reuse``
    databases where one holds it (same context, deterministic outcome), else evaluated.
    (measured, copied)."""
    from vtatune.search.runner import stamp
    from vtatune.search.workers import WorkerPool
    from vtatune.store import Store

    store = Store(db)
    ctx = _context(space)
    known = store.lookup_many((c.key for c in todo), ctx.key)
    # a reference needs every candidate measured: a stored timeout or crash is tried again
    # (``lookup_many`` returns deterministic outcomes only)
    pending = [c for c in todo if c.key not in known or known[c.key].status in TRANSIENT]
    copied = 0
    for other in reuse:
        if not pending:
            break
        found = Store(other).lookup_many((c.key for c in pending), ctx.key)
        store.save_many(stamp(found[c.key], ctx) for c in pending if c.key in found)
        copied += len(found)
        pending = [c for c in pending if c.key not in found]
    if not pending:
        return 0, copied
    with WorkerPool(workers, space.board, space.fit_board, space.max_area_mm2,
                    timeout=FILL_TIMEOUT_S) as pool:
        busy = 0
        queue = list(enumerate(pending))
        while queue or busy:
            while queue and pool.idle:
                i, c = queue.pop()
                pool.submit(i, c)
                busy += 1
            done = [rec for _, rec in pool.poll(0.05)]
            if done:
                store.save_many(stamp(rec, ctx) for rec in done)
                busy -= len(done)
    return len(pending), copied


def stored_references(but: str) -> list[str]:
    """The other stored references of this checkout (``db/bench-network-reference*.sqlite``
    but ``but``, a database URL), as database URLs: what a reference build may copy from."""
    from vtatune.paths import work_root
    from vtatune.store import sqlite_path

    mine = sqlite_path(but)
    return [f"sqlite:///{p}" for p in sorted((work_root() / "db").glob(
        "bench-network-reference*.sqlite")) if mine is None or p.resolve() != mine.resolve()]


# ---- measuring searches against the reference ---------------------------------------------

def _hv(points: list[tuple[float, float]], ref: tuple[float, float]) -> float:
    from vtatune.search.pareto import hypervolume_2d, pareto_front

    if not points:
        return 0.0
    return hypervolume_2d([points[i] for i in pareto_front(points)], ref)


def score(ref: Reference, trials: Sequence[Any], evals: Sequence[Any], board: Any
          ) -> dict[str, Any]:
    """How a network study compares with the reference (see the module docstring)."""
    from vtatune.search.pareto import pareto_front

    true_pts = [(d.area_mm2, d.seconds) for d in ref.designs.values() if d.seconds is not None]
    front = [true_pts[i] for i in pareto_front(true_pts)]
    box = (1.1 * max(p[0] for p in front), 1.1 * max(p[1] for p in front))
    found = [t for t in trials if t.status == Status.OK and t.hw_key in ref.designs]
    gaps = [t.seconds / ref.designs[t.hw_key].seconds - 1.0 for t in found
            if ref.designs[t.hw_key].seconds]
    hv = _hv([(t.area_mm2, t.seconds) for t in found], box) / _hv(front, box)
    stopped = [t for t in trials if t.status == Status.DOMINATED]
    bound_ok = all(ref.designs[t.hw_key].cycles is None
                   or t.bound_cycles <= ref.designs[t.hw_key].cycles for t in stopped)
    mismatches = checked = 0
    for e in evals:
        c = e.candidate
        key = (c.hw_key, c.workload, tuple(sorted(c.knobs.items())))
        if key not in ref.derived or c.hw_key in ref.maximal or c.status == Status.TIMEOUT:
            continue
        checked += 1
        want = ref.derived[key]
        got = c.cycles if c.feasible else None
        mismatches += got != want
    return {"gaps": gaps, "hv": hv, "designs": len(trials), "found": len(found),
            "stopped": len(stopped), "bound_ok": bound_ok, "checked": checked,
            "mismatches": mismatches,
            "true_front": len(front), "evaluations": sum(t.evaluated + t.cached
                                                         for t in trials)}


def zoo_space(network: str, layers: Sequence[str], quick: bool = False) -> str:
    """A reduced network space of zoo network ``network`` (its file under ``spaces/``): the
    named ``layers`` with their counts and the reference hardware space (``quick``: the quick
    one) -- what ``REFERENCE_SPACE`` is for ResNet-18."""
    import tomllib

    from vtatune.paths import project_root

    raw = tomllib.loads((project_root() / "spaces" / f"{network}.toml").read_text())
    by_name = {la["name"]: la for la in raw["network"]["layers"]}
    missing = [n for n in layers if n not in by_name]
    if missing:
        raise ValueError(f"{network} has no layer {', '.join(missing)}")
    out = ["[study]", f'board = "{raw.get("study", {}).get("board", "pynq-z1")}"',
           "[network]", f'name = "{network}-{"-".join(layers)}"']
    for n in layers:
        la = by_name[n]
        out.append("[[network.layers]]")
        out += [f"{k} = {json.dumps(la[k])}" for k in ("name", "kind", "shape", "layer", "count")
                if k in la]
    hardware = (QUICK_SPACE if quick else REFERENCE_SPACE).split("[hardware]", 1)[1]
    return "\n".join(out) + "\n[hardware]" + hardware


#: The zoo's quality parts (issue 25): each network's last repeated block and classifier.
ZOO_QUALITY = {"resnet50": ("conv5_a", "conv5_b", "conv5_c", "fc"),
               "mobilenet_v1": ("dw13", "pw13", "fc")}
#: ``--quick``: layers whose whole schedule spaces on the quick space's one maximal design
#: take minutes, not the hours of the 1x1 convolutions (7,000-9,000 candidates each there):
#: ResNet-50's 3x3 ``conv5_b`` (ResNet-18's C11, so its candidates are copied from the
#: quick ResNet-18 reference when that is stored: 4,400) and its 2048-wide classifier (330);
#: MobileNet's last two depthwise convolutions (275 + 375) and its classifier (225).
ZOO_QUICK = {"resnet50": ("conv5_b", "fc"), "mobilenet_v1": ("dw12", "dw13", "fc")}


def bench_network_quality(quick: bool = False, seeds: int = 3, trials: int = 100,
                          workers: int = 2, text: str | None = None,
                          reference: str = "bench-network-reference"
                          ) -> list[tuple[str, str]]:
    """The quality rows on ``text`` (a network space; default: ``REFERENCE_SPACE``, or
    ``QUICK_SPACE`` when ``quick``), its exhaustive reference stored in ``db/{reference}``."""
    from vtatune.hardware import boards
    from vtatune.networks import runner
    from vtatune.networks import space as nspace
    from vtatune.store import Store, sqlite_path

    if text is None:
        text = QUICK_SPACE if quick else REFERENCE_SPACE
        if quick:
            seeds, trials = 1, 12
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "reference.toml"
        path.write_text(text)
        sp = nspace.load(path)
        db_ref = reference_db(reference)
        t0 = time.perf_counter()
        ref = build_reference(sp, db_ref, workers, reuse=stored_references(db_ref))
        t_ref = time.perf_counter() - t0
        # searches run on a copy: the stored reference keeps only its own candidates
        src = sqlite_path(db_ref)
        assert src is not None
        work = Path(tmp) / "search.sqlite"
        shutil.copy(src, work)
        db = f"sqlite:///{work}"
        board = boards.load(sp.board)
        scores = []
        for seed in range(seeds):
            study = f"bench-{seed}"
            runner.run(sp, sampler="xgb", trials=trials, study=study, db=db, workers=workers,
                       seed=seed, warm_start=False)
            store = Store(db)
            scores.append(score(ref, store.network_trials(study), store.network_evals(study),
                                board))
    n_designs = len(ref.designs)
    gaps = [g for s in scores for g in s["gaps"]]
    within = sum(g <= AIM_GAP for g in gaps)
    hv = statistics.median(s["hv"] for s in scores)
    stopped = sum(s["stopped"] for s in scores)
    checked = sum(s["checked"] for s in scores)
    mismatches = sum(s["mismatches"] for s in scores)
    bounds = ("every bound below the design's optimum" if all(s["bound_ok"] for s in scores)
              else "A BOUND EXCEEDED AN OPTIMUM")
    layers = ", ".join(f"{la.name} x{la.count}" for la in sp.network.layers)
    what = (f"network search vs the exhaustive reference ({sp.network.name}: {layers}; "
            f"{n_designs} designs fit pynq-z1; {ref.evaluated:,} stored candidates: "
            f"{ref.measured:,} measured now, {ref.copied:,} copied from another stored "
            f"reference, {ref.evaluated - ref.measured - ref.copied:,} stored before; in "
            f"{t_ref:.0f} s), {trials} designs per search, default samplers, "
            f"{seeds} seed{'s' if seeds > 1 else ''}")
    gap_txt = (f"median {100 * statistics.median(gaps):.1f}%, max {100 * max(gaps):.1f}%; "
               f"{within} of {len(gaps)} found designs within 3% of their optimum"
               if gaps else "no feasible design found")
    return [
        (what + ": network latency of each found design vs that design's optimum", gap_txt),
        ("  same searches: hypervolume of the found front / the exhaustive front's (reference "
         "1.1 x the true front's nadir; median over seeds)", f"{hv:.3f}"),
        ("  same searches: designs stopped early by their lower bound; layer candidates they "
         "evaluated on non-maximal designs checked against the reference",
         f"{stopped} stopped ({bounds}); {checked:,} checked, {mismatches} differ"),
    ]


def _search(networks: Sequence[str], trials: int) -> tuple[float, Any]:
    """Run ``vtatune search NETWORKS --trials N --seed 0 --json`` in a fresh database: (wall
    seconds, the finished process)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "vtatune", "search", *networks, "--trials", str(trials),
               "--seed", "0", "--db", f"sqlite:///{tmp}/speed.sqlite", "--json"]
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True)
        return time.perf_counter() - t, out


def _details(d: dict[str, Any]) -> str:
    """What a network search's ``--json`` says about its run (the speed rows' details)."""
    best = d.get("best_seconds")
    statuses = ", ".join(f"{k} {v}" for k, v in d["statuses"].items())
    screened = d.get("screened", {})
    screened_txt = ", ".join(f"{k} {v}" for k, v in screened.get("by_reason", {}).items())
    return (f"{d['evaluated']:,} layer candidates evaluated, {d['cached']:,} from the store; "
            f"designs: {statuses}; screened before evaluation: {screened.get('designs', 0)}"
            + (f" ({screened_txt})" if screened_txt else "") + "; best "
            + (f"{1e3 * best:.2f} ms" if best is not None else "-")
            + f", front of {len(d['pareto'])}")


def _failed(networks: Sequence[str], out: Any) -> RuntimeError:
    return RuntimeError(f"search {' '.join(networks)}: exit {out.returncode}: "
                        + " ".join(out.stderr.strip().splitlines()[-1:]))


def bench_network_speed(quick: bool = False, network: str = "resnet18",
                        trials: int | None = None) -> list[tuple[str, str]]:
    """Wall time of ``vtatune search NETWORK --trials 100`` (``quick``: 10; or ``trials``)."""
    if trials is None:
        trials = 10 if quick else 100
    wall, out = _search([network], trials)
    if out.returncode != 0:
        raise _failed([network], out)
    return [(f"`vtatune search {network} --trials {trials}` wall time ({os.cpu_count()} cores; "
             "default samplers and layer budget)",
             f"{wall:.0f} s ({_details(json.loads(out.stdout))})")]


#: Issue 25's search of one accelerator for several networks.
MULTI = ("resnet18", "mobilenet_v1")


def bench_multi_speed(networks: Sequence[str] = MULTI, trials: int = 100
                      ) -> list[tuple[str, str]]:
    """Wall time of ``vtatune search resnet18 mobilenet_v1 --trials 100`` (one accelerator
    for both, equal weights), with the speed row's details and each network's best latency
    over the front's designs (its ``networks`` entries). A vtatune whose ``search`` refuses
    several networks (exit 2) gives the row "needs multi-network search" with its message."""
    what = (f"`vtatune search {' '.join(networks)} --trials {trials}` wall time "
            f"({os.cpu_count()} cores; one accelerator for the {len(networks)} networks, equal "
            "weights; default samplers and layer budget)")
    wall, out = _search(networks, trials)
    if out.returncode == 2:
        said = " ".join(out.stderr.strip().splitlines()[-1:])
        return [(what, f"needs multi-network search (this vtatune refuses it: {said})")]
    if out.returncode != 0:
        raise _failed(networks, out)
    d = json.loads(out.stdout)
    best: dict[str, float] = {}
    for point in d["pareto"]:
        for n in point.get("networks") or ():
            if n.get("seconds") is not None:
                best[n["network"]] = min(best.get(n["network"], n["seconds"]), n["seconds"])
    per = "; ".join(f"{net} {1e3 * sec:.2f} ms" for net, sec in best.items())
    return [(what, f"{wall:.0f} s ({_details(d)} (weighted sum)"
             + (f"; best per network over the front's designs: {per}" if per else "") + ")")]


def bench_zoo_speed(trials: int = 100) -> list[tuple[str, str]]:
    """Issue 25's search times: ``vtatune search resnet50`` and ``mobilenet_v1``."""
    return [row for net in ZOO_QUALITY for row in bench_network_speed(network=net,
                                                                      trials=trials)]


def bench_zoo_quality(quick: bool = False, seeds: int = 3, trials: int = 100,
                      layers: dict[str, Sequence[str]] | None = None
                      ) -> list[tuple[str, str]]:
    """The quality rows for each zoo network of ``layers`` (default ``ZOO_QUALITY``; quick
    ``ZOO_QUICK``) on its reduced space (``quick``: the quick hardware space, one seed, 12
    designs), each against its own exhaustive reference
    (``db/bench-network-reference-NETWORK.sqlite``: the quick and the full reference share
    it, so a full run reuses the quick one's candidates)."""
    if quick:
        seeds, trials = 1, 12
    rows = []
    for net, names in (layers or (ZOO_QUICK if quick else ZOO_QUALITY)).items():
        rows += bench_network_quality(seeds=seeds, trials=trials,
                                      text=zoo_space(net, names, quick),
                                      reference=f"bench-network-reference-{net}")
    return rows


def bench_network(quick: bool = False) -> list[tuple[str, str]]:
    return bench_network_speed(quick) + bench_network_quality(quick)


def main() -> None:
    for a, b in bench_network("--quick" in sys.argv):
        print(f"| {a} | {b} |")


if __name__ == "__main__":
    main()
