"""Static counts of what a VTA-level program will issue (loop trip counts, not execution)."""

from __future__ import annotations

from typing import Any

from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import as_int, innermost_attr, loops_of, trip_count, walk_calls
from vtatune.passes.scopes import COPROC_UOP_SCOPE, GEMM_UOP_SCOPE

MEM_KEYS = {vc.MEM_INP: "load_inp", vc.MEM_WGT: "load_wgt", vc.MEM_ACC: "load_acc"}


def count_ops(func: Any) -> dict[str, int]:
    """Instructions and micro-op work the program issues.

    ``gemm`` / ``alu``: instructions (GEMM includes accumulator resets); ``gemm_tile_ops``,
    ``reset_tile_ops`` and ``alu_tile_ops``: micro-op executions over the instruction loops;
    ``load_*`` / ``store``: DMA transfers; ``dep_push`` / ``dep_pop``: tokens.
    """
    counts = dict.fromkeys(("load_inp", "load_wgt", "load_acc", "store", "gemm", "alu",
                            "gemm_tile_ops", "reset_tile_ops", "alu_tile_ops", "dep_push",
                            "dep_pop"), 0)
    seen_tasks: set[Any] = set()
    uop_loops: list[int] = []

    def on_call(call: Any, stack: list[Any]) -> None:
        name = vc.extern_name(call)
        trips = trip_count(loops_of(stack))
        if name == vc.LOAD_2D:
            counts[MEM_KEYS.get(int(call.args[11].value), "load_inp")] += trips
        elif name == vc.STORE_2D:
            counts["store"] += trips
        elif name == vc.DEP_PUSH:
            counts["dep_push"] += trips
        elif name == vc.DEP_POP:
            counts["dep_pop"] += trips
        elif name == vc.UOP_LOOP_BEGIN:
            uop_loops.append(as_int(call.args[1]) or 1)
        elif name == vc.UOP_LOOP_END:
            uop_loops.pop()
        elif name == vc.UOP_PUSH:
            at = innermost_attr(stack, COPROC_UOP_SCOPE)
            gemm = stack[at].value.value == GEMM_UOP_SCOPE
            if stack[at] not in seen_tasks:
                seen_tasks.add(stack[at])
                counts["gemm" if gemm else "alu"] += trip_count(loops_of(stack[:at]))
            ops = trips
            for ext in uop_loops:
                ops *= ext
            if gemm and int(call.args[2].value):
                counts["reset_tile_ops"] += ops
            else:
                counts["gemm_tile_ops" if gemm else "alu_tile_ops"] += ops

    walk_calls(func.body, on_call)
    return counts
