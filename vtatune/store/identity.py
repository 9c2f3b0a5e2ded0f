"""What a stored result depends on, as keys: the store serves a record only where every one holds.

Three identities, kept apart on purpose:

- **program key** (``vtatune.compiler.compile.program_key``): what a compiled VTA program
  depends on: the workload, the GEMM shape and data widths (``hardware.config.PROGRAM_KEYS``),
  the knobs and any user passes. Buffer sizes only decide whether the program *fits*
  (verification), so the compile cache shares one program across them.
- **candidate key** (``Candidate.key``: workload | full hardware | knobs): what a study explores;
  a trial is a candidate new to its study.
- **evaluation context** (``EvalContext``): everything else a record's numbers depend on: the
  board (its file: clock, AXI width, resources), the study's constraints (``fit_board``,
  ``max_area_mm2``, ...) and the **model fingerprint**: the timing and area model versions
  (``vtatune.simulator.timing.MODEL_VERSION``, ``vtatune.area.MODEL_VERSION``, bumped on any
  change of their equations), the contents of the board's file, of its timing profile (the
  board may be named ``NAME@PROFILE``; a timing file of one profile counts whole) and of the
  area coefficients, and ``RESULT_FORMAT_VERSION`` (bumped when a record's fields change
  meaning). A stored record is ``(candidate key, context key)``; changing any of these gives
  another context key, so stale cycles are never served.

``model_key`` is the context without the constraints: the board and models only. Records of one
model key agree on every measured number (cycles, area, resources); only which of them count
as feasible depends on the constraints (the warm start re-judges them, see ``search.runner``).

Keys are SHA-256 prefixes of canonical JSON: equal inputs give equal keys in any process.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Version of what a stored candidate record means; bump when a field changes meaning or unit.
RESULT_FORMAT_VERSION = 2

#: Hex digits of a context or model key (64 bits: collisions are not a practical concern).
KEY_HEX = 16

def digest(obj: Any) -> str:
    """A short stable hash of a JSON-able object (key order does not matter)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_HEX]


def file_digest(path: Path) -> str:
    """Hash of a JSON or TOML file's *content* (formatting and key order do not matter); raw
    bytes for any other file; ``"missing"`` when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError:
        return "missing"
    try:
        if path.suffix == ".json":
            return digest(json.loads(data))
        if path.suffix == ".toml":
            return digest(tomllib.loads(data.decode()))
    except (ValueError, UnicodeDecodeError):
        pass
    return hashlib.sha256(data).hexdigest()[:KEY_HEX]


def model_fingerprint(board: str) -> dict[str, Any]:
    """Everything of the models a record of ``board`` depends on (versions and file hashes).

    ``board`` may name a timing profile (``pynq-z1@2019-08``); ``timing_file`` hashes the
    content of the profile used (for a board whose timing file holds one profile, the whole
    file, as before profiles existed), so each profile's records have their own key, and
    results of a board named without a profile are served only while its default profile's
    constants are the same."""
    from vtatune.area import MODEL_VERSION as AREA_MODEL_VERSION
    from vtatune.area.coefficients import default_path
    from vtatune.compiler.version import COMPILER_VERSION
    from vtatune.errors import UserError
    from vtatune.hardware import timing_profiles
    from vtatune.hardware.boards import boards_dir
    from vtatune.simulator.timing import MODEL_VERSION as TIMING_MODEL_VERSION

    base, profile = board.partition("@")[0], board.partition("@")[2] or None
    try:
        timing = digest(timing_profiles.resolve(base, profile).content)
    except UserError:
        timing = "missing"
    return {
        "result_format": RESULT_FORMAT_VERSION,
        "compiler": int(COMPILER_VERSION),
        "timing_model": int(TIMING_MODEL_VERSION),
        "area_model": int(AREA_MODEL_VERSION),
        "board_file": file_digest(boards_dir() / f"{base}.json"),
        "timing_file": timing,
        "area_coefficients": file_digest(default_path()),
    }


@dataclass(frozen=True)
class EvalContext:
    """Board, constraints and model fingerprint under which a record was measured."""

    board: str
    constraints: tuple[tuple[str, Any], ...]
    fingerprint: tuple[tuple[str, Any], ...]

    @property
    def key(self) -> str:
        """Identity of the context (board, constraints, models)."""
        return digest(self.describe())

    @property
    def model_key(self) -> str:
        """Identity of the board and models only (constraints left out)."""
        return digest({"board": self.board, "model": dict(self.fingerprint)})

    def describe(self) -> dict[str, Any]:
        """The context as JSON (stored with studies, to name what changed)."""
        return {"board": self.board, "constraints": dict(self.constraints),
                "model": dict(self.fingerprint)}


def context(board: str, constraints: Mapping[str, Any]) -> EvalContext:
    """The evaluation context of ``board`` under ``constraints`` with today's models."""
    cons = tuple(sorted((str(k), _plain(v)) for k, v in constraints.items()))
    return EvalContext(board, cons, tuple(sorted(model_fingerprint(board).items())))


def differences(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    """``what old, not new`` for every leaf that differs between two JSON-like dicts."""
    out: list[str] = []
    for k in sorted(set(old) | set(new), key=str):
        a, b = old.get(k), new.get(k)
        name = f"{prefix}{k}"
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out += differences(a, b, prefix=f"{name} ")
        elif _plain(a) != _plain(b):
            out.append(f"{name} {_show(a)}, not {_show(b)}")
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return v  # keep 4.0 a float: JSON round-trips it as 4.0
    return v


def _show(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(str(x) for x in v) + "]"
    return str(v)
