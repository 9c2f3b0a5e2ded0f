"""AnnotateALUScope / AnnotateGEMMScope: epilogue and GEMM nests become compute tasks."""

from __future__ import annotations

from conftest import TUTORIAL, lower_until
from tvm import tirx

from vtatune.passes._ir import walk
from vtatune.passes.scopes import (
    ALU_UOP_SCOPE,
    COPROC_SCOPE,
    COPROC_UOP_SCOPE,
    GEMM_UOP_SCOPE,
    QUEUE_COMPUTE,
)


def _attrs(mod, key):
    found = []
    walk(mod["main"].body, tirx.AttrStmt,
         lambda a: found.append(a) if a.attr_key == key else None)
    return found


def test_one_task_per_gemm_nest_and_epilogue_stage(hw, c8) -> None:
    mod = lower_until(c8, hw, TUTORIAL, ["front", "task"])
    uop = [a.value.value for a in _attrs(mod, COPROC_UOP_SCOPE)]
    # reset nest + update nest; shift, max, min
    assert sorted(uop) == sorted([GEMM_UOP_SCOPE] * 2 + [ALU_UOP_SCOPE] * 3)
    compute = [a for a in _attrs(mod, COPROC_SCOPE) if int(a.value.value) == QUEUE_COMPUTE]
    assert len(compute) == 5
    for a in compute:  # every compute task holds exactly one uop scope (beside its tokens)
        body = list(a.body.seq) if isinstance(a.body, tirx.SeqStmt) else [a.body]
        scopes = [s for s in body if isinstance(s, tirx.AttrStmt)]
        assert len(scopes) == 1 and scopes[0].attr_key == COPROC_UOP_SCOPE


def test_gemm_task_is_the_maximal_pure_nest(hw, c8) -> None:
    mod = lower_until(c8, hw, TUTORIAL, ["front", "task"])
    gemm = [a for a in _attrs(mod, COPROC_UOP_SCOPE) if a.value.value == GEMM_UOP_SCOPE]
    depths = []
    for a in gemm:
        d, s = 0, a.body
        while isinstance(s, tirx.For):
            d, s = d + 1, s.body
        depths.append(d)
    # reset: oc, y, x loops; update: oc, y, dy, dx, x (the channel-tile loop holds DMAs too)
    assert sorted(depths) == [3, 5]
