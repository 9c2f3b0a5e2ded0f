"""CthreadToVthread: ``cthread`` bindings become ``virtual_thread`` attributes.

TVM 0.27 lowers a loop bound to ``cthread`` into a thread launch. VTA's virtual threads must be
*virtual*: InjectVirtualThread should duplicate the buffers per thread (no sharing, unlike
``vthread``) and interleave the threads' tasks, so the attribute is renamed before it runs.
"""

from __future__ import annotations

from typing import Any

import tvm_ffi
from tvm import tirx

from vtatune.passes._ir import make_pass


def cthread_to_vthread() -> Any:
    def rewrite(s: Any) -> Any:
        if s.attr_key == "thread_extent" and s.node.thread_tag == "cthread":
            return tirx.AttrStmt(s.node, "virtual_thread", s.value, s.body, s.span)
        return s

    def run(func: Any) -> Any:
        return func.with_body(tvm_ffi.structural_map(func.body, (tirx.AttrStmt, rewrite)))

    return make_pass("CthreadToVthread", run)
