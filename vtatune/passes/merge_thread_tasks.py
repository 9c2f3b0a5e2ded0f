"""MergeThreadTasks: consecutive compute tasks run thread by thread, as one task of VTA's."""

from __future__ import annotations

from typing import Any

import tvm_ffi
from tvm import tirx

from vtatune.passes._ir import make_pass, map_stmts, seq
from vtatune.passes.bind_tasks_to_threads import task_queue
from vtatune.passes.scopes import QUEUE_COMPUTE


def merge_thread_tasks() -> Any:
    """VTA's ``LiftAttrScope("coproc_scope")`` merges consecutive compute tasks (the epilogue's
    ALU operations of a tile) into one task before its virtual threads are injected, so each
    thread runs all of them in turn (shift, min, max of thread 0, then of thread 1). Here the
    epilogue must stay separate tasks through InjectVirtualThread so that StorageRewrite can
    put it in place on the accumulator (which it cannot do inside one loop over threads), so
    each task became its own loop over the threads (InjectVirtualThread's ``<thread>.s``
    loops, nested for several thread axes). After StorageRewrite this pass fuses consecutive
    such loops of compute tasks with the same thread extents into one: VTA's order, with the
    same tasks, buffers and dependence tokens (a thread's operations keep their order, and
    different threads' operations touch different buffers)."""

    def post(s: Any) -> Any:
        if not isinstance(s, tirx.SeqStmt):
            return None
        items: list[Any] = []
        changed = False
        for x in s.seq:
            nest = _thread_nest(x)
            prev = _thread_nest(items[-1]) if items else None
            if nest is not None and prev is not None and nest[1] == prev[1]:
                pairs = list(zip(nest[0], prev[0], strict=True))

                def rename(v: Any, pairs: list[tuple[Any, Any]] = pairs) -> Any:
                    return next((new for old, new in pairs if v.same_as(old)), v)

                body = tvm_ffi.structural_map(nest[2], (tirx.Var, rename))
                items[-1] = _rebuild(items[-1], seq(_core(items[-1]), body))
                changed = True
            else:
                items.append(x)
        return seq(items) if changed else None

    return make_pass("MergeThreadTasks", lambda f: f.with_body(map_stmts(f.body, post)))


def _thread_nest(s: Any) -> tuple[list[Any], list[int], Any] | None:
    """(thread loop variables, extents, body) of InjectVirtualThread's loops around compute
    tasks, or None."""
    variables, extents = [], []
    while (isinstance(s, tirx.For) and s.loop_var.name.endswith(".s")
           and isinstance(s.extent, tirx.IntImm)):
        variables.append(s.loop_var)
        extents.append(int(s.extent))
        s = s.body
    if not variables:
        return None
    tasks = list(s.seq) if isinstance(s, tirx.SeqStmt) else [s]
    if not all(task_queue(t) == QUEUE_COMPUTE for t in tasks):
        return None
    return variables, extents, s


def _core(s: Any) -> Any:
    while isinstance(s, tirx.For):
        s = s.body
    return s


def _rebuild(nest: Any, body: Any) -> Any:
    """``nest`` (thread loops) around ``body`` instead of its own."""
    if not isinstance(nest, tirx.For):
        return body
    return tirx.For(nest.loop_var, nest.min, nest.extent, nest.kind, _rebuild(nest.body, body),
                    nest.thread_binding, nest.annotations)
