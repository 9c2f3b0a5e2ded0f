"""Measured records with a meter's power readings: the readings read and checked, each
record's program compiled and priced, the board's power fitted (``vtatune.energy.calibrate``).

Here, above the compiler, because pricing a measured record means compiling its schedule, as
the timing fit's ``prepare`` does; the energy package itself only prices programs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vtatune.energy.calibrate import PowerFit, PowerRecord

#: A measured record's power readings: watts idle (bitstream loaded, accelerator idle) and
#: while the record's program runs back to back.
POWER_KEYS = ("idle_w", "running_w")
#: Largest power reading taken as real (a meter's typo beyond any board supply).
MAX_WATTS = 1000.0


def power_readings(raw: Any, source: str) -> dict[int, tuple[float, float]] | None:
    """Each record's ``(idle_w, running_w)`` by its index in a JSON list of measured records,
    or None when no record carries power readings. Every record must carry both when one
    does; a reading must be a finite number in [0, MAX_WATTS] W, running above 0. Raises
    ``UserError`` naming every problem."""
    from vtatune.errors import UserError

    if not isinstance(raw, list) or not any(
            isinstance(r, dict) and any(k in r for k in POWER_KEYS) for r in raw):
        return None
    out: dict[int, tuple[float, float]] = {}
    problems = []
    for i, rec in enumerate(raw):
        vals = [rec.get(k) if isinstance(rec, dict) else None for k in POWER_KEYS]
        watts = [float(v) for v in vals
                 if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                 and 0 <= v <= MAX_WATTS]
        bad = [k for k, v in zip(POWER_KEYS, vals, strict=True)
               if not (isinstance(v, int | float) and not isinstance(v, bool)
                       and math.isfinite(v) and 0 <= v <= MAX_WATTS)]
        if not bad and watts[1] <= 0:
            bad = ["running_w"]
        if bad:
            problems.append(f"record {i}: {' and '.join(bad)} must be watts in [0, "
                            f"{MAX_WATTS:g}] (running above 0)")
            continue
        out[i] = (watts[0], watts[1])
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UserError(f"{source}: power readings: " + "; ".join(problems[:3]) + more)
    return out


def fit_measured(records: Sequence[Any], readings: dict[int, tuple[float, float]],
                 board: Any) -> tuple[PowerFit, list[PowerRecord]]:
    """Compile each measured record's schedule (``MeasuredRecord``: workload, hw, knobs, ms),
    price its program over the measured time and fit the board's power to the readings."""
    from vtatune.calibration.prepare import record_knobs
    from vtatune.compiler import compile_candidate
    from vtatune.energy.calibrate import fit, power_record
    from vtatune.errors import UserError
    from vtatune.runtime import build_program
    from vtatune.simulator import simulate

    prs = []
    for r in records:
        res = compile_candidate(r.workload, r.hw, record_knobs(r))
        if not res.ok:
            raise UserError(f"record {r.index} ({r.label}): its schedule does not compile "
                            f"({res.status}: {res.reason})")
        program = build_program(res, r.workload, r.hw)
        t = simulate(program, board)
        idle, running = readings[r.index]
        prs.append(power_record(f"record {r.index} ({r.label})", program, t.cycles,
                                r.ms / 1e3, board, idle, running))
    return fit(prs), prs
