"""VerifyIsaFields rejects every kind of field that does not fit, naming it, and accepts the
largest value that does.

Each case builds VTA-level TIR by hand (the runtime calls the passes emit, inside the loops
and scopes they emit) with one field at the first value past its width, and the same TIR at
the largest value that fits: the problem must appear for the first and not for the second.
Values reached through loops are bounded over the loop's iterations, so a field that only
overflows on the last iteration is caught too.
"""

from __future__ import annotations

from typing import Any

import pytest

from vtatune.hardware import config
from vtatune.hardware.hw_spec import (
    ALU_IMM_BITS,
    LOOP_ITER_BITS,
    MEMOP_DRAM_ADDR_BITS,
    MEMOP_PAD_BITS,
    MEMOP_SIZE_BITS,
    MEMOP_SRAM_ADDR_BITS,
    MEMOP_STRIDE_BITS,
)
from vtatune.passes import vta_calls as vc
from vtatune.passes.scopes import ALU_UOP_SCOPE, COPROC_UOP_SCOPE, GEMM_UOP_SCOPE
from vtatune.passes.verify_isa_fields import verify_isa_fields

HW = config.default()
FB = HW.field_bits


def _max(bits: int) -> int:
    return (1 << bits) - 1


def _func(body: Any) -> Any:
    from tvm import tirx

    return tirx.PrimFunc([], body)


def _loop(extent: int, make_body: Any) -> Any:
    """``for i in range(extent): make_body(i)``."""
    from tvm import tirx

    i = tirx.Var("i", "int32")
    return tirx.For(i, 0, extent, tirx.ForKind.SERIAL, make_body(i))


def _load(mem: int = vc.MEM_INP, dram: Any = 0, xs: Any = 1, ys: Any = 1, stride: Any = 1,
          pads: tuple[Any, Any, Any, Any] = (0, 0, 0, 0), sram: Any = 0) -> Any:
    from tvm import tirx

    data = tirx.Var("data", "handle")
    return vc.call(vc.LOAD_2D, data, dram, xs, ys, stride, *pads, sram, mem)


def _store(sram: Any = 0, dram: Any = 0, xs: Any = 1, ys: Any = 1, stride: Any = 1) -> Any:
    from tvm import tirx

    res = tirx.Var("res", "handle")
    return vc.call(vc.STORE_2D, sram, vc.MEM_OUT, res, dram, xs, ys, stride)


def _uop_kernel(gemm: bool, loops: list[tuple[int, int, int, int]],
                pushes: list[tuple[int, int, int]], imm: int | None = None) -> Any:
    """A GEMM or ALU micro-op kernel: ``VTAUopLoopBegin`` per loop (extent, dst, src, wgt
    factors), the pushes (dst, src, wgt indices), the loop ends, in its coproc_uop_scope."""
    from vtatune.passes._ir import attr, seq

    mode = vc.UOP_MODE_GEMM if gemm else vc.UOP_MODE_ALU
    use_imm = 0 if imm is None else 1
    body = seq(
        [vc.call(vc.UOP_LOOP_BEGIN, *lp) for lp in loops],
        [vc.call(vc.UOP_PUSH, mode, 0, dst, src, wgt, vc.ALU_ADD, use_imm, imm or 0)
         for dst, src, wgt in pushes],
        [vc.call(vc.UOP_LOOP_END) for _ in loops])
    return attr(COPROC_UOP_SCOPE, GEMM_UOP_SCOPE if gemm else ALU_UOP_SCOPE, body)


def _problems(body: Any) -> dict[str, Any]:
    return {p.what: p for p in verify_isa_fields(_func(body), HW)}


#: (field named in the problem, TIR builder of the field's value, largest value that fits).
#: ``value`` may be reached through a loop: ``_loop`` cases overflow on the last iteration.
CASES: list[tuple[str, Any, int]] = [
    ("LOAD inp dram_base", lambda v: _load(dram=v), _max(MEMOP_DRAM_ADDR_BITS)),
    ("LOAD inp x_size", lambda v: _load(xs=v), _max(MEMOP_SIZE_BITS)),
    ("LOAD inp y_size", lambda v: _load(ys=v), _max(MEMOP_SIZE_BITS)),
    ("LOAD inp x_stride", lambda v: _load(stride=v), _max(MEMOP_STRIDE_BITS)),
    ("LOAD inp sram_base", lambda v: _load(sram=v), _max(MEMOP_SRAM_ADDR_BITS)),
    ("LOAD wgt sram_base", lambda v: _load(mem=vc.MEM_WGT, sram=v), _max(MEMOP_SRAM_ADDR_BITS)),
    ("LOAD inp x_pad_0", lambda v: _load(pads=(v, 0, 0, 0)), _max(MEMOP_PAD_BITS)),
    ("LOAD inp y_pad_0", lambda v: _load(pads=(0, v, 0, 0)), _max(MEMOP_PAD_BITS)),
    ("LOAD inp x_pad_1", lambda v: _load(pads=(0, 0, v, 0)), _max(MEMOP_PAD_BITS)),
    ("LOAD inp y_pad_1", lambda v: _load(pads=(0, 0, 0, v)), _max(MEMOP_PAD_BITS)),
    ("LOAD acc dram_base", lambda v: _load(mem=vc.MEM_ACC, dram=v),
     _max(MEMOP_DRAM_ADDR_BITS)),
    # a DRAM base reached by a loop: the last of 1024 iterations overflows
    ("LOAD inp dram_base",
     lambda v: _loop(1024, lambda i: _load(dram=i * 4 + (v - 1023 * 4))),
     _max(MEMOP_DRAM_ADDR_BITS)),
    ("STORE out dram_base", lambda v: _store(dram=v), _max(MEMOP_DRAM_ADDR_BITS)),
    ("STORE out x_size", lambda v: _store(xs=v), _max(MEMOP_SIZE_BITS)),
    ("STORE out y_size", lambda v: _store(ys=v), _max(MEMOP_SIZE_BITS)),
    ("STORE out x_stride", lambda v: _store(stride=v), _max(MEMOP_STRIDE_BITS)),
    ("STORE out sram_base", lambda v: _store(sram=v), _max(MEMOP_SRAM_ADDR_BITS)),
    ("GEMM iter (loop extent)", lambda v: _uop_kernel(True, [(v, 0, 0, 0)], [(0, 0, 0)]),
     _max(LOOP_ITER_BITS)),
    ("ALU iter (loop extent)", lambda v: _uop_kernel(False, [(v, 0, 0, 0)], [(0, 0, 0)]),
     _max(LOOP_ITER_BITS)),
    ("GEMM dst_factor", lambda v: _uop_kernel(True, [(1, v, 0, 0)], [(0, 0, 0)]),
     _max(FB["gemm_dst_factor"])),
    ("GEMM src_factor", lambda v: _uop_kernel(True, [(1, 0, v, 0)], [(0, 0, 0)]),
     _max(FB["gemm_src_factor"])),
    ("GEMM wgt_factor", lambda v: _uop_kernel(True, [(1, 0, 0, v)], [(0, 0, 0)]),
     _max(FB["gemm_wgt_factor"])),
    ("ALU dst_factor", lambda v: _uop_kernel(False, [(1, v, 0, 0)], [(0, 0, 0)]),
     _max(FB["alu_dst_factor"])),
    ("ALU src_factor", lambda v: _uop_kernel(False, [(1, 0, v, 0)], [(0, 0, 0)]),
     _max(FB["alu_src_factor"])),
    ("GEMM micro-op dst index", lambda v: _uop_kernel(True, [], [(v, 0, 0)]), HW.acc_depth - 1),
    ("GEMM micro-op src index", lambda v: _uop_kernel(True, [], [(0, v, 0)]), HW.inp_depth - 1),
    ("GEMM micro-op wgt index", lambda v: _uop_kernel(True, [], [(0, 0, v)]), HW.wgt_depth - 1),
    ("ALU micro-op dst index", lambda v: _uop_kernel(False, [], [(v, 0, 0)]), HW.acc_depth - 1),
    ("ALU micro-op src index", lambda v: _uop_kernel(False, [], [(0, v, 0)]), HW.acc_depth - 1),
    # indices advanced by the loop factors: dst + (extent - 1) * factor must stay in the SRAM
    ("GEMM acc index (with loop factors)",
     lambda v: _uop_kernel(True, [(2, v - 10, 0, 0)], [(10, 0, 0)]), HW.acc_depth - 1),
    ("GEMM inp index (with loop factors)",
     lambda v: _uop_kernel(True, [(2, 0, v - 10, 0)], [(0, 10, 0)]), HW.inp_depth - 1),
    ("GEMM wgt index (with loop factors)",
     lambda v: _uop_kernel(True, [(3, 0, 0, (v - 1) // 2)], [(0, 0, 1 + (v - 1) % 2)]),
     HW.wgt_depth - 1),
    ("ALU acc index (with loop factors)",
     lambda v: _uop_kernel(False, [(2, 0, v - 5, 0)], [(0, 5, 0)]), HW.acc_depth - 1),
    ("ALU immediate", lambda v: _uop_kernel(False, [], [(0, 0, 0)], imm=v),
     _max(ALU_IMM_BITS - 1)),
]


@pytest.mark.parametrize(("what", "build", "limit"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_field_is_rejected_past_its_width(what: str, build: Any, limit: int) -> None:
    over = _problems(build(limit + 1))
    assert what in over, f"{what} = {limit + 1} not rejected; problems: {sorted(over)}"
    assert over[what].needed == limit + 1
    assert over[what].available == limit
    assert what in str(over[what])
    fits = _problems(build(limit))
    assert what not in fits, f"{what} = {limit} (fits) rejected: {fits[what]}"


def test_negative_immediate_has_its_own_limit() -> None:
    lim = 1 << (ALU_IMM_BITS - 1)  # -32768 is the smallest 16-bit signed immediate
    assert "ALU immediate" not in _problems(_uop_kernel(False, [], [(0, 0, 0)], imm=-lim))
    over = _problems(_uop_kernel(False, [], [(0, 0, 0)], imm=-lim - 1))
    assert over["ALU immediate"].needed == lim + 1 and over["ALU immediate"].available == lim


@pytest.mark.parametrize(("what", "build"), [
    ("LOAD inp x_size", lambda: _load(xs=0)),
    ("LOAD inp y_size", lambda: _load(ys=0)),
    ("LOAD inp dram_base", lambda: _load(dram=-1)),
    ("STORE out x_size", lambda: _store(xs=0)),
])
def test_fields_below_their_minimum(what: str, build: Any) -> None:
    assert what in _problems(build())


def test_every_problem_is_reported_at_once() -> None:
    from vtatune.passes._ir import seq

    body = seq(_load(xs=1 << MEMOP_SIZE_BITS, pads=(1 << MEMOP_PAD_BITS, 0, 0, 0)),
               _store(dram=1 << MEMOP_DRAM_ADDR_BITS),
               _uop_kernel(True, [(1 << LOOP_ITER_BITS, 0, 0, 0)], [(HW.acc_depth, 0, 0)]))
    assert {"LOAD inp x_size", "LOAD inp x_pad_0", "STORE out dram_base",
            "GEMM iter (loop extent)", "GEMM micro-op dst index"} <= set(_problems(body))
