"""CthreadToVthread + BindTasksToThreads: each virtual thread gets whole tasks of its own."""

from __future__ import annotations

from conftest import TUTORIAL, calls, lower_until
from tvm import s_tir, tirx

from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import walk
from vtatune.passes.bind_tasks_to_threads import TASK_MARKER


def test_cthread_becomes_virtual_thread(hw, c8) -> None:
    from vtatune.passes.cthread_to_vthread import cthread_to_vthread

    mod = lower_until(c8, hw, TUTORIAL, ["front", "task"])
    keys = []
    walk(cthread_to_vthread()(mod)["main"].body, tirx.AttrStmt,
         lambda a: keys.append(a.attr_key))
    assert "virtual_thread" in keys and "thread_extent" not in keys


def test_tasks_are_duplicated_whole_not_interleaved(hw, c8) -> None:
    mod = lower_until(c8, hw, TUTORIAL, ["front", "task", "thread", "hardware"])
    pushes = calls(mod, vc.UOP_PUSH)
    gemm_sites = [c for c in pushes if c[1][0] == vc.UOP_MODE_GEMM]
    # one call site for the reset kernel and one for the update kernel, each inside a
    # two-iteration per-thread loop (TVM's default would interleave two sites per task)
    assert len(gemm_sites) == 2
    for _, _, stack in gemm_sites:
        thread_loops = [s for s in stack if isinstance(s, tirx.For)
                        and s.loop_var.name.endswith((".s", "_s"))]
        assert [int(s.extent.value) for s in thread_loops] == [2]
    markers = []
    walk(mod["main"].body, tirx.For,
         lambda f: markers.append(f) if TASK_MARKER in f.annotations else None)
    assert markers == []


def test_each_thread_owns_its_buffers(hw, c8) -> None:
    one = lower_until(c8, hw, {**TUTORIAL, "oc_nthread": 1, "tile_co": 16}, ["front", "task",
                                                                            "thread"])
    two = lower_until(c8, hw, TUTORIAL, ["front", "task", "thread"])
    b1 = s_tir.analysis.calculate_allocated_bytes(one["main"])
    b2 = s_tir.analysis.calculate_allocated_bytes(two["main"])
    b1, b2 = dict(b1.get("main", b1)), dict(b2.get("main", b2))
    # same output tile in total (16 channel tiles), but two copies of the input window
    assert int(b2["local.acc_buffer"]) == int(b1["local.acc_buffer"])
    assert int(b2["local.inp_buffer"]) == 2 * int(b1["local.inp_buffer"])
