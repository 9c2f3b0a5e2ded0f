"""The energy model's constants: ``hwconfigs/energy/constants.toml``, validated once.

Every constant is ``{ value, low, high, unit, source }``: the central estimate and the range its
sources support (``low <= value <= high``). Validation walks the whole file and lists every
problem in one ``ConfigError``. Families hold the fabric's per-event energies, boards what lies
outside the fabric. A source starting with ``UNSOURCED`` marks an engineering estimate that no
public figure backs; outputs name such constants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from vtatune.errors import ConfigError
from vtatune.hardware.boards import FAMILIES
from vtatune.paths import project_root
from vtatune.readers import parse_toml, read_text

SCHEMA = 1
#: Per-event energies of a family's programmable logic (pJ, or fJ per cell-cycle).
FAMILY_KEYS = ("bram_access_pj", "uram_access_pj", "mac_lut_pj", "mac_dsp_pj", "alu_lane_pj",
               "ff_clock_fj", "lut_active_fj")
#: What a board adds outside the fabric (pJ per DRAM byte, watts).
BOARD_KEYS = ("dram_pj_per_byte", "pl_static_w", "base_w", "supply_max_w")
UNSOURCED = "UNSOURCED"


@dataclass(frozen=True)
class Constant:
    """One constant: central ``value`` and the ``low``..``high`` range its sources support."""

    name: str
    value: float
    low: float
    high: float
    unit: str
    source: str

    @property
    def unsourced(self) -> bool:
        return self.source.startswith(UNSOURCED)

    def pick(self, which: str) -> float:
        """``value``, ``low`` or ``high``."""
        return float(getattr(self, which))


@dataclass(frozen=True)
class EnergyConstants:
    """The constants one board's energy uses: its family's and its own, by name."""

    board: str
    family: str
    node: str
    constants: dict[str, Constant]

    def __getitem__(self, name: str) -> Constant:
        return self.constants[name]

    @property
    def unsourced(self) -> tuple[str, ...]:
        return tuple(sorted(n for n, c in self.constants.items() if c.unsourced))


@dataclass(frozen=True)
class EnergyTable:
    """The whole file: families and boards by name."""

    path: str
    families: dict[str, tuple[str, dict[str, Constant]]]  # family -> (node, constants)
    boards: dict[str, dict[str, Constant]]

    def for_board(self, board: str, family: str) -> EnergyConstants:
        """The constants of ``board`` (of ``family``); ``ConfigError`` when the file has none."""
        missing = [what for what, ok in ((f"board {board!r}", board in self.boards),
                                         (f"family {family!r}", family in self.families))
                   if not ok]
        if missing:
            raise ConfigError(self.path, [f"no energy constants for {m}" for m in missing])
        node, fam = self.families[family]
        return EnergyConstants(board, family, node, {**fam, **self.boards[board]})


def default_path() -> Path:
    return project_root() / "hwconfigs" / "energy" / "constants.toml"


def load(path: str | Path | None = None) -> EnergyTable:
    """The validated constants (the shipped file by default); cached per path."""
    return _load_cached(str(Path(path) if path is not None else default_path()))


@lru_cache(maxsize=8)
def _load_cached(path: str) -> EnergyTable:
    doc = parse_toml(read_text(path, "energy constants"), path)
    return parse(doc, path)


def parse(doc: dict[str, Any], source: str) -> EnergyTable:
    """Validate a parsed constants document; every problem in one ``ConfigError``."""
    problems: list[str] = []
    if doc.get("schema") != SCHEMA:
        problems.append(f"schema must be {SCHEMA}, not {doc.get('schema')!r}")
    unknown = sorted(set(doc) - {"schema", "description", "families", "boards"})
    problems += [f"unknown top-level key {k!r}" for k in unknown]
    families: dict[str, tuple[str, dict[str, Constant]]] = {}
    for name, table in _tables(doc, "families", problems):
        if name not in FAMILIES:
            problems.append(f"families.{name}: not a known family ({', '.join(FAMILIES)})")
            continue
        node = table.get("node")
        node_value = node.get("value") if isinstance(node, dict) else None
        if not isinstance(node_value, str):
            problems.append(f"families.{name}.node: needs {{ value = NAME, unit, source }}")
        consts = _constants(table, f"families.{name}", FAMILY_KEYS, {"node"}, problems)
        families[name] = (str(node_value), consts)
    boards: dict[str, dict[str, Constant]] = {}
    for name, table in _tables(doc, "boards", problems):
        boards[name] = _constants(table, f"boards.{name}", BOARD_KEYS, set(), problems)
    if problems:
        raise ConfigError(source, problems)
    return EnergyTable(source, families, boards)


def _tables(doc: dict[str, Any], key: str, problems: list[str]
            ) -> list[tuple[str, dict[str, Any]]]:
    tables = doc.get(key)
    if not isinstance(tables, dict) or not tables:
        problems.append(f"[{key}] is missing or empty")
        return []
    out = []
    for name, table in tables.items():
        if isinstance(table, dict):
            out.append((name, table))
        else:
            problems.append(f"{key}.{name}: must be a table")
    return out


def _constants(table: dict[str, Any], where: str, keys: tuple[str, ...], other: set[str],
               problems: list[str]) -> dict[str, Constant]:
    out: dict[str, Constant] = {}
    problems += [f"{where}: unknown key {k!r}" for k in sorted(set(table) - set(keys) - other)]
    for key in keys:
        raw = table.get(key)
        if raw is None:
            problems.append(f"{where}.{key}: missing")
            continue
        c = _constant(raw, f"{where}.{key}", key, problems)
        if c is not None:
            out[key] = c
    return out


def _constant(raw: Any, where: str, name: str, problems: list[str]) -> Constant | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: needs {{ value, low, high, unit, source }}")
        return None
    bad = sorted(set(raw) - {"value", "low", "high", "unit", "source"})
    if bad:
        problems.append(f"{where}: unknown field(s) {', '.join(bad)}")
    nums = {}
    for f in ("value", "low", "high"):
        v = raw.get(f)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            problems.append(f"{where}.{f}: must be a finite number >= 0, not {v!r}")
            return None
        nums[f] = float(v)
    if not nums["low"] <= nums["value"] <= nums["high"]:
        problems.append(f"{where}: needs low <= value <= high "
                        f"({nums['low']:g}, {nums['value']:g}, {nums['high']:g})")
    for f in ("unit", "source"):
        if not isinstance(raw.get(f), str) or not raw[f].strip():
            problems.append(f"{where}.{f}: must be a non-empty text")
            return None
    return Constant(name, nums["value"], nums["low"], nums["high"], raw["unit"], raw["source"])
