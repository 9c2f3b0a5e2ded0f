"""InjectALUIntrin: element-wise accumulator nests become ALU micro-ops in a two-level loop.

After StorageRewrite the epilogue is in place on the accumulator (``acc[i] = acc[i] >> 8``,
``max(acc[i], 0)``, ``min(acc[i], 127)``). For each such nest the pass

1. recognizes the operation (SHR, MAX, MIN, ADD, MUL) and whether the second operand is an
   immediate or another accumulator tile;
2. peels the innermost loops that form one accumulator tile (BATCH x BLOCK_OUT elements) and
   expresses the other loops' strides in tiles;
3. merges loops that are contiguous for both destination and source;
4. folds the two longest loops into the instruction's iter_out/iter_in loop (splitting a loop
   longer than the 14-bit iteration field), leaving the rest as loops that the runtime expands
   into micro-ops, and
5. emits ``VTAUopLoopBegin`` / ``VTAUopPush`` (ALU) / ``VTAUopLoopEnd``.
"""

from __future__ import annotations

from typing import Any

from tvm import ir, sym, tirx

from vtatune.hardware.config import HwConfig
from vtatune.hardware.hw_spec import ALU_IMM_BITS, LOOP_ITER_BITS
from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import (
    as_int,
    is_pragma,
    linear,
    make_pass,
    map_stmts,
    perfect_nest,
    same_storage,
    seq,
)
from vtatune.passes.errors import LoweringError
from vtatune.passes.scopes import PRAGMA_ALU

NAME = "InjectALUIntrin"
MAX_ITER = (1 << LOOP_ITER_BITS) - 1
IMM_MIN, IMM_MAX = -(1 << (ALU_IMM_BITS - 1)), (1 << (ALU_IMM_BITS - 1)) - 1

_BINARY = {tirx.Max: vc.ALU_MAX, tirx.Min: vc.ALU_MIN, tirx.Add: vc.ALU_ADD, tirx.Mul: vc.ALU_MUL}


def _operation(value: Any) -> tuple[int, Any, Any]:
    """(opcode, in-place operand, other operand) of an ALU expression."""
    for cls, op in _BINARY.items():
        if isinstance(value, cls):
            return op, value.a, value.b
    if isinstance(value, tirx.RShift):
        return vc.ALU_SHR, value.a, value.b
    if isinstance(value, ir.TensorLoad):  # ``acc >> 0`` simplifies to a copy: SHR by 0
        return vc.ALU_SHR, value, 0
    if isinstance(value, tirx.LShift):  # VTA shifts left by a negative right shift
        if as_int(value.b) is None:
            raise LoweringError(NAME, "left-shift amount must be a constant")
        return vc.ALU_SHR, value.a, -as_int(value.b)
    raise LoweringError(NAME, f"not an ALU operation: {value}")


def inject_alu_intrin(hw: HwConfig) -> Any:
    tile = hw.batch * hw.block_out

    def lower(stmt: Any) -> Any:
        loops, store = perfect_nest(stmt.body)
        if not isinstance(store, tirx.BufferStore):
            raise LoweringError(NAME, f"ALU body is not a single store: {store}")
        op, lhs, rhs = _operation(store.value)
        if isinstance(lhs, int | tirx.IntImm) and op in (vc.ALU_MAX, vc.ALU_MIN, vc.ALU_ADD,
                                                         vc.ALU_MUL):
            lhs, rhs = rhs, lhs  # commutative: keep the accumulator operand on the left
        variables = [lp.loop_var for lp in loops]
        extents = [as_int(lp.extent) for lp in loops]
        dst_lin = linear(store.indices[0], variables)
        if not isinstance(lhs, ir.TensorLoad) or not same_storage(lhs.source, store.buffer):
            raise LoweringError(NAME, "ALU operations must be in place on the accumulator")
        src_load = lhs
        use_imm, imm = 0, 0
        if as_int(rhs) is not None:
            use_imm, imm = 1, as_int(rhs)
            if not IMM_MIN <= imm <= IMM_MAX:
                raise LoweringError(NAME, f"immediate {imm} does not fit {ALU_IMM_BITS} bits")
        elif isinstance(rhs, ir.TensorLoad) and same_storage(rhs.source, store.buffer):
            src_load = rhs
            if not _same_coeffs(linear(lhs.indices[0], variables), dst_lin):
                raise LoweringError(NAME, "the destination must be one of the operands")
        else:
            raise LoweringError(NAME, f"unsupported ALU operand {rhs}")
        src_lin = linear(src_load.indices[0], variables)
        if dst_lin is None or src_lin is None or None in extents:
            raise LoweringError(NAME, "ALU indices must be linear, extents constant")
        dst_c = [as_int(c) for c in dst_lin[:-1]]
        src_c = [as_int(c) for c in src_lin[:-1]]
        if None in dst_c or None in src_c:
            raise LoweringError(NAME, "ALU strides must be constants")

        # Peel one accumulator tile, then work in tiles.
        k, elems = len(loops), 1
        while elems < tile and k > 0:
            k -= 1
            if dst_c[k] != elems or src_c[k] != elems:
                raise LoweringError(NAME, "ALU nest does not cover whole accumulator tiles")
            elems *= extents[k]
        if elems != tile or any(c % tile for c in dst_c[:k] + src_c[:k]):
            raise LoweringError(NAME, "ALU nest is not tile-aligned")
        dims = [[variables[i], extents[i], dst_c[i] // tile, src_c[i] // tile]
                for i in range(k) if extents[i] > 1]
        i = len(dims) - 1
        while i > 0:  # merge contiguous neighbours
            o, n = dims[i - 1], dims[i]
            if o[2] == n[2] * n[1] and o[3] == n[3] * n[1]:
                dims[i - 1:i + 1] = [[tirx.Var(f"{n[0].name}_m", "int32"), o[1] * n[1],
                                      n[2], n[3]]]
            i -= 1
        dims = _split_long(dims)
        folded = sorted(range(len(dims)), key=lambda j: -dims[j][1])[:2]
        folded.sort()
        inner = [d for j, d in enumerate(dims) if j not in folded]
        ana = sym.Analyzer()
        dst = tirx.floordiv(dst_lin[-1], tile)
        src = tirx.floordiv(src_lin[-1], tile)
        for var, _, dc, sc in inner:
            dst, src = dst + var * dc, src + var * sc
        body = vc.call(vc.UOP_PUSH, vc.UOP_MODE_ALU, 0, ana.simplify(dst), ana.simplify(src), 0,
                       op, use_imm, imm)
        for var, ext, _, _ in reversed(inner):
            body = tirx.For(var, 0, ext, tirx.ForKind.SERIAL, body)
        begins = [vc.call(vc.UOP_LOOP_BEGIN, dims[j][1], dims[j][2], dims[j][3], 0)
                  for j in folded]
        ends = [vc.call(vc.UOP_LOOP_END) for _ in folded]
        return seq(begins, body, ends)

    def run(func: Any) -> Any:
        return func.with_body(map_stmts(
            func.body, post=lambda s: lower(s) if is_pragma(s, PRAGMA_ALU) else None))

    return make_pass(NAME, run)


def _same_coeffs(a: list[Any] | None, b: list[Any] | None) -> bool:
    return a is not None and b is not None and all(
        as_int(x) == as_int(y) for x, y in zip(a[:-1], b[:-1], strict=True))


def _split_long(dims: list[list[Any]]) -> list[list[Any]]:
    """Factor any loop longer than the iteration field into loops that each fit (greedy,
    largest factor first). A prime extent beyond the field stays whole; VerifyIsaFields
    then rejects the candidate."""
    out = []
    for var, ext, dc, sc in dims:
        parts = []
        while ext > MAX_ITER:
            inner = next(d for d in range(MAX_ITER, 0, -1) if ext % d == 0)
            if inner == 1:
                break
            parts.append(inner)
            ext //= inner
        parts.append(ext)  # outermost part last
        stride = 1
        pieces = []
        for j, e in enumerate(parts):
            name = var.name if len(parts) == 1 else f"{var.name}_{j}"
            pieces.append([tirx.Var(name, "int32") if len(parts) > 1 else var, e,
                           dc * stride, sc * stride])
            stride *= e
        out.extend(reversed(pieces))  # outer to inner
    return out
