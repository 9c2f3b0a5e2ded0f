"""How numbers read everywhere a person sees them: the terminal (``search``, ``show``,
``studies``), report pages and figure labels. One function per quantity, so ``search`` and
``show`` and the reports never disagree (machine outputs — JSON, CSV — keep raw numbers).

- cycles and counts: thousands separators (``544,328``);
- latency: milliseconds with three decimals (``5.443``) — the board clock makes a cycle 10 ns
  at 100 MHz, so three decimals resolve 100 cycles;
- area: mm² with two decimals (``37.42``);
- efficiency, utilization and shares: percent with one decimal (``84.1%``; ``84.1`` in a
  column headed ``(%)``);
- hypervolume: a share of its box with three decimals (``0.694``);
- buffer sizes: KiB as whole numbers (``32``).

Missing values (an infeasible design has no latency) are ``-``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import TypeIs  # typing.TypeIs from Python 3.13

MISSING = "-"

#: Decimals of each fixed-point quantity.
MS_DECIMALS = 3
AREA_DECIMALS = 2
PERCENT_DECIMALS = 1


def _missing(v: float | None) -> TypeIs[None]:
    """None or NaN (the type checker then knows a value that is not missing is a number)."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def cycles(v: float | None) -> str:
    """``544,328``."""
    return MISSING if _missing(v) else f"{round(v):,}"


def count(v: float | None) -> str:
    """A count of things (LUTs, FFs, trials): ``38,574``; half blocks keep their ``.5``."""
    if _missing(v):
        return MISSING
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:,.1f}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` things in words: ``1 design``, ``2 designs``, ``1,024 trials`` (``plural`` for
    nouns that do not take an ``s``)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def ms(v: float | None) -> str:
    """Milliseconds, fixed decimals: ``5.443``."""
    return MISSING if _missing(v) else f"{v:,.{MS_DECIMALS}f}"


def ms_of_cycles(n: float | None, clock_mhz: float) -> str:
    """``cycles`` at ``clock_mhz`` in milliseconds."""
    return MISSING if _missing(n) else ms(n / (clock_mhz * 1e3))


def area(v: float | None) -> str:
    """mm², two decimals: ``37.42``."""
    return MISSING if _missing(v) else f"{v:,.{AREA_DECIMALS}f}"


def percent(fraction: float | None) -> str:
    """A fraction (0..1) as percent, one decimal: ``84.1%``."""
    return MISSING if _missing(fraction) else f"{100 * fraction:.{PERCENT_DECIMALS}f}%"


def percent_value(fraction: float | None) -> str:
    """A fraction (0..1) as a percent number, one decimal, for a column headed ``(%)``:
    ``23.2``."""
    return MISSING if _missing(fraction) else f"{100 * fraction:.{PERCENT_DECIMALS}f}"


#: Decimals of a hypervolume (a share of the box, 0..1).
HV_DECIMALS = 3


def hypervolume(v: float | None) -> str:
    """A front's hypervolume, a share of its box: ``0.694``."""
    return MISSING if _missing(v) else f"{v:.{HV_DECIMALS}f}"


def kib(nbytes: float | None) -> str:
    """Bytes as KiB: ``32`` (fractions only when there are any: ``0.5``)."""
    if _missing(nbytes):
        return MISSING
    k = nbytes / 1024
    return f"{k:,.0f}" if k.is_integer() else f"{k:,.3g}"


def seconds(v: float | None) -> str:
    """Wall time: ``12.3 s``."""
    return MISSING if _missing(v) else f"{v:.1f} s"


def energy(joules: float | None) -> str:
    """Energy with an SI prefix, three significant digits: ``812 mJ``, ``3.41 uJ``."""
    return MISSING if _missing(joules) else _si(joules, "J")


def power(watts: float | None) -> str:
    """Power with an SI prefix, three significant digits: ``1.93 W``, ``84.2 mW``."""
    return MISSING if _missing(watts) else _si(watts, "W")


def energy_range(f: dict[str, float], ranged: bool = True) -> str:
    """An energy figure ``{value, low, high}``: ``812 mJ (640 mJ-1.02 J)``."""
    return _ranged(f, energy, ranged)


def power_range(f: dict[str, float], ranged: bool = True) -> str:
    """A power figure ``{value, low, high}``: ``1.93 W (1.71-2.30 W)``."""
    return _ranged(f, power, ranged)


def _ranged(f: dict[str, float], one: Callable[[float | None], str], ranged: bool) -> str:
    text = one(f["value"])
    return f"{text} ({one(f['low'])} to {one(f['high'])})" if ranged else text


_PREFIXES = ((1.0, ""), (1e-3, "m"), (1e-6, "u"), (1e-9, "n"), (1e-12, "p"))


def _si(v: float, unit: str) -> str:
    if v == 0:
        return f"0 {unit}"
    for scale, prefix in _PREFIXES:
        if abs(v) >= scale or scale == _PREFIXES[-1][0]:
            return f"{v / scale:.3g} {prefix}{unit}"
    raise AssertionError("unreachable")


def knobs(values: dict[str, int]) -> str:
    """``tile_ci=1, tile_co=8, ...`` — sorted, comma and space, so text wraps between knobs."""
    return ", ".join(f"{k}={v}" for k, v in sorted(values.items()))


#: What a generated hardware name such as ``1x16x8-i8w32a64u8`` means.
HW_NAME_LEGEND = ("hardware names: BATCHxBLOCK_INxBLOCK_OUT-i<inp>w<wgt>a<acc>u<uop>, the "
                  "GEMM shape and the input/weight/accumulator/micro-op buffer sizes in KiB "
                  "(e.g. 1x16x8-i8w32a64u8)")
