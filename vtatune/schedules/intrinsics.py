"""VTA's GEMM and accumulator-reset tensor intrinsics, registered once per GEMM shape.

The implementations call the ``VTAUopPush`` runtime function with *access pointers* to the
three SRAM buffers: InjectVirtualThread only sees a thread's buffer offsets through access
pointers (bare integer offsets make it miss the thread dependence and produce wrong code).
With BATCH = 1 the unit batch loop is left out of the description, as TVM 0.27's tensorize
cannot match a unit loop.
"""

from __future__ import annotations

from vtatune.hardware.config import HwConfig
from vtatune.passes.scopes import ACC_SCOPE, INP_SCOPE, WGT_SCOPE
from vtatune.passes.vta_calls import UOP_PUSH

_registered: set[str] = set()


def gemm_name(hw: HwConfig) -> str:
    return f"vta_gemm_{hw.shape_label}"


def reset_name(hw: HwConfig) -> str:
    return f"vta_reset_{hw.shape_label}"


def register(hw: HwConfig) -> tuple[str, str]:
    """Register the GEMM and reset intrinsics for ``hw``'s shape; return their names."""
    gemm, reset = gemm_name(hw), reset_name(hw)
    if gemm in _registered:
        return gemm, reset
    from tvm import s_tir

    desc, impl, rdesc, rimpl = _batch1(hw) if hw.batch == 1 else _batched(hw)
    for name, d, i in ((gemm, desc, impl), (reset, rdesc, rimpl)):
        try:
            s_tir.TensorIntrin.register(name, d, i)
        except Exception:  # already registered in this process by an earlier import
            s_tir.TensorIntrin.get(name)
    _registered.add(gemm)
    return gemm, reset


def _batch1(hw: HwConfig):  # noqa: ANN202 - TVMScript functions
    from tvm.script import tirx as T

    bi, bo = hw.block_in, hw.block_out
    it, wt, at = hw.inp_dtype, hw.wgt_dtype, hw.acc_dtype

    @T.prim_func(s_tir=True)
    def desc(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (1, bi), it, offset_factor=1, scope=INP_SCOPE)
        B = T.match_buffer(b, (bo, bi), wt, offset_factor=1, scope=WGT_SCOPE)
        C = T.match_buffer(c, (1, bo), at, offset_factor=1, scope=ACC_SCOPE)
        with T.sblock("root"):
            T.reads(C[0:1, 0:bo], A[0:1, 0:bi], B[0:bo, 0:bi])
            T.writes(C[0:1, 0:bo])
            for j, k in T.grid(bo, bi):
                with T.sblock("update"):
                    vj, vk = T.axis.remap("SR", [j, k])
                    C[0, vj] = C[0, vj] + T.Cast(at, A[0, vk]) * T.Cast(at, B[vj, vk])

    @T.prim_func(s_tir=True)
    def impl(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (1, bi), it, offset_factor=1, scope=INP_SCOPE)
        B = T.match_buffer(b, (bo, bi), wt, offset_factor=1, scope=WGT_SCOPE)
        C = T.match_buffer(c, (1, bo), at, offset_factor=1, scope=ACC_SCOPE)
        with T.sblock("root"):
            T.reads(C[0:1, 0:bo], A[0:1, 0:bi], B[0:bo, 0:bi])
            T.writes(C[0:1, 0:bo])
            T.evaluate(T.call_extern("int32", UOP_PUSH, 0, 0, C.access_ptr("rw", "handle"),
                                     A.access_ptr("r", "handle"), B.access_ptr("r", "handle"),
                                     0, 0, 0))

    @T.prim_func(s_tir=True)
    def rdesc(c: T.handle) -> None:
        C = T.match_buffer(c, (1, bo), at, offset_factor=1, scope=ACC_SCOPE)
        with T.sblock("root"):
            T.reads()
            T.writes(C[0:1, 0:bo])
            for j in T.grid(bo):
                with T.sblock("init"):
                    vj = T.axis.remap("S", [j])
                    C[0, vj] = T.int32(0)

    @T.prim_func(s_tir=True)
    def rimpl(c: T.handle) -> None:
        C = T.match_buffer(c, (1, bo), at, offset_factor=1, scope=ACC_SCOPE)
        with T.sblock("root"):
            T.reads()
            T.writes(C[0:1, 0:bo])
            T.evaluate(T.call_extern("int32", UOP_PUSH, 0, 1, C.access_ptr("w", "handle"),
                                     0, 0, 0, 0, 0))

    return desc, impl, rdesc, rimpl


def _batched(hw: HwConfig):  # noqa: ANN202 - TVMScript functions
    from tvm.script import tirx as T

    nb, bi, bo = hw.batch, hw.block_in, hw.block_out
    it, wt, at = hw.inp_dtype, hw.wgt_dtype, hw.acc_dtype

    @T.prim_func(s_tir=True)
    def desc(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (nb, bi), it, offset_factor=1, scope=INP_SCOPE)
        B = T.match_buffer(b, (bo, bi), wt, offset_factor=1, scope=WGT_SCOPE)
        C = T.match_buffer(c, (nb, bo), at, offset_factor=1, scope=ACC_SCOPE)
        with T.sblock("root"):
            T.reads(C[0:nb, 0:bo], A[0:nb, 0:bi], B[0:bo, 0:bi])
            T.writes(C[0:nb, 0:bo])
            for i, j, k in T.grid(nb, bo, bi):
                with T.sblock("update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    C[vi, vj] = C[vi, vj] + T.Cast(at, A[vi, vk]) * T.Cast(at, B[vj, vk])

    @T.prim_func(s_tir=True)
    def impl(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (nb, bi), it, offset_factor=1, scope=INP_SCOPE)
        B = T.match_buffer(b, (bo, bi), wt, offset_factor=1, scope=WGT_SCOPE)
        C = T.match_buffer(c, (nb, bo), at, offset_factor=1, scope=ACC_SCOPE)
        with T.sblock("root"):
            T.reads(C[0:nb, 0:bo], A[0:nb, 0:bi], B[0:bo, 0:bi])
            T.writes(C[0:nb, 0:bo])
            T.evaluate(T.call_extern("int32", UOP_PUSH, 0, 0, C.access_ptr("rw", "handle"),
                                     A.access_ptr("r", "handle"), B.access_ptr("r", "handle"),
                                     0, 0, 0))

    @T.prim_func(s_tir=True)
    def rdesc(c: T.handle) -> None:
        C = T.match_buffer(c, (nb, bo), at, offset_factor=1, scope=ACC_SCOPE)
        with T.sblock("root"):
            T.reads()
            T.writes(C[0:nb, 0:bo])
            for i, j in T.grid(nb, bo):
                with T.sblock("init"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = T.int32(0)

    @T.prim_func(s_tir=True)
    def rimpl(c: T.handle) -> None:
        C = T.match_buffer(c, (nb, bo), at, offset_factor=1, scope=ACC_SCOPE)
        with T.sblock("root"):
            T.reads()
            T.writes(C[0:nb, 0:bo])
            T.evaluate(T.call_extern("int32", UOP_PUSH, 0, 1, C.access_ptr("w", "handle"),
                                     0, 0, 0, 0, 0))

    return desc, impl, rdesc, rimpl
