"""Schedule knob spaces: named knobs, their legal values, and the constraints between them."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from vtatune.errors import KnobError

Knobs = dict[str, int]


def divisors(n: int) -> tuple[int, ...]:
    """Positive divisors of ``n`` in increasing order."""
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


@dataclass(frozen=True)
class KnobSpace:
    """An enumerable space of schedule knobs for one (workload, hardware) pair.

    ``axes`` gives every knob's legal values; ``constraint`` rejects combinations whose parts
    are legal alone but not together (e.g. two virtual threads over a single outer tile).
    """

    axes: Mapping[str, tuple[int, ...]]
    constraint: Callable[[Knobs], str | None] = field(default=lambda k: None, compare=False)
    units: Mapping[str, str] = field(default_factory=dict, compare=False)

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
            if knobs[name] not in values:
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
