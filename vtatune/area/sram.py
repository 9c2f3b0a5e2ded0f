"""Map one on-chip memory (row width x depth) onto block-RAM primitives.

VTA reads a whole tile per cycle, so a scratchpad's row is one tile wide (the weight SRAM of a
1x16x16 design is 16*16*8 = 2048 bits wide and ``wgt_depth`` rows deep). A row wider than the
tool's port limit is split into banks (``vta.max_port_bits``). Each bank's row width is then
covered by columns of primitives, each column in one legal aspect ratio ``depth d x width w`` and
``ceil(depth / d)`` blocks tall; the mix of columns with the fewest blocks wins (an exact
unbounded-knapsack over the width, as synthesis tools mix e.g. 1Kx36 and 1Kx18 columns). 18 Kb
halves (RAMB18) count as ``half_block`` of a block. On UltraScale+ boards with UltraRAM a memory
goes to URAM (4K x 72) when it fills at least ``uram_min_fill`` of the URAM bits it occupies.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from vtatune.area.coefficients import FamilyCoefficients, Shape


@dataclass(frozen=True)
class Memory:
    """One memory to map: ``copies`` identical instances of ``width_bits`` x ``depth`` words."""

    name: str
    width_bits: int
    depth: int
    mode: str  # "tdp" (true dual-port) or "sdp" (simple dual-port)
    copies: int = 1

    @property
    def bits(self) -> int:
        return self.width_bits * self.depth * self.copies


@dataclass(frozen=True)
class Column:
    """``count`` side-by-side columns of one primitive shape, each ``rows`` blocks tall."""

    shape: Shape  # [depth, width] of the primitive
    half: bool  # an 18 Kb half block (RAMB18)
    rows: int
    count: int


@dataclass(frozen=True)
class MemoryMapping:
    """How a memory was built. ``blocks`` (all banks and copies) is in units of ``primitive``:
    ``bram36`` (RAMB18 halves count as 0.5), ``m10k`` or ``uram``."""

    primitive: str
    blocks: float
    banks: int  # per copy
    columns: tuple[Column, ...]  # one bank's arrangement

    def describe(self, copies: int = 1) -> str:
        mult = copies * self.banks
        parts = []
        for c in self.columns:
            kind = "RAMB18" if c.half else self.primitive.upper()
            parts.append(f"{mult * c.rows * c.count} x {kind} {c.shape[0]}x{c.shape[1]}")
        text = " + ".join(parts)
        if self.banks > 1:
            text += f" ({self.banks} banks)"
        if copies > 1:
            text += f" ({copies} copies)"
        return text


def _rows(depth: int, shape: Shape) -> int:
    return -(-depth // shape[0])


@lru_cache(maxsize=4096)
def _best_bank(width: int, depth: int, fam: FamilyCoefficients, mode: str
               ) -> tuple[float, tuple[Column, ...]]:
    """Fewest blocks covering ``width`` bits x ``depth`` rows; ties: fewer primitives."""
    options = [(s, False, _rows(depth, s), 1.0) for s in fam.shapes[mode]]
    options += [(s, True, _rows(depth, s), fam.half_block) for s in fam.half_shapes[mode]]
    # best[x] = (blocks, primitives, option index, remaining width) to cover x bits of width.
    best: list[tuple[float, int, int, int]] = [(0.0, 0, -1, 0)]
    for x in range(1, width + 1):
        cand = None
        for i, (shape, _half, rows, weight) in enumerate(options):
            rest = max(0, x - shape[1])
            b, n, _, _ = best[rest]
            key = (b + rows * weight, n + rows, i, rest)
            if cand is None or key[:2] < cand[:2]:
                cand = key
        assert cand is not None  # shapes are validated non-empty
        best.append(cand)
    counts: dict[int, int] = {}
    x = width
    while x > 0:
        _, _, i, rest = best[x]
        counts[i] = counts.get(i, 0) + 1
        x = rest
    columns = tuple(Column(options[i][0], options[i][1], options[i][2], n)
                    for i, n in sorted(counts.items()))
    return best[width][0], columns


def map_memory(
    mem: Memory, fam: FamilyCoefficients, max_port_bits: int, uram_allowed: bool
) -> MemoryMapping:
    """Primitive, block count and arrangement of ``mem`` (all copies counted in ``blocks``)."""
    banks = -(-mem.width_bits // max_port_bits)
    bank_width = -(-mem.width_bits // banks)
    if uram_allowed and fam.uram_shape is not None and fam.uram_bits > 0:
        rows = _rows(mem.depth, fam.uram_shape)
        cols = -(-bank_width // fam.uram_shape[1])
        urams = banks * rows * cols
        if mem.width_bits * mem.depth >= fam.uram_min_fill * urams * fam.uram_bits:
            return MemoryMapping("uram", float(urams * mem.copies), banks,
                                 (Column(fam.uram_shape, False, rows, cols),))
    blocks, columns = _best_bank(bank_width, mem.depth, fam, mem.mode)
    return MemoryMapping(fam.bram_kind, blocks * banks * mem.copies, banks, columns)
