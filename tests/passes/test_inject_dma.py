"""InjectDMA: copies become 2-D DMA with on-the-fly padding, in load/store queues."""

from __future__ import annotations

import pytest
from conftest import TUTORIAL, calls, lower_until
from tvm import tirx

from vtatune.passes import vta_calls as vc
from vtatune.passes._eval import compile_exprs
from vtatune.passes.scopes import COPROC_SCOPE, QUEUE_LOAD, QUEUE_STORE
from vtatune.workloads import Conv2d, Dense


def _queue(stack) -> int:
    scopes = [s for s in stack if isinstance(s, tirx.AttrStmt) and s.attr_key == COPROC_SCOPE]
    return int(scopes[-1].value.value)


def test_tutorial_loads_pad_on_the_fly(hw, c8) -> None:
    mod = lower_until(c8, hw, TUTORIAL, ["front", "task"])
    loads = calls(mod, vc.LOAD_2D)
    inp = [a for _, a, _ in loads if a[10] == vc.MEM_INP]
    wgt = [a for _, a, _ in loads if a[10] == vc.MEM_WGT]
    assert len(inp) == 1 and len(wgt) == 1
    a = inp[0]
    # x: 14 columns + 1 pad each side; y: 9 rows of which the border ones are padding
    assert (a[2], a[4], a[5], a[7]) == (14, 14, 1, 1)
    stack = [s for s in loads[0][2] if isinstance(s, tirx.For)]
    i2 = next(s.loop_var for s in stack if s.loop_var.name.startswith("i2"))
    ci = next(s.loop_var for s in stack if s.loop_var.name.startswith("ax6"))
    fn = compile_exprs([a[1], a[3], a[6], a[8]], [i2, ci])
    # top tile: 1 pad row above, 8 real rows; bottom tile: 8 real rows and 1 pad row below
    assert fn(0, 0) == (0, 8, 1, 0)
    assert fn(1, 0) == (6 * 14, 8, 0, 1)
    assert fn(0, 3)[0] == 3 * 14 * 14  # next channel tile starts 196 tiles later
    # weights: 8 output-channel tiles x 9 taps, contiguous per row, stride 144 tiles
    assert (wgt[0][2], wgt[0][3], wgt[0][4]) == (9, 8, 144)
    for _, _, stack in loads:
        assert _queue(stack) == QUEUE_LOAD


def test_store_merges_contiguous_rows(hw, c8) -> None:
    mod = lower_until(c8, hw, TUTORIAL, ["front", "task"])
    (store,) = calls(mod, vc.STORE_2D)
    _, a, stack = store
    assert a[1] == vc.MEM_OUT
    assert (a[4], a[5], a[6]) == (7 * 14, 8, 14 * 14)  # 98 tiles per channel tile, 8 of them
    assert _queue(stack) == QUEUE_STORE


def test_dense_copies_are_single_dmas(hw) -> None:
    k = dict(tile_b=2, tile_ci=4, tile_co=2, oc_nthread=1)
    mod = lower_until(Dense(32, 256, 64), hw, k, ["front", "task"])
    loads = calls(mod, vc.LOAD_2D)
    inp = [a for _, a, _ in loads if a[10] == vc.MEM_INP][0]
    assert (inp[2], inp[3], inp[4]) == (4, 2, 16)  # 4 K-tiles per row, 2 rows, stride K/16


@pytest.mark.parametrize("stride", [1, 2])
def test_strided_conv_loads_every_needed_row(hw, stride: int) -> None:
    wl = Conv2d(1, 16, 10, 10, 16, 3, 3, 1, stride)
    k = dict(tile_b=1, tile_h=wl.oh, tile_w=wl.ow, tile_ci=1, tile_co=1, h_nthread=1,
             oc_nthread=1)
    mod = lower_until(wl, hw, k, ["front", "task"])
    (load,) = [a for _, a, _ in calls(mod, vc.LOAD_2D) if a[10] == vc.MEM_INP]
    rows = (wl.oh - 1) * stride + 3
    assert load[5] + load[2] + load[7] == (wl.ow - 1) * stride + 3  # padded columns
    assert load[6] + load[3] + load[8] == rows


@pytest.mark.parametrize("shape", [(1, 16, 5, 1, 16, 3, 3, 1, 1), (2, 20, 1, 1, 16, 3, 3, 1, 1),
                                   (1, 16, 1, 4, 16, 3, 3, 1, 1)])
def test_single_row_or_column_inputs_with_padding(shape) -> None:
    # TVM drops the index term of a size-1 dimension, leaving a padded DMA dimension with DRAM
    # stride 0; with at most one real element the stride does not matter
    import numpy as np

    from vtatune import schedules
    from vtatune.compiler import compile_candidate
    from vtatune.hardware import config
    from vtatune.runtime.build import build_program
    from vtatune.runtime.execute import execute, random_inputs

    hw = config.load("2x16x16")
    wl = Conv2d(*shape)
    for k in list(schedules.knob_space(wl, hw))[:4]:
        r = compile_candidate(wl, hw, k)
        assert r.status == "valid", r.reason
        d, w = random_inputs(wl, 3)
        out = execute(build_program(r, wl, hw), wl, d, w).output
        np.testing.assert_array_equal(out, wl.reference(d, w))
