"""Schedule knobs: what each knob means (``Knob``, declared once by its operator) and the
enumerable space of legal settings for one workload on one hardware config (``KnobSpace``).

A knob has a **role**: ``spatial`` (a tile of an output axis: the output tile holds ``value``
units of it), ``reduction`` (a tile of a reduction axis loaded per reduction step) or
``thread`` (virtual threads over the outer loop of another knob's axis). Tile knobs count
**units** of their axis: BATCH rows, BLOCK_IN or BLOCK_OUT channels, or single output
rows/columns, so one value means the same work on any GEMM shape, and ``elements`` converts a
count to workload elements. The search space, the cost-model features and the analytic
estimate read roles and units from here, never from lists of knob names.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vtatune.errors import KnobError

if TYPE_CHECKING:
    from vtatune.hardware.config import HwConfig

Knobs = dict[str, int]

SPATIAL, REDUCTION, THREAD = "spatial", "reduction", "thread"
ROLES = (SPATIAL, REDUCTION, THREAD)
#: Virtual-thread counts a thread knob may take (VTA's AutoTVM templates: 1 or 2).
NTHREADS = (1, 2)


@dataclass(frozen=True)
class Unit:
    """What one step of a tile knob counts: ``label`` for people, ``per`` the HwConfig
    attribute giving workload elements per unit (``""``: one element)."""

    label: str
    per: str = ""

    def elements(self, hw: HwConfig) -> int:
        return int(getattr(hw, self.per)) if self.per else 1


BATCH_TILES = Unit("BATCH tiles", "batch")
IN_CHANNEL_TILES = Unit("BLOCK_IN tiles", "block_in")
OUT_CHANNEL_TILES = Unit("BLOCK_OUT tiles", "block_out")
ROWS = Unit("output rows")
COLS = Unit("output columns")
THREADS = Unit("threads")


@dataclass(frozen=True)
class Knob:
    """One schedule knob as its operator declares it.

    ``axis`` names the extent (counted in ``unit``) that the knob tiles, a key of the
    workload's ``tiles(hw)``; a thread knob names, in ``over``, the tile knob whose outer
    loop it splits.
    """

    name: str
    role: str
    unit: Unit
    axis: str = ""
    over: str = ""
    doc: str = ""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"knob {self.name}: role {self.role!r} is not one of {ROLES}")
        if (self.role == THREAD) != bool(self.over) or (self.role != THREAD) != bool(self.axis):
            raise ValueError(f"knob {self.name}: a tile knob names its axis, a thread knob "
                             "the knob it splits (over=...)")


def spatial(name: str, axis: str, unit: Unit, doc: str = "") -> Knob:
    return Knob(name, SPATIAL, unit, axis=axis, doc=doc)


def reduction(name: str, axis: str, unit: Unit, doc: str = "") -> Knob:
    return Knob(name, REDUCTION, unit, axis=axis, doc=doc)


def thread(name: str, over: str, doc: str = "") -> Knob:
    return Knob(name, THREAD, THREADS, over=over, doc=doc)


def tile_sizes(extent: int) -> tuple[int, ...]:
    """The tile sizes worth trying over ``extent`` units: for every number of tiles n, the
    smallest tile that covers the extent in n tiles, ``ceil(extent / n)``.

    Every divisor is among them (no partial tile); the others leave one shorter tail tile
    (14 rows by 4: 4, 4, 4, 2), which the lowering partitions off. About 2 sqrt(extent)
    values: a tile that is not of this form only makes some tiles bigger than needed for the
    same number of tiles.
    """
    return tuple(sorted({-(-extent // n) for n in range(1, extent + 1)}))


def split_sizes(extent: int, tile: int) -> list[int]:
    """Sizes of the tiles ``tile`` cuts ``extent`` into: full tiles, then the tail if any."""
    full, tail = divmod(extent, tile)
    return [tile] * full + ([tail] if tail else [])


def divisors(n: int) -> tuple[int, ...]:
    """Positive divisors of ``n`` in increasing order."""
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


@dataclass(frozen=True)
class KnobSpace:
    """An enumerable space of schedule knobs for one (workload, hardware) pair.

    ``axes`` gives every knob's legal values; ``constraint`` rejects combinations whose parts
    are legal alone but not together (e.g. two virtual threads over a single outer tile).
    ``spec`` holds each knob's declaration, ``extents`` each tile knob's extent in its units and
    ``elements`` the workload elements one unit is on this hardware.
    """

    axes: Mapping[str, tuple[int, ...]]
    constraint: Callable[[Knobs], str | None] = field(default=lambda k: None, compare=False)
    units: Mapping[str, str] = field(default_factory=dict, compare=False)
    spec: Mapping[str, Knob] = field(default_factory=dict, compare=False)
    extents: Mapping[str, int] = field(default_factory=dict, compare=False)
    elements: Mapping[str, int] = field(default_factory=dict, compare=False)
    #: Why a single knob value is not legal, or None; unset: legal values are ``axes``'.
    legal: Callable[[str, int], str | None] | None = field(default=None, compare=False)

    @classmethod
    def build(cls, knobs: tuple[Knob, ...], extents: Mapping[str, int], hw: HwConfig,
              values: Callable[[Knob, int], tuple[int, ...]] | None = None,
              extra: Callable[[Knobs], str | None] | None = None,
              legal: Callable[[Knob, int, int], str | None] | None = None) -> KnobSpace:
        """The space of ``knobs`` over axis ``extents`` (in units) on ``hw``.

        Any tile from 1 to the extent is legal (``legal(knob, extent, value)`` may refuse
        more); the space enumerates ``values(knob, extent)`` of them (default: ``tile_sizes``,
        the divisors and the tiles that leave one shorter tail). Thread knobs take 1 or 2. Two
        threads need whole tiles on the axis they split (a tail tile would make the threads'
        programs differ, and VTA's virtual threads run one program) and must divide its outer
        tiles. ``extra`` adds an operator's own constraint between knobs.
        """
        pick = values or (lambda knob, extent: tile_sizes(extent))
        spec = {k.name: k for k in knobs}
        ext = {k.name: extents[k.axis] for k in knobs if k.role != THREAD}
        axes = {k.name: NTHREADS if k.role == THREAD else pick(k, ext[k.name]) for k in knobs}
        threads = [k for k in knobs if k.role == THREAD]

        def constraint(k: Knobs) -> str | None:
            for t in threads:
                outer = math.ceil(ext[t.over] / k[t.over])
                if k[t.name] > 1 and ext[t.over] % k[t.over]:
                    return (f"{t.name}={k[t.name]} needs whole tiles, but {t.over}="
                            f"{k[t.over]} leaves a tail of {ext[t.over] % k[t.over]}")
                if outer % k[t.name]:
                    return (f"{t.name}={k[t.name]} does not divide the {outer} outer tiles of "
                            f"{t.over}={k[t.over]}")
            return extra(k) if extra is not None else None

        def single(name: str, value: int) -> str | None:
            knob = spec[name]
            if knob.role == THREAD:
                return None if value in NTHREADS else (
                    f"{name}={value} is not one of {', '.join(map(str, NTHREADS))}")
            if not 1 <= value <= ext[name]:
                return f"{name}={value} is outside 1..{ext[name]} ({knob.unit.label})"
            return legal(knob, ext[name], value) if legal is not None else None

        return cls(axes=axes, constraint=constraint,
                   units={k.name: k.unit.label for k in knobs}, spec=spec, extents=ext,
                   elements={k.name: k.unit.elements(hw) for k in knobs}, legal=single)

    def role(self, name: str) -> str:
        """The knob's role (``spatial``, ``reduction``, ``thread``)."""
        return self.spec[name].role

    def names_of(self, role: str) -> list[str]:
        return [n for n in self.axes if n in self.spec and self.spec[n].role == role]

    def steps(self, name: str, value: int) -> int:
        """Loop trips of a tile knob's outer loop: tiles of ``value`` units over its extent."""
        return math.ceil(self.extents[name] / value)

    @property
    def names(self) -> list[str]:
        return list(self.axes)

    @property
    def product_size(self) -> int:
        n = 1
        for values in self.axes.values():
            n *= len(values)
        return n

    def __iter__(self) -> Iterator[Knobs]:
        names = self.names
        for combo in itertools.product(*self.axes.values()):
            knobs = dict(zip(names, combo, strict=True))
            if self.constraint(knobs) is None:
                yield knobs

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def problem(self, knobs: Mapping[str, int]) -> str | None:
        """Why ``knobs`` is not a point of this space, or None."""
        for name in knobs:
            if name not in self.axes:
                return f"unknown knob {name!r} (knobs: {', '.join(self.names)})"
        for name, values in self.axes.items():
            if name not in knobs:
                return f"knob {name!r} is missing"
            if self.legal is not None:
                why = self.legal(name, knobs[name])
                if why:
                    return why
            elif knobs[name] not in values:
                shown = ", ".join(map(str, values))
                return f"{name}={knobs[name]} is not in the space (values: {shown})"
        return self.constraint(dict(knobs))

    def check(self, knobs: Mapping[str, int]) -> Knobs:
        """``knobs`` as a dict, or ``KnobError``."""
        why = self.problem(knobs)
        if why:
            raise KnobError(why)
        return dict(knobs)

    def complete(self, partial: Mapping[str, int]) -> Knobs:
        """Fill knobs the user did not give from ``default()``, then check."""
        for name in partial:
            if name not in self.axes:
                raise KnobError(f"unknown knob {name!r} (knobs: {', '.join(self.names)})")
        knobs = self.default()
        knobs.update(partial)
        return self.check(knobs)

    def default(self) -> Knobs:
        """A sensible starting point: the first legal point nearest the middle of every axis."""
        mid = {n: v[len(v) // 2] for n, v in self.axes.items()}
        if self.constraint(mid) is None:
            return mid
        return next(iter(self))


def parse_knobs(text: str | None) -> Knobs:
    """``"tile_h=2,tile_co=4"`` -> ``{"tile_h": 2, "tile_co": 4}``."""
    out: Knobs = {}
    if not text:
        return out
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep:
            raise KnobError(f"knob {part!r} must be NAME=VALUE")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise KnobError(f"knob {name.strip()}={value!r}: value must be an integer") from None
    return out
