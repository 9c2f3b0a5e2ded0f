"""BindTasksToThreads: make every VTA task a unit of virtual-thread injection.

InjectVirtualThread duplicates a statement per thread at the highest level where the thread
variable is touched. TVM 0.27 no longer special-cases ``coproc_scope`` as older TVM did for
VTA, so it would duplicate each micro-op or DMA call inside a task, interleaving the threads
within one instruction. Wrapping each task in a one-iteration marker loop whose extent names
the thread variable (``1 + 0 * thread``) makes the whole task the unit: each thread gets its own
task, with its own dependence pushes and pops. (Naming the variable in the attribute value
instead trips an internal check of InjectVirtualThread's AttrStmt path.) Consecutive load
tasks (a tile's input and weights) share one marker, so each thread's loads stay together in
the load queue (input t0, weights t0, input t1, weights t1), as in VTA's lowered code.
``NormalizeTaskScopes`` removes the marker loops afterwards.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from vtatune.passes._ir import make_pass, map_stmts, seq
from vtatune.passes.scopes import COPROC_SCOPE, QUEUE_LOAD

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
            if _is_task(s) and threads:
                return marker(s)
            if isinstance(s, tirx.SeqStmt) and threads:
                # Consecutive load tasks form one unit, as in VTA's lowered code: a thread's
                # loads (input, then weights) stay together, so the next thread's first load,
                # which may wait for a buffer to be free, never sits in the in-order queue
                # between them. (Compute and store tasks stay one unit each.)
                items: list[Any] = []
                run: list[Any] = []
                for x in s.seq:
                    if _is_load(x):
                        run.append(x)
                        continue
                    if run:
                        items.append(marker(seq(run)))
                        run = []
                    items.append(map_stmts(x, post=lambda y: None, pre=pre))
                if run:
                    items.append(marker(seq(run)))
                return seq(items)
            return None

        def marker(s: Any) -> Any:
            extent = tirx.const(1, "int32")
            for v in threads:
                extent = tirx.Add(extent, tirx.Mul(tirx.const(0, "int32"), v))
            return tirx.For(tirx.Var("task", "int32"), 0, extent, tirx.ForKind.SERIAL, s,
                            annotations={TASK_MARKER: 1})

        return func.with_body(map_stmts(func.body, post=lambda x: None, pre=pre))

    return make_pass("BindTasksToThreads", run)


def _is_task(s: Any) -> bool:
    return isinstance(s, tirx.AttrStmt) and s.attr_key == COPROC_SCOPE


def task_queue(s: Any) -> int | None:
    """The queue of a task statement, None for any other statement."""
    return int(s.value) if _is_task(s) and isinstance(s.value, tirx.IntImm) else None


def _is_load(s: Any) -> bool:
    """A task of the load module's queue (an input or weight DMA)."""
    return task_queue(s) == QUEUE_LOAD


def normalize_task_scopes() -> Any:
    def post(s: Any) -> Any:
        if isinstance(s, tirx.For) and TASK_MARKER in s.annotations:
            return s.body
        return None

    return make_pass("NormalizeTaskScopes", lambda f: f.with_body(map_stmts(f.body, post)))

