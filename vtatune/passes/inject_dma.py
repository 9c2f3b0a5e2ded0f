"""InjectDMA: copy loop nests under ``pragma_dma_copy`` become 2-D strided VTA DMA calls.

A copy nest moves whole tiles between DRAM and an SRAM. The pass

1. reads the nest's loops, the flat destination/source indices and, for padded loads, the
   ``if_then_else`` guard that zero-fills the halo;
2. peels the innermost loops that form one tile (BATCH x BLOCK elements, contiguous on both
   sides) and expresses the other loops in tiles;
3. merges neighbouring loops that are contiguous on both sides;
4. picks the DMA's x dimension (contiguous on both sides) and y dimension (contiguous in SRAM,
   strided in DRAM); every other loop stays a loop around the DMA call;
5. turns the guard into the DMA's on-the-fly pads (symbolic in outer loop variables), and
6. emits ``VTALoadBuffer2D`` / ``VTAStoreBuffer2D`` inside a load / store ``coproc_scope``.

The SRAM side is passed as an access pointer so InjectVirtualThread sees the buffer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import ir, sym, tirx

from vtatune.hardware.config import HwConfig
from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import as_int, attr, is_pragma, linear, make_pass, map_stmts, perfect_nest
from vtatune.passes.errors import LoweringError
from vtatune.passes.scopes import (
    ACC_SCOPE,
    COPROC_SCOPE,
    INP_SCOPE,
    PRAGMA_DMA,
    QUEUE_LOAD,
    QUEUE_STORE,
    WGT_SCOPE,
)

NAME = "InjectDMA"


@dataclass
class _Dim:
    """One tile-level loop of the copy: extent, coefficients in tiles, symbolic pads."""

    var: Any
    extent: int
    sram: int
    dram: int
    pad_before: Any = 0
    pad_after: Any = 0

    @property
    def padded(self) -> bool:
        return not (_is_zero(self.pad_before) and _is_zero(self.pad_after))


def _is_zero(e: Any) -> bool:
    return as_int(e) == 0


def inject_dma(hw: HwConfig) -> Any:
    """The pass, for hardware ``hw``."""

    def run(func: Any) -> Any:
        ana = sym.Analyzer()

        def post(s: Any) -> Any:
            return _lower_copy(s, hw, ana) if is_pragma(s, PRAGMA_DMA) else None

        return func.with_body(map_stmts(func.body, post))

    return make_pass(NAME, run)


def _lower_copy(stmt: Any, hw: HwConfig, ana: Any) -> Any:
    loops, store = perfect_nest(stmt.body)
    if not isinstance(store, tirx.BufferStore):
        raise LoweringError(NAME, f"copy body is not a single store: {store}")
    value, guard = store.value, None
    if isinstance(value, tirx.Cast):
        value = value.value
    if isinstance(value, ir.Call) and value.op.name in ("prim.if_then_else", "tirx.if_then_else"):
        guard, value, other = value.args
        if as_int(other) != 0:
            raise LoweringError(NAME, "padding value must be zero")
    if not isinstance(value, ir.TensorLoad):
        raise LoweringError(NAME, f"copy source is not a buffer load: {value}")
    dst, src = store.buffer, value.source
    if dst.scope() in (INP_SCOPE, WGT_SCOPE):
        is_load, sram, dram = True, dst, src
        mem = vc.MEM_INP if dst.scope() == INP_SCOPE else vc.MEM_WGT
        tile = hw.batch * hw.block_in if mem == vc.MEM_INP else hw.block_out * hw.block_in
    elif src.scope() == ACC_SCOPE and dst.scope() == "global":
        is_load, sram, dram, mem = False, src, dst, vc.MEM_OUT
        tile = hw.batch * hw.block_out
    else:
        raise LoweringError(NAME, f"unsupported copy {src.scope()} -> {dst.scope()}")
    if guard is not None and not is_load:
        raise LoweringError(NAME, "stores cannot pad")

    variables = [lp.loop_var for lp in loops]
    extents = [as_int(lp.extent) for lp in loops]
    if any(e is None for e in extents):
        raise LoweringError(NAME, "copy loops must have constant extents")
    sram_idx = store.indices[0] if is_load else value.indices[0]
    dram_idx = value.indices[0] if is_load else store.indices[0]
    sram_lin, dram_lin = linear(sram_idx, variables), linear(dram_idx, variables)
    if sram_lin is None or dram_lin is None:
        raise LoweringError(NAME, "copy indices are not linear in the loop variables")
    sram_c = [as_int(c) for c in sram_lin[:-1]]
    dram_c = [as_int(c) for c in dram_lin[:-1]]
    if None in sram_c or None in dram_c:
        raise LoweringError(NAME, "copy strides must be constants")
    pads = _pads(guard, variables, extents, ana) if guard is not None else {}

    # 2. Peel the loops of one tile (contiguous elements on both sides).
    k, elems = len(loops), 1
    while elems < tile and k > 0:
        k -= 1
        if sram_c[k] != elems or dram_c[k] != elems or k in pads:
            raise LoweringError(NAME, f"copy of {sram.scope()} is not made of whole "
                                      f"{tile}-element tiles")
        elems *= extents[k]
    if elems != tile:
        raise LoweringError(NAME, f"copy of {sram.scope()} is not tile-aligned "
                                  f"({elems} vs {tile} elements)")
    dims = []
    for i in range(k):
        if sram_c[i] % tile or dram_c[i] % tile:
            raise LoweringError(NAME, "copy strides are not whole tiles")
        pb, pa = pads.get(i, (0, 0))
        if extents[i] == 1 and i not in pads:
            continue
        dims.append(_Dim(variables[i], extents[i], sram_c[i] // tile, dram_c[i] // tile, pb, pa))

    # 3. Merge neighbours contiguous on both sides (unpadded only).
    i = len(dims) - 1
    while i > 0:
        o, n = dims[i - 1], dims[i]
        if (not o.padded and not n.padded and o.sram == n.sram * n.extent
                and o.dram == n.dram * n.extent):
            dims[i - 1:i + 1] = [_Dim(tirx.Var(f"{n.var.name}_m", "int32"),
                                      o.extent * n.extent, n.sram, n.dram)]
        i -= 1

    # 4. x: contiguous on both sides; y: rows contiguous in SRAM, strided in DRAM. A dimension
    # with at most one real (unpadded) element may have any DRAM stride (TVM drops the index
    # term of a size-1 dimension, e.g. the columns of a width-1 input).
    def single(d: _Dim) -> bool:
        return d.padded and ana.const_int_bound(
            ana.simplify(d.extent - d.pad_before - d.pad_after)).max_value <= 1

    x = dims.pop() if dims and dims[-1].sram == 1 and (
        dims[-1].dram == 1 or single(dims[-1])) else None
    x_ext = x.extent if x else 1
    if (is_load and x is not None and dims and dims[-1].sram > x_ext
            and dims[-1].dram % x.dram == 0):
        # The tail of a partial tile loads narrower rows into SRAM rows as wide as the body's
        # (the buffer keeps the largest tile's layout); VTA writes SRAM rows back to back, so
        # the load pads each row with zeros up to the row stride instead of splitting the
        # copy into one DMA per row (padded rows could not be split at all).
        x.pad_after = ana.simplify(x.pad_after + (dims[-1].sram - x_ext))
        x.extent = x_ext = dims[-1].sram
    y = dims.pop() if dims and dims[-1].sram == x_ext else None
    for d in dims:
        if d.padded:
            raise LoweringError(NAME, "padding on a dimension the 2-D DMA cannot pad")

    # 5. Sizes, pads and base addresses (tiles). The SRAM region starts with the pad.
    zero = tirx.const(0, "int32")
    xpb, xpa = (x.pad_before, x.pad_after) if x else (zero, zero)
    ypb, ypa = (y.pad_before, y.pad_after) if y else (zero, zero)
    x_size = ana.simplify(x_ext - xpb - xpa)
    y_size = ana.simplify((y.extent if y else 1) - ypb - ypa)
    x_stride = y.dram if y else x_size
    dram_base = dram_lin[-1]
    if ana.modular_set(dram_base).coeff % tile or ana.modular_set(dram_base).base % tile:
        raise LoweringError(NAME, "DRAM offset of the copy is not tile-aligned")
    dram_off = tirx.floordiv(dram_base, tile)
    sram_off = sram_lin[-1]
    for d in dims:
        dram_off = dram_off + d.var * d.dram
        sram_off = sram_off + d.var * (d.sram * tile)
    if x:
        dram_off = dram_off + xpb * x.dram
    if y:
        dram_off = dram_off + ypb * y.dram
    dram_off, sram_off = ana.simplify(dram_off), ana.simplify(sram_off)
    sram_ptr = sram.access_ptr("w" if is_load else "r", offset=sram_off)

    # 6. The call, its loops, and its queue.
    if is_load:
        body = vc.call(vc.LOAD_2D, dram.data, dram_off, x_size, y_size, x_stride,
                       _simp(ana, xpb), _simp(ana, ypb), _simp(ana, xpa), _simp(ana, ypa),
                       sram_ptr, mem)
    else:
        body = vc.call(vc.STORE_2D, sram_ptr, mem, dram.data, dram_off, x_size, y_size, x_stride)
    for d in reversed(dims):
        body = tirx.For(d.var, 0, d.extent, tirx.ForKind.SERIAL, body)
    return attr(COPROC_SCOPE, QUEUE_LOAD if is_load else QUEUE_STORE, body)


def _simp(ana: Any, e: Any) -> Any:
    return ana.simplify(e) if not isinstance(e, int) else tirx.const(e, "int32")


def _pads(guard: Any, variables: list[Any], extents: list[int], ana: Any
          ) -> dict[int, tuple[Any, Any]]:
    """Per loop index, (pad_before, pad_after) implied by a conjunction of linear bounds."""
    atoms: list[Any] = []

    def split(e: Any) -> None:
        if isinstance(e, tirx.And):
            split(e.a)
            split(e.b)
        else:
            atoms.append(e)

    split(guard)
    before: dict[int, Any] = {}
    after: dict[int, Any] = {}
    for a in atoms:
        if isinstance(a, tirx.LE):
            diff = a.b - a.a  # >= 0
        elif isinstance(a, tirx.LT):
            diff = a.b - a.a - 1
        elif isinstance(a, tirx.GE):
            diff = a.a - a.b
        elif isinstance(a, tirx.GT):
            diff = a.a - a.b - 1
        else:
            raise LoweringError(NAME, f"cannot read padding from guard term {a}")
        lin = linear(diff, variables)
        if lin is None:
            raise LoweringError(NAME, f"padding guard term {a} is not linear")
        coeffs = [as_int(c) for c in lin[:-1]]
        hits = [i for i, c in enumerate(coeffs) if c != 0]
        if len(hits) != 1 or coeffs[hits[0]] not in (1, -1):
            raise LoweringError(NAME, f"padding guard term {a} must bound one loop with step 1")
        i, rest, ext = hits[0], lin[-1], extents[hits[0]]
        if coeffs[i] == 1:  # v + rest >= 0  ->  v >= -rest
            pb = tirx.max(tirx.min(-rest, ext), 0)
            before[i] = pb if i not in before else tirx.max(before[i], pb)
        else:  # rest - v >= 0  ->  v <= rest
            pa = tirx.max(tirx.min(ext - 1 - rest, ext), 0)
            after[i] = pa if i not in after else tirx.max(after[i], pa)
    zero = tirx.const(0, "int32")
    return {i: (ana.simplify(before.get(i, zero)), ana.simplify(after.get(i, zero)))
            for i in set(before) | set(after)}
