"""The VTA ISA's layout, as VTA's ``hw_spec.h``: field widths, opcodes, bit placement.

A leaf module (standard library only): ``hardware.config`` validates encodability with it and
``program.isa`` encodes with it, so neither needs the other for the layout.

Instructions are 128 bits, micro-ops 32 bits. Field order follows ``hw_spec.h``: opcode
(3 bits), the four dependence flags (pop_prev, pop_next, push_prev, push_next), then the fields
of each kind. Fixed widths are constants here; the variable ones (micro-op and SRAM indices,
loop factors) are the log2 depths of the SRAMs (``field_bits``).

Placement follows C bit-field allocation in ``uint64_t`` units, which is how VTA's runtime
builds the binary: a field starts at the next free bit unless it would straddle the 64-bit
word boundary, in which case it starts at bit 64. For LOAD/STORE this puts memory_type,
sram_base and dram_base in the first word (6 bits unused) and y_size .. x_pad_1 in the second.

Micro-ops are VTA's ``struct VTAUop`` (hw_spec.h, written field by field by the runtime's
``UopKernel::Push``): ``dst_idx`` A bits, ``src_idx`` MAX(A, I) bits, ``wgt_idx`` W bits, in
``uint32_t`` bit-fields, with A, I, W the log2 depths of the acc, inp and wgt buffers. So a
GEMM micro-op is ``dst | src << A | wgt << (A + MAX(A, I))`` and an ALU micro-op (whose src is
an acc index) ``dst | src << A``. A design whose struct needs more than 32 bits has no
micro-op encoding. VTA's HLS source decodes GEMM wgt at A + I instead (``VTA_UOP_GEM_2_0``);
the two agree only when I >= A. hwconfigs/timing/SOURCES.md quotes the struct and the macros.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtatune.hardware.config import HwConfig

#: Instruction and micro-op widths of the VTA ISA (bits).
INSTRUCTION_BITS = 128
UOP_BITS = 32
LOG_UOP_WIDTH = 5
#: Bits of one allocation unit of VTA's C bit-field structs.
WORD_BITS = 64

#: Fixed ISA field widths (bits), from VTA's hw_spec.h.
OPCODE_BITS = 3
DEP_FLAG_BITS = 4  # pop_prev, pop_next, push_prev, push_next
MEMOP_ID_BITS = 3
MEMOP_SRAM_ADDR_BITS = 16
MEMOP_DRAM_ADDR_BITS = 32
MEMOP_SIZE_BITS = 16
MEMOP_STRIDE_BITS = 16
MEMOP_PAD_BITS = 4
LOOP_ITER_BITS = 14
ALU_OPCODE_BITS = 3
ALU_IMM_BITS = 16


class Opcode(enum.IntEnum):
    LOAD = 0
    STORE = 1
    GEMM = 2
    FINISH = 3
    ALU = 4


class MemId(enum.IntEnum):
    UOP = 0
    WGT = 1
    INP = 2
    ACC = 3
    OUT = 4
    ACC_8BIT = 5


class AluOp(enum.IntEnum):
    MIN = 0
    MAX = 1
    ADD = 2
    SHR = 3
    MUL = 4


def field_bits(log_uop_depth: int, log_inp_depth: int, log_wgt_depth: int,
               log_acc_depth: int) -> dict[str, int]:
    """Bit width of every variable-width instruction and micro-op field, from the log2 depths
    (in tiles; micro-ops for the uop buffer) of the SRAMs."""
    return {
        "uop_bgn": log_uop_depth,
        "uop_end": log_uop_depth + 1,
        "iter_out": LOOP_ITER_BITS,
        "iter_in": LOOP_ITER_BITS,
        "gemm_dst_factor": log_acc_depth,
        "gemm_src_factor": log_inp_depth,
        "gemm_wgt_factor": log_wgt_depth,
        "alu_dst_factor": log_acc_depth,
        "alu_src_factor": log_acc_depth,
        "alu_imm": ALU_IMM_BITS,
        "sram_base": MEMOP_SRAM_ADDR_BITS,
        "dram_base": MEMOP_DRAM_ADDR_BITS,
        "y_size": MEMOP_SIZE_BITS,
        "x_size": MEMOP_SIZE_BITS,
        "x_stride": MEMOP_STRIDE_BITS,
        "pad": MEMOP_PAD_BITS,
        # struct VTAUop: an ALU micro-op uses its dst and src fields
        "uop_gemm_dst": log_acc_depth,
        "uop_gemm_src": max(log_acc_depth, log_inp_depth),
        "uop_gemm_wgt": log_wgt_depth,
        "uop_alu_dst": log_acc_depth,
        "uop_alu_src": max(log_acc_depth, log_inp_depth),
    }


def uop_struct_bits(log_inp_depth: int, log_wgt_depth: int, log_acc_depth: int) -> int:
    """Bits of VTA's ``struct VTAUop`` fields: A + MAX(A, I) + W (must be <= 32)."""
    return log_acc_depth + max(log_acc_depth, log_inp_depth) + log_wgt_depth


# ---- layouts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One field of an encoded instruction: bit offset in the 128-bit word, width in bits."""

    name: str
    offset: int
    bits: int
    signed: bool = False


@dataclass(frozen=True)
class InsnLayout:
    """Bit layout of one instruction kind for one HwConfig."""

    kind: str
    fields: tuple[Field, ...]
    end_bit: int

    @property
    def fits(self) -> bool:
        return self.end_bit <= INSTRUCTION_BITS


_HEAD = (("opcode", OPCODE_BITS), ("pop_prev", 1), ("pop_next", 1), ("push_prev", 1),
         ("push_next", 1))  # fmt: skip


def _place(kind: str, spec: Sequence[tuple[str, int] | tuple[str, int, bool]]) -> InsnLayout:
    fields = []
    pos = 0
    for item in spec:
        name, bits = item[0], item[1]
        signed = bool(item[2]) if len(item) > 2 else False
        # C bit-fields of uint64_t never straddle a 64-bit unit: move to the next one.
        if pos // WORD_BITS != (pos + bits - 1) // WORD_BITS:
            pos = (pos // WORD_BITS + 1) * WORD_BITS
        fields.append(Field(name, pos, bits, signed))
        pos += bits
    return InsnLayout(kind, tuple(fields), pos)


def layouts(hw: HwConfig) -> dict[str, InsnLayout]:
    """Layouts of the ``mem``, ``gemm``, ``alu`` and ``finish`` instruction kinds for ``hw``
    (cached by the field widths, which are all of ``hw`` they depend on)."""
    return _layouts(tuple(hw.field_bits.items()))


@lru_cache(maxsize=8192)
def _layouts(widths: tuple[tuple[str, int], ...]) -> dict[str, InsnLayout]:
    f = dict(widths)
    loop = (
        ("reset", 1),
        ("uop_bgn", f["uop_bgn"]),
        ("uop_end", f["uop_end"]),
        ("iter_out", LOOP_ITER_BITS),
        ("iter_in", LOOP_ITER_BITS),
    )
    mem = _place(
        "mem",
        _HEAD
        + (
            ("memory_type", MEMOP_ID_BITS),
            ("sram_base", MEMOP_SRAM_ADDR_BITS),
            ("dram_base", MEMOP_DRAM_ADDR_BITS),
            ("y_size", MEMOP_SIZE_BITS),
            ("x_size", MEMOP_SIZE_BITS),
            ("x_stride", MEMOP_STRIDE_BITS),
            ("y_pad_0", MEMOP_PAD_BITS),
            ("y_pad_1", MEMOP_PAD_BITS),
            ("x_pad_0", MEMOP_PAD_BITS),
            ("x_pad_1", MEMOP_PAD_BITS),
        ),
    )
    gemm = _place(
        "gemm",
        _HEAD
        + loop
        + (
            ("dst_factor_out", f["gemm_dst_factor"]),
            ("dst_factor_in", f["gemm_dst_factor"]),
            ("src_factor_out", f["gemm_src_factor"]),
            ("src_factor_in", f["gemm_src_factor"]),
            ("wgt_factor_out", f["gemm_wgt_factor"]),
            ("wgt_factor_in", f["gemm_wgt_factor"]),
        ),
    )
    alu = _place(
        "alu",
        _HEAD
        + loop
        + (
            ("dst_factor_out", f["alu_dst_factor"]),
            ("dst_factor_in", f["alu_dst_factor"]),
            ("src_factor_out", f["alu_src_factor"]),
            ("src_factor_in", f["alu_src_factor"]),
            ("alu_opcode", ALU_OPCODE_BITS),
            ("use_imm", 1),
            ("imm", ALU_IMM_BITS, True),
        ),
    )
    finish = _place("finish", _HEAD)
    return {"mem": mem, "gemm": gemm, "alu": alu, "finish": finish}


@dataclass(frozen=True)
class UopLayout:
    """Micro-op field (offset, width) in bits for one HwConfig and view (gemm or alu), as in
    ``struct VTAUop``; ``wgt`` is (0, 0) in the ALU view (ALU micro-ops leave it 0)."""

    dst: tuple[int, int]
    src: tuple[int, int]
    wgt: tuple[int, int]


@lru_cache(maxsize=64)
def uop_layouts(hw: HwConfig) -> dict[str, UopLayout]:
    """The GEMM and ALU views of ``struct VTAUop`` (dst A, src MAX(A, I), wgt W bits)."""
    f = hw.field_bits
    a, s, w = f["uop_gemm_dst"], f["uop_gemm_src"], f["uop_gemm_wgt"]
    return {
        "gemm": UopLayout(dst=(0, a), src=(a, s), wgt=(a + s, w)),
        "alu": UopLayout(dst=(0, f["uop_alu_dst"]), src=(f["uop_alu_dst"], f["uop_alu_src"]),
                         wgt=(0, 0)),
    }  # fmt: skip


def layout_problems(hw: HwConfig) -> list[str]:
    """Why ``hw``'s instructions or micro-ops cannot be encoded; empty when they can."""
    problems = []
    for kind, lay in layouts(hw).items():
        if not lay.fits:
            problems.append(
                f"{kind.upper()} instruction needs {lay.end_bit} bits with 64-bit word "
                f"alignment > {INSTRUCTION_BITS}"
            )
    a, i, w = hw.log_acc_depth, hw.log_inp_depth, hw.log_wgt_depth
    bits = uop_struct_bits(i, w, a)
    if bits > UOP_BITS:
        # VTA's runtime static_asserts sizeof(VTAUop) * 8 == VTA_UOP_WIDTH: such a design has
        # no micro-op encoding at all (C would move wgt_idx to a second 32-bit unit).
        problems.append(
            f"micro-op needs {bits} bits > {UOP_BITS} (VTA's struct VTAUop: dst {a} + "
            f"src max({a}, {i}) + wgt {w} bits)"
        )
    return problems
