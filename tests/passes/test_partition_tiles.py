"""PartitionTiles and InjectGEMMIntrin: a tile that does not divide its axis becomes a body and
a tail, each a plain nest whose DMA sizes and pads, GEMM micro-ops and buffers are exact."""

from __future__ import annotations

import pytest
from conftest import calls, lower_until
from tvm import tirx

from vtatune.compiler import compile_candidate
from vtatune.errors import CompileError
from vtatune.hardware import config
from vtatune.passes import vta_calls as vc
from vtatune.passes.inject_gemm_intrin import inject_gemm_intrin
from vtatune.passes.scopes import ACC_SCOPE, INP_SCOPE, PRAGMA_GEMM, WGT_SCOPE
from vtatune.workloads import Conv2d

C14 = Conv2d(1, 16, 14, 9, 16, 3, 3, 1, 1)
ROWS_BY_4 = dict(tile_b=1, tile_h=4, tile_w=9, tile_ci=1, tile_co=1, h_nthread=1,
                 oc_nthread=1)


def _guards(mod) -> int:
    found = []
    from vtatune.passes._ir import walk

    walk(mod["main"].body, tirx.IfThenElse, found.append)
    return len(found)


def test_partial_rows_become_a_body_loop_and_a_tail(hw) -> None:
    mod = lower_until(C14, hw, ROWS_BY_4, ["front"])
    assert _guards(mod) == 0
    mod = lower_until(C14, hw, ROWS_BY_4, ["front", "task"])
    inp = [a for _, a, _ in calls(mod, vc.LOAD_2D) if a[10] == vc.MEM_INP]
    # body (3 tiles of 4 rows): 6 input rows, 11 columns with their pads; tail: 2 output
    # rows need 4 input rows, the last of which is the bottom padding
    assert len(inp) == 2
    body, tail = inp
    assert (body[2], body[4], body[5], body[7]) == (9, 9, 1, 1)
    assert (tail[2], tail[3], tail[6], tail[8]) == (9, 3, 0, 1)
    pushes = calls(mod, vc.UOP_PUSH)
    gemm = [s for _, a, s in pushes if a[0] == vc.UOP_MODE_GEMM and a[1] == 0]
    assert len(gemm) == 2  # one micro-op nest for the body, one for the tail
    r = compile_candidate(C14, hw, ROWS_BY_4)
    assert r.ok, r.reason
    # buffers hold the largest tile; every MAC is computed once
    assert r.sram_bytes["inp"] == 6 * 11 * 16 and r.sram_bytes["acc"] == 4 * 9 * 16 * 4
    assert r.counts["gemm_tile_ops"] * hw.macs_per_cycle == C14.padded_macs(hw)
    # one store per tile: 3 of 4 rows (the body loop) and the 2-row tail
    assert r.counts["store"] == 4
    stores = [a for _, a, _ in calls(mod, vc.STORE_2D)]
    assert [(a[4], a[5]) for a in stores] == [(4 * 9, 1), (2 * 9, 1)]  # rows merged


def test_a_narrow_column_tail_is_refused_as_vta_refuses_a_copy_that_is_not_compact(hw) -> None:
    # the last column tile (1 column) loads rows narrower than the body's SRAM rows: VTA's
    # _check_compact refuses such a copy (vta/python/vta/transform.py), so vtatune does too
    # (it no longer pads each row up to the SRAM row)
    wl = Conv2d(1, 16, 9, 9, 16, 3, 3, 1, 1)
    knobs = dict(tile_b=1, tile_h=9, tile_w=4, tile_ci=1, tile_co=1, h_nthread=1, oc_nthread=1)
    r = compile_candidate(wl, hw, knobs)
    assert r.status == "invalid"
    assert "Cannot prove compact: shape=[11, 3, 16], strides=[96, 16, 1]" in r.reason
    from vtatune import schedules

    assert "Cannot prove compact" in schedules.knob_space(wl, hw).problem(knobs)


def test_threads_over_a_partial_axis_fail_with_a_reason(hw) -> None:
    knobs = {**ROWS_BY_4, "h_nthread": 2}
    r = compile_candidate(C14, hw, knobs)
    assert r.status == "failed" and "PartitionTiles" in r.reason
    from vtatune import schedules

    assert "needs whole tiles" in schedules.knob_space(C14, hw).problem(knobs)


def _nest(extents, store_value) -> tirx.PrimFunc:
    """A flat function with one pragma-marked GEMM nest over SRAM buffers."""
    acc = tirx.decl_buffer((256,), "int32", "acc", scope=ACC_SCOPE)
    inp = tirx.decl_buffer((256,), "int8", "inp", scope=INP_SCOPE)
    wgt = tirx.decl_buffer((4096,), "int8", "wgt", scope=WGT_SCOPE)
    c, k = tirx.Var("c", "int32"), tirx.Var("k", "int32")
    body = tirx.BufferStore(acc, store_value(acc, inp, wgt, c, k), [c + 32])
    body = tirx.For(k, 0, extents[1], tirx.ForKind.SERIAL, body)
    body = tirx.For(c, 0, extents[0], tirx.ForKind.SERIAL, body)
    body = tirx.AttrStmt(c, PRAGMA_GEMM, tirx.const(1, "int32"), body)
    return tirx.PrimFunc([], body)


def _mac(acc, inp, wgt, c, k):
    return acc[c + 32] + tirx.Cast("int32", inp[k + 48]) * tirx.Cast("int32", wgt[c * 16 + k])


def test_inject_gemm_intrin_emits_one_micro_op_with_tile_pointers(hw) -> None:
    out = inject_gemm_intrin(hw).fn(_nest((16, 16), _mac))
    found = []
    from vtatune.passes._ir import walk_calls

    walk_calls(out.body, lambda call, stack: found.append(call))
    assert len(found) == 1 and vc.extern_name(found[0]) == vc.UOP_PUSH
    dst, src, wgt = found[0].args[3:6]
    assert [int(p.args[2]) for p in (dst, src, wgt)] == [32, 48, 0]  # tile offsets
    assert [int(p.args[3]) for p in (dst, src, wgt)] == [16, 16, 256]  # tile extents
    assert [int(p.args[4]) for p in (dst, src, wgt)] == [3, 1, 1]  # rw, r, r


@pytest.mark.parametrize(("extents", "value", "message"), [
    ((16, 8), _mac, "loops"),
    ((16, 16), lambda acc, inp, wgt, c, k: acc[c + 32] + tirx.Cast("int32", inp[k])
     * tirx.Cast("int32", wgt[c * 8 + k]), "weight"),
    ((16, 16), lambda acc, inp, wgt, c, k: acc[c + 32] - tirx.Cast("int32", inp[k]), "not an"),
])
def test_inject_gemm_intrin_refuses_what_is_not_one_gemm_step(hw, extents, value,
                                                               message) -> None:
    with pytest.raises(CompileError, match=message):
        inject_gemm_intrin(hw).fn(_nest(extents, value))


def test_other_gemm_shapes(hw) -> None:
    assert hw is not None
    wide = config.load("1x16x32")
    with pytest.raises(CompileError, match="loops"):
        inject_gemm_intrin(wide).fn(_nest((16, 16), _mac))
