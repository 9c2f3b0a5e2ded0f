"""LowerSramAccess, InjectALUIntrin and FoldUopLoop on the conv2d tutorial's knobs.

The expected values are VTA's own lowering of its conv2d template (``vta.top``'s
``schedule_conv2d_packed``, the schedule AutoTVM tunes and TopHub's records use) with these
knobs, by VTA's passes on TVM 0.19 (``tests/runtime/vta_oracle_streams.py``, the record
"3 tile_h=7 tile_co=8" of ``tests/runtime/data/vta_streams.json``): GEMM loops (14, 1, 1, 0)
and (3, 0, 1, 1) (output columns, kernel columns) around 3 x 8 x 7 = 168 micro-ops (kernel
rows, channel tiles, rows), the reset's loops (14, 1, 0, 0) and (8, 98, 0, 0) around 7, and
three ALU instructions of 784 iterations: SHR 8, MIN 127, MAX 0. (The tutorial itself orders
the loops otherwise: (8, 98, 0, 9) and (7, 14, 16, 0) around 126.)
"""

from __future__ import annotations

from conftest import TUTORIAL, calls, lower_until
from tvm import tirx

from vtatune.passes import vta_calls as vc
from vtatune.passes._eval import compile_exprs
from vtatune.passes._ir import trip_count
from vtatune.passes.scopes import COPROC_UOP_SCOPE
from vtatune.workloads import Dense


def _final(hw, c8):
    return lower_until(c8, hw, TUTORIAL, ["front", "task", "thread", "hardware"])


def test_sram_pointers_become_tile_indices(hw, c8) -> None:
    mod = _final(hw, c8)
    text = mod.script()
    assert "tvm_access_ptr" not in text
    loads = calls(mod, vc.LOAD_2D)
    thread = [s for s in loads[0][2]
              if isinstance(s, tirx.For) and s.loop_var.name.endswith((".s", "_s"))]
    (sram,) = compile_exprs([loads[0][1][9]], [thread[0].loop_var])(1)
    assert sram == 2 * 9 * 16 // 2  # thread 1's input window starts after 144 tiles


def test_gemm_loops_fold_as_vtas(hw, c8) -> None:
    mod = _final(hw, c8)
    begins = [a[:4] for _, a, _ in calls(mod, vc.UOP_LOOP_BEGIN)]
    assert [14, 1, 1, 0] in begins and [3, 0, 1, 1] in begins
    assert [14, 1, 0, 0] in begins and [8, 98, 0, 0] in begins  # reset: no src/wgt
    update = [(a, st) for _, a, st in calls(mod, vc.UOP_PUSH)
              if a[0] == vc.UOP_MODE_GEMM and a[1] == 0]
    (args, stack), = update
    at = max(i for i, s in enumerate(stack) if isinstance(s, tirx.AttrStmt)
             and s.attr_key == COPROC_UOP_SCOPE)
    assert trip_count([s for s in stack[at:] if isinstance(s, tirx.For)]) == 3 * 8 * 7


def test_alu_epilogue(hw, c8) -> None:
    mod = _final(hw, c8)
    alu = [a for _, a, _ in calls(mod, vc.UOP_PUSH) if a[0] == vc.UOP_MODE_ALU]
    assert [(a[5], a[6], a[7]) for a in alu] == [(vc.ALU_SHR, 1, 8), (vc.ALU_MIN, 1, 127),
                                                 (vc.ALU_MAX, 1, 0)]
    begins = [a for _, a, _ in calls(mod, vc.UOP_LOOP_BEGIN) if a[0] == 784]
    assert len(begins) == 3 and all(b[1:] == [1, 1, 0] for b in begins)


def test_dense_alu_splits_loops_longer_than_the_iteration_field(hw) -> None:
    # 1 x 4096 output tiles in one task: the flattened 4096-iteration loop fits (< 16384),
    # 32768 would not and is split in two
    from vtatune.passes.inject_alu_intrin import _split_long

    v = tirx.Var("v", "int32")
    dims = _split_long([[v, 1 << 20, 1, 1]])
    assert [d[1] for d in dims] == [128, 8192] and [d[2] for d in dims] == [8192, 1]
    assert _split_long([[v, 100, 2, 3]]) == [[v, 100, 2, 3]]
    assert [d[1] for d in _split_long([[v, 100003, 1, 1]])] == [100003]  # prime: stays
    mod = lower_until(Dense(1, 16, 4096 * 16), hw, dict(tile_b=1, tile_ci=1, tile_co=4096,
                                                         oc_nthread=1),
                      ["front", "task", "thread", "hardware"])
    begins = [a for _, a, _ in calls(mod, vc.UOP_LOOP_BEGIN)]
    assert [4096, 1, 1, 0] in begins
