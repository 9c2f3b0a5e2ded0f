"""VerifyIsaFields: every instruction and micro-op field must fit its bit width.

Each runtime call's arguments are bounded over the iteration space of the loops around it
(integer bound analysis), and checked against the field widths ``HwConfig`` derives from
VTA's hw_spec.h: DMA sizes, strides and pads, SRAM and DRAM bases, the 14-bit loop extents,
the loop factors and micro-op indices (whose widths are the SRAM depths' log2), and the
16-bit ALU immediate. Micro-op indices advanced by the instruction's loop factors must also
stay inside their SRAM.
"""

from __future__ import annotations

from typing import Any

from vtatune.hardware.config import HwConfig
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
from vtatune.passes._eval import exact_range
from vtatune.passes._ir import bounds, innermost_attr, loops_of, walk_calls
from vtatune.passes.scopes import COPROC_UOP_SCOPE, GEMM_UOP_SCOPE
from vtatune.passes.verify import Problem

MEM_NAMES = {vc.MEM_INP: "inp", vc.MEM_WGT: "wgt", vc.MEM_OUT: "out", vc.MEM_ACC: "acc",
             vc.MEM_UOP: "uop"}


def _max(bits: int) -> int:
    return (1 << bits) - 1


def verify_isa_fields(func: Any, hw: HwConfig) -> list[Problem]:
    found: dict[str, Problem] = {}
    loop_factors: list[tuple[int, list[int]]] = []  # active uop loops: (extent, factors)

    def check(what: str, value: int, limit: int, kind: str = "field", unit: str = "") -> None:
        if value > limit and (what not in found or found[what].needed < value):
            found[what] = Problem(kind, what, value, limit, unit)

    def low(what: str, value: int, floor: int) -> None:
        if value < floor and what not in found:
            found[what] = Problem("field", what, value, floor, "(minimum)")

    def on_call(call: Any, stack: list[Any]) -> None:
        name = vc.extern_name(call)
        if name is None:
            return
        args = call.args[1:]
        loops = loops_of(stack)

        def hi(i: int, limit: int | None = None) -> int:
            top = bounds(args[i], loops)[1]
            if limit is not None and top > limit:  # interval bounds over-approximate
                exact = exact_range(args[i], loops)
                top = exact[1] if exact else top
            return top

        def lo(i: int, floor: int | None = None) -> int:
            bottom = bounds(args[i], loops)[0]
            if floor is not None and bottom < floor:
                exact = exact_range(args[i], loops)
                bottom = exact[0] if exact else bottom
            return bottom

        if name == vc.LOAD_2D:
            insn = f"LOAD {MEM_NAMES.get(int(args[10].value), '?')}"
            _dma(insn, hi, lo, dram=1, xs=2, ys=3, stride=4, sram=9)
            for i, pad in zip((5, 6, 7, 8), ("x_pad_0", "y_pad_0", "x_pad_1", "y_pad_1"),
                              strict=True):
                check(f"{insn} {pad}", hi(i, _max(MEMOP_PAD_BITS)), _max(MEMOP_PAD_BITS))
        elif name == vc.STORE_2D:
            _dma("STORE out", hi, lo, dram=3, xs=4, ys=5, stride=6, sram=0)
        elif name == vc.UOP_LOOP_BEGIN:
            at = innermost_attr(stack, COPROC_UOP_SCOPE)
            gemm = at is not None and stack[at].value.value == GEMM_UOP_SCOPE
            task = "GEMM" if gemm else "ALU"
            f = hw.field_bits
            check(f"{task} iter (loop extent)", hi(0, _max(LOOP_ITER_BITS)), _max(LOOP_ITER_BITS))
            dst_b, src_b = ((f["gemm_dst_factor"], f["gemm_src_factor"]) if gemm
                            else (f["alu_dst_factor"], f["alu_src_factor"]))
            check(f"{task} dst_factor", hi(1, _max(dst_b)), _max(dst_b))
            check(f"{task} src_factor", hi(2, _max(src_b)), _max(src_b))
            if gemm:
                lim = _max(f["gemm_wgt_factor"])
                check("GEMM wgt_factor", hi(3, lim), lim)
            loop_factors.append((hi(0), [hi(1), hi(2), hi(3)]))
        elif name == vc.UOP_LOOP_END:
            if loop_factors:
                loop_factors.pop()
        elif name == vc.UOP_PUSH:
            gemm = int(args[0].value) == vc.UOP_MODE_GEMM
            task = "GEMM" if gemm else "ALU"
            depths = ([hw.acc_depth, hw.inp_depth, hw.wgt_depth] if gemm
                      else [hw.acc_depth, hw.acc_depth, 1])
            names = ["acc", "inp", "wgt"] if gemm else ["acc", "acc", "-"]
            slots = (2, 3, 4) if gemm else (2, 3)
            for slot, i in enumerate(slots):
                top = hi(i, depths[slot] - 1 - sum((ext - 1) * fs[slot]
                                                   for ext, fs in loop_factors))
                check(f"{task} micro-op {('dst', 'src', 'wgt')[slot]} index", top,
                      depths[slot] - 1)
                reach = top + sum((ext - 1) * fs[slot] for ext, fs in loop_factors)
                check(f"{task} {names[slot]} index (with loop factors)", reach,
                      depths[slot] - 1, kind="index", unit="tiles")
            if not gemm and int(args[6].value):
                imm = int(args[7].value)
                lim = (1 << (ALU_IMM_BITS - 1))
                check("ALU immediate", abs(imm) if imm < 0 else imm,
                      lim if imm < 0 else lim - 1)

    def _dma(insn: str, hi: Any, lo: Any, dram: int, xs: int, ys: int, stride: int,
             sram: int) -> None:
        for what, i, bits in ((f"{insn} dram_base", dram, MEMOP_DRAM_ADDR_BITS),
                              (f"{insn} x_size", xs, MEMOP_SIZE_BITS),
                              (f"{insn} y_size", ys, MEMOP_SIZE_BITS),
                              (f"{insn} x_stride", stride, MEMOP_STRIDE_BITS),
                              (f"{insn} sram_base", sram, MEMOP_SRAM_ADDR_BITS)):
            check(what, hi(i, _max(bits)), _max(bits))
        low(f"{insn} dram_base", lo(dram, 0), 0)
        low(f"{insn} x_size", lo(xs, 1), 1)
        low(f"{insn} y_size", lo(ys, 1), 1)

    walk_calls(func.body, on_call)
    return list(found.values())
