"""InjectDMA: copy loop nests under ``pragma_dma_copy`` become VTA's 2-D strided DMA calls,
exactly as VTA's own compiler makes them (``passes.vta_copy_rules``).

A copy nest moves whole tiles between DRAM and an SRAM. The pass

1. reads the nest's loops, the flat destination/source indices and, for padded loads, the
   ``if_then_else`` guard that zero-fills the halo (TVM's ``InjectCopyIntrin``: loops of
   extent 1 are not dimensions; the guard gives each loop symbolic pads);
2. asks VTA's rules (``_inject_copy``: pads on the two outer dimensions of a padded load only,
   a compact SRAM side, one 2-D pattern of whole element blocks on the DRAM side) for the
   DMA's y and x dimensions, or refuses the copy with VTA's own message
   (``VtaCopyRefused``: the candidate is ``invalid``, a deterministic outcome);
3. emits one ``VTALoadBuffer2D`` / ``VTAStoreBuffer2D`` inside a load / store
   ``coproc_scope``, with VTA's sizes, stride, pads and offsets.

The SRAM side is passed as an access pointer so InjectVirtualThread sees the buffer.
"""

from __future__ import annotations

from typing import Any

from tvm import ir, sym, tirx

from vtatune.hardware.config import HwConfig
from vtatune.passes import vta_calls as vc
from vtatune.passes import vta_copy_rules as rules
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


class VtaCopyRefused(LoweringError):
    """VTA's compiler refuses a copy of the schedule (``reason``: VTA's message and where it
    raises it): the candidate is ``invalid``, as for any rule the compile path verifies."""

    def __init__(self, refused: rules.CopyRefused):
        self.refused = refused
        super().__init__(NAME, refused.reason)


def _lower_copy(stmt: Any, hw: HwConfig, ana: Any) -> Any:
    try:
        return _lower(stmt, hw, ana)
    except rules.CopyRefused as exc:
        raise VtaCopyRefused(exc) from None


def _lower(stmt: Any, hw: HwConfig, ana: Any) -> Any:
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

    # 1. The copy as InjectCopyIntrin sees it: loops of extent 1 are no dimensions.
    variables = [lp.loop_var for lp in loops]
    extents = [as_int(lp.extent) for lp in loops]
    if any(e is None for e in extents) or any(as_int(lp.min) != 0 for lp in loops):
        raise LoweringError(NAME, "copy loops must start at 0 and have constant extents")
    sram_idx = store.indices[0] if is_load else value.indices[0]
    dram_idx = value.indices[0] if is_load else store.indices[0]
    sram_lin, dram_lin = linear(sram_idx, variables), linear(dram_idx, variables)
    if sram_lin is None or dram_lin is None:
        raise LoweringError(NAME, "copy indices are not linear in the loop variables")
    sram_c = [as_int(c) for c in sram_lin[:-1]]
    dram_c = [as_int(c) for c in dram_lin[:-1]]
    if None in sram_c or None in dram_c:
        raise LoweringError(NAME, "copy strides must be constants")
    try:
        pads = _pads(guard, variables, extents, ana) if guard is not None else {}
    except LoweringError as exc:  # DetectClipBound finds no bound: no copy pattern
        raise rules.CopyRefused(f"Cannot match copy pattern ({exc})",
                                "InjectCopyIntrin") from None
    zero = tirx.const(0, "int32")
    if any(extents[i] == 1 and not (_is_zero(pb) and _is_zero(pa))
           for i, (pb, pa) in pads.items()):
        raise rules.CopyRefused("Cannot match copy pattern (a padded dimension of extent 1)",
                                "InjectCopyIntrin")
    keep = [i for i, e in enumerate(extents) if e != 1]
    shape = [extents[i] for i in keep] or [1]
    sram_s = [sram_c[i] for i in keep] or [1]
    dram_s = [dram_c[i] for i in keep] or [1]
    pad = [pads.get(i, (zero, zero)) for i in keep] or [(zero, zero)]
    padded = None
    dram_shape: list[Any] = list(shape)
    if guard is not None:
        padded = [not (_is_zero(pb) and _is_zero(pa)) for pb, pa in pad]
        for j, (pb, pa) in enumerate(pad):
            size = ana.simplify(shape[j] - pb - pa)
            dram_shape[j] = as_int(size) if as_int(size) is not None else size

    # TVM 0.27's FlattenBuffer drops the index term of a DRAM dimension of size 1 (a
    # width-1 input's columns); TVM 0.19's StorageFlatten, which VTA's compiler saw, keeps
    # its row-major stride: the stride of the next inner dimension times its real extent
    # (the index, and so the copy's offset, has no term for it either way).
    offset_s = list(dram_s)
    for j in reversed(range(len(dram_s) - 1)):
        if dram_s[j] == 0:
            inner = dram_shape[j + 1] if isinstance(dram_shape[j + 1], int) else shape[j + 1]
            dram_s[j] = dram_s[j + 1] * inner

    # 2. VTA's decision: the dimensions of the 2-D DMA, or its refusal.
    dims, pat = rules.lower(sram.scope(), is_load, shape, dram_s, sram_s, tile, padded,
                            dram_shape)
    base = dram_lin[-1]
    for j, (pb, _) in enumerate(pad):
        if not _is_zero(pb):
            base = base + pb * offset_s[j]
    ms = ana.modular_set(ana.simplify(base))
    if ms.coeff % tile or ms.base % tile:
        raise rules.CopyRefused(f"scope {sram.scope()} need to have block={tile}",
                                "_get_2d_pattern")

    # 3. Sizes, pads and base addresses (tiles). The SRAM region starts with the pad.
    def size(at: int | None) -> Any:
        return tirx.const(1, "int32") if at is None else _simp(ana, dims[at])

    x_size, y_size = size(pat.x), size(pat.y)
    x_stride = x_size if pat.x_from_shape else tirx.const(pat.x_stride, "int32")
    xpb = xpa = ypb = ypa = zero
    if padded is not None:  # unfolded: the pattern's dimensions are the copy's
        if pat.x is not None:
            xpb, xpa = pad[pat.x]
        if pat.y is not None:
            ypb, ypa = pad[pat.y]
    dram_off = ana.simplify(tirx.floordiv(base, tile))
    sram_ptr = sram.access_ptr("w" if is_load else "r", offset=ana.simplify(sram_lin[-1]))
    if is_load:
        body = vc.call(vc.LOAD_2D, dram.data, dram_off, x_size, y_size, x_stride,
                       _simp(ana, xpb), _simp(ana, ypb), _simp(ana, xpa), _simp(ana, ypa),
                       sram_ptr, mem)
    else:
        body = vc.call(vc.STORE_2D, sram_ptr, mem, dram.data, dram_off, x_size, y_size, x_stride)
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
