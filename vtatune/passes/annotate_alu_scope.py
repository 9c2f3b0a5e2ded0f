"""AnnotateALUScope: ``pragma_alu`` nests run on the compute module as ALU micro-op kernels.

The nest itself is kept (InjectALUIntrin lowers it after virtual threads and storage rewrite);
this pass only puts it in the compute ``coproc_scope`` and an ALU ``coproc_uop_scope``, so
InjectCoProcSync and InjectVirtualThread treat it as one compute task.
"""

from __future__ import annotations

from typing import Any

from vtatune.passes._ir import attr, is_pragma, make_pass, map_stmts
from vtatune.passes.scopes import (
    ALU_UOP_SCOPE,
    COPROC_SCOPE,
    COPROC_UOP_SCOPE,
    PRAGMA_ALU,
    QUEUE_COMPUTE,
)


def annotate_alu_scope() -> Any:
    def post(s: Any) -> Any:
        if is_pragma(s, PRAGMA_ALU):
            return attr(COPROC_SCOPE, QUEUE_COMPUTE, attr(COPROC_UOP_SCOPE, ALU_UOP_SCOPE, s))
        return None

    return make_pass("AnnotateALUScope", lambda f: f.with_body(map_stmts(f.body, post)))
