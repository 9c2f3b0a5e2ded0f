"""A VTA program: instructions, the micro-op image and a flat DRAM layout; ``program.bin``.

DRAM is one flat byte space of ``dram_bytes`` bytes holding named regions ("data", "kernel",
"res", "uops", ...). As in VTA, a LOAD/STORE's ``dram_base`` counts tiles of its memory type
(byte address = dram_base x tile bytes: INP ``inp_tile_bytes``, WGT ``wgt_tile_bytes``, ACC
``acc_tile_bytes``, OUT and ACC_8BIT ``out_tile_bytes``, UOP 4 bytes) and ``sram_base`` counts
tiles of the SRAM. Region offsets are multiples of every tile size (``alignment(hw)``).

``program.bin`` layout (all integers little-endian)::

    offset  size       field
    0       8          magic b"VTAPROG\\0"
    8       4          u32 format version (1)
    12      4          u32 header size in bytes (64)
    16      10         u8 x 10: the log2 parameters in vta_config.json order (LOG_INP_WIDTH,
                       LOG_WGT_WIDTH, LOG_ACC_WIDTH, LOG_BATCH, LOG_BLOCK_IN, LOG_BLOCK_OUT,
                       LOG_UOP_BUFF_SIZE, LOG_INP_BUFF_SIZE, LOG_WGT_BUFF_SIZE, LOG_ACC_BUFF_SIZE)
    26      6          reserved (0)
    32      4          u32 n_insns
    36      4          u32 n_uops
    40      4          u32 n_regions
    44      4          reserved (0)
    48      8          u64 dram_bytes
    56      8          reserved (0)
    64      48 x R     regions: name (32 bytes UTF-8, NUL padded), u64 offset, u64 nbytes
    ...     16 x N     instructions (isa.encode_insns: low 64-bit word first)
    ...     4 x U      micro-op image (u32 words; LOAD UOP reads them from region "uops")
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

import numpy as np

from vtatune.errors import ProgramError
from vtatune.hardware.config import LOG_KEYS, MAX_DRAM_BYTES, HwConfig, validate
from vtatune.program.isa import (
    COL_OPCODE,
    MEM_COL,
    NO_DEPS,
    UOP_BYTES,
    AluInsn,
    AluOp,
    DepFlags,
    FinishInsn,
    GemmInsn,
    Insn,
    InsnTable,
    MemId,
    MemInsn,
    Opcode,
    Uop,
    UopKind,
    decode_table,
    encode_insns,
    encode_uops,
    routing_problems,
)

MAGIC = b"VTAPROG\0"
FORMAT_VERSION = 1
HEADER_BYTES = 64
REGION_NAME_BYTES = 32
_HEADER = struct.Struct("<8sII10s6xIII4xQ8x")
_REGION = struct.Struct(f"<{REGION_NAME_BYTES}sQQ")
assert _HEADER.size == HEADER_BYTES

#: Name of the region holding the micro-op image.
UOP_REGION = "uops"


def tile_bytes(hw: HwConfig, mem: MemId) -> int:
    """Bytes of one DRAM tile of memory type ``mem`` (the unit of dram_base)."""
    return {
        MemId.UOP: UOP_BYTES,
        MemId.WGT: hw.wgt_tile_bytes,
        MemId.INP: hw.inp_tile_bytes,
        MemId.ACC: hw.acc_tile_bytes,
        MemId.OUT: hw.out_tile_bytes,
        MemId.ACC_8BIT: hw.out_tile_bytes,
    }[MemId(mem)]


def alignment(hw: HwConfig) -> int:
    """Bytes every region offset must be a multiple of (all tile sizes are powers of two)."""
    return max(tile_bytes(hw, m) for m in MemId)


@dataclass(frozen=True)
class DramRegion:
    """A named byte range of DRAM: [offset, offset + nbytes)."""

    name: str
    offset: int
    nbytes: int

    @property
    def end(self) -> int:
        return self.offset + self.nbytes

    def tile(self, hw: HwConfig, mem: MemId, index: int = 0) -> int:
        """The dram_base of tile ``index`` of this region, in tiles of ``mem``."""
        return self.offset // tile_bytes(hw, mem) + index


@dataclass(frozen=True, eq=False)
class Program:
    """A VTA program for one HwConfig. ``uops`` is the micro-op image (uint32 words) that
    LOAD UOP instructions read from region ``uops``; sizes are in bytes. ``insns`` may be
    given as records or an ``InsnTable``; it is kept as an ``InsnTable``."""

    hw: HwConfig
    insns: InsnTable
    uops: np.ndarray
    regions: Mapping[str, DramRegion]
    dram_bytes: int
    name: str = ""
    meta: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        uops = np.array(self.uops, dtype=np.uint32).reshape(-1)
        uops.setflags(write=False)
        object.__setattr__(self, "insns", InsnTable.of(self.insns))
        object.__setattr__(self, "uops", uops)
        object.__setattr__(self, "regions", MappingProxyType(dict(self.regions)))
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))
        problems = self.layout_problems()
        if problems:
            raise ProgramError(f"program {self.name or ''}: " + "; ".join(problems))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Program):
            return NotImplemented
        return (
            self.hw == other.hw
            and self.insns == other.insns
            and np.array_equal(self.uops, other.uops)
            and dict(self.regions) == dict(other.regions)
            and self.dram_bytes == other.dram_bytes
        )

    __hash__ = None  # type: ignore[assignment]

    # ---- checks ------------------------------------------------------------------------------
    def layout_problems(self) -> list[str]:
        """Problems of the DRAM layout (alignment, overlap, bounds, the uop region's size)."""
        problems: list[str] = []
        if not 0 < self.dram_bytes <= MAX_DRAM_BYTES:
            problems.append(f"dram_bytes {self.dram_bytes:,} is outside VTA's 32-bit physical "
                            f"address space (1..{MAX_DRAM_BYTES:,})")
        align = alignment(self.hw)
        spans = []
        for key, r in self.regions.items():
            if key != r.name:
                problems.append(f"region {r.name!r} is stored under key {key!r}")
            if r.offset < 0 or r.nbytes < 0:
                problems.append(f"region {r.name!r} has a negative offset or size")
            if r.offset % align:
                problems.append(f"region {r.name!r} offset {r.offset} is not a multiple of {align}")
            if r.end > self.dram_bytes:
                problems.append(
                    f"region {r.name!r} ends at byte {r.end} > dram_bytes {self.dram_bytes}"
                )
            spans.append((r.offset, r.end, r.name))
        spans.sort()
        for (_, e0, n0), (s1, _, n1) in zip(spans, spans[1:], strict=False):
            if s1 < e0:
                problems.append(f"regions {n0!r} and {n1!r} overlap")
        if self.uops.size:
            uop_region = self.regions.get(UOP_REGION)
            if uop_region is None:
                problems.append(f"the program has micro-ops but no {UOP_REGION!r} region")
            elif uop_region.nbytes < self.uops.size * UOP_BYTES:
                problems.append(
                    f"region {UOP_REGION!r} holds {uop_region.nbytes} bytes < micro-op image "
                    f"{self.uops.size * UOP_BYTES}"
                )
        return problems

    def check(self) -> list[str]:
        """Every problem found: layout, routing/flags, and fields that do not encode."""
        problems = self.layout_problems()
        for i, insn in enumerate(self.insns):
            problems.extend(f"instruction #{i}: {p}" for p in routing_problems(insn))
        try:
            _ = self.encoded
        except ProgramError as exc:
            problems.append(str(exc))
        return problems

    # ---- statistics --------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Instruction counts by opcode name, LOADs also by memory type (``LOAD_INP``), and
        ``total``."""
        cols = self.insns.cols
        op = cols[:, COL_OPCODE]
        by_op = np.bincount(op, minlength=max(Opcode) + 1).tolist()
        by_mem = np.bincount(cols[op == Opcode.LOAD, MEM_COL["memory_type"]],
                             minlength=max(MemId) + 1).tolist()
        out = {op.name: by_op[op] for op in Opcode}
        out.update({f"LOAD_{m.name}": by_mem[m] for m in MemId if m != MemId.OUT})
        out["total"] = len(self.insns)
        return out

    def dma_tile_bytes(self) -> np.ndarray:
        """Bytes of one DRAM tile of each LOAD/STORE's memory type (``tile_bytes``); 0 for
        the other instructions."""
        cols = self.insns.cols
        mem = cols[:, COL_OPCODE] <= Opcode.STORE
        sizes = np.array([tile_bytes(self.hw, m) for m in MemId])
        return np.where(mem, sizes[np.where(mem, cols[:, MEM_COL["memory_type"]], 0)], 0)

    @property
    def uop_buffer_bytes(self) -> int:
        """Bytes of micro-ops the program loads into the uop SRAM (4 per uop loaded)."""
        cols = self.insns.cols
        rows = cols[(cols[:, COL_OPCODE] == Opcode.LOAD)
                    & (cols[:, MEM_COL["memory_type"]] == MemId.UOP)]
        return UOP_BYTES * int((rows[:, MEM_COL["y_size"]] * rows[:, MEM_COL["x_size"]]).sum())

    @property
    def uop_image_bytes(self) -> int:
        """Bytes of the deduplicated micro-op image in DRAM."""
        return self.uops.size * UOP_BYTES

    # ---- binary form -------------------------------------------------------------------------
    @cached_property
    def encoded(self) -> np.ndarray:
        """The instructions encoded, ``(n, 2)`` uint64 (see ``isa.encode_insns``)."""
        return encode_insns(self.insns, self.hw)

    def to_bytes(self) -> bytes:
        """The ``program.bin`` image (format in the module docstring)."""
        logs = bytes(self.hw.log_params()[k] for k in LOG_KEYS)
        parts = [
            _HEADER.pack(MAGIC, FORMAT_VERSION, HEADER_BYTES, logs, len(self.insns),
                         self.uops.size, len(self.regions), self.dram_bytes)
        ]  # fmt: skip
        for r in self.regions.values():
            name = r.name.encode()
            if len(name) > REGION_NAME_BYTES:
                raise ProgramError(
                    f"region name {r.name!r} is longer than {REGION_NAME_BYTES} bytes"
                )
            parts.append(_REGION.pack(name, r.offset, r.nbytes))
        parts.append(self.encoded.astype("<u8").tobytes())
        parts.append(self.uops.astype("<u4").tobytes())
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, hw: HwConfig | None, data: bytes, name: str = "") -> Program:
        """Parse a ``program.bin`` image. ``hw`` must match the header's parameters; with
        ``None`` the HwConfig is rebuilt from the header."""
        if len(data) < HEADER_BYTES:
            raise ProgramError(f"program.bin of {len(data)} bytes is shorter than its header")
        magic, version, hbytes, logs, n_insns, n_uops, n_regions, dram_bytes = _HEADER.unpack_from(
            data, 0
        )
        if magic != MAGIC:
            raise ProgramError(f"not a program.bin (magic {magic!r})")
        if version != FORMAT_VERSION:
            raise ProgramError(
                f"program.bin version {version} (this reader knows {FORMAT_VERSION})"
            )
        params = dict(zip(LOG_KEYS, logs, strict=True))
        if hw is None:
            hw = validate(HwConfig.from_params(params), "program.bin")
        elif hw.log_params() != params:
            raise ProgramError(
                f"program.bin was built for {params}, not for {hw.name or hw.shape_label} "
                f"{hw.log_params()}"
            )
        pos = hbytes
        need = pos + n_regions * _REGION.size + n_insns * 16 + n_uops * UOP_BYTES
        if len(data) != need:
            raise ProgramError(f"program.bin has {len(data)} bytes, its header says {need}")
        regions = {}
        for _ in range(n_regions):
            raw, off, nb = _REGION.unpack_from(data, pos)
            pos += _REGION.size
            rname = raw.rstrip(b"\0").decode()
            regions[rname] = DramRegion(rname, off, nb)
        insns = decode_table(data[pos : pos + n_insns * 16], hw)
        pos += n_insns * 16
        uops = np.frombuffer(data, dtype="<u4", count=n_uops, offset=pos).astype(np.uint32)
        return cls(hw, insns, uops, regions, dram_bytes, name=name)


# ---- assembling ------------------------------------------------------------------------------


@dataclass(frozen=True)
class UopKernel:
    """A micro-op kernel's place in the image: words [bgn, end)."""

    bgn: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.bgn


class ProgramBuilder:
    """Assembles a Program: regions, deduplicated micro-op kernels and instructions.

    Region offsets are assigned in order and aligned; the ``uops`` region is placed last by
    ``build()``, which also fixes up the DRAM addresses of LOAD UOP instructions.
    """

    def __init__(self, hw: HwConfig, name: str = ""):
        self.hw = hw
        self.name = name
        self.insns: list[Insn] = []
        self._regions: dict[str, DramRegion] = {}
        self._next_offset = 0
        self._image: list[np.ndarray] = []
        self._image_size = 0
        self._kernels: dict[bytes, UopKernel] = {}
        self._uop_loads: list[int] = []  # indices of LOAD UOP insns whose dram_base is relative

    # ---- DRAM ------------------------------------------------------------------------------
    def add_region(self, name: str, nbytes: int) -> DramRegion:
        """Reserve ``nbytes`` of DRAM at the next aligned offset."""
        if name in self._regions or name == UOP_REGION:
            raise ProgramError(f"region {name!r} already exists or is reserved")
        align = alignment(self.hw)
        off = -(-self._next_offset // align) * align
        region = DramRegion(name, off, int(nbytes))
        self._regions[name] = region
        self._next_offset = region.end
        return region

    def region(self, name: str) -> DramRegion:
        return self._regions[name]

    # ---- micro-ops -------------------------------------------------------------------------
    def add_uop_kernel(
        self, uops: Sequence[Uop] | np.ndarray, kind: UopKind = "gemm"
    ) -> UopKernel:
        """Add a kernel to the image; an identical kernel (same encoded words) is stored once."""
        words = encode_uops(uops, self.hw, kind)
        key = words.tobytes()
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = UopKernel(self._image_size, self._image_size + words.size)
            self._kernels[key] = kernel
            self._image.append(words)
            self._image_size = kernel.end
        return kernel

    def load_uops(
        self, kernel: UopKernel, sram_base: int = 0, deps: DepFlags = NO_DEPS
    ) -> tuple[int, int]:
        """Emit LOAD UOP of ``kernel`` to uop SRAM at ``sram_base``; returns (uop_bgn, uop_end)
        for the GEMM/ALU instructions that run it."""
        self._uop_loads.append(len(self.insns))
        self.insns.append(
            MemInsn(Opcode.LOAD, deps, MemId.UOP, sram_base, kernel.bgn, 1, kernel.size,
                    kernel.size)
        )  # fmt: skip
        return sram_base, sram_base + kernel.size

    # ---- instructions ----------------------------------------------------------------------
    def append(self, insn: Insn) -> int:
        """Append any instruction; returns its index."""
        self.insns.append(insn)
        return len(self.insns) - 1

    def load(
        self,
        mem: MemId,
        sram_base: int,
        region: DramRegion | str,
        tile: int,
        y_size: int,
        x_size: int,
        x_stride: int | None = None,
        pads: tuple[int, int, int, int] = (0, 0, 0, 0),
        deps: DepFlags = NO_DEPS,
    ) -> int:
        """LOAD y_size x x_size tiles of ``mem`` from ``region`` tile ``tile`` (row stride
        ``x_stride`` tiles, default x_size); pads are (y_pad_0, y_pad_1, x_pad_0, x_pad_1)."""
        r = self._regions[region] if isinstance(region, str) else region
        return self.append(
            MemInsn(Opcode.LOAD, deps, MemId(mem), sram_base, r.tile(self.hw, mem, tile), y_size,
                    x_size, x_size if x_stride is None else x_stride, *pads)
        )  # fmt: skip

    def store(
        self,
        sram_base: int,
        region: DramRegion | str,
        tile: int,
        y_size: int,
        x_size: int,
        x_stride: int | None = None,
        deps: DepFlags = NO_DEPS,
    ) -> int:
        """STORE y_size x x_size OUT tiles from SRAM ``sram_base`` to ``region`` tile ``tile``."""
        r = self._regions[region] if isinstance(region, str) else region
        return self.append(
            MemInsn(Opcode.STORE, deps, MemId.OUT, sram_base, r.tile(self.hw, MemId.OUT, tile),
                    y_size, x_size, x_size if x_stride is None else x_stride)
        )  # fmt: skip

    def gemm(
        self,
        uop_range: tuple[int, int],
        iter_out: int = 1,
        iter_in: int = 1,
        dst_factor: tuple[int, int] = (0, 0),
        src_factor: tuple[int, int] = (0, 0),
        wgt_factor: tuple[int, int] = (0, 0),
        reset: bool = False,
        deps: DepFlags = NO_DEPS,
    ) -> int:
        """GEMM; factors are (out, in) pairs."""
        return self.append(
            GemmInsn(deps, reset, uop_range[0], uop_range[1], iter_out, iter_in, *dst_factor,
                     *src_factor, *wgt_factor)
        )  # fmt: skip

    def alu(
        self,
        op: AluOp,
        uop_range: tuple[int, int],
        iter_out: int = 1,
        iter_in: int = 1,
        dst_factor: tuple[int, int] = (0, 0),
        src_factor: tuple[int, int] = (0, 0),
        imm: int | None = None,
        deps: DepFlags = NO_DEPS,
    ) -> int:
        """ALU op; with ``imm`` the operand is the immediate, else acc[src]."""
        return self.append(
            AluInsn(deps, False, uop_range[0], uop_range[1], iter_out, iter_in, *dst_factor,
                    *src_factor, AluOp(op), imm is not None, 0 if imm is None else imm)
        )  # fmt: skip

    def finish(self, deps: DepFlags = NO_DEPS) -> int:
        return self.append(FinishInsn(deps))

    # ---- result ----------------------------------------------------------------------------
    def build(self, meta: Mapping[str, object] | None = None) -> Program:
        """The Program: regions plus a ``uops`` region holding the image, placed last."""
        return self.build_table(np.array(InsnTable.of(self.insns).cols), self._uop_loads, meta)

    def build_table(self, cols: np.ndarray, uop_loads: Sequence[int],
                    meta: Mapping[str, object] | None = None) -> Program:
        """The Program of instructions given as an ``InsnTable`` matrix (``cols``, changed in
        place) instead of appended records; rows ``uop_loads`` are LOAD UOPs whose
        ``dram_base`` is relative to the micro-op image (as ``load_uops`` makes them)."""
        regions = dict(self._regions)
        align = alignment(self.hw)
        end = self._next_offset
        if self._image_size or len(uop_loads):
            off = -(-end // align) * align
            regions[UOP_REGION] = DramRegion(UOP_REGION, off, self._image_size * UOP_BYTES)
            cols[np.asarray(uop_loads, dtype=np.int64), MEM_COL["dram_base"]] += off // UOP_BYTES
            end = regions[UOP_REGION].end
        image = np.concatenate(self._image) if self._image else np.zeros(0, np.uint32)
        return Program(self.hw, InsnTable(cols), image, regions, max(-(-end // align) * align,
                       align), name=self.name, meta=meta or {})  # fmt: skip


def deps(*names: str) -> DepFlags:
    """``deps("pop_prev", "push_next")`` -> DepFlags with those flags set."""
    known = {"pop_prev", "pop_next", "push_prev", "push_next"}
    unknown = set(names) - known
    if unknown:
        raise ProgramError(f"unknown dependence flag(s) {sorted(unknown)} (known: {sorted(known)})")
    return DepFlags(**{n: True for n in names})

