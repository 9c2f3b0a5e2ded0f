"""The VTA instruction set: instruction records, the same instructions as columns
(``InsnTable``, what programs hold) and their 128-bit binary encoding.

Instructions are 128 bits (16 bytes, little-endian: the low 64-bit word first), micro-ops
32 bits. Field order follows VTA's ``hw_spec.h``: opcode (3 bits), the four dependence flags
(pop_prev, pop_next, push_prev, push_next), then the fields of each kind. The layout itself
(widths, opcodes, bit placement, micro-op views) lives in the leaf module
``hardware.hw_spec``; this module builds, encodes and decodes instructions with it.
A configuration whose fields do not fit is reported by ``layout_problems``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

import numpy as np

from vtatune.errors import EncodingError, ProgramError
from vtatune.hardware.hw_spec import (
    INSTRUCTION_BITS,
    OPCODE_BITS,
    UOP_BITS,
    WORD_BITS,
    Field,
    InsnLayout,
    layouts,
    uop_layouts,
)
from vtatune.hardware.hw_spec import AluOp as AluOp  # the ISA's vocabulary, re-exported
from vtatune.hardware.hw_spec import MemId as MemId
from vtatune.hardware.hw_spec import Opcode as Opcode
from vtatune.hardware.hw_spec import layout_problems as layout_problems

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
class _LoopInsn:
    """What GEMM and ALU share: micro-ops [uop_bgn, uop_end) in a two-level loop
    (iter_out, iter_in), each loop adding its factors to the micro-ops' indices."""

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

    @property
    def ops(self) -> int:
        """Tile operations (one GEMM or ALU step each): iter_out * iter_in * uops."""
        return self.iter_out * self.iter_in * max(self.uop_end - self.uop_bgn, 0)


@dataclass(frozen=True, slots=True)
class GemmInsn(_LoopInsn):
    """GEMM over micro-ops [uop_bgn, uop_end) in a two-level loop (iter_out, iter_in)."""

    opcode: ClassVar[Opcode] = Opcode.GEMM
    wgt_factor_out: int = 0
    wgt_factor_in: int = 0


@dataclass(frozen=True, slots=True)
class AluInsn(_LoopInsn):
    """ALU op over micro-ops: acc[dst] = op(acc[dst], imm if use_imm else acc[src]).

    ``imm`` is a signed 16-bit immediate."""

    opcode: ClassVar[Opcode] = Opcode.ALU
    alu_opcode: AluOp = AluOp.ADD
    use_imm: bool = False
    imm: int = 0


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


# ---- instructions as columns ---------------------------------------------------------------

#: Fields after ``opcode`` and ``deps`` of each record kind, in record (and encoding) order.
MEM_FIELDS = ("memory_type", "sram_base", "dram_base", "y_size", "x_size", "x_stride",
              "y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1")
_LOOP_FIELDS = ("reset", "uop_bgn", "uop_end", "iter_out", "iter_in", "dst_factor_out",
                "dst_factor_in", "src_factor_out", "src_factor_in")
GEMM_FIELDS = (*_LOOP_FIELDS, "wgt_factor_out", "wgt_factor_in")
ALU_FIELDS = (*_LOOP_FIELDS, "alu_opcode", "use_imm", "imm")
#: ``InsnTable`` columns: 0 opcode, 1 the dependence flags as bits (``DEPS_BITS``), then the
#: kind's fields from column 2 (a kind's unused columns are 0).
COL_OPCODE, COL_DEPS, COL_FIELDS = 0, 1, 2
TABLE_WIDTH = COL_FIELDS + max(len(MEM_FIELDS), len(GEMM_FIELDS), len(ALU_FIELDS))
#: Column of each field name, by kind.
MEM_COL = {f: COL_FIELDS + i for i, f in enumerate(MEM_FIELDS)}
GEMM_COL = {f: COL_FIELDS + i for i, f in enumerate(GEMM_FIELDS)}
ALU_COL = {f: COL_FIELDS + i for i, f in enumerate(ALU_FIELDS)}
#: Bit of each dependence flag in column ``COL_DEPS``.
DEPS_BITS = {"pop_prev": 1, "pop_next": 2, "push_prev": 4, "push_next": 8}
#: The opcodes of each encoding kind (``hw_spec.layouts``).
KIND_OPCODES = {"mem": (Opcode.LOAD, Opcode.STORE), "gemm": (Opcode.GEMM,),
                "finish": (Opcode.FINISH,), "alu": (Opcode.ALU,)}
_KIND_WIDTH = {"mem": len(MEM_FIELDS), "gemm": len(GEMM_FIELDS), "alu": len(ALU_FIELDS),
               "finish": 0}
_OPCODES = tuple(Opcode)
_MEM_IDS = tuple(MemId)
_ALU_OPS = tuple(AluOp)


def _deps_bits(d: DepFlags) -> int:
    """``d`` as the bits of column ``COL_DEPS``."""
    return sum(bit for flag, bit in DEPS_BITS.items() if getattr(d, flag))


class InsnTable(Sequence["Insn"]):
    """Instructions as one read-only ``(n, TABLE_WIDTH)`` int64 matrix, a row each.

    It reads as a sequence of instruction records, made once on first access; what runs on
    every candidate (the command queue that builds a program, the timing model, encoding,
    counting) reads the columns, so most programs never make a record. Built from records with
    ``of``; a matrix given directly is checked for opcodes, flags and enum values.
    """

    __slots__ = ("cols", "_records")

    def __init__(self, cols: np.ndarray):
        a = np.array(cols, dtype=np.int64).reshape(-1, TABLE_WIDTH)
        a.setflags(write=False)
        _check_table(a)
        self.cols = a
        self._records: tuple[Insn, ...] | None = None

    @classmethod
    def of(cls, insns: Sequence[Insn]) -> InsnTable:
        """The table of ``insns`` (records, or already a table)."""
        if isinstance(insns, InsnTable):
            return insns
        rows = [_table_row(k, i) for k, i in enumerate(insns)]
        try:
            cols = np.array(rows, dtype=np.int64).reshape(-1, TABLE_WIDTH)
        except OverflowError:  # a value beyond int64: find it in Python to report it
            _report_huge(rows)
            raise
        return cls(cols)

    # ---- columns -------------------------------------------------------------------------------
    def kind(self, kind: str) -> np.ndarray:
        """Row numbers of the instructions of an encoding kind (``KIND_OPCODES``)."""
        return np.flatnonzero(np.isin(self.cols[:, COL_OPCODE], KIND_OPCODES[kind]))

    def tile_ops(self) -> np.ndarray:
        """Tile operations of each instruction: ``iter_out * iter_in * uops`` for GEMM and
        ALU (``GemmInsn.ops``), 0 for the others."""
        c = self.cols
        uops = np.maximum(c[:, GEMM_COL["uop_end"]] - c[:, GEMM_COL["uop_bgn"]], 0)
        ops = c[:, GEMM_COL["iter_out"]] * c[:, GEMM_COL["iter_in"]] * uops
        return np.where(np.isin(c[:, COL_OPCODE], (Opcode.GEMM, Opcode.ALU)), ops, 0)

    # ---- the sequence of records ----------------------------------------------------------------
    def records(self) -> tuple[Insn, ...]:
        """Every instruction as a record (made once)."""
        if self._records is None:
            self._records = _records(self.cols)
        return self._records

    def record(self, k: int) -> Insn:
        """Instruction ``k`` as a record, without making the others."""
        if self._records is not None:
            return self._records[k]
        return _record(self.cols[k].tolist())

    def __len__(self) -> int:
        return self.cols.shape[0]

    @overload
    def __getitem__(self, k: int) -> Insn: ...
    @overload
    def __getitem__(self, k: slice) -> tuple[Insn, ...]: ...
    def __getitem__(self, k: int | slice) -> Insn | tuple[Insn, ...]:
        return self.records()[k]

    def __iter__(self) -> Iterator[Insn]:
        return iter(self.records())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, InsnTable):
            return np.array_equal(self.cols, other.cols)
        if isinstance(other, tuple | list):
            return self.records() == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return InsnTable, (self.cols,)  # unpickled read-only and checked, without records

    def __repr__(self) -> str:
        return f"InsnTable({len(self)} instructions)"


def _table_row(k: int, insn: Insn) -> tuple[int, ...]:
    cls = type(insn)
    fields: tuple[str, ...]
    if cls is MemInsn:
        fields = MEM_FIELDS
    elif cls is GemmInsn:
        fields = GEMM_FIELDS
    elif cls is AluInsn:
        fields = ALU_FIELDS
    elif cls is FinishInsn:
        fields = ()
    else:
        raise ProgramError(f"instruction #{k}: not an instruction: {insn!r}")
    row = [int(insn.opcode), _deps_bits(insn.deps), *(int(getattr(insn, f)) for f in fields)]
    return (*row, *[0] * (TABLE_WIDTH - len(row)))


_FIELDS_OF: dict[int, tuple[str, ...]] = {Opcode.GEMM: GEMM_FIELDS, Opcode.ALU: ALU_FIELDS}


def _report_huge(rows: list[tuple[int, ...]]) -> None:
    for k, row in enumerate(rows):
        names = _FIELDS_OF.get(row[0], MEM_FIELDS)
        for name, v in zip(names, row[COL_FIELDS:], strict=False):
            if not -(1 << 63) <= v < (1 << 63):
                raise EncodingError(f"instruction #{k}: field {name}={v} does not fit 64 bits")


def _check_table(a: np.ndarray) -> None:
    """Raise for the first row with an unknown opcode, flag bits or enum value."""
    op = a[:, COL_OPCODE]
    checks = [((op < 0) | (op > max(Opcode)), "opcode", COL_OPCODE),
              ((a[:, COL_DEPS] < 0) | (a[:, COL_DEPS] > 15), "dependence flag bits", COL_DEPS)]
    mem = op <= Opcode.STORE
    mt = a[:, MEM_COL["memory_type"]]
    checks.append((mem & ((mt < 0) | (mt > max(MemId))), "memory_type", MEM_COL["memory_type"]))
    ao = a[:, ALU_COL["alu_opcode"]]
    checks.append(((op == Opcode.ALU) & ((ao < 0) | (ao > max(AluOp))), "alu_opcode",
                   ALU_COL["alu_opcode"]))
    for bad, name, col in checks:
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ProgramError(f"instruction #{k}: unknown {name} {int(a[k, col])}")


def _record(r: list[int]) -> Insn:
    """The record of one checked table row."""
    deps = _DEPS_BY_BITS[r[1]]
    if r[0] <= Opcode.STORE:
        return MemInsn(_OPCODES[r[0]], deps, _MEM_IDS[r[2]], *r[3:12])
    if r[0] == Opcode.GEMM:
        return GemmInsn(deps, bool(r[2]), *r[3:13])
    if r[0] == Opcode.ALU:
        return AluInsn(deps, bool(r[2]), r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
                       _ALU_OPS[r[11]], bool(r[12]), r[13])
    return FinishInsn(deps)


def _records(cols: np.ndarray) -> tuple[Insn, ...]:
    """The records of a checked table."""
    return tuple(_record(r) for r in cols.tolist())


# ---- routing -------------------------------------------------------------------------------

#: Memory types each opcode may name.
LOAD_MEMS = frozenset({MemId.UOP, MemId.WGT, MemId.INP, MemId.ACC, MemId.ACC_8BIT})
STORE_MEMS = frozenset({MemId.OUT})
STORE_NOP_MEMS = frozenset({MemId.OUT, MemId.UOP})


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
        if insn.opcode == Opcode.STORE and insn.x_size == 0:
            # a no-op: VTA's runtime writes its STORE no-ops with memory type UOP
            # (runtime.cc ``PushNoop``); the store module reads no memory type
            allowed = STORE_NOP_MEMS
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
    """Encode instructions (records or an ``InsnTable``); returns a ``(n, 2)`` little-endian
    uint64 array (low word first).

    ``result.tobytes()`` is the instruction stream. Raises ``EncodingError`` naming the first
    instruction, field, value and width that does not fit.
    """
    lays = _require_layouts(hw)
    table = InsnTable.of(insns)
    cols = table.cols
    out = np.zeros((cols.shape[0], 2), dtype="<u8")
    op = cols[:, COL_OPCODE]
    flags = [(cols[:, COL_DEPS] >> b) & 1 for b in range(4)]
    for kind, lay in lays.items():
        idx = table.kind(kind)
        if not idx.size:
            continue
        # the layout's fields: opcode, the four flags, then the kind's fields
        values = [op[idx], *(f[idx] for f in flags)] + [
            cols[idx, COL_FIELDS + i] for i in range(_KIND_WIDTH[kind])]
        lo = np.zeros(len(idx), dtype=np.uint64)
        hi = np.zeros(len(idx), dtype=np.uint64)
        for field, col in zip(lay.fields, values, strict=True):
            _check_range(kind, field, col, idx)
            bits = (col & ((1 << field.bits) - 1)).astype(np.uint64)  # two's complement if signed
            if field.offset < WORD_BITS:
                lo |= bits << np.uint64(field.offset)
            else:
                hi |= bits << np.uint64(field.offset - WORD_BITS)
        out[idx, 0] = lo
        out[idx, 1] = hi
    return out


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
    return list(decode_table(data, hw))


def decode_table(data: bytes | bytearray | memoryview | np.ndarray, hw: HwConfig) -> InsnTable:
    """Decode an instruction stream into an ``InsnTable`` (no records are made)."""
    lays = _require_layouts(hw)
    words = _words(data)
    lo, hi = words[:, 0], words[:, 1]
    opcode = (lo & np.uint64((1 << OPCODE_BITS) - 1)).astype(np.int64)
    bad = np.flatnonzero(opcode > max(Opcode))
    if bad.size:
        raise ProgramError(f"instruction #{int(bad[0])}: unknown opcode {int(opcode[bad[0]])}")
    cols = np.zeros((words.shape[0], TABLE_WIDTH), dtype=np.int64)
    for kind, ops in KIND_OPCODES.items():
        idx = np.flatnonzero(np.isin(opcode, ops))
        if not idx.size:
            continue
        values = []
        for field in lays[kind].fields:
            word = lo[idx] if field.offset < WORD_BITS else hi[idx]
            v = (word >> np.uint64(field.offset % WORD_BITS)) & np.uint64((1 << field.bits) - 1)
            v = v.astype(np.int64)
            if field.signed:
                v = np.where(v >= (1 << (field.bits - 1)), v - (1 << field.bits), v)
            values.append(v)
        cols[idx, COL_OPCODE] = values[0]
        cols[idx, COL_DEPS] = values[1] | values[2] << 1 | values[3] << 2 | values[4] << 3
        for i, v in enumerate(values[5:]):
            cols[idx, COL_FIELDS + i] = v
    return InsnTable(cols)


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
