"""Speed of the simulators on hand-assembled dense programs (no TVM), and the timing model
against latencies measured on a board (``bench_timing``, part of ``make bench``).

``python -m vtatune.simulator.bench [hwconfig] [board]`` prints one line per program: its size,
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


def bench_timing(quick: bool = False) -> list[tuple[str, str]]:
    """The shipped pynq-z1 constants refitted on the shipped measured records: per-record and
    median/worst error, leave-one-out median (not in quick mode), rank agreement, and the
    simulated slowdown of narrow output tiles on the layers measured with wide ones."""
    from vtatune.hardware import boards
    from vtatune.hardware.config import default
    from vtatune.simulator import calibrate as cal
    from vtatune.simulator.timing import load_params, timing_dir

    board = boards.load("pynq-z1")
    measured = timing_dir() / "measured" / "vta_pynq_measured.json"
    t0 = time.perf_counter()
    records = cal.read_records(measured, default(), board.name)
    shipped = load_params(board)
    raw = cal.read_timing_file(timing_dir() / "pynq-z1.json")
    prior = cal.prior_params(shipped, raw)
    # Refit as the shipped file was fitted (its calibration block says which constants were
    # fitted per measurement session and whose values it carries).
    block = raw.get("calibration", {})
    per_session = tuple(next(iter(block.get("per_session", {}).values()), {}))
    items = cal.prepare(records, board, prior)
    res = cal.calibrate_prepared(items, board, prior, str(measured), loo=not quick,
                                 per_session=per_session, session=block.get("session"))
    wall = time.perf_counter() - t0
    as_shipped = cal.errors_with(items, board, shipped)
    worst = max(res.records, key=lambda r: abs(r.error))
    loo = res.loo_median_error
    left = [r.index for r in res.records if r.trimmed]
    pa = res.pairs_all
    rows = [
        ("timing vs measured: pynq-z1, 21 AutoTVM records (calibrate, fit + LOO)",
         f"{wall:.1f} s" + (" (quick: no leave-one-out)" if quick else "")),
        ("timing error, median / worst (simulated / measured - 1)",
         f"{res.median_error:.1%} / {worst.error:+.1%} (record {worst.index})"),
        ("timing error, leave-one-out median", "n/a (quick)" if loo is None else f"{loo:.1%}"),
        ("timing error of the shipped constants as they are (what simulate gives), "
         "median / worst", f"{float(np.median(np.abs(as_shipped))):.1%} / "
         f"{float(as_shipped[np.argmax(np.abs(as_shipped))]):+.1%}"),
        ("records left out of the fit (inconsistent with the rest)",
         ", ".join(map(str, left)) or "none"),
        ("rank agreement, record pairs ordered as on the board",
         f"{pa.agree}/{pa.pairs} ({pa.fraction:.1%})"
         + (f"; worst pair {pa.worst[0]}/{pa.worst[1]}: board {pa.worst[2]:.2f}x, simulated "
            f"{pa.worst[3]:.2f}x" if pa.worst else "")),
        ("rank agreement, schedule pairs of the same layer",
         "no two records share a layer" if not res.pairs_same_layer.pairs else
         f"{res.pairs_same_layer.agree}/{res.pairs_same_layer.pairs}"),
    ]
    for r in res.records:
        rows.append((f"record {r.index}: {r.label}",
                     f"measured {r.measured_ms:.3g} ms, simulated {r.simulated_ms:.3g} ms "
                     f"({r.error:+.1%}" + (f", LOO {r.loo_error:+.1%}" if r.loo_error is not None
                                           else "") + (", left out)" if r.trimmed else ")")))
    rows += _narrow_rows(records, board, res.params)
    return rows


def _narrow_rows(records, board, params) -> list[tuple[str, str]]:
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
                        f"{rec.knobs.get('tile_w')}), simulated (board: 1.5-2.65x)",
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
