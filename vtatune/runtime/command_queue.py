"""``CommandQueue``: the runtime calls of VTA-level code turned into a VTA instruction stream.

Semantics follow VTA's C++ runtime (``vta/runtime/runtime.cc``: ``InsnQueue``, ``UopQueue``,
``CommandQueue``):

* ``dep_pop(from, to)`` sets a *pending pop* on queue ``to`` (``pop_prev`` when ``from`` is the
  upstream neighbour, ``pop_next`` when downstream). The next instruction created on queue
  ``to`` carries it. A second pending pop of the same kind first commits the pending ones on
  a no-op instruction of that queue.
* ``dep_push(from, to)`` first commits queue ``from``'s pending pops, then sets the push flag
  on the last instruction issued if it runs on queue ``from`` and the flag is still free;
  otherwise it issues a no-op on queue ``from`` carrying the push. A LOAD no-op (of the load
  or the compute queue) runs on no queue for this test (``GetPipelineStage``: a LOAD of
  x_size 0 is ``kNoneStage``), so a push after it takes a second no-op; a STORE no-op is the
  store queue's and takes the push.
* No-ops are zero-size transfers: LOAD INP (load module), LOAD UOP (compute), STORE (store;
  of memory type UOP, as ``PushNoop`` writes it).
* Every micro-op task is one GEMM or ALU instruction. Its kernel is VTA's ``UopKernel`` of
  the task's call site (the ``coproc_uop_scope``) and captured values (``UopKernelMap``): two
  call sites, or two values, have kernels of their own even when their micro-ops are the same.
  A kernel is loaded into the micro-op SRAM only when not resident: kernels are placed one
  after another and, when the next one does not fit, placement restarts at 0 and evicts the
  kernels it overlaps (``UopQueue::Push``). The LOAD UOP runs on the compute module and
  carries that queue's pending pops.
* A kernel in which a micro-op writes the accumulator tile that one of the two before it
  writes is one VTA's runtime refuses (``UopKernel::VerifyDep``: the pipeline would read the
  tile before the earlier write lands). The program is still built (the functional simulator
  does not model that hazard, so its results stay exact) and ``BuildStats.vta_refuses`` names
  the first such kernel; refusing those candidates is the search's decision.
* The kernel's micro-op loops (``VTAUopLoopBegin``) are the instruction's: a GEMM's first loop
  is the outer one (``PushGEMMOp``); an ALU kernel with a single loop runs it as the inner
  loop, with ``iter_out`` 1 (``PushALUUop``).
* ``synchronize`` makes FINISH wait for the last store and load, as VTA's runtime does:
  push store->compute and load->compute, pop both on compute, then FINISH.

VTA's runtime also splits very long streams into several device runs (``AutoSync`` when the
instruction buffer is full); one ``Program`` here is one run.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from vtatune.errors import ProgramError
from vtatune.hardware.config import HwConfig
from vtatune.passes.scopes import QUEUE_COMPUTE, QUEUE_LOAD, QUEUE_STORE
from vtatune.program.isa import COL_DEPS, DEPS_BITS, TABLE_WIDTH, MemId, Opcode
from vtatune.program.program import Program, ProgramBuilder, UopKernel
from vtatune.runtime.codegen import HostProgram, KernelSpec

# Dependence flag bits of one instruction (``InsnTable``'s deps column).
POP_PREV, POP_NEXT = DEPS_BITS["pop_prev"], DEPS_BITS["pop_next"]
PUSH_PREV, PUSH_NEXT = DEPS_BITS["push_prev"], DEPS_BITS["push_next"]

_LOAD, _STORE, _GEMM, _FINISH, _ALU = (int(o) for o in Opcode)
#: Queue (VTA pipeline stage) of each memory type's LOAD.
_LOAD_QUEUE = {int(MemId.INP): QUEUE_LOAD, int(MemId.WGT): QUEUE_LOAD,
               int(MemId.ACC): QUEUE_COMPUTE, int(MemId.UOP): QUEUE_COMPUTE,
               int(MemId.ACC_8BIT): QUEUE_COMPUTE}
_OUT, _UOP = int(MemId.OUT), int(MemId.UOP)
#: ``InsnTable`` rows are built whole: the opcode, the flags (set in ``finish``), the fields.
_PAD = (0,) * TABLE_WIDTH
#: No-op instructions (zero-size transfers) per queue.
_NOPS = {
    QUEUE_LOAD: (_LOAD, 0, int(MemId.INP), *_PAD[3:]),
    QUEUE_COMPUTE: (_LOAD, 0, _UOP, *_PAD[3:]),
    QUEUE_STORE: (_STORE, 0, _UOP, *_PAD[3:]),  # runtime.cc PushNoop: memory type UOP
}
#: The queue ``dep_push`` sees a no-op on (VTA's ``GetPipelineStage``: none for a LOAD no-op).
_NOP_STAGE = {QUEUE_LOAD: 0, QUEUE_COMPUTE: 0, QUEUE_STORE: QUEUE_STORE}
_FINISH_ROW = (_FINISH, *_PAD[1:])


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
    #: the dependence tokens whose pops were left pending after the last VTASynchronize
    #: (``l2c``, ``c2l``, ``c2s``, ``s2c``): VTA's runtime pops them in the next call's stream,
    #: so this call's program leaves them in their queues
    carried_tokens: tuple[str, ...] = ()
    #: why VTA's runtime would refuse the program (the first micro-op kernel that
    #: ``UopKernel::VerifyDep`` stops), empty when it runs it
    vta_refuses: str = ""


@dataclass(frozen=True)
class _Task:
    """A micro-op kernel evaluated for one key, ready to issue: its instruction's row is
    ``head + (uop_bgn, uop_end) + tail``."""

    kernel: UopKernel
    head: tuple[int, ...]  # opcode, flags, reset
    tail: tuple[int, ...]  # iter_out, iter_in, factors (out, in), then ALU op, use_imm, imm


class CommandQueue:
    """Receives the runtime calls of a host program and assembles a ``Program``.

    Instructions are kept as ``InsnTable`` rows (tuples of ints) until ``finish``."""

    def __init__(self, hw: HwConfig, host: HostProgram, region_bytes: dict[str, int],
                 name: str = ""):
        self.hw = hw
        self.host = host
        self.b = ProgramBuilder(hw, name)
        self.rows: list[tuple[int, ...]] = []
        self.bits: list[int] = []  # each row's dependence flags
        self.queue: list[int] = []  # each row's queue (0 for a LOAD no-op: see dep_push)
        self.pending = [0, 0, 0, 0]  # per queue: the pops (POP_PREV, POP_NEXT) to carry
        self.uop_rows: list[int] = []  # LOAD UOPs: dram_base relative to the micro-op image
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
        # micro-op SRAM cache: kernel (call site, captured values) -> SRAM range
        self.resident: dict[tuple[int, tuple[int, ...]], tuple[int, int]] = {}
        self.uop_end = 0
        self.uop_peak = 0
        self.nops = 0
        self.uop_loads = 0
        self.evictions = 0
        self.evaluations = 0
        self.n_tasks = 0
        self.kernels: set[UopKernel] = set()
        self.synchronized = False
        self.vta_refuses = ""

    # ---- instruction creation ---------------------------------------------------------------
    def _create(self, queue: int, row: tuple[int, ...]) -> None:
        """Append ``row`` on ``queue`` carrying that queue's pending pops (its push flags are
        set later, by ``dep_push``)."""
        self.rows.append(row)
        self.bits.append(self.pending[queue])
        self.queue.append(queue)
        self.pending[queue] = 0

    def _nop(self, queue: int, bits: int = 0) -> None:
        self._create(queue, _NOPS[queue])
        self.bits[-1] |= bits
        self.queue[-1] = _NOP_STAGE[queue]
        self.nops += 1

    def commit_pending_pop(self, queue: int) -> None:
        if self.pending[queue]:
            self._nop(queue)

    # ---- dependence tokens --------------------------------------------------------------------
    def dep_pop(self, src: int, dst: int) -> None:
        """Queue ``dst`` waits for a token from ``src`` before its next instruction."""
        _check_pair(src, dst)
        flag = POP_PREV if src < dst else POP_NEXT
        if self.pending[dst] & flag:
            self._nop(dst)
        self.pending[dst] |= flag

    def dep_push(self, src: int, dst: int) -> None:
        """Queue ``src`` sends a token to ``dst`` when its work so far is done."""
        _check_pair(src, dst)
        if self.pending[src]:
            self._nop(src)
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
        queue = _LOAD_QUEUE.get(mem)
        if queue is None:
            raise ProgramError(f"VTALoadBuffer2D of memory type {mem}: not a loadable type")
        self._create(queue, (_LOAD, 0, mem, sram, self.tile_base[(region, mem)] + offset,
                             y_size, x_size, x_stride, y_pad_0, y_pad_1, x_pad_0, x_pad_1, 0, 0))

    def store(self, sram: int, mem: int, region: str, offset: int, x_size: int, y_size: int,
              x_stride: int) -> None:
        """``VTAStoreBuffer2D`` of OUT tiles."""
        if mem != _OUT:
            raise ProgramError(f"VTAStoreBuffer2D of memory type {mem}: only OUT can be stored")
        self._create(QUEUE_STORE, (_STORE, 0, _OUT, sram, self.tile_base[(region, mem)] + offset,
                                   y_size, x_size, x_stride, 0, 0, 0, 0, 0, 0))

    # ---- micro-op tasks -------------------------------------------------------------------------
    def task(self, index: int, key: tuple[int, ...]) -> None:
        """One ``coproc_uop_scope``: (load its kernel if needed and) issue GEMM or ALU."""
        self.n_tasks += 1
        t = self.tasks[index].get(key)
        if t is None:
            t = self.tasks[index][key] = self._evaluate(self.host.kernels[index], key)
        self._create(QUEUE_COMPUTE, t.head + self._resident((index, key), t.kernel) + t.tail)

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
        dst = np.asarray([u[0] for u in uops], dtype=np.int64)
        hazard = np.flatnonzero(np.concatenate([
            [False], dst[1:] == dst[:-1]]) | np.concatenate([[False, False],
                                                             dst[2:] == dst[:-2]]))[:1]
        if hazard.size and not self.vta_refuses:
            j = int(hazard[0])
            self.vta_refuses = (
                f"{where}: micro-op {j} writes accumulator tile {int(dst[j])}, as one of the "
                "two micro-ops before it does; VTA's runtime refuses such a kernel "
                "(runtime.cc UopKernel::VerifyDep, the accumulator's read-after-write hazard)")
        mode, reset, op, use_imm, imm = next(iter(metas))
        if (mode == 0) != spec.gemm:
            raise ProgramError(f"{where}: push mode {mode} in a "
                               f"{'GEMM' if spec.gemm else 'ALU'} scope")
        levels = [lp[1:] for lp in loops] + [(1, 0, 0, 0)] * (2 - len(loops))
        if len(loops) == 1 and not spec.gemm:  # PushALUUop: a single loop is the inner one
            levels.reverse()
        (n0, d0, s0, w0), (n1, d1, s1, w1) = levels
        kind = "gemm" if spec.gemm else "alu"
        kernel = self.b.add_uop_kernel(np.asarray(uops, dtype=np.int64), kind)
        self.kernels.add(kernel)
        loop = (int(n0), int(n1), int(d0), int(d1), int(s0), int(s1))
        if spec.gemm:
            return _Task(kernel, (_GEMM, 0, int(bool(reset))), (*loop, int(w0), int(w1), 0))
        return _Task(kernel, (_ALU, 0, int(bool(reset))),
                     (*loop, int(op), int(bool(use_imm)), int(imm)))

    def _resident(self, site: tuple[int, tuple[int, ...]], kernel: UopKernel
                  ) -> tuple[int, int]:
        """The SRAM range of the kernel of ``site`` (call site, captured values), loading it
        (LOAD UOP on compute) when not resident."""
        where = self.resident.get(site)
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
        self.resident[site] = (start, end)
        self.uop_end = end
        self.uop_peak = max(self.uop_peak, end)
        # LOAD UOP of the kernel's words; ``finish`` makes its dram_base absolute
        self.uop_rows.append(len(self.rows))
        self._create(QUEUE_COMPUTE, (_LOAD, 0, _UOP, start, kernel.bgn, 1, n, n, *_PAD[8:]))
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
        self._create(QUEUE_COMPUTE, _FINISH_ROW)
        if any(self.pending):
            raise ProgramError("pending dependence pops left at VTASynchronize")
        self.synchronized = True

    def finish(self, meta: dict[str, Any] | None = None) -> tuple[Program, BuildStats]:
        """Apply the dependence flags and build the ``Program``. Pops left pending after the
        last ``VTASynchronize`` are in no instruction of this call (VTA's runtime carries
        them to the next call's stream)."""
        if not self.synchronized:
            raise ProgramError("no VTASynchronize at the end of the program")
        if self.rows[-1][0] != _FINISH:
            raise ProgramError("instructions after the last VTASynchronize")
        n = len(self.rows)
        cols = np.fromiter(chain.from_iterable(self.rows), np.int64, n * TABLE_WIDTH)
        cols = cols.reshape(n, TABLE_WIDTH)
        cols[:, COL_DEPS] = self.bits
        carried = tuple(name for queue, flag, name in _CARRIED if self.pending[queue] & flag)
        stats = BuildStats(n, self.nops, self.uop_loads, self.evictions, self.uop_peak,
                           len(self.kernels), self.evaluations, self.n_tasks, carried,
                           self.vta_refuses)
        return self.b.build_table(cols, self.uop_rows, meta=meta), stats


#: A pending pop (queue, flag) and the token it waits for.
_CARRIED = ((QUEUE_COMPUTE, POP_PREV, "l2c"), (QUEUE_LOAD, POP_NEXT, "c2l"),
            (QUEUE_STORE, POP_PREV, "c2s"), (QUEUE_COMPUTE, POP_NEXT, "s2c"))

#: The (from, to) queue pairs that exchange tokens: neighbours.
_PAIRS = frozenset({(QUEUE_LOAD, QUEUE_COMPUTE), (QUEUE_COMPUTE, QUEUE_LOAD),
                    (QUEUE_COMPUTE, QUEUE_STORE), (QUEUE_STORE, QUEUE_COMPUTE)})


def _check_pair(src: int, dst: int) -> None:
    if (src, dst) not in _PAIRS:
        raise ProgramError(f"dependence between queues {src} and {dst}: only neighbours "
                           "(load 1 <-> compute 2 <-> store 3) exchange tokens")
