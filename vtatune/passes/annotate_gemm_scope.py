"""AnnotateGEMMScope: each maximal loop nest of GEMM micro-op pushes becomes one GEMM task.

Tensorize leaves ``VTAUopPush`` calls (mode GEMM) inside the schedule's loops. A subtree whose
every leaf is such a call is one GEMM instruction-to-be: it is wrapped in the compute
``coproc_scope`` and a GEMM ``coproc_uop_scope`` (FoldUopLoop later folds its outer loops into
the instruction's two-level loop and the rest into the micro-op kernel).
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import attr, make_pass, map_stmts
from vtatune.passes.scopes import COPROC_SCOPE, COPROC_UOP_SCOPE, GEMM_UOP_SCOPE, QUEUE_COMPUTE


def is_gemm_push(s: Any) -> bool:
    return (isinstance(s, tirx.Evaluate) and vc.extern_name(s.value) == vc.UOP_PUSH
            and int(s.value.args[1].value) == vc.UOP_MODE_GEMM)


def _pure(s: Any) -> bool:
    if is_gemm_push(s):
        return True
    if isinstance(s, tirx.For):
        return _pure(s.body)
    if isinstance(s, tirx.SeqStmt):
        return all(_pure(x) for x in s.seq)
    return False


def _wrap(s: Any) -> Any:
    return attr(COPROC_SCOPE, QUEUE_COMPUTE, attr(COPROC_UOP_SCOPE, GEMM_UOP_SCOPE, s))


def annotate_gemm_scope() -> Any:
    def pre(s: Any) -> Any:
        # A pure subtree reached from above is maximal: wrap it whole and stop descending.
        return _wrap(s) if _pure(s) else None

    def run(func: Any) -> Any:
        return func.with_body(map_stmts(func.body, post=lambda s: None, pre=pre))

    return make_pass("AnnotateGEMMScope", run)
