"""An analytic latency estimate of a candidate, without compiling: a cheap stand-in objective.

Sampler tests and benchmarks use it where compiling and simulating thousands of candidates
would take too long. It is built from the same pieces as the cycle model (DESIGN.md section
6, ``hwconfigs/timing/<board>.json``) at the granularity of whole tiles, so it ranks knobs
and hardware plausibly, but it is not the simulator: the timing simulator stays the
authority on cycles and the verification passes on SRAM use.

Per output tile and reduction step the load module moves the input and weight tiles (one DMA
each), the compute module runs one GEMM over them; each output tile then runs the three
epilogue ALU ops and one store. Virtual threads let the modules overlap:
``cycles = overlapped + (serial - overlapped) / threads``, never below the traffic's AXI time.
Infeasible: an analytic SRAM footprint over a buffer's capacity, a micro-op kernel over the
uop buffer, or (``fit_board``) a design the board cannot hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from vtatune import schedules
from vtatune.hardware import boards
from vtatune.schedules.knobs import REDUCTION, SPATIAL, THREAD
from vtatune.search.space import Candidate
from vtatune.simulator.timing import load_params

#: The initial design of the samplers before their cost model is ready: the per-layer xgb
#: sampler (whose space spans hardware too, too large to enumerate) proposes the analytically
#: fastest of ``INITIAL_POOL`` random candidates; the network tuner, whose pool is one layer's
#: whole knob space on one design, proposes in the analytic order (``order``). Either one, with
#: probability ``INITIAL_EPS``, a random candidate instead.
INITIAL_POOL = 32
INITIAL_EPS = 0.25

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vtatune.hardware.boards import Board
    from vtatune.hardware.config import HwConfig
    from vtatune.schedules.knobs import Knobs
    from vtatune.simulator.timing import TimingParams
    from vtatune.workloads.base import Workload

#: ALU instructions per output tile: the epilogue's shift, max and min.
EPILOGUE_OPS = 3


@dataclass(frozen=True)
class Estimate:
    """``cycles`` when feasible, else None with ``violation`` > 0 (largest fill - 1, or the
    largest board-resource utilization - 1) and ``reason``."""

    cycles: float | None
    violation: float = 0.0
    reason: str = ""


def estimate(cand: Candidate, board: str, fit_board: bool = True) -> Estimate:
    """Analytic cycles of ``cand`` on ``board`` (see the module docstring)."""

    wl, hw, k = cand.workload, cand.hw, cand.knobs
    fp = schedules.footprint(wl, hw, k)
    fills = {"inp": fp["inp"] / hw.inp_buff_bytes, "wgt": fp["wgt"] / hw.wgt_buff_bytes,
             "acc": fp["acc"] / hw.acc_buff_bytes, "uop": fp["uops"] / hw.uop_depth}
    worst = max(fills, key=lambda s: fills[s])
    if fills[worst] > 1:
        return Estimate(None, fills[worst] - 1, f"{worst} buffer overflows "
                        f"({fills[worst]:.2f}x capacity)")
    if fit_board:
        util = _board_utilization(hw, board)
        if util > 1:
            return Estimate(None, util - 1, f"does not fit {board}")
    b, t = _board(board)
    ks = schedules.knob_space(wl, hw)
    tiles = red = 1
    for n in ks.axes:
        if ks.role(n) == REDUCTION:
            red *= ks.steps(n, k[n])
        elif ks.role(n) == SPATIAL:
            tiles *= ks.steps(n, k[n])
    rounds = tiles * red
    axi = b.axi_bytes_per_cycle
    out_elems = math.prod(wl.packed_shapes(hw)["res"])
    macs = wl.padded_macs(hw)
    traffic = schedules.traffic(wl, hw, k)
    out_bytes = out_elems * hw.out_bits // 8
    dma = t.insn_cycles + t.dma_row_cycles  # a DMA's fixed cost (one row's round trip)
    load = (traffic - out_bytes) / axi * t.dma_beat_cycles + 2 * rounds * dma
    gemm = macs / hw.macs_per_cycle * t.gemm_ii_cycles + rounds * t.insn_cycles
    # epilogue ALU loops run one micro-op per iteration: II plus a pipeline refill each
    alu = (EPILOGUE_OPS * out_elems / (hw.batch * hw.block_out)
           * (t.alu_ii_cycles + t.alu_refill_cycles) + EPILOGUE_OPS * tiles * t.insn_cycles)
    store = out_bytes / axi * t.dma_beat_cycles + tiles * dma
    serial = load + gemm + alu + store
    overlapped = max(load, gemm + alu, store)
    threads = math.prod(k[n] for n in ks.names_of(THREAD))
    cycles = overlapped + (serial - overlapped) / threads
    return Estimate(max(cycles, traffic / axi))


def order(wl: Workload, hw: HwConfig, knobs: Sequence[Knobs], board: str) -> list[int]:
    """Indices of ``knobs`` (settings of ``wl`` on ``hw``) fastest first by ``estimate``
    (the design is taken to fit the board); infeasible ones last, least violation first; ties
    keep their order."""

    def score(i: int) -> tuple[float, float]:
        est = estimate(Candidate(wl, hw, dict(knobs[i])), board, fit_board=False)
        return (0.0, est.cycles) if est.cycles is not None else (1.0, est.violation)

    return sorted(range(len(knobs)), key=score)


@lru_cache(maxsize=16)
def _board(name: str) -> tuple[Board, TimingParams]:

    return boards.load(name), load_params(name)


@lru_cache(maxsize=8192)
def _board_utilization(hw: HwConfig, board: str) -> float:
    from vtatune import area

    b, _ = _board(board)
    report = area.estimate(hw, b)
    util = 0.0
    for use in area.fit(report, b).usage:
        util = max(util, use.utilization_pct / 100 if use.utilization_pct is not None else 10.0)
    return util
