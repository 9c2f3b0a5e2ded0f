"""VerifyUop: every micro-op kernel must fit the micro-op buffer.

A kernel is what one GEMM or ALU task pushes per invocation (its loops not folded into the
instruction's two-level loop). The runtime loads kernels into the uop buffer on demand, so the
hard limit is the largest single kernel.
"""

from __future__ import annotations

from typing import Any

from vtatune.hardware.config import HwConfig
from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import innermost_attr, loops_of, trip_count, walk_calls
from vtatune.passes.scopes import COPROC_UOP_SCOPE
from vtatune.passes.verify import Problem


def kernel_sizes(func: Any) -> list[int]:
    """Micro-ops per kernel, one entry per task statement (in program order)."""
    sizes: dict[Any, int] = {}

    def on_call(call: Any, stack: list[Any]) -> None:
        if vc.extern_name(call) != vc.UOP_PUSH:
            return
        at = innermost_attr(stack, COPROC_UOP_SCOPE)
        if at is None:
            return
        scope = stack[at]
        sizes[scope] = sizes.get(scope, 0) + trip_count(loops_of(stack[at + 1:]))

    walk_calls(func.body, on_call)
    return list(sizes.values())


def uop_problems(largest: int, hw: HwConfig) -> list[Problem]:
    """A kernel of ``largest`` micro-ops that does not fit ``hw``'s micro-op buffer."""
    if largest > hw.uop_depth:
        return [Problem("uop", "largest micro-op kernel", largest, hw.uop_depth, "micro-ops")]
    return []


def verify_uop(func: Any, hw: HwConfig) -> tuple[int, list[Problem]]:
    largest = max(kernel_sizes(func), default=0)
    return largest, uop_problems(largest, hw)
