"""CommandQueue: VTA runtime semantics of dependence tokens, no-ops and the micro-op cache."""

from __future__ import annotations

import numpy as np
import pytest

from vtatune.errors import ProgramError
from vtatune.hardware.config import default
from vtatune.program import GemmInsn, MemId, MemInsn, Module, Opcode, module_of
from vtatune.runtime import CommandQueue, HostProgram, KernelSpec
from vtatune.simulator import run, simulate

LOAD, COMPUTE, STORE = 1, 2, 3
REGIONS = {"data": 4096, "kernel": 4096, "res": 4096}


def _kernel(index: int, size: int, reset: int = 0) -> KernelSpec:
    def fn(*key: int):
        # a per-key offset so each key is a distinct kernel
        base = key[0] if key else 0
        return [], [((base + i) % 1024, 0, 0) for i in range(size)], {(0, reset, 0, 0, 0)}

    return KernelSpec(index, True, ("v",), fn, "")


def _queue(*kernels: KernelSpec) -> CommandQueue:
    host = HostProgram("", ("data", "kernel", "res"), tuple(kernels), run=lambda rt: None)
    return CommandQueue(default(), host, REGIONS)


def _flags(insn) -> str:
    d = insn.deps
    return "".join(n for n, f in (("<", d.pop_prev), (">", d.pop_next), ("^", d.push_prev),
                                  ("v", d.push_next)) if f)


def _is_nop(insn) -> bool:
    return isinstance(insn, MemInsn) and insn.x_size == 0 and insn.y_size == 0


def _load(cq: CommandQueue) -> None:
    cq.load("data", 0, 1, 1, 1, 0, 0, 0, 0, 0, int(MemId.INP))


def test_pop_goes_on_the_next_instruction_of_its_queue() -> None:
    cq = _queue(_kernel(0, 1))
    cq.dep_pop(COMPUTE, LOAD)
    cq.task(0, (0,))  # compute instructions do not take the load queue's pop
    _load(cq)
    cq.dep_push(LOAD, COMPUTE)
    cq.dep_pop(LOAD, COMPUTE)
    cq.task(0, (0,))
    cq.synchronize()
    p, stats = cq.finish()
    kinds = [(type(i).__name__, i.memory_type.name if isinstance(i, MemInsn) else "",
              _flags(i)) for i in p.insns]
    # LOAD UOP, GEMM, LOAD INP (pop_next, push_next), GEMM (pop_prev; its kernel is resident)
    assert kinds[:4] == [("MemInsn", "UOP", ""), ("GemmInsn", "", ""), ("MemInsn", "INP", ">v"),
                         ("GemmInsn", "", "<")]
    assert isinstance(p.insns[-1], type(p.insns[-1])) and p.insns[-1].opcode == Opcode.FINISH
    assert stats.uop_loads == 1 and stats.tasks == 2 and stats.kernel_evaluations == 1


def test_second_pending_pop_of_a_kind_commits_a_nop() -> None:
    cq = _queue()
    cq.dep_pop(COMPUTE, LOAD)
    cq.dep_pop(COMPUTE, LOAD)
    _load(cq)
    cq.synchronize()
    p, stats = cq.finish()
    loads = [i for i in p.insns if module_of(i) == Module.LOAD]
    assert _is_nop(loads[0]) and _flags(loads[0]) == ">"
    assert not _is_nop(loads[1]) and _flags(loads[1]).startswith(">")


def test_push_sets_the_flag_on_the_last_instruction_or_adds_a_nop() -> None:
    cq = _queue()
    _load(cq)
    cq.dep_push(LOAD, COMPUTE)  # on the LOAD
    cq.dep_push(LOAD, COMPUTE)  # flag taken: a no-op
    cq.dep_push(STORE, COMPUTE)  # nothing issued on the store queue: a no-op
    cq.dep_pop(LOAD, COMPUTE)
    cq.dep_pop(LOAD, COMPUTE)
    cq.dep_pop(STORE, COMPUTE)
    cq.synchronize()
    p, stats = cq.finish()
    assert _flags(p.insns[0]) == "v" and not _is_nop(p.insns[0])
    assert _is_nop(p.insns[1]) and _flags(p.insns[1]) == "v"
    assert _is_nop(p.insns[2]) and module_of(p.insns[2]) == Module.STORE
    assert stats.nops >= 2
    # tokens balance: both simulators accept the no-ops and finish with empty queues
    res = run(p)
    assert not any(res.leftover_tokens.values())
    assert simulate(p, "pynq-z1").cycles > 0


def test_push_from_a_queue_commits_its_pending_pops_first() -> None:
    cq = _queue()
    cq.dep_push(STORE, COMPUTE)
    cq.dep_pop(STORE, COMPUTE)
    cq.dep_push(COMPUTE, STORE)  # compute has a pending pop: a no-op pops it
    cq.dep_pop(COMPUTE, STORE)
    cq.synchronize()
    p, _ = cq.finish()
    compute = [i for i in p.insns if module_of(i) == Module.COMPUTE]
    # runtime.cc DepPush: a LOAD no-op belongs to no pipeline stage, so the push does not go
    # on the popping no-op but on a second one
    assert [_flags(i) for i in compute[:2]] == [">", "v"]
    assert all(_is_nop(i) for i in compute[:2])
    assert not any(run(p).leftover_tokens.values())


def test_push_goes_on_a_store_nop() -> None:
    """A STORE no-op is the store stage's (runtime.cc GetPipelineStage), so a push after it
    sets its flag; VTA writes store no-ops with memory type UOP."""
    cq = _queue()
    cq.dep_push(COMPUTE, STORE)
    cq.dep_pop(COMPUTE, STORE)
    cq.dep_push(STORE, COMPUTE)  # commits the pop on a store no-op, which then pushes
    cq.dep_pop(STORE, COMPUTE)
    cq.synchronize()
    p, stats = cq.finish()
    stores = [i for i in p.insns if module_of(i) == Module.STORE]
    assert _flags(stores[0]) == "<^" and _is_nop(stores[0])
    assert stores[0].memory_type == MemId.UOP
    assert not any(run(p).leftover_tokens.values())


def test_synchronize_waits_for_store_and_load_then_finishes_without_pops() -> None:
    cq = _queue()
    cq.synchronize()
    p, _ = cq.finish()
    finish = p.insns[-1]
    assert finish.opcode == Opcode.FINISH and not finish.deps
    assert any(module_of(i) == Module.STORE and i.deps.push_prev for i in p.insns)
    assert any(module_of(i) == Module.LOAD and i.deps.push_next for i in p.insns)
    assert _flags(p.insns[-2]) == "<>"


def test_only_neighbour_queues_exchange_tokens() -> None:
    with pytest.raises(ProgramError, match="neighbours"):
        _queue().dep_push(LOAD, STORE)
    with pytest.raises(ProgramError, match="neighbours"):
        _queue().dep_pop(STORE, LOAD)


def test_each_scope_and_value_has_its_own_kernel() -> None:
    """VTA's UopKernelMap: a kernel per call site and captured value, loaded into the
    micro-op SRAM once each, even when two have the same micro-ops (the DRAM image holds
    the words once)."""
    cq = _queue(_kernel(0, 4), _kernel(1, 4))
    for _ in range(3):
        cq.task(0, (0,))
        cq.task(1, (0,))  # another scope with the same micro-ops
    cq.task(0, (1024,))  # the same scope, another value, the same micro-ops (mod 1024)
    cq.synchronize()
    p, stats = cq.finish()
    assert p.uops.size == 4 and stats.kernels == 1 and stats.uop_loads == 3
    gemms = [(g.uop_bgn, g.uop_end) for g in p.insns if isinstance(g, GemmInsn)]
    assert gemms == [(0, 4), (4, 8)] * 3 + [(8, 12)]


def test_uop_cache_allocates_sequentially_and_wraps_with_eviction() -> None:
    depth = default().uop_depth
    size = depth * 3 // 8  # two fit, a third wraps to 0 and evicts the first
    cq = _queue(_kernel(0, size))
    for key in (0, 1, 0, 2, 1, 0):
        cq.task(0, (key * 10,))
    cq.synchronize()
    p, stats = cq.finish()
    uop_loads = [i for i in p.insns if isinstance(i, MemInsn) and i.memory_type == MemId.UOP
                 and i.x_size]
    # k0 @0, k1 @size, k0 resident, k2 wraps @0 evicting k0, k1 resident, k0 @size evicts k1
    assert [i.sram_base for i in uop_loads] == [0, size, 0, size]
    assert stats.uop_evictions == 2 and stats.kernels == 3 and p.uops.size == 3 * size
    gemms = [(g.uop_bgn, g.uop_end) for g in p.insns if isinstance(g, GemmInsn)]
    assert gemms == [(0, size), (size, 2 * size), (0, size), (0, size), (size, 2 * size),
                     (size, 2 * size)]
    assert p.uop_buffer_bytes == 4 * 4 * size


def test_kernel_larger_than_the_uop_sram_is_refused() -> None:
    cq = _queue(_kernel(0, default().uop_depth + 1))
    with pytest.raises(ProgramError, match="uop SRAM"):
        cq.task(0, (0,))


@pytest.mark.parametrize(("loops", "uops", "metas", "match"), [
    ([], [], {(0, 0, 0, 0, 0)}, "no micro-ops"),
    ([], [(0, 0, 0)] * 2, {(0, 0, 0, 0, 0), (0, 1, 0, 0, 0)}, "disagree"),
    ([(0, 2, 1, 0, 0)] * 3, [(0, 0, 0)], {(0, 0, 0, 0, 0)}, "at most two"),
    ([(1, 2, 1, 0, 0)], [(0, 0, 0)], {(0, 0, 0, 0, 0)}, "before any push"),
    ([], [(0, 0, 0)], {(1, 0, 0, 0, 0)}, "mode 1"),
])
def test_malformed_kernels_are_refused(loops, uops, metas, match) -> None:
    spec = KernelSpec(0, True, (), lambda: (loops, uops, metas), "")
    with pytest.raises(ProgramError, match=match):
        _queue(spec).task(0, ())


def test_loop_levels_fill_iter_out_then_iter_in() -> None:
    """A GEMM's loops are iter_out then iter_in (runtime.cc PushGEMMOp); an ALU kernel's single
    loop is iter_in (PushALUUop)."""
    def fn():
        return [(0, 3, 5, 7, 9), (0, 4, 1, 2, 3)], [(0, 0, 0)], {(0, 0, 0, 0, 0)}

    def one():
        return [(0, 6, 1, 1, 0)], [(0, 0, 0)], {(1, 0, 3, 1, 8)}

    cq = _queue(KernelSpec(0, True, (), fn, ""), KernelSpec(1, False, (), one, ""))
    cq.task(0, ())
    cq.task(1, ())
    cq.synchronize()
    p, _ = cq.finish()
    g, a = [i for i in p.insns if i.opcode in (Opcode.GEMM, Opcode.ALU)]
    assert (g.iter_out, g.iter_in, g.dst_factor_out, g.dst_factor_in, g.src_factor_out,
            g.src_factor_in, g.wgt_factor_out, g.wgt_factor_in) == (3, 4, 5, 1, 7, 2, 9, 3)
    # runtime.cc PushALUUop: a single loop is the inner one
    assert (a.iter_out, a.iter_in, a.dst_factor_out, a.src_factor_out, a.dst_factor_in,
            a.src_factor_in) == (1, 6, 0, 0, 1, 1)
    assert (a.alu_opcode, a.use_imm, a.imm) == (3, True, 8)


def test_dma_offsets_are_tiles_from_the_region_start() -> None:
    cq = _queue()
    cq.load("kernel", 3, 2, 1, 2, 0, 0, 0, 0, 5, int(MemId.WGT))
    cq.store(7, int(MemId.OUT), "res", 2, 1, 1, 1)
    with pytest.raises(ProgramError, match="only OUT"):
        cq.store(0, int(MemId.ACC), "res", 0, 1, 1, 1)
    cq.synchronize()
    p, _ = cq.finish()
    hw = p.hw
    wgt, store = p.insns[0], p.insns[1]
    assert wgt.dram_base * hw.wgt_tile_bytes == p.regions["kernel"].offset + 3 * hw.wgt_tile_bytes
    assert wgt.sram_base == 5
    assert store.dram_base * hw.out_tile_bytes == p.regions["res"].offset + 2 * hw.out_tile_bytes
    assert np.array_equal(p.uops, np.zeros(0, np.uint32))


def test_dma_of_a_memory_type_its_call_cannot_move_is_a_program_error() -> None:
    cq = _queue()
    with pytest.raises(ProgramError, match="VTALoadBuffer2D of memory type 4: not a loadable"):
        cq.load("data", 0, 1, 1, 1, 0, 0, 0, 0, 0, int(MemId.OUT))
    with pytest.raises(ProgramError, match="VTALoadBuffer2D of memory type 9"):
        cq.load("data", 0, 1, 1, 1, 0, 0, 0, 0, 0, 9)
    with pytest.raises(ProgramError, match="only OUT can be stored"):
        cq.store(0, int(MemId.INP), "res", 0, 1, 1, 1)


@pytest.mark.parametrize(("dsts", "refused"), [
    ((0, 1, 2, 0, 1, 2), False), ((0, 1, 0), True), ((3, 3), True), ((0, 1, 2, 3, 1), False),
])
def test_kernels_vta_refuses_are_flagged(dsts, refused) -> None:
    """runtime.cc UopKernel::VerifyDep: no micro-op may write the accumulator tile that one
    of the two micro-ops before it writes."""
    spec = KernelSpec(0, True, (), lambda: ([], [(d, 0, 0) for d in dsts],
                                            {(0, 0, 0, 0, 0)}), "")
    cq = _queue(spec)
    cq.task(0, ())
    cq.synchronize()
    _, stats = cq.finish()
    assert ("VerifyDep" in stats.vta_refuses) == refused
