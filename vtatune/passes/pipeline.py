"""The VTA lowering pipeline: stock TVM passes, then vtatune's VTA passes, in order.

1. The front half of TVM's s_tir pipeline (blocks -> loops, flat buffers), then partial tiles
   partitioned into body and tail (PartitionTiles, with TVM's LoopPartition).
2. VTA task formation on the single-thread program: GEMM micro-ops (the tensorization), DMA
   copies, ALU and GEMM tasks, and the dependence tokens between them.
3. Virtual threads (cthread -> virtual_thread, InjectVirtualThread) and StorageRewrite, which
   also puts the epilogue in place on the accumulator. SRAM use is measured here.
4. Hardware indices and micro-ops: SRAM access pointers -> tile indices, ALU micro-ops, GEMM
   loop folding. The result is the VTA-level TIR the runtime turns into instructions.

User passes (``passes.user``) run at the named phases between these stages: ``scheduled``,
``loops`` (stage 1's loop half; TVM's phase 0), ``flat`` (1), ``tasks``, ``threads`` (2),
``vta`` (3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import tvm
from tvm import s_tir, tirx

from vtatune.hardware.config import HwConfig
from vtatune.passes._ir import VtaPass
from vtatune.passes.annotate_alu_scope import annotate_alu_scope
from vtatune.passes.annotate_gemm_scope import annotate_gemm_scope
from vtatune.passes.bind_tasks_to_threads import bind_tasks_to_threads, normalize_task_scopes
from vtatune.passes.cthread_to_vthread import cthread_to_vthread
from vtatune.passes.errors import UserPassError
from vtatune.passes.fold_uop_loop import fold_uop_loop
from vtatune.passes.inject_alu_intrin import inject_alu_intrin
from vtatune.passes.inject_coproc_sync import inject_coproc_sync
from vtatune.passes.inject_dma import inject_dma
from vtatune.passes.inject_gemm_intrin import inject_gemm_intrin
from vtatune.passes.lower_sram_access import lower_sram_access
from vtatune.passes.merge_thread_tasks import merge_thread_tasks
from vtatune.passes.partition_tiles import partition_tiles
from vtatune.passes.tighten_sram_buffers import tighten_sram_buffers

if TYPE_CHECKING:
    from vtatune.passes.user import PassSet


def loop_passes() -> list[Any]:
    """Blocks to loops (buffers still multi-dimensional): TVM's phase 0."""
    return [
        s_tir.transform.CanonicalizeLoop(),
        s_tir.transform.LowerInitBlock(),
        s_tir.transform.PlanAndUpdateBufferAllocationLocation(),
        s_tir.transform.ConvertBlocksToOpaque(),
        s_tir.transform.CompactBufferAllocation(),
        tighten_sram_buffers(),
        s_tir.transform.LowerMatchBuffer(),
        s_tir.transform.StmtSimplify(),
        s_tir.transform.LowerOpaqueBlock(),
    ]


def flat_passes() -> list[Any]:
    """Flat buffers, partial tiles partitioned: TVM's phase 1."""
    return [
        tirx.transform.FlattenBuffer(),
        tirx.transform.NarrowDataType(32),
        partition_tiles(),
    ]


def front_passes() -> list[Any]:
    return loop_passes() + flat_passes()


def task_passes(hw: HwConfig) -> list[Any]:
    return [inject_gemm_intrin(hw), inject_dma(hw), annotate_alu_scope(), annotate_gemm_scope(),
            inject_coproc_sync()]


def thread_passes() -> list[Any]:
    return [cthread_to_vthread(), bind_tasks_to_threads(), s_tir.transform.InjectVirtualThread(),
            normalize_task_scopes(), tirx.transform.StorageRewrite(), merge_thread_tasks()]


def hardware_passes(hw: HwConfig) -> list[Any]:
    return [lower_sram_access(hw), inject_alu_intrin(hw), fold_uop_loop(),
            tirx.transform.StmtSimplify(), tirx.transform.RemoveNoOp()]


def run(mod: Any, passes: list[Any]) -> Any:
    """Apply ``passes`` in order; runs of stock TVM passes go through one Sequential."""
    stock: list[Any] = []
    for p in passes:
        if isinstance(p, VtaPass):
            if stock:
                mod = tvm.ir.transform.Sequential(stock)(mod)
                stock = []
            mod = p(mod)
        else:
            stock.append(p)
    if stock:
        mod = tvm.ir.transform.Sequential(stock)(mod)
    return mod


def lower(mod: Any, hw: HwConfig, passes: PassSet | None = None) -> tuple[Any, Any]:
    """(module after stage 3 — for SRAM accounting, VTA-level module after stage 4), with
    the user's ``passes`` at their phases (``passes.user``)."""
    threaded = lower_threaded(mod, hw, passes)
    return threaded, lower_hardware(threaded, hw, passes)


def lower_threaded(mod: Any, hw: HwConfig, passes: PassSet | None = None) -> Any:
    """Stages 1-3 with the user's passes of phases ``scheduled`` to ``threads``."""
    mod = apply_user(mod, passes, "scheduled")
    for stage, phase in ((loop_passes(), "loops"), (flat_passes(), "flat"),
                         (task_passes(hw), "tasks"), (thread_passes(), "threads")):
        mod = apply_user(run(mod, stage), passes, phase)
    return mod


def lower_hardware(threaded: Any, hw: HwConfig, passes: PassSet | None = None) -> Any:
    """Stage 4 with the user's passes of phase ``vta``."""
    return apply_user(run(threaded, hardware_passes(hw)), passes, "vta")


def apply_user(mod: Any, passes: PassSet | None, phase: str) -> Any:
    """The user's passes of ``phase``, in order; one that raises fails the candidate
    (``UserPassError``, naming the pass and phase)."""
    if passes is None:
        return mod
    if passes.error:
        raise UserPassError(passes.error)
    for p in passes.at(phase):
        try:
            mod = p(mod)
        except Exception as exc:
            lines = str(exc).strip().splitlines()
            raise UserPassError(f"user pass {p.info.name} at phase {phase} raised: "
                                f"{lines[-1] if lines else type(exc).__name__}") from exc
    return mod
