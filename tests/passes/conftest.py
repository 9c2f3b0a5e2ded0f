"""Shared helpers: lower a candidate through the pipeline up to a given stage."""

from __future__ import annotations

from typing import Any

import pytest

from vtatune.hardware import config
from vtatune.workloads import RESNET18

TUTORIAL = dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=1, tile_co=8, h_nthread=1, oc_nthread=2)


def lower_until(wl: Any, hw: Any, knobs: dict[str, int], stages: list[str]) -> Any:
    """The IRModule after the named pipeline stages (front, task, thread, hardware)."""
    from tvm import s_tir

    from vtatune import schedules
    from vtatune.compiler.compile import prim_func
    from vtatune.passes import pipeline

    sch = s_tir.Schedule(prim_func(wl, hw))
    schedules.apply(sch, wl, hw, knobs)
    passes: list[Any] = []
    for st in stages:
        passes += {"front": pipeline.front_passes(), "task": pipeline.task_passes(hw),
                   "thread": pipeline.thread_passes(),
                   "hardware": pipeline.hardware_passes(hw)}[st]
    return pipeline.run(sch.mod, passes)


def calls(mod: Any, name: str | None = None) -> list[tuple[str, list[Any], list[Any]]]:
    """(callee, int-or-expr args, enclosing stack) of every runtime call, in program order."""
    from vtatune.passes import vta_calls as vc
    from vtatune.passes._ir import as_int, walk_calls

    out: list[tuple[str, list[Any], list[Any]]] = []

    def on(call: Any, stack: list[Any]) -> None:
        callee = vc.extern_name(call)
        if callee and (name is None or callee == name):
            args = [as_int(a) if as_int(a) is not None else a for a in call.args[1:]]
            out.append((callee, args, list(stack)))

    walk_calls(mod["main"].body, on)
    return out


@pytest.fixture(scope="session")
def hw() -> Any:
    return config.default()


@pytest.fixture(scope="session")
def c8() -> Any:
    return RESNET18["C8"]
