"""VerifyIsaFields: every instruction and micro-op field must fit its bit width.

Each runtime call's arguments are bounded over the iteration space of the loops around it
(integer bound analysis), and checked against the field widths ``HwConfig`` derives from
VTA's hw_spec.h: DMA sizes, strides and pads, SRAM and DRAM bases, the 14-bit loop extents,
the loop factors and micro-op indices (whose widths are the SRAM depths' log2), and the
16-bit ALU immediate. Micro-op indices advanced by the instruction's loop factors must also
stay inside their SRAM.
"""

from __future__ import annotations

from collections.abc import Callable
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
    """The fields of ``func``'s instructions and micro-ops that do not fit ``hw``."""
    return FieldChecks(func).problems(hw)


class _Bound:
    """One end of a runtime-call argument's range over its loops: the interval bound, and the
    exact one computed on demand (once) where the interval bound would fail a check."""

    __slots__ = ("arg", "loops", "upper", "interval", "_exact")

    def __init__(self, arg: Any, loops: list[Any], upper: bool):
        self.arg, self.loops, self.upper = arg, loops, upper
        self.interval = bounds(arg, loops)[1 if upper else 0]
        self._exact: int | None = None

    def at(self, threshold: int | None) -> int:
        """The bound, refined by exact enumeration when the interval bound crosses
        ``threshold`` (interval bounds over-approximate)."""
        v = self.interval
        if threshold is None or (v <= threshold if self.upper else v >= threshold):
            return v
        if self._exact is None:
            exact = exact_range(self.arg, self.loops)
            self._exact = v if exact is None else exact[1 if self.upper else 0]
        return self._exact


#: The kind of a check of a lower bound (a size of at least 1, a base of at least 0).
LOW = "low"
#: A check: (what, kind, unit, bound, limit of hw, threshold of hw (None: the limit), what
#: is added to the bound before the comparison).
_Check = tuple[str, str, str, _Bound, Callable[[HwConfig], int],
               Callable[[HwConfig], int] | None, int]


class FieldChecks:
    """The field checks of one VTA-level function, gathered once: the walk over its calls and
    the bound analysis depend on the program only; ``problems`` compares the bounds with one
    hardware config's field widths and SRAM depths (a compiled program is verified against
    every buffer configuration that shares it)."""

    def __init__(self, func: Any):
        self.checks: list[_Check] = []  # in the program's order, as problems are reported
        loop_factors: list[tuple[int, list[int]]] = []  # active uop loops: (extent, factors)
        checks = self.checks

        def fixed(bits: int) -> Callable[[HwConfig], int]:
            return lambda hw: _max(bits)

        def on_call(call: Any, stack: list[Any]) -> None:
            name = vc.extern_name(call)
            if name is None:
                return
            args = call.args[1:]
            loops = loops_of(stack)

            def hi(i: int) -> _Bound:
                return _Bound(args[i], loops, upper=True)

            def lo(i: int) -> _Bound:
                return _Bound(args[i], loops, upper=False)

            def check(what: str, bound: _Bound, limit: Callable[[HwConfig], int]) -> None:
                checks.append((what, "field", "", bound, limit, None, 0))

            def dma(insn: str, dram: int, xs: int, ys: int, stride: int, sram: int) -> None:
                for what, i, bits in ((f"{insn} dram_base", dram, MEMOP_DRAM_ADDR_BITS),
                                      (f"{insn} x_size", xs, MEMOP_SIZE_BITS),
                                      (f"{insn} y_size", ys, MEMOP_SIZE_BITS),
                                      (f"{insn} x_stride", stride, MEMOP_STRIDE_BITS),
                                      (f"{insn} sram_base", sram, MEMOP_SRAM_ADDR_BITS)):
                    check(what, hi(i), fixed(bits))
                for what, i, floor in ((f"{insn} dram_base", dram, 0),
                                       (f"{insn} x_size", xs, 1), (f"{insn} y_size", ys, 1)):
                    checks.append((what, LOW, "(minimum)", lo(i), lambda hw, f=floor: f,
                                   None, 0))

            if name == vc.LOAD_2D:
                insn = f"LOAD {MEM_NAMES.get(int(args[10].value), '?')}"
                dma(insn, dram=1, xs=2, ys=3, stride=4, sram=9)
                for i, pad in zip((5, 6, 7, 8), ("x_pad_0", "y_pad_0", "x_pad_1", "y_pad_1"),
                                  strict=True):
                    check(f"{insn} {pad}", hi(i), fixed(MEMOP_PAD_BITS))
            elif name == vc.STORE_2D:
                dma("STORE out", dram=3, xs=4, ys=5, stride=6, sram=0)
            elif name == vc.UOP_LOOP_BEGIN:
                at = innermost_attr(stack, COPROC_UOP_SCOPE)
                gemm = at is not None and stack[at].value.value == GEMM_UOP_SCOPE
                task = "GEMM" if gemm else "ALU"
                dst, src = (("gemm_dst_factor", "gemm_src_factor") if gemm
                            else ("alu_dst_factor", "alu_src_factor"))
                bs = [hi(i) for i in range(4)]
                check(f"{task} iter (loop extent)", bs[0], fixed(LOOP_ITER_BITS))
                check(f"{task} dst_factor", bs[1], lambda hw, k=dst: _max(hw.field_bits[k]))
                check(f"{task} src_factor", bs[2], lambda hw, k=src: _max(hw.field_bits[k]))
                if gemm:
                    check("GEMM wgt_factor", bs[3],
                          lambda hw: _max(hw.field_bits["gemm_wgt_factor"]))
                loop_factors.append((bs[0].interval, [b.interval for b in bs[1:]]))
            elif name == vc.UOP_LOOP_END:
                if loop_factors:
                    loop_factors.pop()
            elif name == vc.UOP_PUSH:
                gemm = int(args[0].value) == vc.UOP_MODE_GEMM
                task = "GEMM" if gemm else "ALU"
                depths = (["acc_depth", "inp_depth", "wgt_depth"] if gemm
                          else ["acc_depth", "acc_depth", None])
                names = ["acc", "inp", "wgt"] if gemm else ["acc", "acc", "-"]
                slots = (2, 3, 4) if gemm else (2, 3)
                for slot, i in enumerate(slots):
                    spread = sum((ext - 1) * fs[slot] for ext, fs in loop_factors)

                    def last(hw: HwConfig, d: str | None = depths[slot]) -> int:
                        return (getattr(hw, d) if d else 1) - 1

                    # the index itself, then with the loop factors' reach (the bound is
                    # refined where the reach would leave the SRAM)
                    b = hi(i)
                    checks.append((f"{task} micro-op {('dst', 'src', 'wgt')[slot]} index",
                                   "field", "", b, last,
                                   lambda hw, last=last, s=spread: last(hw) - s, 0))
                    checks.append((f"{task} {names[slot]} index (with loop factors)", "index",
                                   "tiles", b, last,
                                   lambda hw, last=last, s=spread: last(hw) - s, spread))
                if not gemm and int(args[6].value):
                    imm = int(args[7].value)
                    lim = (1 << (ALU_IMM_BITS - 1))
                    value = abs(imm) if imm < 0 else imm
                    const = _Const(value)
                    checks.append(("ALU immediate", "field", "", const,
                                   lambda hw, v=lim if imm < 0 else lim - 1: v, None, 0))

        walk_calls(func.body, on_call)

    def problems(self, hw: HwConfig) -> list[Problem]:
        """Every field of the function that does not fit ``hw``, once per field (the largest
        value it needs)."""
        found: dict[str, Problem] = {}
        for what, kind, unit, bound, limit_of, threshold_of, add in self.checks:
            limit = limit_of(hw)
            value = bound.at(limit if threshold_of is None else threshold_of(hw)) + add
            if kind == LOW:
                if value < limit and what not in found:
                    found[what] = Problem("field", what, value, limit, unit)
            elif value > limit and (what not in found or found[what].needed < value):
                found[what] = Problem(kind, what, value, limit, unit)
        return list(found.values())


class _Const(_Bound):
    """A value known exactly (an immediate)."""

    def __init__(self, value: int):  # noqa: D107 - no TIR to analyse
        self.interval = self._exact = value

    def at(self, threshold: int | None) -> int:
        return self.interval
