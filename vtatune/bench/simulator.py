"""Speed of the simulators on hand-assembled dense programs (no TVM), and the simulated
slowdown of narrow output tiles on measured layers (``narrow_rows``, used by
``vtatune.bench.timing_model``).

``python -m vtatune.bench.simulator [hwconfig] [board]`` prints one line per program: its size,
the functional and timing simulators' wall time and throughput, and the program.bin round trip.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from vtatune.hardware.config import HwConfig
from vtatune.hardware.config import load as load_hw
from vtatune.program.examples import DenseShape, dense_inputs, dense_program, unpack_rows
from vtatune.program.program import Program
from vtatune.simulator.functional import run
from vtatune.simulator.timing import simulate

#: (M, K, N, tm, tk, tn) in elements and tiles: ~10^6 GEMM tile-ops at two granularities, and
#: a program of the same instruction count with small blocks (per-instruction overhead).
SHAPES = (
    DenseShape(256, 1024, 1024, 16, 16, 16, threads=2),
    DenseShape(256, 1024, 1024, 8, 8, 8, threads=2),
    DenseShape(128, 512, 512, 4, 4, 4, threads=2),
)


@dataclass(frozen=True)
class BenchResult:
    """Wall-clock seconds of each step for one program."""

    insns: int
    gemm_ops: int
    functional_s: float
    timing_s: float
    encode_s: float
    decode_s: float
    cycles: int
    bit_exact: bool


def bench(hw: HwConfig, shape: DenseShape, board: str = "pynq-z1") -> BenchResult:
    prog = dense_program(hw, shape)
    inputs, expected = dense_inputs(hw, shape)
    t0 = time.perf_counter()
    res = run(prog, inputs)
    t1 = time.perf_counter()
    tim = simulate(prog, board)
    t2 = time.perf_counter()
    raw = prog.to_bytes()
    t3 = time.perf_counter()
    Program.from_bytes(hw, raw)
    t4 = time.perf_counter()
    grid = (shape.m // hw.batch, shape.n // hw.block_out, hw.batch, hw.block_out)
    got = unpack_rows(res.region("res", np.int8, grid))
    return BenchResult(len(prog.insns), res.counters.gemm_counter, t1 - t0, t2 - t1, t3 - t2,
                       t4 - t3, tim.cycles, bool(np.array_equal(got, expected)))  # fmt: skip


#: Measured ResNet-18 schedules with wide output tiles and the layer they are (records of
#: hwconfigs/timing/measured/vta_pynq_measured.json): the board ran the same layers 1.5-2.65x
#: slower with output tiles 7 or 8 wide (the file's README).
WIDE = {4: "C3", 5: "C5", 6: "C2", 7: "C4"}
NARROW_W = (7, 8)


def narrow_rows(records, board, params, profile: str) -> list[tuple[str, str]]:
    """Simulated time of narrow output tiles / the measured wide schedule, same layer."""
    from vtatune import schedules
    from vtatune.compiler import compile_candidate
    from vtatune.errors import VtatuneError
    from vtatune.runtime import build_program

    out = []
    for index, layer in WIDE.items():
        rec = next(r for r in records if r.index == index)
        base = None
        ratios = []
        for tw in (None, *NARROW_W):
            knobs = dict(rec.knobs) if tw is None else {**rec.knobs, "tile_w": tw}
            try:
                knobs = schedules.knob_space(rec.workload, rec.hw).check(
                    {**schedules.suggest(rec.workload, rec.hw), **knobs})
            except VtatuneError:  # a width that does not divide the layer
                continue
            res = compile_candidate(rec.workload, rec.hw, knobs)
            if not res.ok:
                continue
            t = simulate(build_program(res, rec.workload, rec.hw), board, params).seconds
            if tw is None:
                base = t
            elif base:
                ratios.append(f"tile_w {tw}: {t / base:.2f}x")
        if ratios:
            out.append((f"narrow vs measured wide tiles, {layer} (record {index}, tile_w "
                        f"{rec.knobs.get('tile_w')}), simulated with pynq-z1@{profile} "
                        "(board: 1.5-2.65x)",
                        ", ".join(ratios)))
    return out


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    hw = load_hw(args[0] if args else "default")
    board = args[1] if len(args) > 1 else "pynq-z1"
    for s in SHAPES:
        r = bench(hw, s, board)
        print(
            f"dense {s.m}x{s.k}x{s.n} blocks {s.tm}/{s.tk}/{s.tn} on {hw.shape_label}: "
            f"{r.insns} insns, {r.gemm_ops} GEMM tile-ops, bit-exact {r.bit_exact} | "
            f"functional {r.functional_s:.3f} s ({r.insns / r.functional_s:,.0f} insn/s) | "
            f"timing {1e3 * r.timing_s:.1f} ms ({r.insns / r.timing_s:,.0f} insn/s, "
            f"{r.cycles:,} cycles on {board}) | encode {1e3 * r.encode_s:.1f} ms, "
            f"decode {1e3 * r.decode_s:.1f} ms"
        )


if __name__ == "__main__":
    main()
