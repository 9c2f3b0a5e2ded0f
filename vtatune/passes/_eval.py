"""Integer TIR expressions compiled to Python functions (scalar or numpy-vectorized).

Used to evaluate index and size expressions exactly: verification confirms suspected field
overflows over the full iteration space, and the runtime evaluates call arguments per loop
iteration. Only integer arithmetic appears in VTA-level TIR.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from tvm import ir, tirx

_BIN = {tirx.Add: "+", tirx.Sub: "-", tirx.Mul: "*", tirx.FloorDiv: "//", tirx.FloorMod: "%"}
_CMP = {tirx.LT: "<", tirx.LE: "<=", tirx.GT: ">", tirx.GE: ">=", tirx.EQ: "==", tirx.NE: "!="}


class Unsupported(Exception):
    """The expression has a node the evaluator does not know."""


def source(expr: Any, names: dict[Any, str], vector: bool) -> str:
    """Python source for ``expr``; variables are looked up in ``names``."""
    if isinstance(expr, int):
        return str(expr)
    if isinstance(expr, tirx.IntImm):
        return str(int(expr.value))
    if isinstance(expr, tirx.Var):
        if expr not in names:
            raise Unsupported(f"free variable {expr}")
        return names[expr]
    for cls, op in _BIN.items():
        if isinstance(expr, cls):
            return f"({source(expr.a, names, vector)} {op} {source(expr.b, names, vector)})"
    for cls, op in _CMP.items():
        if isinstance(expr, cls):
            return f"({source(expr.a, names, vector)} {op} {source(expr.b, names, vector)})"
    if isinstance(expr, tirx.Max | tirx.Min):
        fn = ("_np.maximum" if isinstance(expr, tirx.Max) else "_np.minimum") if vector else (
            "max" if isinstance(expr, tirx.Max) else "min")
        return f"{fn}({source(expr.a, names, vector)}, {source(expr.b, names, vector)})"
    if isinstance(expr, tirx.Cast):
        return source(expr.value, names, vector)
    if isinstance(expr, tirx.Select):
        c, t, f = (source(x, names, vector) for x in (expr.condition, expr.true_value,
                                                       expr.false_value))
        return f"_np.where({c}, {t}, {f})" if vector else f"({t} if {c} else {f})"
    if isinstance(expr, tirx.And):
        op = "&" if vector else "and"
        return f"({source(expr.a, names, vector)} {op} {source(expr.b, names, vector)})"
    if isinstance(expr, ir.StringImm):
        return repr(expr.value)
    raise Unsupported(f"{type(expr).__name__}: {expr}")


def compile_exprs(exprs: list[Any], variables: list[Any], vector: bool = False
                  ) -> Callable[..., tuple[Any, ...]]:
    """A function of ``variables`` (positional) returning the tuple of ``exprs``' values."""
    names = {v: f"v{i}" for i, v in enumerate(variables)}
    body = ", ".join(source(e, names, vector) for e in exprs)
    params = ", ".join(names.values())
    code = f"lambda {params}: ({body},)"
    return eval(code, {"_np": np})  # noqa: S307 - generated from integer TIR only


def exact_range(expr: Any, loops: list[Any], limit: int = 2_000_000) -> tuple[int, int] | None:
    """Exact (min, max) of ``expr`` over ``loops``' iteration space, or None when that space
    (restricted to the loops the expression uses) is larger than ``limit`` points."""
    used = [lp for lp in loops if _uses(expr, lp.loop_var)]
    size = 1
    for lp in used:
        size *= int(lp.extent.value) if isinstance(lp.extent, tirx.IntImm) else limit + 1
    if size > limit:
        return None
    try:
        fn = compile_exprs([expr], [lp.loop_var for lp in used], vector=True)
    except Unsupported:
        return None
    grids = np.meshgrid(*[np.arange(int(lp.min.value), int(lp.min.value) + int(lp.extent.value),
                                    dtype=np.int64) for lp in used], indexing="ij")
    (vals,) = fn(*grids)
    vals = np.asarray(vals)
    return int(vals.min()), int(vals.max())


def _uses(expr: Any, var: Any) -> bool:
    import tvm_ffi

    found = [False]

    def hit(v: Any) -> None:
        if v.same_as(var):
            found[0] = True

    tvm_ffi.structural_walk(expr, (tirx.Var, hit))
    return found[0]
