"""Speed of the simulators on hand-assembled dense programs (no TVM), and the timing model
against latencies measured on a board (``bench_timing``, part of ``make bench``).

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


def bench_timing(quick: bool = False) -> list[tuple[str, str]]:
    """pynq-z1's shipped timing profiles refitted on the shipped measured records (each on the
    records of its build, read from the AutoTVM log, as ``vtatune calibrate --build`` fits
    them): per profile the median and worst error over every record of its build (left-out
    ones included), leave-one-out and leave-one-network-out medians (not in quick mode), the
    records left out and why, the rank agreement, and the profile's constants as shipped on
    its own and on every record; the default profile's error per network section of the
    calibration file; the same fit from the JSON records; per record, its error with its
    build's profile; and the simulated slowdown of narrow output tiles on the layers
    measured with wide ones (July's profile: those are July's records)."""
    from vtatune import calibration as cal
    from vtatune.hardware import boards, timing_profiles
    from vtatune.hardware.config import default
    from vtatune.simulator.timing import load_params, timing_dir

    board = boards.load("pynq-z1")
    folder = timing_dir() / "measured"
    t0 = time.perf_counter()
    log = cal.read_measured(folder / "vta_pynq_measured.log", default(), board)
    profiles = timing_profiles.shipped("pynq-z1")
    default_name = profiles[0].name
    prior = cal.prior_params(load_params(board), profiles[0].content)
    items = cal.prepare(log.records, board, prior)
    rows: list[tuple[str, str]] = []
    fits = {}
    builds = {p.name: p.content.get("calibration", {}).get("build", p.name) for p in profiles}
    for prof in profiles:
        spec = f"pynq-z1@{prof.name}" + (" (default)" if prof.default else "")
        shipped = load_params(f"pynq-z1@{prof.name}")
        build = builds[prof.name]
        mine = cal.only_session(items, build)
        res = cal.calibrate_prepared(mine, board, prior, str(folder / "vta_pynq_measured.log"),
                                     loo=not quick, lono=not quick, current=shipped)
        fits[prof.name] = res
        worst = max(res.records, key=lambda r: abs(r.error))
        loo, lono = res.loo_median_error, res.lono_median_error
        nets = sorted({r.network for r in res.records})
        as_shipped = cal.errors_with(mine, board, shipped)
        everywhere = cal.errors_with(items, board, shipped)
        pa = res.pairs_all
        left = [r for r in res.records if r.trimmed]
        rows += [
            (f"timing profile {spec}: refitted on the {len(mine)} records of build {build} "
             f"({', '.join(nets)}), error over all of them, median / worst "
             "(simulated / measured - 1)",
             f"{res.median_error:.1%} / {worst.error:+.1%} (record {worst.index})"),
            (f"timing profile {spec}: leave-one-out median / leave-one-network-out median",
             ("n/a (quick)" if loo is None else f"{loo:.1%}") + " / "
             + ("n/a (quick)" if quick else "n/a (one network)" if lono is None
                else f"{lono:.1%}")),
            (f"timing profile {spec}: records left out of the fit",
             "; ".join(f"record {r.index} ({r.error:+.1%}): {r.reason}" for r in left)
             or "none"),
            (f"timing profile {spec}: rank agreement, record pairs ordered as on the board",
             f"{pa.agree}/{pa.pairs}"),
            (f"timing profile {spec} as shipped (what simulate gives): median / worst error "
             f"on its build's records; median on all {len(items)} records",
             f"{float(np.median(np.abs(as_shipped))):.1%} / "
             f"{float(as_shipped[np.argmax(np.abs(as_shipped))]):+.1%}; "
             f"{float(np.median(np.abs(everywhere))):.1%}"),
        ]
    shipped = load_params(board)
    errs = cal.errors_with(items, board, shipped)
    by_net: dict[str, list[float]] = {}
    for it, e in zip(items, errs, strict=True):
        by_net.setdefault(it.record.network, []).append(abs(float(e)))
    rows.append((f"default profile pynq-z1@{default_name} as shipped, median error per network "
                 "section of the calibration file (build of the section)",
                 ", ".join(f"{net} {float(np.median(v)):.1%} ("
                           + "/".join(sorted({it.record.session for it in items
                                              if it.record.network == net})) + ")"
                           for net, v in by_net.items())))
    # the same fit from the JSON records (the log's 21 records as a JSON list)
    js = cal.read_measured(folder / "vta_pynq_measured.json", default(), board)
    js_items = cal.only_session(cal.prepare(js.records, board, prior), builds[default_name])
    js_fit = cal.calibrate_prepared(js_items, board, prior, "json", loo=False, lono=False,
                                    current=shipped)
    diff = max(abs(getattr(js_fit.params, k) / getattr(fits[default_name].params, k) - 1)
               for k in js_fit.fit_keys)
    rows.append((f"calibrate on the AutoTVM log vs on the JSON records ({len(log.records)} "
                 f"records each, log skipped {sum(log.skipped.values())}): profile "
                 f"{default_name}'s fit, largest relative difference of the constants",
                 f"{diff:.1e}"))
    wall = time.perf_counter() - t0
    rows.insert(0, (f"timing vs measured: pynq-z1, {len(items)} AutoTVM records, "
                    f"{len(profiles)} profiles (calibrate, fit"
                    + ("" if quick else " + LOO + LONO") + ")",
                    f"{wall:.1f} s" + (" (quick: no leave-one-out)" if quick else "")))
    by_index = {r.index: r for res in fits.values() for r in res.records}
    for it in items:
        r = by_index.get(it.record.index)
        if r is None:
            continue
        rows.append((f"record {r.index} ({r.network}, {r.session}): {r.label}",
                     f"measured {r.measured_ms:.3g} ms, refitted {r.simulated_ms:.3g} ms "
                     f"({r.error:+.1%}"
                     + (f", LOO {r.loo_error:+.1%}" if r.loo_error is not None else "")
                     + (f", LONO {r.lono_error:+.1%}" if r.lono_error is not None else "")
                     + (", left out)" if r.trimmed else ")")))
    july = next((p.name for p in profiles if p.name == "2019-07"), default_name)
    rows += _narrow_rows(list(log.records), board, load_params(f"pynq-z1@{july}"), july)
    return rows


def _narrow_rows(records, board, params, profile: str) -> list[tuple[str, str]]:
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
