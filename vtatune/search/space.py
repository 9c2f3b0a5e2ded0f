"""Search spaces: what `vtatune search` explores, read from ``spaces/*.toml``.

A space fixes a workload and a board and lists

- ``[hardware]``: the choices of each VTA log2 parameter (``LOG_BLOCK_IN = [3, 4, 5]``); keys
  not listed keep the base config's value (``base = "default"``). VTA's own ``LOG_BLOCK``
  (BLOCK_IN = BLOCK_OUT) may stand for the pair: fixed, it sets both; searched, the space
  holds square GEMMs only — ``hw_choices`` then lists ``LOG_BLOCK_IN`` and no
  ``LOG_BLOCK_OUT``, which follows it (``TIED``);
- ``[schedule]``: which knobs are searched; knobs not searched take the template's suggestion;
- ``[objective]``: ``kind``: ``area-latency`` (a Pareto front), ``latency``, or one with
  energy (``area-energy``, ``latency-energy``, ``edp``, ``area-latency-energy``:
  ``search.objectives``); ``latency``:
  ``end-to-end`` (seconds per call, accelerator + host; the default) or ``accelerator``
  (cycles);
- ``[constraints]``: must the design fit the board, an optional area budget, and
  ``stock_vta = true`` to keep to designs stock VTA builds as they are (``hardware.stock``).

**Parameterization.** Tile knobs are counted in hardware tiles (``tile_co`` in BLOCK_OUT
channel tiles), so the same value means different work on different hardware. The sampler
instead sees, per tile knob, a position ``u`` in [0, 1] on the *log scale of the knob's
extent in workload units*: ``u = 0`` is the smallest tile, ``u = 1`` the whole extent, and
``u = 0.5`` a tile of about sqrt(extent) channels / rows. ``realize`` maps ``u`` to the legal
value (a divisor of the extent on that hardware) closest in log scale. A learned relation
"half the output channels per tile is good" therefore survives a change of BLOCK_OUT. Virtual
threads are categorical (1 or 2); two threads that do not divide the outer tiles fall back
to one. Hardware parameters are categorical over their listed values. Which knobs are tiles
and which threads, and what unit a tile counts, is the operator's knob declaration
(``Workload.KNOBS``, see ``schedules.knobs``).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtatune.errors import ConfigError, UserError
from vtatune.hardware import boards, config
from vtatune.hardware.boards import DEFAULT_BOARD
from vtatune.hardware.config import LOG_KEYS, HwConfig
from vtatune.passes.vta_copy_rules import REFUSED
from vtatune.schedules.knobs import NTHREADS, THREAD
from vtatune.search.objectives import OBJECTIVES, uses_energy
from vtatune.workloads.base import Workload

if TYPE_CHECKING:
    from vtatune.passes.user import PassSet

#: What the latency objective measures: end to end per call (accelerator + host) or the
#: accelerator only.
LATENCIES = ("end-to-end", "accelerator")

#: VTA's own key for a square GEMM (``vta_config.json``): BLOCK_IN = BLOCK_OUT = 2**LOG_BLOCK.
LOG_BLOCK = "LOG_BLOCK"
#: A LOG_* parameter absent from a space's ``hw_choices`` that takes another's value: a
#: space file's searched ``LOG_BLOCK`` becomes ``LOG_BLOCK_IN`` choices (the sampler's one
#: parameter) with ``LOG_BLOCK_OUT`` following it.
TIED = {"LOG_BLOCK_OUT": "LOG_BLOCK_IN"}

#: Param name prefix of a tile knob's log-position.
U_PREFIX = "u_"
#: How a hardware problem that only the ``stock_vta`` constraint raises begins.
NOT_STOCK = "not stock VTA"


@dataclass(frozen=True)
class Candidate:
    """One point to evaluate: a workload on a hardware config with schedule knobs, compiled
    with the user's passes (``passes.user.PassSet``) if any."""

    workload: Workload
    hw: HwConfig
    knobs: dict[str, int]
    passes: PassSet | None = None

    @property
    def passes_fingerprint(self) -> str:
        """The user passes' fingerprint, empty without passes."""
        return self.passes.fingerprint if self.passes is not None else ""

    @property
    def key(self) -> str:
        """Identity for deduplication across studies: workload, hardware, knobs, and the user
        passes' fingerprint when there are passes (keys without passes are unchanged)."""
        knobs = ",".join(f"{k}={v}" for k, v in sorted(self.knobs.items()))
        key = f"{self.workload.signature}|{self.hw.key}|{knobs}"
        return f"{key}|passes={self.passes.fingerprint}" if self.passes is not None else key


@dataclass(frozen=True)
class SearchSpace:
    """A validated search space (see the module docstring)."""

    name: str
    workload: Workload
    board: str
    base_hw: HwConfig
    hw_choices: dict[str, tuple[int, ...]]
    knobs: tuple[str, ...]
    objective: str
    fit_board: bool = True
    max_area_mm2: float | None = None
    source: str = ""
    #: the user's passes and verifiers every candidate is compiled with (``--passes``)
    passes: PassSet | None = None
    stock_vta: bool = False
    #: What "latency" means in the objective: ``end-to-end`` seconds per call (accelerator +
    #: host, what a board measures) or ``accelerator`` cycles only.
    latency: str = "end-to-end"

    @property
    def constraints(self) -> dict[str, Any]:
        """What decides feasibility besides the hardware itself. Every entry is part of a
        stored result's identity (``store.identity``): a new constraint is added here."""
        return {"fit_board": self.fit_board, "max_area_mm2": self.max_area_mm2,
                "stock_vta": self.stock_vta}

    # ---- what samplers see ---------------------------------------------------------------
    @cached_property
    def thread_knobs(self) -> tuple[str, ...]:
        """The operator's virtual-thread knobs (categorical 1 or 2; the others are tiles)."""
        return thread_knobs(self.workload)

    @property
    def searched_hw(self) -> dict[str, tuple[int, ...]]:
        """Hardware parameters with more than one choice."""
        return {k: v for k, v in self.hw_choices.items() if len(v) > 1}

    @property
    def joint(self) -> bool:
        return bool(self.searched_hw)

    def param_space(self) -> dict[str, tuple[str, tuple[Any, ...]]]:
        """Sampler parameters: name -> ("categorical", choices) or ("float", (0.0, 1.0))."""
        out: dict[str, tuple[str, tuple[Any, ...]]] = {}
        for key, values in self.searched_hw.items():
            out[key] = ("categorical", values)
        for knob in self.knobs:
            if knob in self.thread_knobs:
                out[knob] = ("categorical", NTHREADS)
            else:
                out[U_PREFIX + knob] = ("float", (0.0, 1.0))
        return out

    def grid(self, levels: int = 5) -> dict[str, tuple[Any, ...]]:
        """A finite version of ``param_space`` (u in ``levels`` equal steps) for grid search."""
        out: dict[str, tuple[Any, ...]] = {}
        for name, (kind, values) in self.param_space().items():
            if kind == "categorical":
                out[name] = tuple(values)
            else:
                out[name] = tuple(round(i / (levels - 1), 6) for i in range(levels))
        return out

    # ---- from sampler parameters to a candidate ------------------------------------------
    def hardware(self, params: dict[str, Any]) -> HwConfig:
        """The HwConfig a parameter set names (not validated)."""
        logs = self.base_hw.log_params()
        for key, values in self.hw_choices.items():
            logs[key] = int(params.get(key, values[0]))
        for key, leader in TIED.items():
            if key not in self.hw_choices:
                logs[key] = logs[leader]
        return HwConfig.from_params(logs, target=self.base_hw.target,
                        hw_ver=self.base_hw.hw_ver, name=_hw_name(logs))

    def realize(self, params: dict[str, Any]) -> tuple[Candidate | None, str]:
        """(candidate, "") or (None, why the hardware is impossible). A point with a tile
        VTA's compiler refuses realizes to the nearest one it builds (``nearest_legal``)."""
        from vtatune import schedules

        hw = self.hardware(params)
        problems = self.hardware_problems(hw)
        if problems:
            return None, "hardware: " + "; ".join(problems)
        space = schedules.knob_space(self.workload, hw, self.stock_vta)
        knobs = self._defaults(space, hw, params)
        for knob in self.knobs:
            if knob in self.thread_knobs:
                knobs[knob] = int(params.get(knob, knobs[knob]))
            elif U_PREFIX + knob in params:
                knobs[knob] = nearest_log(space.axes[knob], float(params[U_PREFIX + knob]),
                                          space.elements[knob])
        for knob in self.thread_knobs:
            why = space.problem(knobs) if knob in knobs and knobs[knob] > 1 else None
            if why and REFUSED not in why:
                knobs[knob] = 1
        why = space.problem(knobs)
        if why and REFUSED in why:
            # VTA's compiler refuses a tile of this point: the nearest point it builds
            knobs = nearest_legal(self.workload, hw, self.stock_vta, knobs, self.knobs) or knobs
            why = space.problem(knobs)
        if why:
            return None, f"schedule: {why}"
        return Candidate(self.workload, hw, knobs, self.passes), ""

    def _defaults(self, space: Any, hw: HwConfig, params: dict[str, Any]) -> dict[str, int]:
        """Values of the knobs ``params`` does not set: the template's suggestion. It
        enumerates the knob space (~0.1 s on a new config), so it is computed only when some
        such knob has a choice: a joint search sets every knob and meets a new config at
        almost every trial."""
        from vtatune import schedules

        for name in space.names:
            given = name in params if name in self.thread_knobs else U_PREFIX + name in params
            if not (name in self.knobs and given) and len(space.axes[name]) > 1:
                return dict(schedules.suggest(self.workload, hw, self.stock_vta))
        return {name: space.axes[name][0] for name in space.names}

    def hardware_problems(self, hw: HwConfig) -> list[str]:
        """Why ``hw`` is not a design of this space: it cannot be built or encoded, or (with
        the ``stock_vta`` constraint) stock VTA cannot build it on the space's board."""
        problems = config.problems_of(hw)
        if not problems and self.stock_vta:
            from vtatune.hardware import boards, stock

            problems = [f"{NOT_STOCK}: {p}"
                        for p in stock.stock_problems(hw, boards.load(self.board))]
        return problems

    def params_of(self, cand: Candidate) -> dict[str, Any]:
        """Sampler parameters that realize ``cand`` (for warm starts from stored results)."""
        from vtatune import schedules

        space = schedules.knob_space(self.workload, cand.hw, self.stock_vta)
        out: dict[str, Any] = {}
        logs = cand.hw.log_params()
        for key, leader in TIED.items():
            if key not in self.hw_choices and logs[key] != logs[leader]:
                raise KeyError(f"{key} != {leader}: not a design of this space")
        for key in self.searched_hw:
            out[key] = logs[key]
        for knob in self.knobs:
            if knob in self.thread_knobs:
                out[knob] = cand.knobs[knob]
            else:
                out[U_PREFIX + knob] = log_position(space.axes[knob], cand.knobs[knob],
                                                    space.elements[knob])
        return out

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "workload": self.workload.signature, "board": self.board,
                "objective": self.objective, "hardware": {k: list(v) for k, v in
                                                         self.hw_choices.items()},
                "knobs": list(self.knobs), "fit_board": self.fit_board,
                "max_area_mm2": self.max_area_mm2, "stock_vta": self.stock_vta,
                "latency": self.latency, "source": self.source,
                "passes": self.passes.describe() if self.passes is not None else None}


#: Weight of a change of a knob the space does not search (the suggestion's) and of a thread
#: count, against the log-distance of the searched tiles, when ``nearest_legal`` projects.
_FIXED_WEIGHT, _THREAD_WEIGHT = 100.0, 10.0


def nearest_legal(wl: Workload, hw: HwConfig, stock: bool, knobs: dict[str, int],
                  searched: tuple[str, ...]) -> dict[str, int] | None:
    """The point of the knob space (which holds only tiles VTA's compiler builds) nearest
    ``knobs``: the least sum of the searched tiles' log-distances, changing a thread count or
    a knob the space does not search only when needed; None for an empty space. The points
    depend on the GEMM shape and widths only (``program_hw``), so they are enumerated once
    per shape."""
    import numpy as np

    names, points = _legal_points(wl, _program_hw(hw), stock)
    if not len(points):
        return None
    threads = set(thread_knobs(wl))
    cost = np.zeros(len(points))
    for j, n in enumerate(names):
        col, v = points[:, j], knobs[n]
        if n in threads:
            diff = (col != v) * _THREAD_WEIGHT
        else:
            diff = np.abs(np.log(col) - math.log(v))
        cost += diff if n in searched else diff * _FIXED_WEIGHT
    best = points[int(np.argmin(cost))]
    return {n: int(v) for n, v in zip(names, best, strict=True)}


@lru_cache(maxsize=64)
def _legal_points(wl: Workload, shape_hw: HwConfig, stock: bool) -> tuple[tuple[str, ...], Any]:
    import numpy as np

    from vtatune import schedules

    ks = schedules.knob_space(wl, shape_hw, stock)
    rows = [tuple(k[n] for n in ks.names) for k in ks]
    return tuple(ks.names), np.array(rows, dtype=np.int64).reshape(len(rows), len(ks.names))


def _program_hw(hw: HwConfig) -> HwConfig:
    from vtatune.hardware.config import program_hw

    return program_hw(hw)


def thread_knobs(wl: Workload) -> tuple[str, ...]:
    """Names of ``wl``'s virtual-thread knobs, from its operator's declaration."""
    return tuple(k.name for k in wl.KNOBS if k.role == THREAD)


def nearest_log(values: tuple[int, ...], u: float, unit: int = 1) -> int:
    """The value of ``values`` (increasing tile counts of ``unit`` elements) whose size in
    elements is nearest ``(max elements) ** u`` in log scale; of two equally near, the
    smaller."""
    logs = _logs(tuple(values), unit)  # (an operator's axis may come as a list)
    top = values[-1] * unit
    target = math.log(top) * min(max(u, 0.0), 1.0) if top > 1 else 0.0
    if logs is None:  # not increasing: look at every value
        return min(values, key=lambda v: (abs(math.log(v * unit) - target), v))
    # the distance to the target falls, then rises along the increasing logs: the nearest
    # value is one of the two around the target's place
    i = bisect.bisect_left(logs, target)
    if i == 0:
        return values[0]
    if i == len(values) or abs(logs[i - 1] - target) <= abs(logs[i] - target):
        return values[i - 1]
    return values[i]


@lru_cache(maxsize=8192)
def _logs(values: tuple[int, ...], unit: int) -> tuple[float, ...] | None:
    """``log(v * unit)`` of each value, or None when the values do not increase (the
    annealer asks for the same axes again and again)."""
    logs = tuple(math.log(v * unit) for v in values)
    return logs if all(a < b for a, b in zip(logs[:-1], logs[1:], strict=True)) else None


def log_position(values: tuple[int, ...], v: int, unit: int = 1) -> float:
    """Inverse of ``nearest_log``: the ``u`` of value ``v``."""
    top = values[-1] * unit
    return math.log(v * unit) / math.log(top) if top > 1 else 0.0


def _smallest(hw: HwConfig) -> HwConfig:
    """``hw`` with one-element GEMM blocks (every tile knob's extent in elements)."""
    from dataclasses import replace

    return replace(hw, log_batch=0, log_block_in=0, log_block_out=0)


def _hw_name(logs: dict[str, int]) -> str:
    b, i, o = (1 << logs["LOG_BATCH"], 1 << logs["LOG_BLOCK_IN"], 1 << logs["LOG_BLOCK_OUT"])
    kib = [1 << (logs[k] - 10) for k in ("LOG_INP_BUFF_SIZE", "LOG_WGT_BUFF_SIZE",
                                          "LOG_ACC_BUFF_SIZE", "LOG_UOP_BUFF_SIZE")]
    return f"{b}x{i}x{o}-i{kib[0]}w{kib[1]}a{kib[2]}u{kib[3]}"


# ---- loading ----------------------------------------------------------------------------------

def spaces_dir() -> Path:
    from vtatune.paths import project_root

    return project_root() / "spaces"


def load(path: str | Path, *, layer: str | None = None, shape: str | None = None,
         workload: str | None = None, hw: str | None = None, board: str | None = None,
         objective: str | None = None, passes: PassSet | None = None,
         latency: str | None = None, stock_vta: bool | None = None) -> SearchSpace:
    """Read and validate a space file; CLI options override its choices.

    ``hw`` fixes the hardware (a schedule-only space on that config); ``workload``, ``layer``
    and ``shape`` replace the file's workload; ``stock_vta`` True or False replaces
    ``[constraints] stock_vta`` (``--stock-vta``).
    """
    from vtatune.readers import read_toml

    if str(path).strip() == "":
        raise ConfigError("--space", ["no space file or name given"])
    p = Path(path)
    try:
        named = not p.exists() and not p.suffix and "/" not in str(path)
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        named = False
    if named:
        p = spaces_dir() / f"{path}.toml"
    raw = read_toml(p, "space")
    return from_dict(raw, str(p), layer=layer, shape=shape, workload=workload, hw=hw,
                     board=board, objective=objective, passes=passes, latency=latency,
                     stock_vta=stock_vta)


#: The keys each section of a space file may hold (the [hardware] section: ``base`` and the
#: LOG_* parameters).
SECTION_KEYS: dict[str, tuple[str, ...]] = {
    "study": ("board", "name"),
    "workload": ("kind", "layer", "shape"),
    "hardware": ("base", LOG_BLOCK, *LOG_KEYS),
    "schedule": ("knobs",),
    "objective": ("kind", "latency"),
    "constraints": ("fit_board", "max_area_mm2", "stock_vta"),
}


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


def _sections(raw: Any, problems: list[str]) -> dict[str, dict[str, Any]]:
    """Each known section of ``raw`` as a dict (a section of the wrong type is a problem)."""
    from vtatune.escaping import shown

    if not isinstance(raw, dict):
        problems.append(f"expected a table of sections, got {_type_name(raw)}")
        return {name: {} for name in SECTION_KEYS}
    problems += [f"unknown section [{shown(k, 40)[1:-1]}]" for k in raw if k not in SECTION_KEYS]
    out = {}
    for name, keys in SECTION_KEYS.items():
        table = raw.get(name, {})
        if not isinstance(table, dict):
            problems.append(f"[{name}] must be a table, got {_type_name(table)}")
            table = {}
        unknown = [shown(k, 40) for k in table if k not in keys]
        if unknown:
            known = ", ".join(keys)
            problems.append(f"[{name}] unknown {'parameter' if name == 'hardware' else 'key'}"
                            f"{'s' if len(unknown) > 1 else ''} {', '.join(unknown[:5])} "
                            f"(known: {known})")
        out[name] = {k: v for k, v in table.items() if k in keys}
    return out


def _string(table: dict[str, Any], section: str, key: str, problems: list[str]) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        problems.append(f"[{section}] {key} must be a string, got {_type_name(value)}")
        return None
    return value


def _log_range(key: str) -> tuple[int, int]:
    """The values a LOG_* parameter may take in a space (``config.LOG_RANGES``; the data
    widths: the supported ones; LOG_BLOCK: what both BLOCK_IN and BLOCK_OUT allow)."""
    if key == LOG_BLOCK:
        (lo_in, hi_in), (lo_out, hi_out) = (config.LOG_RANGES["LOG_BLOCK_IN"],
                                            config.LOG_RANGES["LOG_BLOCK_OUT"])
        return max(lo_in, lo_out), min(hi_in, hi_out)
    if key in config.LOG_RANGES:
        return config.LOG_RANGES[key]
    allowed = {"LOG_INP_WIDTH": config.SUPPORTED_LOG_INP_WIDTH,
               "LOG_WGT_WIDTH": config.SUPPORTED_LOG_WGT_WIDTH,
               "LOG_ACC_WIDTH": config.SUPPORTED_LOG_ACC_WIDTH}[key]
    return min(allowed), max(allowed)


def from_dict(raw: dict[str, Any], source: str, *, layer: str | None = None,
              shape: str | None = None, workload: str | None = None, hw: str | None = None,
              board: str | None = None, objective: str | None = None,
              passes: PassSet | None = None, latency: str | None = None,
              stock_vta: bool | None = None) -> SearchSpace:
    from vtatune.schedules import knob_space
    from vtatune.workloads import parse

    problems: list[str] = []
    sec = _sections(raw, problems)
    wl_raw = {k: _string(sec["workload"], "workload", k, problems)
              for k in ("kind", "layer", "shape")}
    kind = workload or wl_raw["kind"] or "conv2d"
    overridden = bool(layer or shape)
    if workload and workload != (wl_raw["kind"] or workload):
        overridden = True
        file_wl, wl_raw = wl_raw, {}  # another workload than the file's: its layer/shape
    else:                             # do not apply
        file_wl = wl_raw
    if overridden and any(v is not None for v in file_wl.values()):
        try:  # a file is checked whole, even where the command line replaces a part of it
            parse(file_wl["kind"] or "conv2d", file_wl["layer"], file_wl["shape"])
        except UserError as exc:
            problems.append(f"[workload] {exc}")
    wl: Workload | None = None
    try:
        if layer or shape:
            wl = parse(kind, layer, shape)
        else:
            wl = parse(kind, wl_raw.get("layer"), wl_raw.get("shape"))
    except UserError as exc:
        problems.append(f"workload: {exc}")

    file_board = _string(sec["study"], "study", "board", problems)
    board_name = board if board is not None else (file_board if file_board is not None
                                                  else DEFAULT_BOARD)
    for name in dict.fromkeys(n for n in (board_name, file_board) if n is not None):
        try:
            boards.load(name)
        except ConfigError as exc:
            if name == board:  # --board: the board's error, not the space file's
                raise
            problems.append("; ".join(exc.problems))

    hw_raw = dict(sec["hardware"])
    file_base = _string(hw_raw, "hardware", "base", problems)
    base_name = hw if hw is not None else (file_base if file_base is not None else "default")
    hw_raw.pop("base", None)
    base = None
    try:
        base = config.load(base_name)
    except ConfigError as exc:
        from vtatune.escaping import shown

        what = "--hw" if hw is not None else "hardware base"
        problems.append(f"{what} {shown(str(base_name))}: " + "; ".join(exc.problems))
    if hw is not None and file_base is not None and file_base != hw:
        try:  # replaced by --hw, still checked
            config.load(file_base)
        except ConfigError as exc:
            problems.append("[hardware] base: " + "; ".join(exc.problems))
    choices: dict[str, tuple[int, ...]] = {}
    tied = False  # a searched LOG_BLOCK: LOG_BLOCK_OUT follows LOG_BLOCK_IN
    if hw is None:
        for key, values in hw_raw.items():
            vals = values if isinstance(values, list) else [values]
            if not vals or any(isinstance(v, bool) or not isinstance(v, int) for v in vals):
                problems.append(f"[hardware] {key} must be an integer or a non-empty list of "
                                "integers")
                continue
            if len(set(vals)) < len(vals):
                problems.append(f"[hardware] {key} lists {len(vals):,} values, "
                                f"{len(vals) - len(set(vals)):,} of them repeated")
                continue
            lo, hi = _log_range(key)
            bad = sorted({v for v in vals if not lo <= v <= hi})
            if bad:
                listed = ", ".join(str(v) for v in bad[:5]) + (
                    f", ... ({len(bad):,} values)" if len(bad) > 5 else "")
                problems.append(f"[hardware] {key} values {listed} are outside [{lo}, {hi}]")
                continue
            choices[key] = tuple(sorted(set(vals)))
        if LOG_BLOCK in hw_raw and {"LOG_BLOCK_IN", "LOG_BLOCK_OUT"} & set(hw_raw):
            problems.append("[hardware] give either LOG_BLOCK or LOG_BLOCK_IN/LOG_BLOCK_OUT, "
                            "not both")
        block = choices.pop(LOG_BLOCK, None)
        if block is not None:  # VTA's square GEMM: one choice sets BLOCK_IN and BLOCK_OUT
            choices["LOG_BLOCK_IN"] = block
            if len(block) == 1:
                choices["LOG_BLOCK_OUT"] = block
            else:  # searched: BLOCK_OUT follows BLOCK_IN (TIED), not a parameter of its own
                choices.pop("LOG_BLOCK_OUT", None)
                tied = True
    if base is not None:
        for key in LOG_KEYS:
            if not (tied and key in TIED):
                choices.setdefault(key, (base.log_params()[key],))
    choices = {k: choices[k] for k in LOG_KEYS if k in choices}  # VTA's order, whatever the file's

    sched = sec["schedule"]
    knob_names: tuple[str, ...] = ()
    if wl is not None and base is not None:
        all_knobs = knob_space(wl, base).names
        want = sched.get("knobs", "all")
        if want == "all":
            # a knob whose extent is one unit on every hardware (batch 1) has nothing to
            # search; the smallest unit is one element
            one = knob_space(wl, _smallest(base)).extents
            knob_names = tuple(k for k in all_knobs if one.get(k, 2) > 1)
        elif isinstance(want, list) and all(isinstance(k, str) for k in want):
            from vtatune.escaping import shown

            bad = [shown(k, 40) for k in want if k not in all_knobs]
            if bad:
                problems.append(f"[schedule] unknown knobs {', '.join(bad[:5])} for {wl.kind} "
                                f"(knobs: {', '.join(all_knobs)})")
            knob_names = tuple(dict.fromkeys(k for k in want if k in all_knobs))
        else:
            problems.append('[schedule] knobs must be "all" or a list of knob names')

    file_obj = _string(sec["objective"], "objective", "kind", problems)
    obj = objective or file_obj or (
        "area-latency" if len([c for c in choices.values() if len(c) > 1]) else "latency")
    if obj not in OBJECTIVES:
        from vtatune.escaping import shown

        problems.append(f"objective {shown(obj, 40)} is not one of {', '.join(OBJECTIVES)}")
    elif uses_energy(obj):
        problems += _energy_problems(obj, board_name)
    lat = latency or _string(sec["objective"], "objective", "latency", problems) or "end-to-end"
    if lat not in LATENCIES:
        from vtatune.escaping import shown

        problems.append(f"[objective] latency {shown(lat, 40)} is not one of "
                        f"{', '.join(LATENCIES)}")
    cons = sec["constraints"]
    fit = cons.get("fit_board", True)
    if not isinstance(fit, bool):
        problems.append("[constraints] fit_board must be true or false")
    max_area = cons.get("max_area_mm2")
    if max_area is not None and (isinstance(max_area, bool) or not isinstance(
            max_area, int | float) or not math.isfinite(max_area) or max_area <= 0):
        problems.append("[constraints] max_area_mm2 must be a positive finite number (mm2)")
    file_stock = cons.get("stock_vta", False)
    if not isinstance(file_stock, bool):
        problems.append("[constraints] stock_vta must be true or false")
    stock_vta = file_stock if stock_vta is None else stock_vta
    name = _string(sec["study"], "study", "name", problems)
    if problems:
        raise ConfigError(source, problems)
    assert wl is not None and base is not None
    name = name if name is not None else Path(source).stem
    return SearchSpace(name=name, workload=wl, board=board_name, base_hw=base,
                       hw_choices=choices, knobs=knob_names, objective=obj, fit_board=fit,
                       max_area_mm2=float(max_area) if max_area else None, source=source,
                       passes=passes, stock_vta=bool(stock_vta), latency=lat)


def _energy_problems(objective: str, board_name: str) -> list[str]:
    """What keeps the energy model from pricing ``board_name`` (an objective with energy
    needs it for every candidate)."""
    from vtatune.energy import constants

    try:
        board = boards.load(board_name)
    except ConfigError:
        return []  # the board's own problem is listed already
    try:
        constants.load().for_board(board.base, board.family)
    except ConfigError as exc:
        return [f"objective {objective} needs the energy model's constants for board "
                f"{board_name}: " + "; ".join(exc.problems)]
    return []
