"""Speed of the runtime and simulators on ResNet-18 C2 (what the search pays per candidate).

``python -m vtatune.bench.runtime`` prints a Markdown table; ``bench_simulator()`` returns its
rows for ``python -m vtatune.bench``. The "good" schedule is the fewest-cycles one among the
suggested knobs and a few hand-picked points (pynq-z1 timing); the fine-grained schedule shows
throughput on a long instruction stream. Times are medians of a few repetitions (one core).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

#: Hand-picked C2 points (default 1x16x16) besides ``schedules.suggest``: tall/wide tiles with
#: and without virtual threads.
GOOD_CANDIDATES = (
    dict(tile_b=1, tile_h=14, tile_w=28, tile_ci=1, tile_co=2, h_nthread=2, oc_nthread=1),
    dict(tile_b=1, tile_h=56, tile_w=14, tile_ci=1, tile_co=2, h_nthread=1, oc_nthread=1),
    dict(tile_b=1, tile_h=28, tile_w=14, tile_ci=4, tile_co=2, h_nthread=1, oc_nthread=1),
    dict(tile_b=1, tile_h=8, tile_w=56, tile_ci=1, tile_co=2, h_nthread=1, oc_nthread=2),
)
#: A fine-grained C2 schedule: ~28,000 instructions.
FINE = dict(tile_b=1, tile_h=2, tile_w=4, tile_ci=1, tile_co=1, h_nthread=2, oc_nthread=2)
BOARD = "pynq-z1"


def _median_s(fn: Callable[[], Any], reps: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def measure(knobs: dict[str, int], reps: int = 5, functional_reps: int = 3) -> dict[str, Any]:
    """Build, timing-only and functional simulation times of C2 with ``knobs``."""
    import numpy as np

    from vtatune.compiler import compile_candidate
    from vtatune.hardware import config
    from vtatune.runtime import build_program, execute, random_inputs
    from vtatune.simulator import bounds, simulate
    from vtatune.workloads import RESNET18

    hw, wl = config.default(), RESNET18["C2"]
    res = compile_candidate(wl, hw, knobs)
    if not res.ok:
        raise RuntimeError(f"bench candidate {knobs} is {res.status}: {res.reason}")
    build_s, program = _median_s(lambda: build_program(res, wl, hw), reps)
    timing_s, timing = _median_s(lambda: simulate(program, BOARD), reps)
    data, kernel = random_inputs(wl, 0)
    func_s, run = _median_s(lambda: execute(program, wl, data, kernel), functional_reps)
    exact = bool(np.array_equal(run.output, wl.reference(data, kernel)))
    bnd = bounds(wl.macs, wl.compulsory_bytes(hw), hw, BOARD)
    return {"knobs": knobs, "insns": len(program.insns), "build_s": build_s,
            "timing_s": timing_s, "functional_s": func_s, "cycles": timing.cycles,
            "efficiency": bnd.efficiency(timing.cycles), "bit_exact": exact,
            "compile_ms": res.compile_ms}


def good_knobs() -> dict[str, int]:
    """The fewest-cycles C2 point among ``suggest`` and ``GOOD_CANDIDATES``."""
    from vtatune import schedules
    from vtatune.compiler import compile_candidate
    from vtatune.hardware import config
    from vtatune.runtime import build_program
    from vtatune.simulator import simulate
    from vtatune.workloads import RESNET18

    hw, wl = config.default(), RESNET18["C2"]
    best: tuple[float, dict[str, int]] | None = None
    for knobs in (dict(schedules.suggest(wl, hw)), *GOOD_CANDIDATES):
        res = compile_candidate(wl, hw, knobs)
        if not res.ok:
            continue
        cycles = simulate(build_program(res, wl, hw), BOARD).cycles
        if best is None or cycles < best[0]:
            best = (cycles, knobs)
    assert best is not None, "no bench candidate compiles"
    return best[1]


def bench_simulator() -> list[tuple[str, str]]:
    """(figure, value) rows: runtime build, timing-only and functional simulation of C2."""
    rows: list[tuple[str, str]] = []
    for label, knobs in (("good", good_knobs()), ("fine", FINE)):
        m = measure(knobs, functional_reps=3 if label == "good" else 1)
        n = m["insns"]
        k = ",".join(f"{a}={b}" for a, b in knobs.items() if a != "tile_b")
        rows += [
            (f"C2 {label} schedule ({k})",
             f"{n:,} instructions, {m['cycles']:,} cycles on {BOARD} "
             f"(efficiency {100 * m['efficiency']:.0f}%), bit-exact {m['bit_exact']}"),
            (f"C2 {label}: program build (TIR walk + runtime)",
             f"{1e3 * m['build_s']:.1f} ms ({n / m['build_s']:,.0f} insn/s)"),
            (f"C2 {label}: timing-only simulation",
             f"{1e3 * m['timing_s']:.1f} ms ({n / m['timing_s']:,.0f} insn/s)"),
            (f"C2 {label}: functional simulation",
             f"{m['functional_s']:.3f} s ({n / m['functional_s']:,.0f} insn/s)"),
        ]
    return rows


def main() -> None:
    print("| figure | value |\n|---|---|")
    for a, b in bench_simulator():
        print(f"| {a} | {b} |")


if __name__ == "__main__":
    main()
