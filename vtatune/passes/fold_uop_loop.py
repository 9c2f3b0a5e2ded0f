"""FoldUopLoop: the outer loops of a GEMM task become the instruction's two-level loop.

A GEMM instruction runs its micro-op kernel inside ``for i0 < iter_out: for i1 < iter_in``,
advancing the accumulator, input and weight indices by per-level factors. For up to two
outermost loops of a GEMM task whose every micro-op index is affine in the loop variable with
the same stride, the loop is replaced by ``VTAUopLoopBegin(extent, dst, src, wgt factors)`` and
the variable's term is dropped from the micro-ops. What is left is the micro-op kernel.
"""

from __future__ import annotations

from typing import Any

import tvm_ffi
from tvm import ir, sym, tirx

from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import as_int, linear, make_pass, map_stmts, seq, walk
from vtatune.passes.scopes import COPROC_UOP_SCOPE, GEMM_UOP_SCOPE

NAME = "FoldUopLoop"
_INDEX_ARGS = (3, 4, 5)  # dst, src, wgt (after the callee name, mode and reset)


def _fold_outermost(body: Any, ana: Any) -> tuple[Any, Any] | None:
    """(loop-begin call, folded body) for the outermost loop of ``body``, or None."""
    if not isinstance(body, tirx.For):
        return None
    var = body.loop_var
    factors: list[Any] = [None, None, None]
    ok = [True]

    def rewrite(c: Any) -> Any:
        if vc.extern_name(c) != vc.UOP_PUSH:
            return c
        args = list(c.args)
        for slot, i in enumerate(_INDEX_ARGS):
            lin = linear(args[i], [var])
            if lin is None or as_int(lin[0]) is None:
                ok[0] = False
                return c
            if factors[slot] is None:
                factors[slot] = as_int(lin[0])
            elif factors[slot] != as_int(lin[0]):
                ok[0] = False
                return c
            args[i] = ana.simplify(lin[1])
        return tirx.call_extern("int32", *args)

    new = tvm_ffi.structural_map(body.body, (ir.Call, rewrite))
    if not ok[0] or None in factors:
        return None
    used = [False]

    def uses(v: Any) -> None:
        if v.same_as(var):
            used[0] = True

    walk(new, tirx.Var, uses)
    if used[0]:
        return None
    return vc.call(vc.UOP_LOOP_BEGIN, body.extent, *factors), new


def fold_uop_loop() -> Any:
    def post(s: Any) -> Any:
        if not (isinstance(s, tirx.AttrStmt) and s.attr_key == COPROC_UOP_SCOPE
                and s.value.value == GEMM_UOP_SCOPE):
            return None
        ana = sym.Analyzer()
        body, begins = s.body, []
        for _ in range(2):
            folded = _fold_outermost(body, ana)
            if folded is None:
                break
            begins.append(folded[0])
            body = folded[1]
        if not begins:
            return None
        ends = [vc.call(vc.UOP_LOOP_END) for _ in begins]
        return tirx.AttrStmt(s.node, s.attr_key, s.value, seq(begins, body, ends))

    return make_pass(NAME, lambda f: f.with_body(map_stmts(f.body, post)))
