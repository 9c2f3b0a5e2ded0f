"""MergeThreadTasks: a thread's epilogue ALU operations run together, as in VTA's lowered code
(VTA's ``LiftAttrScope("coproc_scope")`` makes them one task before threads are injected:
shift, min, max of thread 0, then of thread 1)."""

from __future__ import annotations

from conftest import TUTORIAL, calls, lower_until
from tvm import tirx

from vtatune.passes import vta_calls as vc


def _alu_order(mod) -> list[tuple[int, object]]:
    """(opcode, innermost thread loop or None) of every ALU push, in program order."""
    out = []
    for _, args, stack in calls(mod, vc.UOP_PUSH):
        if args[0] != vc.UOP_MODE_ALU:
            continue
        threads = [s for s in stack if isinstance(s, tirx.For)
                   and s.loop_var.name.endswith(".s")]
        out.append((args[5], threads[-1] if threads else None))
    return out


def test_a_threads_epilogue_runs_together(hw, c8) -> None:
    mod = lower_until(c8, hw, TUTORIAL, ["front", "task", "thread", "hardware"])
    order = _alu_order(mod)
    assert [op for op, _ in order] == [vc.ALU_SHR, vc.ALU_MIN, vc.ALU_MAX]
    # one loop over the two threads holds all three operations
    first = order[0][1]
    assert first is not None and int(first.extent) == 2
    assert all(loop is not None and loop.same_as(first) for _, loop in order)


def test_without_threads_nothing_changes(hw, c8) -> None:
    mod = lower_until(c8, hw, {**TUTORIAL, "oc_nthread": 1},
                      ["front", "task", "thread", "hardware"])
    assert [op for op, loop in _alu_order(mod)] == [vc.ALU_SHR, vc.ALU_MIN, vc.ALU_MAX]
    assert all(loop is None for _, loop in _alu_order(mod))
