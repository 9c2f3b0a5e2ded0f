"""BindTasksToThreads: make every VTA task a unit of virtual-thread injection.

InjectVirtualThread duplicates a statement per thread at the highest level where the thread
variable is touched. TVM 0.27 no longer special-cases ``coproc_scope`` as older TVM did for
VTA, so it would duplicate each micro-op or DMA call inside a task, interleaving the threads
within one instruction. Wrapping each task in a one-iteration marker loop whose extent names
the thread variable (``1 + 0 * thread``) makes the whole task the unit: each thread gets its own
task, with its own dependence pushes and pops. (Naming the variable in the attribute value
instead trips an internal check of InjectVirtualThread's AttrStmt path.)
``NormalizeTaskScopes`` removes the marker loops afterwards.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from vtatune.passes._ir import make_pass, map_stmts
from vtatune.passes.scopes import COPROC_SCOPE

#: Annotation of the one-iteration loop that marks a task for virtual-thread injection.
TASK_MARKER = "vtatune_task"


def bind_tasks_to_threads() -> Any:
    def run(func: Any) -> Any:
        threads: list[Any] = []

        def pre(s: Any) -> Any:
            if isinstance(s, tirx.AttrStmt) and s.attr_key == "virtual_thread":
                threads.append(s.node.var)
                body = map_stmts(s.body, post=lambda x: None, pre=pre)
                threads.pop()
                return tirx.AttrStmt(s.node, s.attr_key, s.value, body)
            if isinstance(s, tirx.AttrStmt) and s.attr_key == COPROC_SCOPE and threads:
                extent = tirx.const(1, "int32")
                for v in threads:
                    extent = tirx.Add(extent, tirx.Mul(tirx.const(0, "int32"), v))
                return tirx.For(tirx.Var("task", "int32"), 0, extent, tirx.ForKind.SERIAL, s,
                                annotations={TASK_MARKER: 1})
            return None

        return func.with_body(map_stmts(func.body, post=lambda x: None, pre=pre))

    return make_pass("BindTasksToThreads", run)


def normalize_task_scopes() -> Any:
    def post(s: Any) -> Any:
        if isinstance(s, tirx.For) and TASK_MARKER in s.annotations:
            return s.body
        return None

    return make_pass("NormalizeTaskScopes", lambda f: f.with_body(map_stmts(f.body, post)))
