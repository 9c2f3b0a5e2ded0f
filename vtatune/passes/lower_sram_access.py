"""LowerSramAccess: access pointers into VTA's SRAMs become tile indices.

Until virtual threads are injected, DMA and micro-op calls name their SRAM operands by access
pointer (so InjectVirtualThread can offset each thread's copy). Afterwards, the hardware wants
an index in tiles of that SRAM: ``offset / elements-per-tile``.
"""

from __future__ import annotations

from typing import Any

import tvm_ffi
from tvm import ir, sym, tirx

from vtatune.hardware.config import HwConfig
from vtatune.passes._ir import make_pass
from vtatune.passes.errors import LoweringError
from vtatune.passes.scopes import ACC_SCOPE, INP_SCOPE, WGT_SCOPE

NAME = "LowerSramAccess"


def tile_elems(hw: HwConfig) -> dict[str, int]:
    """Elements of one tile in each SRAM scope."""
    return {INP_SCOPE: hw.batch * hw.block_in, WGT_SCOPE: hw.block_out * hw.block_in,
            ACC_SCOPE: hw.batch * hw.block_out}


def scope_of(var: Any) -> str:
    """Storage scope of a buffer (TVM 0.27 buffers are Vars with ``scope()``)."""
    if hasattr(var, "scope"):
        return var.scope()
    ann = getattr(var, "type_annotation", None)
    return getattr(ann, "storage_scope", "") if ann is not None else ""


def lower_sram_access(hw: HwConfig) -> Any:
    tiles = tile_elems(hw)

    def run(func: Any) -> Any:
        ana = sym.Analyzer()

        def rewrite(c: Any) -> Any:
            if not hasattr(c.op, "name") or c.op.name != "tirx.tvm_access_ptr":
                return c
            scope = scope_of(c.args[1])
            if scope not in tiles:
                return c
            offset, tile = c.args[2], tiles[scope]
            m = ana.modular_set(offset)
            if m.coeff % tile or m.base % tile:
                raise LoweringError(NAME, f"{scope} access at {offset} is not tile-aligned")
            return ana.simplify(tirx.floordiv(offset, tile))

        return func.with_body(tvm_ffi.structural_map(func.body, (ir.Call, rewrite)))

    return make_pass(NAME, run)
