"""Your power profiles: a board's baseline power and dynamic scale fitted to meter readings
(``vtatune.energy.calibrate``), saved beside your timing profiles.

A profile ``NAME`` of board ``B`` lives in ``<data>/energy/B/NAME.json`` (``<data>`` as for
timing profiles: ``$VTATUNE_DATA``, else the XDG data folder). ``--board B@NAME`` then prices
energy with it wherever the board is named so: the dynamic terms scaled by the fitted scale,
static and baseline power replaced by the fitted baseline. Without one, the shipped constants
are used and outputs say the figures are estimates.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtatune.errors import ConfigError
from vtatune.hardware.timing_profiles import data_dir

SCHEMA = 1
#: How many standard errors a calibrated figure's range spans on each side.
RANGE_SIGMAS = 2.0


@dataclass(frozen=True)
class PowerProfile:
    """A fitted power profile. ``baseline_w`` is all the power that does not scale with the
    program's events (fabric static, processor system, board); ``scale`` multiplies the
    model's dynamic energy; each with its standard error and whether the records pinned it."""

    board: str
    name: str
    baseline_w: float
    baseline_se: float
    scale: float
    scale_se: float
    scale_pinned: bool
    records: int
    median_abs_error: float

    @property
    def note(self) -> str:
        held = "" if self.scale_pinned else ", dynamic scale held at the shipped constants'"
        return (f"calibrated on {self.records} measured power record"
                f"{'s' if self.records != 1 else ''} (profile {self.name}: baseline "
                f"{self.baseline_w:.3g} +- {self.baseline_se:.2g} W, dynamic scale "
                f"{self.scale:.3g} +- {self.scale_se:.2g}{held}; median error "
                f"{100 * self.median_abs_error:.1f}%)")

    def as_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "board": self.board, "name": self.name,
                "baseline_w": self.baseline_w, "baseline_se": self.baseline_se,
                "scale": self.scale, "scale_se": self.scale_se,
                "scale_pinned": self.scale_pinned, "records": self.records,
                "median_abs_error": self.median_abs_error}


def path_of(board: str, name: str) -> Path:
    return data_dir() / "energy" / board / f"{name}.json"


def save(profile: PowerProfile) -> Path:
    """Write ``profile`` (replacing one of the same name) atomically; returns its path."""
    path = path_of(profile.board, profile.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".power-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(profile.as_dict(), f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return path


def load(board: str, name: str | None) -> PowerProfile | None:
    """Your profile ``name`` of ``board``, or None when there is none (or no name)."""
    if not name:
        return None
    path = path_of(board, name)
    if not path.is_file():
        return None
    from vtatune.readers import read_json

    raw = read_json(path, "power profile")
    return parse(raw, str(path))


_FIELDS = {"board": str, "name": str, "baseline_w": float, "baseline_se": float,
           "scale": float, "scale_se": float, "scale_pinned": bool, "records": int,
           "median_abs_error": float}


def parse(raw: Any, source: str) -> PowerProfile:
    if not isinstance(raw, dict):
        raise ConfigError(source, ["expected a JSON object"])
    problems = []
    if raw.get("schema") != SCHEMA:
        problems.append(f"schema must be {SCHEMA}")
    for key, kind in _FIELDS.items():
        v = raw.get(key)
        ok = (isinstance(v, bool) if kind is bool else
              isinstance(v, int) and not isinstance(v, bool) if kind is int else
              isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
              and v >= 0 if kind is float else isinstance(v, str) and bool(v))
        if not ok:
            want = "non-negative number" if kind is float else kind.__name__
            problems.append(f"{key}: missing or not a {want}")
    if problems:
        raise ConfigError(source, problems)
    return PowerProfile(**{k: raw[k] for k in _FIELDS})
