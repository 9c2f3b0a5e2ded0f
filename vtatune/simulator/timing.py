"""Cycle model of VTA's task-level pipeline (DESIGN.md section 6); never touches data.

The load, compute and store modules each run their instruction queue in order and
concurrently with each other. An instruction starts when its module is free and every token
it pops is present (a token becomes available when the pushing instruction finishes); it
pushes its tokens when it finishes. Costs, with every constant a per-board parameter from
``hwconfigs/timing/<board>.json``:

* LOAD/STORE of y rows of x tiles (b bytes each), AXI width A bytes/cycle::

      dma_latency + y * (dma_row_overhead + max(ceil(x*b / A), x * sram_tile_cycles))
      + pad_tiles * pad_tile_cycles

  The data beats (y * ceil(x*b / A)) occupy the one AXI port to DRAM, shared by all modules,
  so the modules' DMAs overlap their latencies but never exceed the AXI bandwidth.
* GEMM: ``iter_out * iter_in * uops * gemm_ii + gemm_pipeline``; ALU likewise with the
  ALU's initiation interval and pipeline depth; FINISH: ``finish_cycles``.

``bounds`` gives the physical lower bounds no schedule can beat.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from vtatune.errors import ConfigError, ProgramError, SimulationError
from vtatune.hardware.boards import Board
from vtatune.hardware.boards import load as load_board
from vtatune.hardware.config import HwConfig
from vtatune.paths import project_root
from vtatune.program.isa import (
    AluInsn,
    DepFlags,
    FinishInsn,
    GemmInsn,
    MemId,
    MemInsn,
    Module,
    Opcode,
    insn_name,
    module_of,
    routing_problems,
)
from vtatune.program.program import Program, tile_bytes
from vtatune.simulator.functional import POPS, PUSHES, QUEUES

#: Version of this timing model's equations: bump on any change that can change cycles, so
#: stored results of the old model are never served (``vtatune.store.identity``).
MODEL_VERSION = 1


@dataclass(frozen=True)
class TimingParams:
    """Per-board timing constants; units are in the names (cycles of the VTA clock)."""

    board: str
    dma_latency_cycles: float
    dma_row_overhead_cycles: float
    sram_tile_cycles: float
    pad_tile_cycles: float
    gemm_ii_cycles: float
    gemm_pipeline_cycles: float
    alu_ii_cycles: float
    alu_pipeline_cycles: float
    finish_cycles: float
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    @staticmethod
    def keys() -> tuple[str, ...]:
        """The numeric parameters a timing file must give."""
        return tuple(f.name for f in fields(TimingParams) if f.name not in ("board", "sources"))


def timing_dir() -> Path:
    return project_root() / "hwconfigs" / "timing"


def params_from_dict(raw: Any, source: str) -> TimingParams:
    """Validate a timing file's content, listing every problem at once."""
    if not isinstance(raw, dict):
        raise ConfigError(source, ["expected a JSON object"])
    problems: list[str] = []
    params = raw.get("params")
    sources = raw.get("sources", {})
    if not isinstance(raw.get("board"), str):
        problems.append("missing string key 'board'")
    if not isinstance(params, dict):
        raise ConfigError(source, problems + ["missing object key 'params'"])
    if not isinstance(sources, dict):
        problems.append("'sources' must be an object")
        sources = {}
    for key in TimingParams.keys():
        val = params.get(key)
        if val is None:
            problems.append(f"missing parameter {key!r}")
        elif isinstance(val, bool) or not isinstance(val, int | float) or val < 0:
            problems.append(f"{key} must be a non-negative number, got {val!r}")
        if key not in sources:
            problems.append(f"parameter {key!r} has no entry in 'sources'")
    for key in params:
        if key not in TimingParams.keys():
            problems.append(f"unknown parameter {key!r}")
    if problems:
        raise ConfigError(source, problems)
    return TimingParams(
        board=raw["board"],
        **{k: float(params[k]) for k in TimingParams.keys()},
        sources={str(k): str(v) for k, v in sources.items()},
    )


def load_params(board: str | Board) -> TimingParams:
    """The timing constants of ``board`` (a Board or a board name) from hwconfigs/timing/."""
    name = board.name if isinstance(board, Board) else board
    path = timing_dir() / f"{name}.json"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in timing_dir().glob("*.json")))
        raise ConfigError(str(path), [f"no timing parameters for board {name!r} (known: {known})"])
    from vtatune.readers import read_json

    return params_from_dict(read_json(path, "timing parameters"), str(path))


@dataclass(frozen=True)
class ModuleTiming:
    """One module's time split (cycles): executing, waiting for a dependence token with an
    instruction at its head, and waiting for the shared AXI port."""

    insns: int
    busy_cycles: float
    token_stall_cycles: float
    dram_stall_cycles: float


@dataclass(frozen=True)
class TimingResult:
    """Cycles of one program on one board; ``seconds`` at the board clock."""

    board: str
    clock_mhz: float
    cycles: int
    seconds: float
    modules: dict[str, ModuleTiming]
    counts: dict[str, int]
    gemm_ops: int
    alu_ops: int
    dram_read_bytes: int
    dram_write_bytes: int
    axi_busy_cycles: int

    @property
    def dram_bytes(self) -> int:
        return self.dram_read_bytes + self.dram_write_bytes


@dataclass(frozen=True)
class Bounds:
    """Lower bounds (cycles): compute = MACs / (BATCH*BLOCK_IN*BLOCK_OUT), memory =
    compulsory bytes / AXI bytes per cycle."""

    compute_cycles: float
    memory_cycles: float

    @property
    def cycles(self) -> float:
        return max(self.compute_cycles, self.memory_cycles)

    def efficiency(self, cycles: float) -> float:
        """max bound / cycles, in (0, 1] for a valid model."""
        return self.cycles / cycles if cycles > 0 else 0.0


def bounds(macs: int, compulsory_bytes: int, hw: HwConfig, board: Board | str) -> Bounds:
    """Physical lower bounds of a layer with ``macs`` multiply-accumulates that must move at
    least ``compulsory_bytes`` between DRAM and the chip."""
    b = board if isinstance(board, Board) else load_board(board)
    return Bounds(macs / hw.macs_per_cycle, compulsory_bytes / b.axi_bytes_per_cycle)


# ---- the model ---------------------------------------------------------------------------------

_QIDX = {q: i for i, q in enumerate(QUEUES)}


# A precomputed instruction cost: (module, popped queues, pushed queues, pre, beats, post):
# ``pre`` cycles before the AXI port is needed (the whole cost of a compute instruction),
# ``beats`` cycles the port is held, ``post`` cycles from acquiring the port to the end.
_Cost = tuple[int, tuple[int, ...], tuple[int, ...], float, int, float]


def _costs(program: Program, p: TimingParams, axi_bytes: int) -> tuple[list[_Cost], dict]:
    hw = program.hw
    tbytes = {int(m): tile_bytes(hw, m) for m in MemId}
    flags: dict[tuple[int, DepFlags], tuple[tuple[int, ...], tuple[int, ...]]] = {}
    costs: list[_Cost] = []
    totals = {"gemm": 0, "alu": 0, "read": 0, "write": 0}
    for k, insn in enumerate(program.insns):
        if isinstance(insn, MemInsn):  # only DMA can be misrouted (compute takes all flags)
            probs = routing_problems(insn)
            if probs:
                raise ProgramError(f"instruction #{k}: " + "; ".join(probs))
        mod = int(module_of(insn))
        dep = insn.deps
        qs = flags.get((mod, dep))
        if qs is None:
            qs = flags[(mod, dep)] = (
                tuple(_QIDX[q] for f, q in POPS[Module(mod)].items() if getattr(dep, f)),
                tuple(_QIDX[q] for f, q in PUSHES[Module(mod)].items() if getattr(dep, f)),
            )
        if isinstance(insn, MemInsn):
            tb = tbytes[insn.memory_type]
            y, x = insn.y_size, insn.x_size
            row_beats = -(-(x * tb) // axi_bytes)
            row = max(row_beats, x * p.sram_tile_cycles) + p.dma_row_overhead_cycles
            pad_tiles = insn.padded_tiles - y * x
            post = y * row + pad_tiles * p.pad_tile_cycles
            costs.append((mod, *qs, p.dma_latency_cycles, y * row_beats, post))
            totals["write" if insn.opcode == Opcode.STORE else "read"] += y * x * tb
        elif isinstance(insn, GemmInsn):
            ops = insn.ops
            totals["gemm"] += ops
            costs.append((mod, *qs, ops * p.gemm_ii_cycles + p.gemm_pipeline_cycles, 0, 0.0))
        elif isinstance(insn, AluInsn):
            ops = insn.ops
            totals["alu"] += ops
            costs.append((mod, *qs, ops * p.alu_ii_cycles + p.alu_pipeline_cycles, 0, 0.0))
        elif isinstance(insn, FinishInsn):
            costs.append((mod, *qs, p.finish_cycles, 0, 0.0))
        else:
            raise ProgramError(f"instruction #{k}: not an instruction: {insn!r}")
    return costs, totals


def simulate(
    program: Program, board: Board | str, params: TimingParams | None = None
) -> TimingResult:
    """Cycles of ``program`` on ``board`` (a Board or a board name); ``params`` default to the
    board's timing file. Raises ``SimulationError`` on a dependence deadlock."""
    b = board if isinstance(board, Board) else load_board(board)
    p = params or load_params(b)
    costs, totals = _costs(program, p, b.axi_bytes_per_cycle)

    queues: list[list[int]] = [[], [], []]
    for k, c in enumerate(costs):
        queues[c[0]].append(k)
    heads = [0, 0, 0]
    free = [0.0, 0.0, 0.0]
    busy = [0.0, 0.0, 0.0]
    token_stall = [0.0, 0.0, 0.0]
    dram_stall = [0.0, 0.0, 0.0]
    tokens: list[deque[float]] = [deque() for _ in QUEUES]
    port_free = 0.0
    port_busy = 0
    end = 0.0
    remaining = len(costs)
    while remaining:
        # Pick the module whose head can start earliest; ties go to load, compute, store.
        best = -1
        best_t = math.inf
        for m in (0, 1, 2):
            h = heads[m]
            if h == len(queues[m]):
                continue
            t = free[m]
            ready = True
            for q in costs[queues[m][h]][1]:
                if not tokens[q]:
                    ready = False
                    break
                if tokens[q][0] > t:
                    t = tokens[q][0]
            if ready and t < best_t:
                best, best_t = m, t
        if best < 0:
            raise SimulationError(_deadlock(program, queues, heads, costs, tokens))
        _, pops, pushes, pre, beats, post = costs[queues[best][heads[best]]]
        for q in pops:
            tokens[q].popleft()
        start = best_t
        token_stall[best] += start - free[best]
        if beats or post:
            want = start + pre
            port_start = max(want, port_free)
            port_free = port_start + beats
            port_busy += beats
            dram_stall[best] += port_start - want
            finish = port_start + post
            busy[best] += pre + post
        else:
            finish = start + pre
            busy[best] += pre
        for q in pushes:
            tokens[q].append(finish)
        free[best] = finish
        end = max(end, finish)
        heads[best] += 1
        remaining -= 1

    cycles = math.ceil(end)
    return TimingResult(
        board=b.name,
        clock_mhz=b.clock_mhz,
        cycles=cycles,
        seconds=cycles / b.clock_hz,
        modules={
            mod.name.lower(): ModuleTiming(
                len(queues[mod]), busy[mod], token_stall[mod], dram_stall[mod]
            )
            for mod in Module
        },
        counts=program.counts(),
        gemm_ops=totals["gemm"],
        alu_ops=totals["alu"],
        dram_read_bytes=totals["read"],
        dram_write_bytes=totals["write"],
        axi_busy_cycles=port_busy,
    )


def _deadlock(program: Program, queues, heads, costs, tokens) -> str:
    waits = []
    for mod in Module:
        if heads[mod] < len(queues[mod]):
            k = queues[mod][heads[mod]]
            empty = [QUEUES[q] for q in costs[k][1] if not tokens[q]]
            waits.append(
                f"{mod.name.lower()} module blocked at #{k} {insn_name(program.insns[k])} "
                f"popping {', '.join(empty)}"
            )
    done = sum(heads)
    return f"deadlock after {done} of {len(costs)} instructions: " + "; ".join(waits)
