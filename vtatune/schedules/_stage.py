"""The part of every VTA schedule template after tiling: stage data and mark the GEMM.

Shared by the operators' templates, which differ only in how they tile.
"""

from __future__ import annotations

from typing import Any

from vtatune.hardware.config import HwConfig
from vtatune.passes.scopes import (
    ACC_SCOPE,
    INP_SCOPE,
    PRAGMA_ALU,
    PRAGMA_DMA,
    PRAGMA_GEMM,
    PRAGMA_RESET,
    WGT_SCOPE,
)

EPILOGUE = ("res_shr", "res_min", "res_max")
#: The accumulating stage every operator's TE names so.
GEMM_STAGE = "res_conv"


def stage_epilogue(sch: Any, at: Any) -> None:
    """Compute the GEMM stage and the epilogue in the accumulator SRAM at loop ``at`` (the
    innermost loop over output tiles)."""
    for name in (*reversed(EPILOGUE), GEMM_STAGE):
        sch.compute_at(sch.get_sblock(name), at, preserve_unit_loops=True)
        sch.set_scope(sch.get_sblock(name), 0, ACC_SCOPE)


def stage_and_tensorize(sch: Any, hw: HwConfig, red_loop: Any, store_loop: Any, rank: int
                        ) -> None:
    """Copy input/weight tiles into their SRAMs by DMA at ``red_loop`` (the outer reduction
    loop), store the output tile by DMA from ``store_loop``, run the epilogue on the ALU, and
    mark one GEMM step and one accumulator reset for tensorization. ``rank``: dimensions of the
    packed tensors.

    The GEMM is marked with a pragma rather than tensorized here: a tile that does not divide
    its axis guards its statements, which a tensorized block cannot carry; the lowering first
    partitions such tiles into body and tail (PartitionTiles) and then tensorizes each
    (InjectGEMMIntrin).
    """
    blk = sch.get_sblock
    sch.set_scope(blk("data_buf"), 0, INP_SCOPE)
    sch.set_scope(blk("kernel_buf"), 0, WGT_SCOPE)
    for name in ("data_buf", "kernel_buf"):
        sch.compute_at(blk(name), red_loop, preserve_unit_loops=True)
        sch.annotate(sch.get_loops(blk(name))[-rank], PRAGMA_DMA, 1)
    sch.annotate(store_loop, PRAGMA_DMA, 1)
    for name in EPILOGUE:
        sch.annotate(sch.get_loops(blk(name))[-rank], PRAGMA_ALU, 1)

    init = sch.decompose_reduction(blk(GEMM_STAGE), red_loop)
    tns = -2 if hw.batch == 1 else -3  # the unit batch loop is not in a BATCH=1 step
    sch.annotate(sch.get_loops(blk(f"{GEMM_STAGE}_update"))[tns], PRAGMA_GEMM, 1)
    sch.annotate(sch.get_loops(init)[tns + 1], PRAGMA_RESET, 1)
