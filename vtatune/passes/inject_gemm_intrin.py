"""InjectGEMMIntrin: the loop nest of one GEMM step (or accumulator reset) becomes a micro-op.

The schedule templates mark the innermost loops of the GEMM — ``(BATCH,) BLOCK_OUT, BLOCK_IN``
around ``acc[...] += int32(inp[...]) * int32(wgt[...])`` — and of the reset — ``(BATCH,)
BLOCK_OUT`` around ``acc[...] = 0`` — with a pragma instead of tensorizing them in the schedule,
so that PartitionTiles can first split partial tiles (a tensorized block cannot carry a tile's
guard). This pass is the tensorization: it checks that the nest is exactly one GEMM step on
``hw`` (extents, element strides, int8 x int8 into int32) and replaces it with ``VTAUopPush``
whose operands are *access pointers* to the tile in each SRAM, as VTA's GEMM intrinsic emits
them (InjectVirtualThread only sees a thread's buffer offsets through access pointers).
"""

from __future__ import annotations

from typing import Any

from tvm import ir, tirx

from vtatune.hardware.config import HwConfig
from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import as_int, linear, make_pass, map_stmts, perfect_nest
from vtatune.passes.errors import LoweringError
from vtatune.passes.scopes import ACC_SCOPE, INP_SCOPE, PRAGMA_GEMM, PRAGMA_RESET, WGT_SCOPE

NAME = "InjectGEMMIntrin"
#: access_ptr masks: read, write, read-write.
READ, WRITE, READ_WRITE = 1, 2, 3


def _ptr(buf: Any, offset: Any, extent: int, mask: int) -> Any:
    return tirx.call_intrin("handle", "tirx.tvm_access_ptr", tirx.type_annotation(buf.dtype),
                            buf.data, offset, tirx.const(extent, "int32"),
                            tirx.const(mask, "int32"))


def _offset(index: Any, variables: list[Any], strides: list[int], what: str) -> Any:
    """The index with the loop variables at 0, after checking their element strides."""
    lin = linear(index, variables)
    if lin is None or [as_int(c) for c in lin[:-1]] != strides:
        raise LoweringError(NAME, f"{what} of the GEMM step is not a dense tile (index "
                                  f"{index}, expected strides {strides})")
    return lin[-1]


def _strip_cast(e: Any) -> Any:
    return e.value if isinstance(e, tirx.Cast) else e


def inject_gemm_intrin(hw: HwConfig) -> Any:
    b, bi, bo = hw.batch, hw.block_in, hw.block_out
    batch = [b] if b > 1 else []  # the unit batch loop is absent when BATCH is 1

    def gemm(stmt: Any, ana: Any) -> Any:
        loops, store = perfect_nest(stmt.body)
        extents = [as_int(lp.extent) for lp in loops]
        if extents != [*batch, bo, bi] or not isinstance(store, tirx.BufferStore):
            raise LoweringError(NAME, f"GEMM nest has loops {extents}, expected "
                                      f"{[*batch, bo, bi]} around one store")
        vs = [lp.loop_var for lp in loops]
        value = store.value
        if not isinstance(value, tirx.Add):
            raise LoweringError(NAME, f"GEMM step is not an accumulation: {value}")
        acc_load, prod = value.a, value.b
        if isinstance(prod, ir.TensorLoad):
            acc_load, prod = prod, acc_load
        if (not isinstance(acc_load, ir.TensorLoad) or not isinstance(prod, tirx.Mul)
                or not acc_load.source.same_as(store.buffer)):
            raise LoweringError(NAME, f"GEMM step is not acc += inp * wgt: {value}")
        x, w = _strip_cast(prod.a), _strip_cast(prod.b)
        if isinstance(x, ir.TensorLoad) and x.source.scope() == WGT_SCOPE:
            x, w = w, x
        if not (isinstance(x, ir.TensorLoad) and isinstance(w, ir.TensorLoad)
                and x.source.scope() == INP_SCOPE and w.source.scope() == WGT_SCOPE
                and store.buffer.scope() == ACC_SCOPE):
            raise LoweringError(NAME, "GEMM operands are not inp/wgt SRAM loads into acc")
        zero = tirx.const(0, "int32")
        acc_strides = ([bo] if b > 1 else []) + [1, 0]
        inp_strides = ([bi] if b > 1 else []) + [0, 1]
        wgt_strides = ([0] if b > 1 else []) + [bi, 1]
        acc_off = _offset(store.indices[0], vs, acc_strides, "the accumulator")
        if not ana.can_prove_equal(acc_load.indices[0], store.indices[0]):
            raise LoweringError(NAME, "GEMM step reads another accumulator than it writes")
        inp_off = _offset(x.indices[0], vs, inp_strides, "the input")
        wgt_off = _offset(w.indices[0], vs, wgt_strides, "the weight")
        return vc.call(vc.UOP_PUSH, vc.UOP_MODE_GEMM, 0,
                       _ptr(store.buffer, ana.simplify(acc_off), b * bo, READ_WRITE),
                       _ptr(x.source, ana.simplify(inp_off), b * bi, READ),
                       _ptr(w.source, ana.simplify(wgt_off), bo * bi, READ), zero, zero, zero)

    def reset(stmt: Any, ana: Any) -> Any:
        loops, store = perfect_nest(stmt.body)
        extents = [as_int(lp.extent) for lp in loops]
        if (extents != [*batch, bo] or not isinstance(store, tirx.BufferStore)
                or as_int(store.value) != 0 or store.buffer.scope() != ACC_SCOPE):
            raise LoweringError(NAME, f"reset nest has loops {extents}, expected "
                                      f"{[*batch, bo]} around acc = 0")
        vs = [lp.loop_var for lp in loops]
        acc_off = _offset(store.indices[0], vs, ([bo] if b > 1 else []) + [1], "the reset")
        zero = tirx.const(0, "int32")
        return vc.call(vc.UOP_PUSH, vc.UOP_MODE_GEMM, 1,
                       _ptr(store.buffer, ana.simplify(acc_off), b * bo, WRITE), zero, zero,
                       zero, zero, zero)

    def run(func: Any) -> Any:
        from tvm import sym

        ana = sym.Analyzer()

        def post(s: Any) -> Any:
            if isinstance(s, tirx.AttrStmt) and s.attr_key == PRAGMA_GEMM:
                return gemm(s, ana)
            if isinstance(s, tirx.AttrStmt) and s.attr_key == PRAGMA_RESET:
                return reset(s, ana)
            return None

        return func.with_body(map_stmts(func.body, post))

    return make_pass(NAME, run)
