"""Time of one call of a VTA program on a board: the accelerator's cycles plus the host's work.

``seconds = accelerator_seconds + host_seconds`` is what a user measures on the board for one
call (what AutoTVM's measurements are). ``cycles`` are the accelerator's, from FINISH's view:
the three modules run their instruction queues in order and concurrently; an instruction
starts when its module is free, it has been fetched, and every token it pops is present (a
token appears when the pushing instruction finishes); it pushes its tokens when it finishes.
Every constant is a per-board parameter of ``hwconfigs/timing/<board>.json``; the facts
behind the equations are quoted with file and line in ``hwconfigs/timing/SOURCES.md``:

* Fetch (V1): one instruction per ``INSTRUCTION_BITS / axi_bits`` cycles, in program order.
* Every instruction pays ``insn_cycles`` (V2: each module is an HLS function started once per
  instruction: read the queue, decode, pop/push tokens).
* LOAD/STORE of y rows of x tiles (V3, V4): one ``memcpy`` burst per row, so::

      y * dma_row_cycles + beats * dma_beat_cycles + pad_tiles * pad_tile_cycles

  where ``beats = y * ceil(x * tile_bytes / axi_bytes)``. The beats hold the one AXI port
  all masters share (V6: fetch, load, compute and store meet in one interconnect into the
  ACP or HPC port), so modules overlap their latencies but never exceed the port.
  A LOAD UOP is one burst of ``x`` micro-ops (V3).
* GEMM (V5): ``iter_out * iter_in * (uops * gemm_ii_cycles + gemm_refill_cycles)``: only the
  micro-op loop is pipelined, so every inner iteration refills the pipeline; ALU likewise with
  its initiation interval of 2 and ``alu_refill_cycles``.
* Host (H1-H3): ``host_call_us + host_insn_us * instructions``: the ARM runs the compiled
  host code that builds the instruction stream through VTA's runtime, copies the stream and
  the micro-op kernels into DMA buffers, writes the start registers and polls for FINISH.
  The micro-op kernels' JIT runs once per process (cached by the runtime) and is not counted,
  as in a measurement that makes one warm-up call.

``bounds`` gives the physical lower bounds no schedule can beat.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from vtatune.errors import ConfigError, ProgramError, SimulationError
from vtatune.hardware import timing_profiles
from vtatune.hardware.boards import Board
from vtatune.hardware.boards import load as load_board
from vtatune.hardware.config import HwConfig
from vtatune.hardware.hw_spec import INSTRUCTION_BITS
from vtatune.paths import project_root
from vtatune.program.isa import (
    COL_DEPS,
    COL_OPCODE,
    DEPS_BITS,
    GEMM_COL,
    MEM_COL,
    MemId,
    Module,
    Opcode,
    insn_name,
    routing_problems,
)
from vtatune.program.program import Program
from vtatune.readers import read_json
from vtatune.simulator.functional import POPS, PUSHES, QUEUES

#: Version of this timing model's equations: bump on any change that can change cycles, so
#: stored results of the old model are never served (``vtatune.store.identity``).
MODEL_VERSION = 2

#: The accelerator constants a linear cost row multiplies, in this order (then a constant 1).
ACCEL_KEYS = ("dma_row_cycles", "dma_beat_cycles", "insn_cycles", "gemm_refill_cycles",
              "alu_refill_cycles")  # fmt: skip
#: The constants ``vtatune calibrate`` fits; the others come from VTA's source as they are.
FIT_KEYS = (*ACCEL_KEYS, "host_call_us", "host_insn_us")


@dataclass(frozen=True)
class TimingParams:
    """Per-board timing constants; units are in the names (``cycles`` of the VTA clock).

    ``sources`` names each constant's primary source; ``calibration`` says whether and on
    which measurements the board was calibrated (empty: derived, not calibrated)."""

    board: str
    dma_row_cycles: float
    dma_beat_cycles: float
    insn_cycles: float
    gemm_refill_cycles: float
    alu_refill_cycles: float
    host_call_us: float
    host_insn_us: float
    gemm_ii_cycles: float
    alu_ii_cycles: float
    pad_tile_cycles: float
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    calibration: dict[str, Any] = field(default_factory=dict, compare=False)
    profile: str = field(default="", compare=False)

    @staticmethod
    def keys() -> tuple[str, ...]:
        """The numeric parameters a timing file must give."""
        return tuple(f.name for f in fields(TimingParams)
                     if f.name not in ("board", "sources", "calibration", "profile"))

    def values(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self.keys()}

    @property
    def calibrated(self) -> bool:
        return bool(self.calibration.get("records"))


def timing_dir() -> Path:
    return project_root() / "hwconfigs" / "timing"


def params_from_dict(raw: Any, source: str) -> TimingParams:
    """Validate a timing file's content, listing every problem at once."""
    if not isinstance(raw, dict):
        raise ConfigError(source, ["expected a JSON object"])
    problems: list[str] = []
    params = raw.get("params")
    sources = raw.get("sources", {})
    calibration = raw.get("calibration", {})
    if not isinstance(raw.get("board"), str):
        problems.append("missing string key 'board'")
    if not isinstance(params, dict):
        raise ConfigError(source, problems + ["missing object key 'params'"])
    if not isinstance(sources, dict):
        problems.append("'sources' must be an object")
        sources = {}
    if not isinstance(calibration, dict):
        problems.append("'calibration' must be an object")
        calibration = {}
    for key in TimingParams.keys():
        val = params.get(key)
        if val is None:
            problems.append(f"missing parameter {key!r}")
        elif (isinstance(val, bool) or not isinstance(val, int | float) or not math.isfinite(val)
              or val < 0):
            problems.append(f"{key} must be a non-negative number, got {val!r}")
        if not str(sources.get(key, "")).strip():
            problems.append(f"parameter {key!r} has no entry in 'sources'")
    for key in params:
        if key not in TimingParams.keys():
            problems.append(f"unknown parameter {key!r}")
    prior = raw.get("prior", {})
    if not isinstance(prior, dict):
        problems.append("'prior' must be an object")
    else:
        for key, val in prior.items():
            if key not in FIT_KEYS:
                problems.append(f"prior of {key!r}: not a fitted parameter")
            elif (isinstance(val, bool) or not isinstance(val, int | float)
                  or not math.isfinite(val) or val <= 0):
                problems.append(f"prior of {key} must be a positive number, got {val!r}")
    if not problems and (params["gemm_ii_cycles"] <= 0 or params["alu_ii_cycles"] <= 0
                         or params["dma_beat_cycles"] <= 0):
        problems.append("gemm_ii_cycles, alu_ii_cycles and dma_beat_cycles must be positive")
    if problems:
        raise ConfigError(source, problems)
    return TimingParams(
        board=raw["board"],
        **{k: float(params[k]) for k in TimingParams.keys()},
        sources={str(k): str(v) for k, v in sources.items()},
        calibration=dict(calibration),
        profile=str(raw.get("profile", "")),
    )


def load_params(board: str | Board) -> TimingParams:
    """The timing constants of ``board`` (a Board or a board name, ``NAME@PROFILE`` for a
    profile other than the default; see ``vtatune.hardware.timing_profiles``)."""

    if isinstance(board, Board) and board.timing is not None:
        return params_from_dict(board.timing, f"{board.name}'s timing profile (carried along)")
    spec = board.name if isinstance(board, Board) else board
    base, profile = timing_profiles.split(spec)
    prof = timing_profiles.resolve(base, profile)
    return params_from_dict(prof.content, f"{prof.path} (profile {prof.name})")


def load_params_file(path: str | Path, profile: str | None = None) -> TimingParams:
    """Timing constants from a timing file (the format of hwconfigs/timing/<board>.json):
    its profile ``profile``, or its default."""

    raw = read_json(path, "timing parameters")
    board = raw.get("board") if isinstance(raw, dict) else None
    profs = timing_profiles.profiles_of(raw, str(board), Path(path))
    chosen = next((p for p in profs if p.name == profile), None) if profile else profs[0]
    if chosen is None:
        raise ConfigError(str(path), [f"no profile {profile!r} (known: "
                                      f"{', '.join(p.name for p in profs)})"])
    return params_from_dict(chosen.content, str(path))


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
    """One call of one program on one board.

    ``cycles``: the accelerator's cycles (clock ``clock_mhz``); ``accelerator_seconds`` =
    cycles / clock; ``host_seconds``: the ARM's work per call; ``seconds``: their sum, the
    end-to-end time per call."""

    board: str
    clock_mhz: float
    cycles: int
    accelerator_seconds: float
    host_seconds: float
    modules: dict[str, ModuleTiming]
    counts: dict[str, int]
    gemm_ops: int
    alu_ops: int
    dram_read_bytes: int
    dram_write_bytes: int
    axi_busy_cycles: int
    model_version: int = MODEL_VERSION

    @property
    def seconds(self) -> float:
        return self.accelerator_seconds + self.host_seconds

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


def host_seconds(n_insns: int, p: TimingParams) -> float:
    """The host's work per call for a program of ``n_insns`` instructions (H1-H3)."""
    return (p.host_call_us + p.host_insn_us * n_insns) * 1e-6


# ---- the cost rows ------------------------------------------------------------------------

_QIDX = {q: i for i, q in enumerate(QUEUES)}
#: Columns of a cost row: ACCEL_KEYS, then the constant term (cycles).
_NCOL = len(ACCEL_KEYS) + 1
_ROW, _BEAT, _INSN, _GREFILL, _AREFILL, _CONST = range(_NCOL)


@dataclass(frozen=True, eq=False)
class CostRows:
    """A program's instruction costs as linear rows over ``ACCEL_KEYS`` (+ a constant), so
    the same program can be timed with any constants (calibration) without rebuilding.

    ``pre``: cycles before the AXI port is needed (the whole cost of a compute instruction);
    ``beats``: cycles the port is held; ``post``: cycles from acquiring the port to the end.
    The II and pad constants are folded into the constant column with ``fixed``."""

    n: int
    module: tuple[int, ...]
    pops: tuple[tuple[int, ...], ...]
    pushes: tuple[tuple[int, ...], ...]
    dma: tuple[bool, ...]
    fetch: tuple[float, ...]
    pre: np.ndarray
    beats: np.ndarray
    post: np.ndarray
    gemm_ops: int
    alu_ops: int
    read_bytes: int
    write_bytes: int
    fixed: tuple[float, float, float]

    def costs(self, p: TimingParams) -> tuple[list[float], list[float], list[float]]:
        """(pre, beats, post) in cycles with the constants of ``p``."""
        v = np.array([getattr(p, k) for k in ACCEL_KEYS] + [1.0])
        return (self.pre @ v).tolist(), (self.beats @ v).tolist(), (self.post @ v).tolist()


def cost_rows(program: Program, board: Board, p: TimingParams) -> CostRows:
    """The linear cost rows of ``program`` on ``board`` (II and pad constants from ``p``).

    Computed on the instruction table's columns; routing and its checks depend on a few fields
    of an instruction only and are worked out once per distinct combination."""
    cols = program.insns.cols
    n = cols.shape[0]
    op = cols[:, COL_OPCODE]
    bits = cols[:, COL_DEPS]
    mem = op <= Opcode.STORE
    mt = cols[:, MEM_COL["memory_type"]]
    y, x = cols[:, MEM_COL["y_size"]], cols[:, MEM_COL["x_size"]]
    pads = cols[:, [MEM_COL[f] for f in ("y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1")]]
    _check_routes(program, mem, pads.any(axis=1))
    module = np.full(n, int(Module.COMPUTE))
    module[mem & np.isin(mt, (MemId.INP, MemId.WGT))] = Module.LOAD
    module[op == Opcode.STORE] = Module.STORE
    codes = (module * 16 + bits).tolist()
    # DMA: a zero-size LOAD/STORE is a no-op that only moves tokens
    dma = mem & (y != 0) & (x != 0)
    tb = program.dma_tile_bytes()
    nbytes = np.where(dma, y * x * tb, 0)
    nbeats = np.where(dma, y * -(-(x * tb) // board.axi_bytes_per_cycle), 0)
    padded = (pads[:, 0] + y + pads[:, 1]) * (pads[:, 2] + x + pads[:, 3])
    # compute: iter_out * iter_in refills, iter_out * iter_in * uops tile operations
    gemm, alu = op == Opcode.GEMM, op == Opcode.ALU
    iters = cols[:, GEMM_COL["iter_out"]] * cols[:, GEMM_COL["iter_in"]]
    ops = program.insns.tile_ops()
    gemm_ii, alu_ii, pad_cycles = p.gemm_ii_cycles, p.alu_ii_cycles, p.pad_tile_cycles
    pre = np.zeros((n, _NCOL))
    beats = np.zeros((n, _NCOL))
    post = np.zeros((n, _NCOL))
    pre[:, _INSN] = 1.0
    beats[:, _BEAT] = nbeats
    post[:, _ROW] = np.where(dma, y, 0)
    post[:, _BEAT] = nbeats
    post[:, _CONST] = np.where(dma, (padded - y * x) * pad_cycles, 0.0)
    pre[:, _GREFILL] = np.where(gemm, iters, 0)
    pre[:, _AREFILL] = np.where(alu, iters, 0)
    pre[:, _CONST] = np.where(gemm, ops * gemm_ii, 0.0) + np.where(alu, ops * alu_ii, 0.0)
    store = op == Opcode.STORE
    fetch_step = -(-INSTRUCTION_BITS // board.axi_bits)
    return CostRows(n, tuple(module.tolist()), tuple([_POPS_OF[c] for c in codes]),
                    tuple([_PUSHES_OF[c] for c in codes]), tuple(dma.tolist()),
                    tuple((np.arange(1, n + 1, dtype=np.float64) * fetch_step).tolist()),
                    pre, beats, post, int(ops[gemm].sum()), int(ops[alu].sum()),
                    int(nbytes[~store].sum()), int(nbytes[store].sum()),
                    (gemm_ii, alu_ii, pad_cycles))


def _tokens(flags: dict[Module, dict[str, str]]) -> tuple[tuple[int, ...], ...]:
    """Token queues an instruction pops (or pushes) by ``module * 16 + dependence bits``."""
    return tuple(tuple(_QIDX[q] for f, q in flags[Module(code // 16)].items()
                       if code % 16 & DEPS_BITS[f]) for code in range(16 * len(Module)))


_POPS_OF = _tokens(POPS)
_PUSHES_OF = _tokens(PUSHES)


def _check_routes(program: Program, mem: np.ndarray, padded: np.ndarray) -> None:
    """Raise for the first DMA the routed module cannot run (compute takes every flag): the
    checks run on one instruction of each distinct (opcode, flags, memory type, padded)."""
    cols = program.insns.cols
    rows = np.flatnonzero(mem)
    if not rows.size:
        return
    # one number per combination: opcode < 2, flags < 16, memory type < 8 (checked), padded
    keys = ((cols[rows, COL_OPCODE] * 16 + cols[rows, COL_DEPS]) * 8
            + cols[rows, MEM_COL["memory_type"]]) * 2 + padded[rows]
    _, first = np.unique(keys, return_index=True)
    for k in sorted(rows[first].tolist()):
        probs = routing_problems(program.insns.record(k))
        if probs:
            raise ProgramError(f"instruction #{k}: " + "; ".join(probs))


# ---- the event simulation -----------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    end: float
    busy: list[float]
    token_stall: list[float]
    dram_stall: list[float]
    port_busy: float
    gradient: np.ndarray | None  # d end / d ACCEL_KEYS along the critical path


def _run(rows: CostRows, p: TimingParams, name: Callable[[int], str],
         gradient: bool = False) -> _Run:
    """Simulate the modules; with ``gradient``, also d(end)/d(ACCEL_KEYS) along the critical
    path (the end is piecewise linear in the constants: the path's rows summed). ``name``
    names instruction k in a deadlock report."""
    pre, beats, post = rows.costs(p)
    module, pops, pushes, dma, fetch = rows.module, rows.pops, rows.pushes, rows.dma, rows.fetch
    queues: list[list[int]] = [[], [], []]
    for k, m in enumerate(module):
        queues[m].append(k)
    lens = [len(q) for q in queues]
    heads = [0, 0, 0]
    free = [0.0, 0.0, 0.0]
    last = [-1, -1, -1]  # the instruction each module finished last
    busy = [0.0, 0.0, 0.0]
    token_stall = [0.0, 0.0, 0.0]
    dram_stall = [0.0, 0.0, 0.0]
    tokens: list[deque[tuple[float, int]]] = [deque() for _ in QUEUES]
    port_free = 0.0
    port_last = -1
    port_busy = 0.0
    end = 0.0
    end_k = -1
    n = rows.n
    # Why each instruction started when it did: the instruction whose finish gated its start
    # (-1: fetch or time 0), and for DMA whether the port (-2) or its own start gated it.
    start_by = [-1] * n
    port_by = [-1] * n
    remaining = n
    while remaining:
        # Pick the module whose head can start earliest; ties go to load, compute, store.
        best = -1
        best_t = math.inf
        best_by = -1
        for m in (0, 1, 2):
            h = heads[m]
            if h == lens[m]:
                continue
            k = queues[m][h]
            t = free[m]
            by = last[m]
            if fetch[k] > t:
                t, by = fetch[k], -1
            ready = True
            for q in pops[k]:
                tq = tokens[q]
                if not tq:
                    ready = False
                    break
                if tq[0][0] > t:
                    t, by = tq[0]
            if ready and t < best_t:
                best, best_t, best_by = m, t, by
        if best < 0:
            raise SimulationError(_deadlock(rows, queues, heads, tokens, name))
        k = queues[best][heads[best]]
        for q in pops[k]:
            tokens[q].popleft()
        start = best_t
        start_by[k] = best_by
        token_stall[best] += start - free[best]
        if dma[k]:
            want = start + pre[k]
            if port_free > want:
                port_start = port_free
                port_by[k] = port_last
                dram_stall[best] += port_free - want
            else:
                port_start = want
            port_free = port_start + beats[k]
            port_last = k
            port_busy += beats[k]
            finish = port_start + post[k]
            busy[best] += pre[k] + post[k]
        else:
            finish = start + pre[k]
            busy[best] += pre[k]
        for q in pushes[k]:
            tokens[q].append((finish, k))
        free[best] = finish
        last[best] = k
        if finish > end:
            end, end_k = finish, k
        heads[best] += 1
        remaining -= 1
    grad = _critical_path(rows, start_by, port_by, end_k) if gradient else None
    return _Run(end, busy, token_stall, dram_stall, port_busy, grad)


def _critical_path(rows: CostRows, start_by: list[int], port_by: list[int], k: int) -> np.ndarray:
    """Sum of the cost rows on the path that set the end time (walked back from ``k``)."""
    pre: list[int] = []
    post: list[int] = []
    beats: list[int] = []
    dma = rows.dma
    at_port = False  # walking a chain of port holders: count their beats, not their post
    while k >= 0:
        if at_port:
            beats.append(k)
        elif dma[k]:
            post.append(k)
        else:
            pre.append(k)
        if dma[k] and port_by[k] >= 0:
            k, at_port = port_by[k], True
            continue
        if dma[k]:
            pre.append(k)
        k, at_port = start_by[k], False
    g = rows.pre[pre].sum(axis=0) + rows.post[post].sum(axis=0) + rows.beats[beats].sum(axis=0)
    return g[:-1]


def simulate(
    program: Program, board: Board | str, params: TimingParams | None = None
) -> TimingResult:
    """Cycles and seconds of one call of ``program`` on ``board`` (a Board or a board name);
    ``params`` default to the board's timing file. Raises ``SimulationError`` on a dependence
    deadlock."""
    b = board if isinstance(board, Board) else load_board(board)
    p = params or load_params(b)
    rows = cost_rows(program, b, p)
    run = _run(rows, p, lambda k: insn_name(program.insns[k]))
    cycles = math.ceil(run.end)
    modules = {mod.name.lower(): ModuleTiming(rows.module.count(int(mod)), run.busy[mod],
                                              run.token_stall[mod], run.dram_stall[mod])
               for mod in Module}  # fmt: skip
    return TimingResult(
        board=b.name,
        clock_mhz=b.clock_mhz,
        cycles=cycles,
        accelerator_seconds=cycles / b.clock_hz,
        host_seconds=host_seconds(rows.n, p),
        modules=modules,
        counts=program.counts(),
        gemm_ops=rows.gemm_ops,
        alu_ops=rows.alu_ops,
        dram_read_bytes=rows.read_bytes,
        dram_write_bytes=rows.write_bytes,
        axi_busy_cycles=math.ceil(run.port_busy),
    )


def end_cycles(rows: CostRows, p: TimingParams) -> float:
    """Accelerator cycles (unrounded) of ``rows`` with constants ``p``."""
    return _run(rows, p, lambda k: f"instruction #{k}").end


def end_and_gradient(rows: CostRows, p: TimingParams) -> tuple[float, np.ndarray]:
    """Accelerator cycles of ``rows`` with constants ``p`` and their gradient with respect to
    ``ACCEL_KEYS`` (what ``vtatune calibrate`` fits with)."""
    run = _run(rows, p, lambda k: f"instruction #{k}", gradient=True)
    assert run.gradient is not None
    return run.end, run.gradient


def _deadlock(rows: CostRows, queues, heads, tokens, name: Callable[[int], str]) -> str:
    waits = []
    for mod in Module:
        if heads[mod] < len(queues[mod]):
            k = queues[mod][heads[mod]]
            empty = [QUEUES[q] for q in rows.pops[k] if not tokens[q]]
            waits.append(f"{mod.name.lower()} module blocked at #{k} {name(k)} "
                         f"popping {', '.join(empty)}")
    done = sum(heads)
    return f"deadlock after {done} of {rows.n} instructions: " + "; ".join(waits)
