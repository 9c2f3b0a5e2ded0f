"""Templates applied through ``schedules.apply`` (past s_tir's Python argument checks) make the
same scheduled program as the plain ``s_tir.Schedule`` does, and bad arguments still fail."""

from __future__ import annotations

import pytest
import tvm_ffi
from tvm import s_tir

from vtatune import schedules
from vtatune.compiler.compile import prim_func
from vtatune.hardware import config
from vtatune.workloads import Dense
from vtatune.workloads.conv2d import RESNET18


@pytest.mark.parametrize("wl", [Dense(16, 64, 64), RESNET18["C8"], RESNET18["C2"]],
                         ids=["dense", "C8", "C2"])
def test_apply_schedules_as_the_checked_schedule_does(wl) -> None:
    hw = config.default()
    space = schedules.knob_space(wl, hw)
    for knobs in list(space)[:: max(1, len(list(space)) // 6)]:
        plain = s_tir.Schedule(prim_func(wl, hw))
        wl.schedule(plain, hw, knobs)  # every primitive through s_tir's type checker
        fast = s_tir.Schedule(prim_func(wl, hw))
        schedules.apply(fast, wl, hw, knobs)
        assert tvm_ffi.structural_equal(plain.mod, fast.mod), knobs


def test_a_bad_argument_still_fails_in_tvm() -> None:
    wl = Dense(16, 64, 64)
    sch = s_tir.Schedule(prim_func(wl, config.default()))
    fast = schedules._Unchecked(sch)
    with pytest.raises(Exception):  # noqa: B017 - TVM's own error type
        fast.get_loops("not a block")
    assert fast.mod.same_as(sch.mod)
