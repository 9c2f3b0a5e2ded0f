"""The VTA instruction set: instruction records and their 128-bit binary encoding.

Instructions are 128 bits (16 bytes, little-endian: the low 64-bit word first), micro-ops
32 bits. Field order follows VTA's ``hw_spec.h``: opcode (3 bits), the four dependence flags
(pop_prev, pop_next, push_prev, push_next), then the fields of each kind. The layout itself
(widths, opcodes, bit placement, micro-op views) lives in the leaf module
``hardware.hw_spec``; this module builds, encodes and decodes instructions with it.
A configuration whose fields do not fit is reported by ``layout_problems``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from vtatune.errors import EncodingError, ProgramError
from vtatune.hardware.hw_spec import (
    INSTRUCTION_BITS,
    OPCODE_BITS,
    UOP_BITS,
    WORD_BITS,
    AluOp,
    Field,
    InsnLayout,
    MemId,
    Opcode,
    layout_problems,
    layouts,
    uop_layouts,
)

if TYPE_CHECKING:
    from vtatune.hardware.config import HwConfig

#: Bytes of one encoded instruction / micro-op.
INSN_BYTES = INSTRUCTION_BITS // 8
UOP_BYTES = UOP_BITS // 8

UopKind = Literal["gemm", "alu"]


class Module(enum.IntEnum):
    """The three in-order execution modules an instruction is routed to."""

    LOAD = 0
    COMPUTE = 1
    STORE = 2


@dataclass(frozen=True, slots=True)
class DepFlags:
    """Dependence flags. prev/next are the neighbouring modules in load -> compute -> store."""

    pop_prev: bool = False
    pop_next: bool = False
    push_prev: bool = False
    push_next: bool = False

    def __bool__(self) -> bool:
        return self.pop_prev or self.pop_next or self.push_prev or self.push_next


NO_DEPS = DepFlags()
# The 16 possible flag sets, shared by decoded instructions (saves allocations).
_DEPS_BY_BITS = tuple(
    DepFlags(bool(b & 1), bool(b & 2), bool(b & 4), bool(b & 8)) for b in range(16)
)


@dataclass(frozen=True, slots=True)
class MemInsn:
    """LOAD or STORE: a 2-D strided DMA. Sizes, stride, bases and pads are in tiles of
    ``memory_type`` (sram_base in tiles of the SRAM, dram_base in tiles of DRAM)."""

    opcode: Opcode
    deps: DepFlags
    memory_type: MemId
    sram_base: int
    dram_base: int
    y_size: int
    x_size: int
    x_stride: int
    y_pad_0: int = 0
    y_pad_1: int = 0
    x_pad_0: int = 0
    x_pad_1: int = 0

    @property
    def padded_tiles(self) -> int:
        """Tiles written to SRAM, pads included."""
        return (self.y_pad_0 + self.y_size + self.y_pad_1) * (
            self.x_pad_0 + self.x_size + self.x_pad_1
        )


@dataclass(frozen=True, slots=True)
class GemmInsn:
    """GEMM over micro-ops [uop_bgn, uop_end) in a two-level loop (iter_out, iter_in)."""

    opcode: ClassVar[Opcode] = Opcode.GEMM
    deps: DepFlags
    reset: bool
    uop_bgn: int
    uop_end: int
    iter_out: int = 1
    iter_in: int = 1
    dst_factor_out: int = 0
    dst_factor_in: int = 0
    src_factor_out: int = 0
    src_factor_in: int = 0
    wgt_factor_out: int = 0
    wgt_factor_in: int = 0

    @property
    def ops(self) -> int:
        """Tile operations (one GEMM step each): iter_out * iter_in * uops."""
        return self.iter_out * self.iter_in * max(self.uop_end - self.uop_bgn, 0)


@dataclass(frozen=True, slots=True)
class AluInsn:
    """ALU op over micro-ops: acc[dst] = op(acc[dst], imm if use_imm else acc[src]).

    ``imm`` is a signed 16-bit immediate."""

    opcode: ClassVar[Opcode] = Opcode.ALU
    deps: DepFlags
    reset: bool
    uop_bgn: int
    uop_end: int
    iter_out: int = 1
    iter_in: int = 1
    dst_factor_out: int = 0
    dst_factor_in: int = 0
    src_factor_out: int = 0
    src_factor_in: int = 0
    alu_opcode: AluOp = AluOp.ADD
    use_imm: bool = False
    imm: int = 0

    @property
    def ops(self) -> int:
        """Tile operations: iter_out * iter_in * uops."""
        return self.iter_out * self.iter_in * max(self.uop_end - self.uop_bgn, 0)


@dataclass(frozen=True, slots=True)
class FinishInsn:
    """End of program."""

    opcode: ClassVar[Opcode] = Opcode.FINISH
    deps: DepFlags = NO_DEPS


Insn = MemInsn | GemmInsn | AluInsn | FinishInsn


@dataclass(frozen=True, slots=True)
class Uop:
    """A micro-op: tile indices into acc (dst), inp (src; acc for ALU) and wgt (0 for ALU)."""

    dst: int
    src: int
    wgt: int = 0


# ---- routing -------------------------------------------------------------------------------

#: Memory types each opcode may name.
LOAD_MEMS = frozenset({MemId.UOP, MemId.WGT, MemId.INP, MemId.ACC, MemId.ACC_8BIT})
STORE_MEMS = frozenset({MemId.OUT})


def module_of(insn: Insn) -> Module:
    """The module whose queue executes ``insn`` (VTA's fetch-stage routing)."""
    if isinstance(insn, MemInsn):
        if insn.opcode == Opcode.STORE:
            return Module.STORE
        if insn.memory_type in (MemId.INP, MemId.WGT):
            return Module.LOAD
    return Module.COMPUTE


def insn_name(insn: Insn) -> str:
    """E.g. ``LOAD_INP``, ``STORE``, ``GEMM``."""
    if isinstance(insn, MemInsn) and insn.opcode == Opcode.LOAD:
        return f"LOAD_{MemId(insn.memory_type).name}"
    return Opcode(insn.opcode).name


def routing_problems(insn: Insn) -> list[str]:
    """Flags and memory types that the routed module cannot honour."""
    problems: list[str] = []
    if isinstance(insn, MemInsn):
        allowed = LOAD_MEMS if insn.opcode == Opcode.LOAD else STORE_MEMS
        if insn.opcode not in (Opcode.LOAD, Opcode.STORE):
            problems.append(f"MemInsn with opcode {insn.opcode!r}")
        elif insn.memory_type not in allowed:
            problems.append(
                f"{Opcode(insn.opcode).name} cannot use memory type {insn.memory_type!r}"
            )
        pads = (insn.y_pad_0, insn.y_pad_1, insn.x_pad_0, insn.x_pad_1)
        if any(pads) and (insn.opcode == Opcode.STORE or insn.memory_type == MemId.UOP):
            problems.append(f"{insn_name(insn)} cannot pad (pads {pads})")
    mod = module_of(insn)
    if mod == Module.LOAD and (insn.deps.pop_prev or insn.deps.push_prev):
        problems.append(f"{insn_name(insn)} runs on the load module, which has no previous module")
    if mod == Module.STORE and (insn.deps.pop_next or insn.deps.push_next):
        problems.append("STORE runs on the store module, which has no next module")
    return problems


def _require_layouts(hw: HwConfig) -> dict[str, InsnLayout]:
    problems = layout_problems(hw)
    if problems:
        raise EncodingError(f"hardware {hw.shape_label} ({hw.key}): " + "; ".join(problems))
    return layouts(hw)


# ---- instruction encoding ------------------------------------------------------------------


def _head(insn: Insn) -> tuple[int, int, int, int, int]:
    d = insn.deps
    return (int(insn.opcode), d.pop_prev, d.pop_next, d.push_prev, d.push_next)


def _row(insn: Insn) -> tuple[str, tuple[int, ...]]:
    """The kind and field values of ``insn`` in layout order."""
    if isinstance(insn, MemInsn):
        return "mem", _head(insn) + (
            int(insn.memory_type), insn.sram_base, insn.dram_base, insn.y_size, insn.x_size,
            insn.x_stride, insn.y_pad_0, insn.y_pad_1, insn.x_pad_0, insn.x_pad_1,
        )  # fmt: skip
    if isinstance(insn, GemmInsn):
        return "gemm", _head(insn) + (
            insn.reset, insn.uop_bgn, insn.uop_end, insn.iter_out, insn.iter_in,
            insn.dst_factor_out, insn.dst_factor_in, insn.src_factor_out, insn.src_factor_in,
            insn.wgt_factor_out, insn.wgt_factor_in,
        )  # fmt: skip
    if isinstance(insn, AluInsn):
        return "alu", _head(insn) + (
            insn.reset, insn.uop_bgn, insn.uop_end, insn.iter_out, insn.iter_in,
            insn.dst_factor_out, insn.dst_factor_in, insn.src_factor_out, insn.src_factor_in,
            int(insn.alu_opcode), insn.use_imm, insn.imm,
        )  # fmt: skip
    if isinstance(insn, FinishInsn):
        return "finish", _head(insn)
    raise ProgramError(f"not an instruction: {insn!r}")


def _check_range(kind: str, field: Field, col: np.ndarray, idx: np.ndarray) -> None:
    if field.signed:
        lo, hi = -(1 << (field.bits - 1)), (1 << (field.bits - 1)) - 1
        kind_of = "signed "
    else:
        lo, hi = 0, (1 << field.bits) - 1
        kind_of = ""
    bad = np.flatnonzero((col < lo) | (col > hi))
    if bad.size:
        k = int(bad[0])
        raise EncodingError(
            f"instruction #{int(idx[k])} ({kind.upper()}): field {field.name}={int(col[k])} does "
            f"not fit its {field.bits}-bit {kind_of}field (range {lo}..{hi})"
        )


def encode_insns(insns: Sequence[Insn], hw: HwConfig) -> np.ndarray:
    """Encode instructions; returns a ``(n, 2)`` little-endian uint64 array (low word first).

    ``result.tobytes()`` is the instruction stream. Raises ``EncodingError`` naming the first
    instruction, field, value and width that does not fit.
    """
    lays = _require_layouts(hw)
    n = len(insns)
    out = np.zeros((n, 2), dtype="<u8")
    rows: dict[str, list[tuple[int, ...]]] = {k: [] for k in lays}
    where: dict[str, list[int]] = {k: [] for k in lays}
    for i, insn in enumerate(insns):
        kind, row = _row(insn)
        rows[kind].append(row)
        where[kind].append(i)
    for kind, lay in lays.items():
        if not rows[kind]:
            continue
        idx = np.asarray(where[kind], dtype=np.int64)
        try:
            table = np.asarray(rows[kind], dtype=np.int64)
        except OverflowError:  # a value beyond int64: find it in Python to report it
            _report_huge(kind, lay, rows[kind], where[kind])
            raise
        lo = np.zeros(len(idx), dtype=np.uint64)
        hi = np.zeros(len(idx), dtype=np.uint64)
        for c, field in enumerate(lay.fields):
            col = table[:, c]
            _check_range(kind, field, col, idx)
            bits = (col & ((1 << field.bits) - 1)).astype(np.uint64)  # two's complement if signed
            if field.offset < WORD_BITS:
                lo |= bits << np.uint64(field.offset)
            else:
                hi |= bits << np.uint64(field.offset - WORD_BITS)
        out[idx, 0] = lo
        out[idx, 1] = hi
    return out


def _report_huge(kind: str, lay: InsnLayout, rows: list, where: list[int]) -> None:
    for row, i in zip(rows, where, strict=True):
        for field, v in zip(lay.fields, row, strict=True):
            if not -(1 << 63) <= int(v) < (1 << 63):
                raise EncodingError(
                    f"instruction #{i} ({kind.upper()}): field {field.name}={int(v)} does not "
                    f"fit its {field.bits}-bit field"
                )


def encode_insn(insn: Insn, hw: HwConfig) -> bytes:
    """One instruction as 16 little-endian bytes."""
    return encode_insns([insn], hw).tobytes()


def _words(data: bytes | bytearray | memoryview | np.ndarray) -> np.ndarray:
    if isinstance(data, np.ndarray) and data.dtype != np.uint8:
        arr = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    else:
        arr = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    if arr.size % INSN_BYTES:
        raise ProgramError(f"instruction stream of {arr.size} bytes is not a multiple of 16")
    return np.ascontiguousarray(arr).view("<u8").reshape(-1, 2)


def decode_insns(data: bytes | bytearray | memoryview | np.ndarray, hw: HwConfig) -> list[Insn]:
    """Decode an instruction stream (bytes, or the array ``encode_insns`` returns)."""
    lays = _require_layouts(hw)
    words = _words(data)
    n = words.shape[0]
    lo, hi = words[:, 0], words[:, 1]
    opcode = (lo & np.uint64((1 << OPCODE_BITS) - 1)).astype(np.int64)
    bad = np.flatnonzero(opcode > max(Opcode))
    if bad.size:
        raise ProgramError(f"instruction #{int(bad[0])}: unknown opcode {int(opcode[bad[0]])}")
    result: list[Insn | None] = [None] * n
    for kind, ops in (("mem", (0, 1)), ("gemm", (2,)), ("finish", (3,)), ("alu", (4,))):
        idx = np.flatnonzero(np.isin(opcode, ops))
        if not idx.size:
            continue
        cols = []
        for field in lays[kind].fields:
            word = lo[idx] if field.offset < WORD_BITS else hi[idx]
            v = (word >> np.uint64(field.offset % WORD_BITS)) & np.uint64((1 << field.bits) - 1)
            v = v.astype(np.int64)
            if field.signed:
                v = np.where(v >= (1 << (field.bits - 1)), v - (1 << field.bits), v)
            cols.append(v.tolist())
        flags = zip(*cols[1:5], strict=True)
        deps_bits = [a | (b << 1) | (c << 2) | (d << 3) for a, b, c, d in flags]
        deps = [_DEPS_BY_BITS[b] for b in deps_bits]
        rest = list(zip(*cols[5:], strict=True)) if len(cols) > 5 else [()] * len(idx)
        made: list[Insn]
        if kind == "mem":
            _check_enum(MemId, cols[5], idx, "memory_type")
            made = [
                MemInsn(Opcode(op), dp, MemId(r[0]), *r[1:])
                for op, dp, r in zip(cols[0], deps, rest, strict=True)
            ]
        elif kind == "gemm":
            made = [GemmInsn(dp, bool(r[0]), *r[1:]) for dp, r in zip(deps, rest, strict=True)]
        elif kind == "alu":
            _check_enum(AluOp, cols[14], idx, "alu_opcode")
            made = [
                AluInsn(dp, bool(r[0]), *r[1:9], AluOp(r[9]), bool(r[10]), r[11])
                for dp, r in zip(deps, rest, strict=True)
            ]
        else:
            made = [FinishInsn(dp) for dp in deps]
        for i, insn in zip(idx.tolist(), made, strict=True):
            result[i] = insn
    return result  # type: ignore[return-value]


def _check_enum(enum_cls: type[enum.IntEnum], values: list[int], idx: np.ndarray,
                name: str) -> None:  # fmt: skip
    valid = {int(m) for m in enum_cls}
    for i, v in zip(idx.tolist(), values, strict=True):
        if v not in valid:
            raise ProgramError(f"instruction #{i}: unknown {name} {v}")


# ---- micro-op encoding ---------------------------------------------------------------------


def encode_uops(
    uops: Sequence[Uop] | np.ndarray, hw: HwConfig, kind: UopKind = "gemm"
) -> np.ndarray:
    """Encode micro-ops (``Uop`` records, or an ``(n, 3)`` int array of dst, src, wgt) into a
    uint32 array. ALU micro-ops must have ``wgt == 0``."""
    _require_layouts(hw)
    ul = uop_layouts(hw)[kind]
    if isinstance(uops, np.ndarray):
        table = np.asarray(uops, dtype=np.int64).reshape(-1, 3)
    else:
        table = np.array([(u.dst, u.src, u.wgt) for u in uops], dtype=np.int64).reshape(-1, 3)
    word = np.zeros(len(table), dtype=np.uint64)
    spans = {"dst": ul.dst, "src": ul.src, "wgt": ul.wgt}
    for c, (name, (off, bits)) in enumerate(spans.items()):
        col = table[:, c]
        bad = np.flatnonzero((col < 0) | (col >= (1 << bits)))
        if bad.size:
            k = int(bad[0])
            what = "must be 0 in an ALU micro-op" if bits == 0 else (
                f"does not fit its {bits}-bit field (range 0..{(1 << bits) - 1})"
            )
            raise EncodingError(f"micro-op #{k} ({kind.upper()}): {name}={int(col[k])} {what}")
        word |= col.astype(np.uint64) << np.uint64(off)
    return word.astype(np.uint32)


def uop_fields(
    words: np.ndarray, hw: HwConfig, kind: UopKind = "gemm"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorized decode: (dst, src, wgt) int64 arrays of uint32 micro-op words."""
    ul = uop_layouts(hw)[kind]
    w = np.asarray(words, dtype=np.uint32).astype(np.int64)
    return tuple(  # type: ignore[return-value]
        (w >> off) & ((1 << bits) - 1) for off, bits in (ul.dst, ul.src, ul.wgt)
    )


def decode_uops(words: np.ndarray | bytes, hw: HwConfig, kind: UopKind = "gemm") -> list[Uop]:
    """Decode uint32 micro-op words (or their little-endian bytes) in the given view."""
    if not isinstance(words, np.ndarray):
        words = np.frombuffer(words, dtype="<u4")
    dst, src, wgt = uop_fields(words, hw, kind)
    return [Uop(d, s, g) for d, s, g in zip(dst.tolist(), src.tolist(), wgt.tolist(), strict=True)]
