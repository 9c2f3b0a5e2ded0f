"""``CommandQueue``: the runtime calls of VTA-level code turned into a VTA instruction stream.

Semantics follow VTA's C++ runtime (``vta/runtime/runtime.cc``: ``InsnQueue``, ``UopQueue``,
``CommandQueue``):

* ``dep_pop(from, to)`` sets a *pending pop* on queue ``to`` (``pop_prev`` when ``from`` is the
  upstream neighbour, ``pop_next`` when downstream). The next instruction created on queue
  ``to`` carries it. A second pending pop of the same kind first commits the pending ones on
  a no-op instruction of that queue.
* ``dep_push(from, to)`` first commits queue ``from``'s pending pops, then sets the push flag
  on the last instruction issued if it runs on queue ``from`` and the flag is still free;
  otherwise it issues a no-op on queue ``from`` carrying the push. (VTA's runtime never lets
  a load/compute no-op carry a later push and adds a second no-op; one instruction that pops,
  then pushes, is the same token order, so we reuse it.)
* No-ops are zero-size transfers: LOAD INP (load module), LOAD UOP (compute), STORE (store).
* Every micro-op task is one GEMM or ALU instruction. Its kernel is loaded into the micro-op
  SRAM only when not resident: kernels are placed one after another and, when the next one
  does not fit, placement restarts at 0 and evicts the kernels it overlaps (VTA's policy).
  The LOAD UOP runs on the compute module and carries that queue's pending pops.
* ``synchronize`` makes FINISH wait for the last store and load, as VTA's runtime does:
  push store->compute and load->compute, pop both on compute, then FINISH.

VTA's runtime also splits very long streams into several device runs (``AutoSync`` when the
instruction buffer is full); one ``Program`` here is one run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vtatune.errors import ProgramError
from vtatune.hardware.config import HwConfig
from vtatune.passes.scopes import QUEUE_COMPUTE, QUEUE_LOAD, QUEUE_STORE
from vtatune.program.isa import (
    AluInsn,
    AluOp,
    DepFlags,
    FinishInsn,
    GemmInsn,
    MemId,
    MemInsn,
    Opcode,
)
from vtatune.program.program import Program, ProgramBuilder, UopKernel
from vtatune.runtime.codegen import HostProgram, KernelSpec

# Dependence flag bits of one instruction.
POP_PREV, POP_NEXT, PUSH_PREV, PUSH_NEXT = 1, 2, 4, 8
_FLAGS = tuple(DepFlags(bool(b & 1), bool(b & 2), bool(b & 4), bool(b & 8)) for b in range(16))

#: Memory types by value (an enum's call costs ~1 us; the runtime names one per DMA).
_MEM_IDS = {int(m): m for m in MemId}
#: Queue (VTA pipeline stage) of each memory type's LOAD.
_LOAD_QUEUE = {MemId.INP: QUEUE_LOAD, MemId.WGT: QUEUE_LOAD, MemId.ACC: QUEUE_COMPUTE,
               MemId.UOP: QUEUE_COMPUTE, MemId.ACC_8BIT: QUEUE_COMPUTE}
#: No-op instructions (zero-size transfers) per queue: ``MemInsn`` fields after ``deps``.
_NOPS = {
    QUEUE_LOAD: (Opcode.LOAD, MemId.INP, 0, 0, 0, 0, 0),
    QUEUE_COMPUTE: (Opcode.LOAD, MemId.UOP, 0, 0, 0, 0, 0),
    QUEUE_STORE: (Opcode.STORE, MemId.OUT, 0, 0, 0, 0, 0),
}


def _mem(deps: DepFlags, opcode: Opcode, *fields: Any) -> MemInsn:
    return MemInsn(opcode, deps, *fields)


@dataclass(frozen=True)
class BuildStats:
    """What building one program took: instructions by origin and micro-op work."""

    insns: int
    nops: int
    uop_loads: int
    uop_evictions: int
    #: micro-op SRAM entries the build used (the highest end of a resident kernel): without
    #: evictions, the same instructions result on any micro-op buffer at least this deep
    uop_entries: int
    kernels: int
    kernel_evaluations: int
    tasks: int


@dataclass(frozen=True)
class _Task:
    """A micro-op kernel evaluated for one key, ready to issue."""

    kernel: UopKernel
    gemm: bool
    reset: bool
    loop: tuple[int, ...]  # iter_out, iter_in, then dst/src/wgt factors (out, in)
    alu: tuple[AluOp, bool, int]


class CommandQueue:
    """Receives the runtime calls of a host program and assembles a ``Program``."""

    def __init__(self, hw: HwConfig, host: HostProgram, region_bytes: dict[str, int],
                 name: str = ""):
        self.hw = hw
        self.host = host
        self.b = ProgramBuilder(hw, name)
        self.rows: list[tuple[Any, tuple]] = []  # instruction maker and fields (deps excluded)
        self.bits: list[int] = []
        self.queue: list[int] = []
        self.pending_prev = [0, 0, 0, 0]
        self.pending_next = [0, 0, 0, 0]
        self.tile_base: dict[tuple[str, int], int] = {}
        for rname in host.regions:
            if rname not in region_bytes:
                raise ProgramError(f"host code uses buffer {rname!r}, which has no DRAM region "
                                   f"(regions: {', '.join(region_bytes)})")
        for rname, nbytes in region_bytes.items():
            region = self.b.add_region(rname, nbytes)
            for mem in MemId:
                self.tile_base[(rname, int(mem))] = region.tile(hw, mem)
        self.tasks: list[dict[tuple[int, ...], _Task]] = [{} for _ in host.kernels]
        # micro-op SRAM cache: kernel (image range) -> SRAM range; allocation pointer
        self.resident: dict[int, tuple[int, int]] = {}  # keyed by the kernel's image offset
        self.uop_end = 0
        self.uop_peak = 0
        self.nops = 0
        self.uop_loads = 0
        self.evictions = 0
        self.evaluations = 0
        self.n_tasks = 0
        self.kernels: set[UopKernel] = set()

    # ---- instruction creation ---------------------------------------------------------------
    def _create(self, queue: int, make: Any, args: tuple) -> int:
        """Append ``make(deps, *args)`` on ``queue`` carrying that queue's pending pops; the
        instruction is made in ``finish``, once its push flags are known."""
        self.rows.append((make, args))
        self.b.insns.append(None)  # keeps the builder's indices (LOAD UOP relocation) aligned
        self.bits.append(self.pending_prev[queue] * POP_PREV + self.pending_next[queue] * POP_NEXT)
        self.queue.append(queue)
        self.pending_prev[queue] = self.pending_next[queue] = 0
        return len(self.rows) - 1

    def _nop(self, queue: int, bits: int = 0) -> int:
        k = self._create(queue, _mem, _NOPS[queue])
        self.bits[k] |= bits
        self.nops += 1
        return k

    def commit_pending_pop(self, queue: int) -> None:
        if self.pending_prev[queue] or self.pending_next[queue]:
            self._nop(queue)

    # ---- dependence tokens --------------------------------------------------------------------
    def dep_pop(self, src: int, dst: int) -> None:
        """Queue ``dst`` waits for a token from ``src`` before its next instruction."""
        _check_pair(src, dst)
        if src < dst:
            if self.pending_prev[dst]:
                self.commit_pending_pop(dst)
            self.pending_prev[dst] = 1
        else:
            if self.pending_next[dst]:
                self.commit_pending_pop(dst)
            self.pending_next[dst] = 1

    def dep_push(self, src: int, dst: int) -> None:
        """Queue ``src`` sends a token to ``dst`` when its work so far is done."""
        _check_pair(src, dst)
        self.commit_pending_pop(src)
        flag = PUSH_NEXT if src < dst else PUSH_PREV
        if self.rows and self.queue[-1] == src and not self.bits[-1] & flag:
            self.bits[-1] |= flag
        else:
            self._nop(src, flag)

    # ---- DMA ----------------------------------------------------------------------------------
    def load(self, region: str, offset: int, x_size: int, y_size: int, x_stride: int,
             x_pad_0: int, y_pad_0: int, x_pad_1: int, y_pad_1: int, sram: int,
             mem: int) -> None:
        """``VTALoadBuffer2D``: ``offset`` is in tiles of ``mem`` from the region start."""
        m = _MEM_IDS[mem] if mem in _MEM_IDS else MemId(mem)
        self._create(_LOAD_QUEUE[m], _mem, (
            Opcode.LOAD, m, sram, self.tile_base[(region, mem)] + offset, y_size, x_size,
            x_stride, y_pad_0, y_pad_1, x_pad_0, x_pad_1))

    def store(self, sram: int, mem: int, region: str, offset: int, x_size: int, y_size: int,
              x_stride: int) -> None:
        """``VTAStoreBuffer2D`` of OUT tiles."""
        if mem != MemId.OUT:
            raise ProgramError(f"VTAStoreBuffer2D of memory type {mem}: only OUT can be stored")
        self._create(QUEUE_STORE, _mem, (
            Opcode.STORE, MemId.OUT, sram, self.tile_base[(region, mem)] + offset, y_size,
            x_size, x_stride))

    # ---- micro-op tasks -------------------------------------------------------------------------
    def task(self, index: int, key: tuple[int, ...]) -> None:
        """One ``coproc_uop_scope``: (load its kernel if needed and) issue GEMM or ALU."""
        self.n_tasks += 1
        t = self.tasks[index].get(key)
        if t is None:
            t = self.tasks[index][key] = self._evaluate(self.host.kernels[index], key)
        bgn, end = self._resident(t.kernel)
        if t.gemm:
            self._create(QUEUE_COMPUTE, GemmInsn, (t.reset, bgn, end, *t.loop))
        else:
            self._create(QUEUE_COMPUTE, AluInsn, (t.reset, bgn, end, *t.loop[:6], *t.alu))

    def _evaluate(self, spec: KernelSpec, key: tuple[int, ...]) -> _Task:
        self.evaluations += 1
        loops, uops, metas = spec.fn(*key)
        where = f"micro-op kernel {spec.index} at {dict(zip(spec.free_vars, key, strict=True))}"
        if not uops:
            raise ProgramError(f"{where}: no micro-ops")
        if len(metas) != 1:
            raise ProgramError(f"{where}: pushes disagree on mode/reset/ALU op: {sorted(metas)}")
        if len(loops) > 2 or any(before for before, *_ in loops):
            raise ProgramError(f"{where}: at most two uop loops, all begun before any push")
        mode, reset, op, use_imm, imm = next(iter(metas))
        if (mode == 0) != spec.gemm:
            raise ProgramError(f"{where}: push mode {mode} in a "
                               f"{'GEMM' if spec.gemm else 'ALU'} scope")
        levels = [lp[1:] for lp in loops] + [(1, 0, 0, 0)] * (2 - len(loops))
        (n0, d0, s0, w0), (n1, d1, s1, w1) = levels
        kind = "gemm" if spec.gemm else "alu"
        kernel = self.b.add_uop_kernel(np.asarray(uops, dtype=np.int64), kind)
        self.kernels.add(kernel)
        alu = (AluOp(op), bool(use_imm), int(imm)) if not spec.gemm else (AluOp.MIN, False, 0)
        return _Task(kernel, spec.gemm, bool(reset), (n0, n1, d0, d1, s0, s1, w0, w1), alu)

    def _resident(self, kernel: UopKernel) -> tuple[int, int]:
        """The kernel's SRAM range, loading it (LOAD UOP on compute) when not resident."""
        where = self.resident.get(kernel.bgn)
        if where is not None:
            return where
        n = kernel.size
        if n > self.hw.uop_depth:
            raise ProgramError(f"micro-op kernel of {n} uops > uop SRAM depth {self.hw.uop_depth}")
        start = self.uop_end if self.uop_end + n <= self.hw.uop_depth else 0
        end = start + n
        stale = [k for k, (b, e) in self.resident.items() if b < end and start < e]
        for k in stale:
            del self.resident[k]
        self.evictions += len(stale)
        self.resident[kernel.bgn] = (start, end)
        self.uop_end = end
        self.uop_peak = max(self.uop_peak, end)
        # LOAD UOP through the builder, which relocates its dram_base into the image in build()
        self.b.load_uops(kernel, start)
        u = self.b.insns.pop()
        self._create(QUEUE_COMPUTE, _mem, (
            u.opcode, u.memory_type, u.sram_base, u.dram_base, u.y_size, u.x_size, u.x_stride))
        self.uop_loads += 1
        return start, end

    # ---- end ----------------------------------------------------------------------------------
    def synchronize(self) -> None:
        """``VTASynchronize``: FINISH after the last store and load (VTA's runtime order)."""
        self.dep_push(QUEUE_STORE, QUEUE_COMPUTE)
        self.dep_push(QUEUE_LOAD, QUEUE_COMPUTE)
        self.dep_pop(QUEUE_STORE, QUEUE_COMPUTE)
        self.dep_pop(QUEUE_LOAD, QUEUE_COMPUTE)
        self.commit_pending_pop(QUEUE_COMPUTE)
        self._create(QUEUE_COMPUTE, FinishInsn, ())
        if any(self.pending_prev) or any(self.pending_next):
            raise ProgramError("pending dependence pops left at VTASynchronize")

    def finish(self, meta: dict[str, Any] | None = None) -> tuple[Program, BuildStats]:
        """Apply the dependence flags and build the ``Program``."""
        if any(self.pending_prev) or any(self.pending_next):
            raise ProgramError("pending dependence pops at the end (no VTASynchronize?)")
        self.b.insns[:] = [make(_FLAGS[bits], *args)
                           for (make, args), bits in zip(self.rows, self.bits, strict=True)]
        stats = BuildStats(len(self.rows), self.nops, self.uop_loads, self.evictions,
                           self.uop_peak, len(self.kernels), self.evaluations, self.n_tasks)
        return self.b.build(meta=meta), stats


#: The (from, to) queue pairs that exchange tokens: neighbours.
_PAIRS = frozenset({(QUEUE_LOAD, QUEUE_COMPUTE), (QUEUE_COMPUTE, QUEUE_LOAD),
                    (QUEUE_COMPUTE, QUEUE_STORE), (QUEUE_STORE, QUEUE_COMPUTE)})


def _check_pair(src: int, dst: int) -> None:
    if (src, dst) not in _PAIRS:
        raise ProgramError(f"dependence between queues {src} and {dst}: only neighbours "
                           "(load 1 <-> compute 2 <-> store 3) exchange tokens")
