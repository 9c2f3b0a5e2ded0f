"""PartitionTiles: a tile that does not divide its axis becomes a body loop and a tail.

Splitting an axis by a tile that does not divide it leaves a guard ``if outer * tile + inner <
extent`` on every statement of the tile (the block predicates of the schedule). VTA has no
control flow in its instructions, so the guards must go: each is marked ``likely`` and TVM's
``s_tir.LoopPartition`` (config key ``s_tir.LoopPartition``, ``partition_const_loop``) splits
the outer loop into the full tiles, where the guard is true and vanishes, and the last tile,
where it bounds the inner loops to the tail's extent. Empty copies are removed. What follows
sees plain loop nests of constant extents: a DMA of the tail moves fewer rows, a GEMM of the
tail runs fewer micro-ops, and buffers keep the size of the largest tile.

A guard that survives (it depends on a virtual thread, or on something else no loop split can
resolve) fails the candidate with a reason.
"""

from __future__ import annotations

from typing import Any

from vtatune.passes._ir import make_pass, walk
from vtatune.passes.errors import LoweringError

NAME = "PartitionTiles"
#: The pass configuration that makes TVM partition constant-extent loops.
CONFIG = {"s_tir.LoopPartition": {"partition_const_loop": True}}


def _guards(body: Any) -> list[Any]:
    from tvm import tirx

    found: list[Any] = []
    walk(body, tirx.IfThenElse, found.append)
    return found


def _conjuncts(cond: Any) -> list[Any]:
    from tvm import tirx

    if isinstance(cond, tirx.And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


def partition_tiles() -> Any:
    def run(func: Any) -> Any:
        import tvm
        import tvm_ffi
        from tvm import s_tir, tirx

        if not _guards(func.body):
            return func  # every tile divides its axis

        def likely(s: Any, *_: Any) -> Any:
            # one guard per axis: LoopPartition resolves a single bound, not a conjunction
            if s.else_case is not None:
                return tirx.IfThenElse(tirx.likely(s.condition), s.then_case, s.else_case)
            body = s.then_case
            for cond in reversed(_conjuncts(s.condition)):
                body = tirx.IfThenElse(tirx.likely(cond), body, None)
            return body

        marked = func.with_body(tvm_ffi.structural_map(func.body, (tirx.IfThenElse, likely)))
        mod = tvm.IRModule({"main": marked})
        with tvm.transform.PassContext(config=CONFIG):
            # (one RemoveNoOp, after the simplification: a second one before it cost ~4 ms a
            # program and changed none of 459 lowered dense and conv2d programs)
            mod = tvm.ir.transform.Sequential([
                s_tir.transform.LoopPartition(), tirx.transform.StmtSimplify(),
                tirx.transform.RemoveNoOp()])(mod)
        out = mod["main"]
        left = _guards(out.body)
        if left:
            raise LoweringError(NAME, f"a partial tile's guard cannot be removed by loop "
                                      f"partitioning: {left[0].condition}")
        return out

    return make_pass(NAME, run)
