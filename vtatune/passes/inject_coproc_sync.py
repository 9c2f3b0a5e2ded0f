"""InjectCoProcSync: dependence-token push/pop between load, compute and store tasks.

VTA's three modules run their instruction queues concurrently; a task may only start when the
task it depends on in a neighbouring module has finished. This pass walks the tasks
(``coproc_scope`` statements) in program order and, wherever control passes from one module to
another, pushes a token after the producer and pops it before the consumer. Loops carry a
dependence from their last task back to their first; the program's first pops and last pushes
are balanced by pushes before / pops after it. This follows TVM's CoProcSync
(``CoProcInstDepDetector``), which VTA relied on; TVM 0.27 no longer ships it.

It runs *before* InjectVirtualThread, on the single-thread program: the virtual-thread pass then
duplicates every task with its pushes and pops, so each thread's tokens count separately and
thread 0's next load waits only for thread 0's compute (latency hiding). A final
``VTASynchronize`` ends the program. The pops that balance the program's last pushes (the
loop-carried tokens of its outermost loop) go where VTA's lowered code has them (TVM's
CoProcSync puts ``coproc_sync`` after the last statement, then the pops): with virtual
threads inside the threads' scope (one pop per thread, before the synchronize), without them
after the synchronize, where VTA's runtime keeps them pending for the next call's stream,
so they are in no instruction of this one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tvm import tirx

from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import as_int, make_pass, map_stmts, seq
from vtatune.passes.errors import LoweringError
from vtatune.passes.scopes import COPROC_SCOPE, QUEUE_COMPUTE, QUEUE_NAMES

NAME = "InjectCoProcSync"
Pair = tuple[int, int]


@dataclass
class _State:
    node: Any = None
    enter_ctx: set[int] = field(default_factory=set)
    exit_ctx: set[int] = field(default_factory=set)
    enter_pop: list[Pair] = field(default_factory=list)
    exit_push: list[Pair] = field(default_factory=list)


def _push(p: Pair) -> Any:
    _check_neighbours(p)
    return vc.call(vc.DEP_PUSH, p[0], p[1])


def _pop(p: Pair) -> Any:
    _check_neighbours(p)
    return vc.call(vc.DEP_POP, p[0], p[1])


def _check_neighbours(p: Pair) -> None:
    # Tokens only travel load <-> compute <-> store.
    if QUEUE_COMPUTE not in p:
        raise LoweringError(NAME, f"a {QUEUE_NAMES[p[0]]} task hands over directly to a "
                                  f"{QUEUE_NAMES[p[1]]} task; VTA has no queue between them")


class _Detector:
    """Plans where pushes and pops go (``before`` / ``after`` keyed by statement)."""

    def __init__(self) -> None:
        self.first = _State()
        self.last = _State()
        self.curr = _State()
        self.before: dict[Any, list[Any]] = {}
        self.after: dict[Any, list[Any]] = {}
        #: the pops that balance the program's last pushes: after VTASynchronize
        self.final: list[Any] = []
        self.threads = 0  # virtual-thread scopes around the statement visited
        self.last_threaded = False  # whether the last task or loop is in one

    def plan(self, body: Any) -> None:
        self.visit(body)
        if self.last.node is not None:
            self._fix_enter_pop(self.first)
            if self.last_threaded:
                self._fix_exit_push(self.last)
            else:
                self.final = [_pop(p) for p in self.last.exit_push]

    def visit(self, s: Any) -> None:
        if isinstance(s, tirx.AttrStmt) and s.attr_key == COPROC_SCOPE:
            q = as_int(s.value)
            self.curr = _State(node=s.body, enter_ctx={q}, exit_ctx={q})
            self._update()
        elif isinstance(s, tirx.For):
            saved = (self.first, self.last)
            self.first, self.last = _State(), _State()
            self.visit(s.body)
            self.curr = _State()
            if self.last.node is not None:
                self.curr.node = s
                # loop-carried dependence: last task of an iteration -> first of the next
                self._inject(self.last, self.first, self.curr.exit_push, self.curr.enter_pop)
                self.curr.enter_ctx = set(self.first.enter_ctx)
                self.curr.exit_ctx = set(self.last.exit_ctx)
            self.first, self.last = saved
            if self.curr.node is not None:
                self._update()
        elif isinstance(s, tirx.IfThenElse):
            saved = (self.first, self.last)
            merged = _State()
            for branch in (s.then_case, s.else_case):
                if branch is None:
                    continue
                self.first, self.last = _State(), _State()
                self.visit(branch)
                if self.last.node is not None:
                    merged.node = s
                    self._fix_enter_pop(self.first)
                    self._fix_exit_push(self.last)
                    merged.enter_ctx |= self.first.enter_ctx
                    merged.exit_ctx |= self.last.exit_ctx
            self.first, self.last = saved
            self.curr = merged
            if self.curr.node is not None:
                self._update()
        elif isinstance(s, tirx.SeqStmt):
            for x in s.seq:
                self.visit(x)
        elif isinstance(s, tirx.AttrStmt):
            threads = s.attr_key in ("thread_extent", "virtual_thread")
            self.threads += threads
            self.visit(s.body)
            self.threads -= threads
        elif isinstance(s, tirx.While):
            raise LoweringError(NAME, "while loops are not supported")

    def _update(self) -> None:
        self.last_threaded = self.threads > 0
        if self.last.node is not None:
            self._inject(self.last, self.curr, [], [])
            self.last = self.curr
        else:
            self.first = self.curr
            self.last = self.curr

    def _inject(self, prev: _State, nxt: _State, prev_exit_push: list[Pair],
                next_enter_pop: list[Pair]) -> None:
        prev_exit_push.clear()
        next_enter_pop.clear()
        if (not prev.exit_push and not nxt.enter_pop and len(prev.exit_ctx) == 1
                and len(nxt.enter_ctx) == 1):
            frm, to = next(iter(prev.exit_ctx)), next(iter(nxt.enter_ctx))
            if frm != to:
                self.after.setdefault(prev.node, []).append(_push((frm, to)))
                self.before.setdefault(nxt.node, []).append(_pop((frm, to)))
                prev_exit_push.append((frm, to))
                next_enter_pop.append((frm, to))
            return
        vpush, vpop = list(prev.exit_push), list(nxt.enter_pop)
        pending = [(f, t) for f in sorted(prev.exit_ctx) for t in sorted(nxt.enter_ctx) if f != t]
        prev_after: list[Any] = []
        next_before: list[Any] = []
        for p in pending:
            if p not in prev.exit_push:
                vpush.append(p)
                prev_after.append(_push(p))
            if p not in nxt.enter_pop:
                vpop.append(p)
                next_before.append(_pop(p))
        for p in vpush:
            if p not in vpop:
                prev_after.append(_pop(p))
            else:
                prev_exit_push.append(p)
        for p in vpop:
            if p not in vpush:
                next_before.append(_push(p))
            else:
                next_enter_pop.append(p)
        if prev_after:
            self.after.setdefault(prev.node, []).extend(prev_after)
        if next_before:
            self.before.setdefault(nxt.node, []).extend(next_before)

    def _fix_enter_pop(self, state: _State) -> None:
        for p in state.enter_pop:
            self.before.setdefault(state.node, []).append(_push(p))

    def _fix_exit_push(self, state: _State) -> None:
        for p in state.exit_push:
            self.after.setdefault(state.node, []).append(_pop(p))


def inject_coproc_sync() -> Any:
    def run(func: Any) -> Any:
        det = _Detector()
        det.plan(func.body)

        def pre(s: Any) -> Any:
            if s in det.before or s in det.after:
                # rebuild the statement's children first, then surround it
                inner = map_stmts(s, post=lambda x: None, pre=lambda x: None if x.same_as(s)
                                  else pre(x))
                return seq(det.before.get(s, []), inner, det.after.get(s, []))
            return None

        body = map_stmts(func.body, post=lambda x: None, pre=pre)
        return func.with_body(seq(body, vc.call(vc.SYNCHRONIZE), det.final))

    return make_pass(NAME, run)
