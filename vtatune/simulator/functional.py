"""Bit-exact functional simulation of a VTA program on modelled DRAM and SRAMs (numpy only).

Semantics are VTA's (``hw_spec.h`` and its functional simulator):

* LOAD writes (y_pad_0 + y_size + y_pad_1) x (x_pad_0 + x_size + x_pad_1) tiles, row-major
  and contiguous, at ``sram_base``; pad tiles are zero; DRAM row r starts at tile
  ``dram_base + r * x_stride`` and holds ``x_size`` contiguous tiles. ACC loads int32 tiles,
  ACC_8BIT int8 tiles sign-extended into acc, UOP 32-bit micro-op words.
* STORE copies ``y_size * x_size`` contiguous OUT tiles from ``sram_base`` to DRAM rows.
* GEMM, for i0 < iter_out, i1 < iter_in, u in [uop_bgn, uop_end):
  ``acc[dst'] = 0`` if reset else ``acc[dst'] += inp[src'] . wgt[wgt']^T`` (int32, wrapping),
  where x' = uop.x + i0 * x_factor_out + i1 * x_factor_in.
* ALU: ``acc[dst'] = op(acc[dst'], imm if use_imm else acc[src'])`` in loop order; SHR is an
  arithmetic shift right by the operand (negative: left; shifts are clamped to 31 right and
  give 0 from 32 left), MUL/ADD wrap to int32. ALU reset zeroes ``acc[dst']``.
* Every GEMM/ALU write also writes the int8-truncated value to the out buffer.

The three in-order queues (load, compute, store) run round-robin, each as far as its head's
token pops allow, so a missing dependence shows up as a load racing ahead (as on hardware)
and a cycle of waits raises ``SimulationError`` naming each blocked instruction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np

from vtatune.errors import ProgramError, SimulationError
from vtatune.program.isa import (
    AluInsn,
    AluOp,
    FinishInsn,
    GemmInsn,
    Insn,
    MemId,
    MemInsn,
    Module,
    Opcode,
    insn_name,
    module_of,
    routing_problems,
    uop_fields,
)
from vtatune.program.program import UOP_REGION, Program, tile_bytes

#: Token queues between modules: (from, to) -> name.
QUEUES = ("l2c", "c2l", "c2s", "s2c")
#: Which queue each module's flags pop / push: {module: {flag: queue}}.
POPS = {
    Module.LOAD: {"pop_next": "c2l"},
    Module.COMPUTE: {"pop_prev": "l2c", "pop_next": "s2c"},
    Module.STORE: {"pop_prev": "c2s"},
}
PUSHES = {
    Module.LOAD: {"push_next": "l2c"},
    Module.COMPUTE: {"push_prev": "c2l", "push_next": "c2s"},
    Module.STORE: {"push_prev": "s2c"},
}

# Rough costs of the GEMM plans on one core (measured with numpy 2.4/OpenBLAS), used only to
# pick the fastest plan; results are bit-identical whichever is taken.
_PAIR_MACS_PER_US = 15_000  # one BLAS matmul of all distinct (inp, wgt) tile pairs
_BATCHED_MACS_PER_US = 2_000  # np.matmul over gathered tile pairs
_GROUP_US = 4.0  # per distinct weight tile when grouping by weight
_GATHER_BYTES_PER_US = 5_000  # gathering float32 input tiles
# Shift amounts beyond these give the saturated result (int32 operands).
_MAX_SHR = 31
_ZERO_SHL = 32
_MASK32 = 0xFFFFFFFF


@dataclass(frozen=True)
class Counters:
    """VTA simulator counters. ``*_nbytes`` are DRAM bytes read/written (pads excluded);
    ``gemm_counter``/``alu_counter`` add iter_out * iter_in * (uop_end - uop_bgn) per insn,
    except GEMM resets (not counted, as in VTA's ``sim_driver.cc``)."""

    inp_load_nbytes: int = 0
    wgt_load_nbytes: int = 0
    acc_load_nbytes: int = 0
    uop_load_nbytes: int = 0
    out_store_nbytes: int = 0
    gemm_counter: int = 0
    alu_counter: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Srams:
    """On-chip buffers (tiles first): inp [depth, BATCH, BLOCK_IN] int8, wgt [depth, BLOCK_OUT,
    BLOCK_IN] int8, acc [depth, BATCH, BLOCK_OUT] int32, out like acc in int8, uop uint32."""

    inp: np.ndarray
    wgt: np.ndarray
    acc: np.ndarray
    out: np.ndarray
    uop: np.ndarray


@dataclass(frozen=True, eq=False)
class FunctionalResult:
    """Final DRAM and SRAM contents, counters, and the order instructions ran in."""

    program: Program
    dram: np.ndarray
    srams: Srams
    counters: Counters
    order: tuple[int, ...]
    leftover_tokens: Mapping[str, int]

    def region(
        self, name: str, dtype: np.dtype | type = np.int8, shape: tuple[int, ...] | None = None
    ) -> np.ndarray:
        """A copy of region ``name`` viewed as ``dtype`` (and reshaped to ``shape``)."""
        r = self.program.regions[name]
        dt = np.dtype(dtype)
        arr = self.dram[r.offset : r.offset + r.nbytes // dt.itemsize * dt.itemsize].view(dt)
        if shape is not None:
            arr = arr[: int(np.prod(shape))].reshape(shape)
        return arr.copy()


def run(
    program: Program,
    inputs: Mapping[str, np.ndarray | bytes] | None = None,
    dram: np.ndarray | None = None,
) -> FunctionalResult:
    """Execute ``program``. ``inputs`` maps region names to arrays (their bytes are copied to
    the region start); ``dram`` gives the whole initial DRAM instead. The micro-op image is
    always copied into region ``uops``."""
    problems = []
    for i, insn in enumerate(program.insns):
        problems.extend(f"instruction #{i}: {p}" for p in routing_problems(insn))
    if problems:
        raise ProgramError("; ".join(problems))
    m = _Machine(program, dram)
    for name, value in (inputs or {}).items():
        m.write_region(name, value)
    if program.uops.size:
        m.write_region(UOP_REGION, program.uops.astype("<u4"))
    order = _schedule(program.insns, m.execute)
    return FunctionalResult(
        program=program,
        dram=m.dram,
        srams=Srams(m.inp, m.wgt, m.acc, m.out, m.uop),
        counters=Counters(**m.counters),
        order=tuple(order[0]),
        leftover_tokens=order[1],
    )


def _schedule(insns: tuple[Insn, ...], execute) -> tuple[list[int], dict[str, int]]:
    """Run the three in-order queues round-robin; each advances while its head's pops are
    satisfiable. Returns the execution order and the tokens left in each queue."""
    queues: list[list[int]] = [[], [], []]
    for i, insn in enumerate(insns):
        queues[module_of(insn)].append(i)
    heads = [0, 0, 0]
    tokens = dict.fromkeys(QUEUES, 0)
    order: list[int] = []
    pops = [[(flag, q) for flag, q in POPS[mod].items()] for mod in Module]
    pushes = [[(flag, q) for flag, q in PUSHES[mod].items()] for mod in Module]
    while True:
        progressed = False
        for mod in (0, 1, 2):
            queue = queues[mod]
            while heads[mod] < len(queue):
                k = queue[heads[mod]]
                dep = insns[k].deps
                need = [q for flag, q in pops[mod] if getattr(dep, flag)]
                if any(tokens[q] == 0 for q in need):
                    break
                for q in need:
                    tokens[q] -= 1
                execute(k, insns[k])
                for flag, q in pushes[mod]:
                    if getattr(dep, flag):
                        tokens[q] += 1
                order.append(k)
                heads[mod] += 1
                progressed = True
        if all(heads[m] == len(queues[m]) for m in (0, 1, 2)):
            return order, tokens
        if not progressed:
            waits = []
            for mod in Module:
                if heads[mod] < len(queues[mod]):
                    k = queues[mod][heads[mod]]
                    need = [q for flag, q in pops[mod] if getattr(insns[k].deps, flag)]
                    empty = [q for q in need if tokens[q] == 0]
                    waits.append(
                        f"{mod.name.lower()} module blocked at #{k} {insn_name(insns[k])} "
                        f"popping {', '.join(empty)}"
                    )
            raise SimulationError(
                f"deadlock after {len(order)} of {len(insns)} instructions: " + "; ".join(waits)
            )


class _Machine:
    """DRAM, SRAMs and counters; ``execute`` runs one instruction."""

    def __init__(self, program: Program, dram: np.ndarray | None):
        hw = self.hw = program.hw
        if dram is None:
            try:
                self.dram = np.zeros(program.dram_bytes, dtype=np.uint8)
            except MemoryError:  # a program from a file may claim any size
                raise SimulationError(f"the program's DRAM of {program.dram_bytes:,} bytes "
                                      "cannot be allocated on this machine") from None
        else:
            self.dram = np.array(dram, dtype=np.uint8).reshape(-1)
            if self.dram.size < program.dram_bytes:
                raise SimulationError(
                    f"DRAM of {self.dram.size} bytes < program's {program.dram_bytes}"
                )
        self.regions = program.regions
        b, bi, bo = hw.batch, hw.block_in, hw.block_out
        self.inp = np.zeros((hw.inp_depth, b, bi), dtype=np.int8)
        self.wgt = np.zeros((hw.wgt_depth, bo, bi), dtype=np.int8)
        self.acc = np.zeros((hw.acc_depth, b, bo), dtype=np.int32)
        self.out = np.zeros((hw.out_depth, b, bo), dtype=np.int8)
        self.uop = np.zeros(hw.uop_depth, dtype=np.uint32)
        # float32 shadows of inp/wgt feed BLAS; every int8 x int8 dot product over BLOCK_IN
        # <= 128 terms stays below 2**24 in magnitude, so float32 is exact.
        self.inp_f = np.zeros(self.inp.shape, dtype=np.float32)
        self.wgt_f = np.zeros(self.wgt.shape, dtype=np.float32)
        self.counters = dict.fromkeys(Counters.__dataclass_fields__, 0)
        self._tile_bytes = {m: tile_bytes(hw, m) for m in MemId}

    def write_region(self, name: str, value: np.ndarray | bytes) -> None:
        if name not in self.regions:
            raise SimulationError(f"no DRAM region {name!r} (regions: {', '.join(self.regions)})")
        r = self.regions[name]
        if not isinstance(value, bytes | bytearray):
            value = np.ascontiguousarray(value).tobytes()
        raw = np.frombuffer(value, dtype=np.uint8)
        if raw.size > r.nbytes:
            raise SimulationError(f"{raw.size} bytes do not fit region {name!r} of {r.nbytes}")
        self.dram[r.offset : r.offset + raw.size] = raw

    # ---- dispatch ----------------------------------------------------------------------------
    def execute(self, k: int, insn: Insn) -> None:
        if isinstance(insn, GemmInsn):
            self._gemm(k, insn)
        elif isinstance(insn, AluInsn):
            self._alu(k, insn)
        elif isinstance(insn, MemInsn):
            if insn.opcode == Opcode.LOAD:
                self._load(k, insn)
            else:
                self._store(k, insn)
        elif not isinstance(insn, FinishInsn):
            raise ProgramError(f"instruction #{k}: not an instruction: {insn!r}")

    # ---- DMA ---------------------------------------------------------------------------------
    def _dram_rows(self, k: int, insn: MemInsn, tb: int) -> np.ndarray:
        """View of the DRAM rows a LOAD reads or a STORE writes: (y_size, x_size * tb) bytes."""
        y, x, stride = insn.y_size, insn.x_size, insn.x_stride
        base = insn.dram_base * tb
        if y and x:
            last = base + ((y - 1) * stride + x) * tb
            if last > self.dram.size:
                raise SimulationError(
                    f"instruction #{k} {insn_name(insn)}: DRAM bytes [{base}, {last}) are beyond "
                    f"the {self.dram.size}-byte DRAM"
                )
            # A transfer crossing region borders is an addressing bug in the program.
            if not any(r.offset <= base and last <= r.end for r in self.regions.values()):
                raise SimulationError(
                    f"instruction #{k} {insn_name(insn)}: DRAM bytes [{base}, {last}) are not "
                    "inside one region ("
                    + ", ".join(f"{r.name} [{r.offset}, {r.end})" for r in self.regions.values())
                    + ")"
                )
        return np.lib.stride_tricks.as_strided(
            self.dram[base:], shape=(y, x * tb), strides=(stride * tb, 1), writeable=True
        )

    def _sram_range(self, k: int, insn: Insn, what: str, lo: int, n: int, depth: int) -> None:
        if lo < 0 or lo + n > depth:
            raise SimulationError(
                f"instruction #{k} {insn_name(insn)}: {what} tiles [{lo}, {lo + n}) out of range "
                f"[0, {depth})"
            )

    def _load(self, k: int, insn: MemInsn) -> None:
        mem = MemId(insn.memory_type)
        tb = self._tile_bytes[mem]
        y, x = insn.y_size, insn.x_size
        rows = self._dram_rows(k, insn, tb)
        ny = insn.y_pad_0 + y + insn.y_pad_1
        nx = insn.x_pad_0 + x + insn.x_pad_1
        total = ny * nx
        if mem == MemId.UOP:
            sram, dtype, key = self.uop, np.dtype("<u4"), "uop_load_nbytes"
        elif mem == MemId.INP:
            sram, dtype, key = self.inp, np.dtype(np.int8), "inp_load_nbytes"
        elif mem == MemId.WGT:
            sram, dtype, key = self.wgt, np.dtype(np.int8), "wgt_load_nbytes"
        elif mem == MemId.ACC:
            sram, dtype, key = self.acc, np.dtype("<i4"), "acc_load_nbytes"
        else:  # ACC_8BIT: int8 tiles widened into the accumulator
            sram, dtype, key = self.acc, np.dtype(np.int8), "acc_load_nbytes"
        self._sram_range(k, insn, mem.name.lower(), insn.sram_base, total, sram.shape[0])
        data = np.ascontiguousarray(rows).view(dtype).reshape((y, x) + sram.shape[1:])
        block = sram[insn.sram_base : insn.sram_base + total].reshape((ny, nx) + sram.shape[1:])
        if total != y * x:
            block[...] = 0
        block[insn.y_pad_0 : insn.y_pad_0 + y, insn.x_pad_0 : insn.x_pad_0 + x] = data
        if mem == MemId.INP:
            lo = insn.sram_base
            self.inp_f[lo : lo + total] = self.inp[lo : lo + total]
        elif mem == MemId.WGT:
            lo = insn.sram_base
            self.wgt_f[lo : lo + total] = self.wgt[lo : lo + total]
        self.counters[key] += y * x * tb

    def _store(self, k: int, insn: MemInsn) -> None:
        tb = self._tile_bytes[MemId.OUT]
        y, x = insn.y_size, insn.x_size
        self._sram_range(k, insn, "out", insn.sram_base, y * x, self.out.shape[0])
        src = self.out[insn.sram_base : insn.sram_base + y * x].reshape(y, x * tb).view(np.uint8)
        rows = self._dram_rows(k, insn, tb)
        if insn.x_stride >= x:
            rows[...] = src
        else:  # overlapping rows: later rows win, as in a sequential DMA
            for r in range(y):
                rows[r] = src[r]
        self.counters["out_store_nbytes"] += y * x * tb

    # ---- compute -----------------------------------------------------------------------------
    def _indices(
        self, k: int, insn: GemmInsn | AluInsn, kind: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flattened (dst, src, wgt) tile indices in loop order (i0, i1, uop)."""
        bgn, end = insn.uop_bgn, insn.uop_end
        if not 0 <= bgn <= end <= self.uop.size:
            raise SimulationError(
                f"instruction #{k} {insn_name(insn)}: micro-ops [{bgn}, {end}) out of range "
                f"[0, {self.uop.size}]"
            )
        d0, s0, w0 = uop_fields(self.uop[bgn:end], self.hw, kind)  # type: ignore[arg-type]
        i0 = np.arange(insn.iter_out, dtype=np.int64)[:, None, None]
        i1 = np.arange(insn.iter_in, dtype=np.int64)[None, :, None]
        dst = (d0 + i0 * insn.dst_factor_out + i1 * insn.dst_factor_in).reshape(-1)
        src = (s0 + i0 * insn.src_factor_out + i1 * insn.src_factor_in).reshape(-1)
        if isinstance(insn, GemmInsn):
            wgt = (w0 + i0 * insn.wgt_factor_out + i1 * insn.wgt_factor_in).reshape(-1)
        else:
            wgt = w0
        return dst, src, wgt

    def _check(self, k: int, insn: Insn, what: str, idx: np.ndarray, depth: int) -> None:
        if idx.size and (idx.min() < 0 or idx.max() >= depth):
            bad = idx[(idx < 0) | (idx >= depth)][0]
            raise SimulationError(
                f"instruction #{k} {insn_name(insn)}: {what} index {int(bad)} out of range "
                f"[0, {depth})"
            )

    def _gemm(self, k: int, insn: GemmInsn) -> None:
        dst, src, wgt = self._indices(k, insn, "gemm")
        n = dst.size
        if not insn.reset:  # VTA's sim_driver.cc counts resets in neither counter
            self.counters["gemm_counter"] += n
        if not n:
            return
        self._check(k, insn, "acc", dst, self.acc.shape[0])
        if insn.reset:
            self.acc[dst] = 0
            self.out[dst] = 0
            return
        self._check(k, insn, "inp", src, self.inp.shape[0])
        self._check(k, insn, "wgt", wgt, self.wgt.shape[0])
        prod = self._products(src, wgt)  # (n, BATCH, BLOCK_OUT) float32, exact integers
        uniq, inv = np.unique(dst, return_inverse=True)
        if uniq.size == n:
            acc = self.acc[dst].astype(np.int64) + prod.astype(np.int64)
            self.acc[dst] = acc.astype(np.int32)  # int64 -> int32 wraps like the hardware adder
            self.out[dst] = self.acc[dst].astype(np.int8)
            return
        # Repeated acc tiles: sum every contribution per tile (exact in float64), add once;
        # integer addition is associative modulo 2**32, so this equals the sequential result.
        width = prod.shape[1] * prod.shape[2]
        flat = (inv.reshape(-1, 1) * width + np.arange(width)).reshape(-1)
        sums = np.bincount(flat, weights=prod.reshape(-1), minlength=uniq.size * width)
        sums = sums.reshape((uniq.size,) + prod.shape[1:]).astype(np.int64)
        self.acc[uniq] = (self.acc[uniq].astype(np.int64) + sums).astype(np.int32)
        self.out[uniq] = self.acc[uniq].astype(np.int8)

    def _products(self, src: np.ndarray, wgt: np.ndarray) -> np.ndarray:
        """inp[src] . wgt[wgt]^T for each index pair, by the cheapest of three numpy plans."""
        n = src.size
        b, bi, bo = self.hw.batch, self.hw.block_in, self.hw.block_out
        ui, inv_i = np.unique(src, return_inverse=True)
        uw, inv_w = np.unique(wgt, return_inverse=True)
        pairs = ui.size * uw.size * b * bi * bo / _PAIR_MACS_PER_US
        batched = n * b * bi * bo / _BATCHED_MACS_PER_US
        grouped = uw.size * _GROUP_US + n * b * bi / _GATHER_BYTES_PER_US
        if pairs <= min(batched, grouped):
            # Few distinct tiles: every pair in one matmul, then pick the pairs used.
            full = self.inp_f[ui].reshape(-1, bi) @ self.wgt_f[uw].reshape(-1, bi).T
            return full.reshape(ui.size, b, uw.size, bo)[inv_i, :, inv_w, :]
        if grouped < batched:
            # Weight reuse (convolutions): one matmul per distinct weight tile.
            prod = np.empty((n, b, bo), dtype=np.float32)
            x = self.inp_f[src]
            for g, idx in _groups(inv_w, uw.size):
                prod[idx] = x[idx] @ self.wgt_f[uw[g]].T
            return prod
        return np.matmul(self.inp_f[src], self.wgt_f[wgt].transpose(0, 2, 1))

    def _alu(self, k: int, insn: AluInsn) -> None:
        dst, src, _ = self._indices(k, insn, "alu")
        n = dst.size
        self.counters["alu_counter"] += n
        if not n:
            return
        depth = self.acc.shape[0]
        self._check(k, insn, "acc dst", dst, depth)
        if insn.reset:
            self.acc[dst] = 0
            self.out[dst] = 0
            return
        op = AluOp(insn.alu_opcode)
        if insn.use_imm:
            uniq = np.unique(dst)
            if uniq.size == n:
                self._alu_apply(op, dst, np.int64(insn.imm))
            else:  # the same tile hit k times: apply level by level (k-th hits together)
                for idx in _levels_by_rank(dst):
                    self._alu_apply(op, dst[idx], np.int64(insn.imm))
            return
        self._check(k, insn, "acc src", src, depth)
        if not _alu_hazard(dst, src):
            self._alu_apply(op, dst, self.acc[src])
            return
        for idx in _levels_by_dependence(dst, src):
            self._alu_apply(op, dst[idx], self.acc[src[idx]])

    def _alu_apply(self, op: AluOp, dst: np.ndarray, operand: np.ndarray | np.int64) -> None:
        """acc[dst] = op(acc[dst], operand) for distinct dst (operand read beforehand)."""
        x = self.acc[dst].astype(np.int64)
        y = np.asarray(operand, dtype=np.int64)
        if op == AluOp.MIN:
            r = np.minimum(x, y)
        elif op == AluOp.MAX:
            r = np.maximum(x, y)
        elif op == AluOp.ADD:
            r = x + y
        elif op == AluOp.MUL:
            r = x * y
        elif op == AluOp.SHR:
            y = np.broadcast_to(y, x.shape)
            right = x >> np.clip(y, 0, _MAX_SHR)
            left_by = np.clip(-y, 0, _ZERO_SHL)
            left = ((x & _MASK32) << np.minimum(left_by, _ZERO_SHL - 1)) & _MASK32
            left = np.where(left_by >= _ZERO_SHL, 0, left)
            r = np.where(y >= 0, right, left)
        else:  # pragma: no cover - AluOp is exhaustive
            raise ProgramError(f"unknown ALU op {op!r}")
        res = r.astype(np.int32)  # wraps modulo 2**32
        self.acc[dst] = res
        self.out[dst] = res.astype(np.int8)


def _groups(inv: np.ndarray, count: int):
    """(group, positions) for each group id in ``inv``."""
    order = np.argsort(inv, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(inv, minlength=count))))
    for g in range(count):
        lo, hi = bounds[g], bounds[g + 1]
        if hi > lo:
            yield g, order[lo:hi]


def _levels_by_rank(dst: np.ndarray) -> list[np.ndarray]:
    """Positions grouped by occurrence rank of their dst (1st hits, 2nd hits, ...)."""
    order = np.argsort(dst, kind="stable")
    sd = dst[order]
    starts = np.flatnonzero(np.concatenate(([True], sd[1:] != sd[:-1])))
    run_start = np.repeat(starts, np.diff(np.concatenate((starts, [sd.size]))))
    rank = np.empty_like(order)
    rank[order] = np.arange(sd.size) - run_start
    return [np.flatnonzero(rank == r) for r in range(int(rank.max()) + 1)]


def _alu_hazard(dst: np.ndarray, src: np.ndarray) -> bool:
    """True when one vectorized gather-then-scatter would differ from loop order: a repeated
    dst, or a src read after an earlier element wrote it."""
    uniq, first = np.unique(dst, return_index=True)
    if uniq.size != dst.size:
        return True
    pos = np.clip(np.searchsorted(uniq, src), 0, uniq.size - 1)
    written_before = (uniq[pos] == src) & (first[pos] < np.arange(src.size))
    return bool(written_before.any())


def _levels_by_dependence(dst: np.ndarray, src: np.ndarray) -> list[np.ndarray]:
    """Split loop-ordered elements into levels that can each run as one gather-then-scatter:
    an element goes after the last write of its dst and src (RAW, WAW) and not before the
    last read of its dst (WAR)."""
    last_write: dict[int, int] = {}
    last_read: dict[int, int] = {}
    level = np.empty(dst.size, dtype=np.int64)
    for j, (d, s) in enumerate(zip(dst.tolist(), src.tolist(), strict=True)):
        lv = max(last_write.get(d, -1) + 1, last_write.get(s, -1) + 1, last_read.get(d, 0))
        level[j] = lv
        last_write[d] = lv
        last_read[s] = max(last_read.get(s, 0), lv)
    return [np.flatnonzero(level == v) for v in range(int(level.max()) + 1)]
