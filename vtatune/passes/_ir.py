"""Small IR helpers shared by the VTA passes: a statement mutator, loop nests, linear forms."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm import ir, tirx

Stmt = Any
Expr = Any

#: The node every coproc_scope / coproc_uop_scope attribute hangs on.
VTA_AXIS_NAME = "vta"


def vta_node() -> Any:
    return ir.StringImm(VTA_AXIS_NAME)


def seq(*stmts: Stmt | list[Stmt] | None) -> Stmt:
    """A flattened SeqStmt (or the single statement) of the non-empty arguments."""
    flat: list[Stmt] = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, list | tuple):
            for x in s:
                flat.extend(_flatten(x))
        else:
            flat.extend(_flatten(s))
    if not flat:
        return tirx.Evaluate(tirx.const(0, "int32"))
    return flat[0] if len(flat) == 1 else tirx.SeqStmt(flat)


def _flatten(s: Stmt) -> list[Stmt]:
    if isinstance(s, tirx.SeqStmt):
        out: list[Stmt] = []
        for x in s.seq:
            out.extend(_flatten(x))
        return out
    return [s]


def map_stmts(stmt: Stmt, post: Callable[[Stmt], Stmt | None],
              pre: Callable[[Stmt], Stmt | None] | None = None) -> Stmt:
    """Rebuild ``stmt`` bottom-up. ``pre(s)`` may return a replacement that is not descended
    into; ``post(s)`` gets the statement with rebuilt children and may return a replacement
    (None keeps it). Compound statements: SeqStmt, For, AttrStmt, IfThenElse, While.

    A statement whose children come back unchanged is passed on as the same Python object,
    so the common case is told by identity; statement kinds are told by exact type (TVM's
    node classes answer ``isinstance`` through ``ABCMeta``, slower when the answer is no):
    ~2 ms less per lowered program of a conv2d search (of ~50), the same modules."""
    if pre is not None:
        r = pre(stmt)
        if r is not None:
            return r
    new = stmt
    kind = type(stmt)
    if kind is _SEQ:
        old = list(stmt.seq)
        items = [map_stmts(s, post, pre) for s in old]
        if any(a is not b and not a.same_as(b) for a, b in zip(items, old, strict=True)):
            new = seq(items)
    elif kind is _FOR or kind is _ATTR or kind is _WHILE:
        child = stmt.body
        body = map_stmts(child, post, pre)
        if body is not child and not body.same_as(child):
            if kind is _FOR:
                new = tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, body,
                               stmt.thread_binding, stmt.annotations)
            elif kind is _ATTR:
                new = tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body)
            else:
                new = tirx.While(stmt.condition, body)
    elif kind is _IF:
        then_case, else_case = stmt.then_case, stmt.else_case
        then = map_stmts(then_case, post, pre)
        other = map_stmts(else_case, post, pre) if else_case is not None else None
        if (then is not then_case and not then.same_as(then_case)) or (
                other is not else_case and not other.same_as(else_case)):
            new = tirx.IfThenElse(stmt.condition, then, other)
    r = post(new)
    return new if r is None else r


_SEQ, _FOR, _ATTR, _IF, _WHILE, _EVALUATE = (tirx.SeqStmt, tirx.For, tirx.AttrStmt,
                                             tirx.IfThenElse, tirx.While, tirx.Evaluate)


def perfect_nest(stmt: Stmt) -> tuple[list[Any], Stmt]:
    """The loops of a perfect loop nest (outermost first) and its innermost body."""
    loops = []
    while isinstance(stmt, tirx.For):
        loops.append(stmt)
        stmt = stmt.body
    return loops, stmt


def as_int(expr: Expr) -> int | None:
    """The value of an integer constant expression, else None."""
    if isinstance(expr, int):
        return expr
    if isinstance(expr, tirx.IntImm):
        return int(expr.value)
    return None


def linear(expr: Expr, variables: list[Any]) -> list[Expr] | None:
    """Coefficients of ``expr`` in ``variables`` followed by the remainder, or None when
    ``expr`` is not linear in them."""
    from tvm import sym

    coeffs = sym.detect_linear_equation(expr, variables)
    if len(coeffs) == 0:
        return None
    return list(coeffs)


def same_storage(a: Any, b: Any) -> bool:
    """Whether buffers ``a`` and ``b`` alias the same allocation.

    After StorageRewrite the in-place epilogue reads and writes through distinct buffer
    declarations over one allocation; in TVM 0.27 their ``data`` expressions are distinct
    ``buffer_data`` calls (and the allocation may have been re-created by
    InjectVirtualThread), so the allocation is identified by its (unique) name.
    """
    return a.same_as(b) or str(a.data) == str(b.data)


def attr(key: str, value: Any, body: Stmt) -> Stmt:
    if isinstance(value, str):
        value = ir.StringImm(value)
    elif isinstance(value, int):
        value = tirx.const(value, "int32")
    return tirx.AttrStmt(vta_node(), key, value, body)


def is_pragma(stmt: Stmt, key: str) -> bool:
    return isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == key


def walk(node: Any, types: Any, fn: Callable[[Any], None]) -> None:
    """Call ``fn`` on every node of ``types`` below ``node`` (post-order)."""
    import tvm_ffi

    tvm_ffi.structural_walk(node, (types, fn))


class VtaPass:
    """A vtatune pass: ``fn(func) -> func`` applied to every PrimFunc of a module.

    Calling it directly keeps Python exceptions (``LoweringError``) intact; ``tvm_pass()``
    wraps it as a TVM ``PrimFuncPass`` for use inside TVM's own pass infrastructure.
    """

    def __init__(self, name: str, fn: Callable[[Any], Any]):
        self.name = f"vtatune.{name}"
        self.fn = fn

    def __call__(self, mod: Any) -> Any:
        import tvm

        out = tvm.IRModule(dict(mod.functions.items()))
        for gv, f in mod.functions.items():
            if isinstance(f, tirx.PrimFunc):
                out[gv] = self.fn(f)
        return out

    def tvm_pass(self) -> Any:
        fn = self.fn

        @tirx.transform.prim_func_pass(opt_level=0, name=self.name)
        def _pass(func: Any, mod: Any, ctx: Any) -> Any:
            return fn(func)

        return _pass

    def __repr__(self) -> str:
        return f"VtaPass({self.name})"


def make_pass(name: str, fn: Callable[[Any], Any]) -> VtaPass:
    """A vtatune pass named ``vtatune.<name>`` applying ``fn(func) -> func``."""
    return VtaPass(name, fn)


def walk_calls(body: Stmt, fn: Callable[[Any, list[Any]], None]) -> None:
    """Call ``fn(call, stack)`` for every ``Evaluate(call)`` in program order; ``stack`` holds
    the enclosing For and AttrStmt nodes, outermost first."""
    stack: list[Any] = []

    def visit(s: Stmt) -> None:
        kind = type(s)  # exact types, as in map_stmts
        if kind is _SEQ:
            for x in s.seq:
                visit(x)
        elif kind is _FOR or kind is _ATTR:
            stack.append(s)
            visit(s.body)
            stack.pop()
        elif kind is _IF:
            visit(s.then_case)
            if s.else_case is not None:
                visit(s.else_case)
        elif kind is _EVALUATE:
            value = s.value
            if isinstance(value, ir.Call):
                fn(value, stack)

    visit(body)


def loops_of(stack: list[Any]) -> list[Any]:
    return [s for s in stack if isinstance(s, tirx.For)]


def innermost_attr(stack: list[Any], key: str) -> int | None:
    """Index in ``stack`` of the innermost attribute ``key``, or None."""
    for i in range(len(stack) - 1, -1, -1):
        if isinstance(stack[i], tirx.AttrStmt) and stack[i].attr_key == key:
            return i
    return None


def trip_count(loops: list[Any]) -> int:
    """Iterations of a statement inside ``loops`` (constant extents)."""
    n = 1
    for lp in loops:
        e = as_int(lp.extent)
        n *= e if e is not None else 1
    return n


def bounds(expr: Expr, loops: list[Any]) -> tuple[int, int]:
    """(min, max) of ``expr`` over the iteration space of ``loops``."""
    from tvm import sym

    ana = sym.Analyzer()
    for lp in loops:
        ana.bind(lp.loop_var, ir.Range.from_min_extent(lp.min, lp.extent), allow_override=True)
    b = ana.const_int_bound(expr)
    return int(b.min_value), int(b.max_value)
