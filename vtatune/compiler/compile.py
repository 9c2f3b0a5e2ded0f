"""``compile_candidate``: schedule, lower and verify one (workload, hardware, knobs) point."""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

from vtatune.compiler.result import FAILED, INVALID, VALID, CompileResult
from vtatune.compiler.stats import count_ops
from vtatune.errors import CompileError
from vtatune.hardware.config import HwConfig
from vtatune.schedules.knobs import Knobs
from vtatune.workloads.base import DEFAULT_SHIFT, Workload


@lru_cache(maxsize=64)
def prim_func(wl: Workload, hw: HwConfig, shift: int = DEFAULT_SHIFT) -> Any:
    """The unscheduled PrimFunc of ``wl`` on ``hw`` (cached: it costs a few ms to build)."""
    from tvm import te

    return te.create_prim_func(wl.te(hw, shift))


def compile_candidate(wl: Workload, hw: HwConfig, knobs: Knobs,
                      shift: int = DEFAULT_SHIFT) -> CompileResult:
    """Compile one candidate. Never raises for a bad candidate: failures are results."""
    from tvm import s_tir

    from vtatune import schedules
    from vtatune.passes import pipeline
    from vtatune.passes.verify_isa_fields import verify_isa_fields
    from vtatune.passes.verify_sram import capacity, verify_sram
    from vtatune.passes.verify_uop import verify_uop

    base = {"workload": wl.signature, "hw_key": hw.key, "knobs": dict(knobs),
            "sram_capacity": capacity(hw)}
    stage: dict[str, float] = {}
    t = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal t
        now = time.perf_counter()
        stage[name] = (now - t) * 1e3
        t = now

    try:
        sch = s_tir.Schedule(prim_func(wl, hw, shift))
        schedules.apply(sch, wl, hw, knobs)
        lap("schedule")
        threaded = pipeline.run(sch.mod, pipeline.front_passes() + pipeline.task_passes(hw)
                                + pipeline.thread_passes())
        sram, problems = verify_sram(threaded["main"], hw)
        lap("lower")
        final = pipeline.run(threaded, pipeline.hardware_passes(hw))
        lap("lower_hw")
        func = final["main"]
        largest_kernel, uop_problems = verify_uop(func, hw)
        problems = problems + uop_problems + verify_isa_fields(func, hw)
        counts = count_ops(func)
        lap("verify")
    except CompileError as exc:
        return CompileResult(FAILED, str(exc), stage_ms=stage, **base)
    except Exception as exc:  # TVM raises its own error types from schedule primitives
        msg = str(exc).strip().splitlines()
        return CompileResult(FAILED, f"{type(exc).__name__}: {msg[-1] if msg else ''}",
                             stage_ms=stage, **base)
    sram["uop"] = largest_kernel * 4
    status = INVALID if problems else VALID
    return CompileResult(status, "; ".join(str(p) for p in problems), sram_bytes=sram,
                         problems=tuple(problems), counts=counts, stage_ms=stage,
                         module=final, **base)
