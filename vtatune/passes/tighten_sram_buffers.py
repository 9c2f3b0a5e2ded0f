"""TightenSramBuffers: an SRAM buffer gets the shape its copy writes, not a loose bound of it.

CompactBufferAllocation sizes each SRAM buffer by the region its producer writes and its
consumers read, as a function of the outer tile loops, then takes an upper bound over them.
With a partial tile the consumers' reads are guarded (``outer * tile + inner < extent``); with
a stride the guarded bound of ``(outer * tile + inner) * stride + tap`` loses its relation to
the region's start, and the bound grows (a 5-row window of a stride-2 conv became 9 rows). The
producer (the DMA copy of an output tile's window, the GEMM and epilogue of the accumulator)
writes exactly what the tile needs, and every read stays inside it, so each dimension takes the
largest extent the buffer's stores reach, with the inner loops at their ranges. Buffers whose
stores depend on anything else keep their shape; shapes only shrink.
"""

from __future__ import annotations

from typing import Any

from vtatune.passes._ir import make_pass
from vtatune.passes.scopes import SRAM_SCOPES

NAME = "TightenSramBuffers"


def tighten_sram_buffers() -> Any:
    def run(func: Any) -> Any:
        import tvm_ffi
        from tvm import ir, sym, tirx

        reach: dict[Any, list[int] | None] = {}

        def visit(stmt: Any, loops: list[Any]) -> None:
            if isinstance(stmt, tirx.For):
                visit(stmt.body, [*loops, stmt])
                return
            if isinstance(stmt, tirx.BufferStore) and stmt.buffer.scope() in SRAM_SCOPES:
                reach[stmt.buffer] = _merge(reach.get(stmt.buffer, []), _extents(stmt, loops))
            for child in _children(stmt):
                visit(child, loops)

        def _extents(store: Any, loops: list[Any]) -> list[int] | None:
            ana = sym.Analyzer()
            inner = [lp.loop_var for lp in loops]
            for lp in loops:
                ana.bind(lp.loop_var, ir.Range.from_min_extent(lp.min, lp.extent))
            out = []
            for index in store.indices:
                e = ana.simplify(index)
                used: list[Any] = []
                tvm_ffi.structural_walk(e, (tirx.Var, used.append))
                if not all(any(v.same_as(x) for x in inner) for v in used):
                    return None  # depends on an outer loop: leave the buffer alone
                b = ana.const_int_bound(e)
                if b.min_value < 0:
                    return None
                out.append(int(b.max_value) + 1)
            return out

        visit(func.body, [])
        new: dict[Any, Any] = {}
        for buf, ext in reach.items():
            if not ext:
                continue
            shape = [min(int(s), e) for s, e in zip(buf.shape, ext, strict=True)]
            if shape != [int(s) for s in buf.shape]:
                new[buf] = tirx.decl_buffer(shape, buf.dtype, buf.name, data=buf.data,
                                            scope=buf.scope())
        if not new:
            return func

        def swap(b: Any) -> Any:
            return new.get(b, b)

        return func.with_body(tvm_ffi.structural_map(func.body, (tirx.Buffer, swap)))

    return make_pass(NAME, run)


def _merge(a: list[int] | None, b: list[int] | None) -> list[int] | None:
    if a is None or b is None:
        return None
    if not a:
        return b
    return [max(x, y) for x, y in zip(a, b, strict=True)]


def _children(stmt: Any) -> list[Any]:
    from tvm import s_tir, tirx

    if isinstance(stmt, tirx.SeqStmt):
        return list(stmt.seq)
    if isinstance(stmt, tirx.IfThenElse):
        return [stmt.then_case] + ([stmt.else_case] if stmt.else_case is not None else [])
    if isinstance(stmt, s_tir.SBlockRealize):
        return [stmt.block]
    for field in ("body",):
        child = getattr(stmt, field, None)
        if child is not None and isinstance(child, tirx.Stmt):
            return [child]
    return []
