"""Network search spaces: one accelerator for every layer of a network (``spaces/*.toml``).

A network space file is a search space file (``vtatune.search.space``) whose ``[workload]``
is replaced by a ``[network]`` table (``vtatune.networks.network``) and which may add an
``[inner]`` table for the per-design schedule tuning::

    [inner]
    trials = 48          # layer evaluations per hardware design (the inner budget)
    min_per_layer = 2    # evaluations every distinct layer gets before the budget follows time
    sampler = "xgb"      # "xgb" (one cost model across layers and designs) or "random"

``[hardware]``, ``[schedule]``, ``[objective]`` and ``[constraints]`` mean what they mean for
one layer: a trial is one hardware design from ``[hardware]`` with every layer's schedule
tuned over ``[schedule]`` knobs (a knob list applies to the layers whose operator has those
knobs). Without ``[hardware]`` choices the hardware is fixed and the objective is latency.
A network's latency is end to end: every layer run is one call, the accelerator's time plus
the host's (``[objective] latency = "accelerator"`` is for single-operator searches only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from vtatune.errors import ConfigError
from vtatune.hardware.config import HwConfig
from vtatune.networks.network import Network, Unit, from_table, shape_text, table_problems
from vtatune.search.space import SearchSpace

#: Largest space file read (a network of MAX_LAYERS layers is ~100 KiB).
MAX_FILE_BYTES = 1 << 20
#: Sections of a network space file.
SECTIONS = ("study", "network", "hardware", "schedule", "objective", "constraints", "inner")
INNER_KEYS = ("trials", "min_per_layer", "sampler")
#: Largest inner budget per design.
MAX_INNER_TRIALS = 100_000
#: What a network's latency is: end to end per run (``search.space.LATENCIES``' first). The
#: accelerator-only objective of single-operator searches is not offered for networks: every
#: layer run is one call whose host time the network pays.
LATENCY = "end-to-end"


@dataclass(frozen=True)
class InnerSettings:
    """How every design's layers are tuned: ``trials`` layer evaluations per design in all,
    at least ``min_per_layer`` per distinct layer, proposed by ``sampler``."""

    trials: int = 48
    min_per_layer: int = 2
    sampler: str = "xgb"

    def describe(self) -> dict[str, Any]:
        return {"trials": self.trials, "min_per_layer": self.min_per_layer,
                "sampler": self.sampler}


@dataclass(frozen=True)
class NetworkSpace:
    """A validated network search space (see the module docstring).

    ``knobs`` maps each distinct layer (unit signature) to the knobs searched for it.
    """

    name: str
    network: Network
    board: str
    base_hw: HwConfig
    hw_choices: dict[str, tuple[int, ...]]
    knobs: dict[str, tuple[str, ...]]
    objective: str
    fit_board: bool = True
    max_area_mm2: float | None = None
    inner: InnerSettings = field(default_factory=InnerSettings)
    source: str = ""
    #: keep to designs stock VTA builds as they are (``[constraints] stock_vta``)
    stock_vta: bool = False
    #: the networks one accelerator is designed for, with their weights in the objective
    #: (``Member``); empty for a single network (``network`` with weight 1). With several,
    #: ``network`` is their union (``combined``): every layer, named ``NETWORK.LAYER``.
    members: tuple[Member, ...] = ()

    @property
    def networks(self) -> tuple[Member, ...]:
        """Every network with its weight (one member of weight 1 for a single network)."""
        return self.members or (Member(self.network, 1.0),)

    @property
    def multi(self) -> bool:
        """True for a study of several networks."""
        return len(self.members) > 1

    @cached_property
    def units(self) -> tuple[Unit, ...]:
        return self.network.units()

    @cached_property
    def unit_weights(self) -> dict[str, float]:
        """Per distinct layer: its weight in the objective, the sum over the networks of
        weight x how often the network runs it (its count for a single network)."""
        if not self.multi:
            return {u.signature: u.count for u in self.units}
        out: dict[str, float] = {}
        for m in self.members:
            for u in m.network.units():
                out[u.signature] = out.get(u.signature, 0.0) + m.weight * u.count
        return out

    @property
    def searched_hw(self) -> dict[str, tuple[int, ...]]:
        return {k: v for k, v in self.hw_choices.items() if len(v) > 1}

    @cached_property
    def hw_space(self) -> SearchSpace:
        """The outer search: hardware parameters only. Its workload (what hardware-level
        features of a cost-model sampler describe) is the layer with the most count-weighted
        MACs."""
        lead = max(self.units, key=lambda u: u.count * u.workload.macs)
        return SearchSpace(name=self.name, workload=lead.workload, board=self.board,
                           base_hw=self.base_hw, hw_choices=dict(self.hw_choices), knobs=(),
                           objective=self.objective, fit_board=self.fit_board,
                           max_area_mm2=self.max_area_mm2, source=self.source,
                           stock_vta=self.stock_vta)

    @cached_property
    def unit_spaces(self) -> dict[str, SearchSpace]:
        """Per distinct layer: its joint space (the network's hardware choices and the layer's
        knobs), whose candidates are exactly those of a per-layer study of that shape."""
        return {u.signature: SearchSpace(
                    name=f"{self.name}:{u.name}", workload=u.workload, board=self.board,
                    base_hw=self.base_hw, hw_choices=dict(self.hw_choices),
                    knobs=self.knobs[u.signature], objective=self.objective,
                    fit_board=self.fit_board, max_area_mm2=self.max_area_mm2,
                    source=self.source, stock_vta=self.stock_vta)
                for u in self.units}

    def describe(self) -> dict[str, Any]:
        """What a study stores about its space (``network`` marks a network study; for
        several networks it is their union and ``networks`` lists each network
        (``Network.describe()``) with its weight)."""
        return {"name": self.name, "network": self.network.describe(), "board": self.board,
                "objective": self.objective,
                "hardware": {k: list(v) for k, v in self.hw_choices.items()},
                "knobs": {u.name: list(self.knobs[u.signature]) for u in self.units},
                "fit_board": self.fit_board, "max_area_mm2": self.max_area_mm2,
                "stock_vta": self.stock_vta, "inner": self.inner.describe(),
                "source": self.source,
                **({"networks": [{"network": m.network.describe(), "weight": m.weight}
                                 for m in self.members]} if self.multi else {})}


@dataclass(frozen=True)
class Member:
    """One network of a study and its weight in the objective (the weighted sum of the
    networks' latencies)."""

    network: Network
    weight: float = 1.0


def combined(members: Sequence[Member]) -> Network:
    """The union of several networks as one: every layer of every network, named
    ``NETWORK.LAYER``, with its count (a shape shared by two networks is one unit)."""
    from vtatune.networks.network import Layer

    layers = tuple(Layer(f"{m.network.name}.{la.name}", la.workload, la.count)
                   for m in members for la in m.network.layers)
    return Network(name="+".join(m.network.name for m in members), layers=layers,
                   description="one accelerator for " + ", ".join(
                       f"{m.network.name} (weight {m.weight:g})" for m in members))


def read_toml(path: Path, what: str = "space file") -> dict[str, Any]:
    """A TOML file as a dict through the safe readers (``vtatune.readers``: a regular file of
    at most ``MAX_FILE_BYTES``, UTF-8, bounded nesting and integers); ``ConfigError`` (one
    line) otherwise."""
    from vtatune.readers import read_toml as read_safely

    return read_safely(path, what, MAX_FILE_BYTES)


def resolve(name_or_path: str | Path) -> Path:
    """A space file: a path, or the name of one under ``spaces/`` (``resnet18``)."""
    from vtatune.search.space import spaces_dir

    p = Path(name_or_path)
    if not _is(p.exists, p) and not p.suffix:
        return spaces_dir() / f"{name_or_path}.toml"
    return p


def _is(test: Any, p: Path) -> bool:
    """``test()`` (``p.exists``, ``p.is_file``), False where the name itself is unusable (too
    long for the file system, a NUL byte): the reader then names the problem in one line."""
    try:
        return bool(test())
    except (OSError, ValueError):
        return False


def is_network_file(name_or_path: str | Path) -> bool:
    """True when the space file exists and holds a ``[network]`` table."""
    p = resolve(name_or_path)
    if not _is(p.is_file, p):
        return False
    try:
        return "network" in read_toml(p)
    except ConfigError:
        return False  # not a readable space file: the caller reports it as what it expected


def builtin_names() -> list[str]:
    """Network space files shipped under ``spaces/`` (``resnet18``, ...)."""
    from vtatune.search.space import spaces_dir

    out = []
    for p in sorted(spaces_dir().glob("*.toml")):
        try:
            if "network" in read_toml(p):
                out.append(p.stem)
        except ConfigError:
            continue
    return out


def load(name_or_path: str | Path, *, hw: str | None = None, board: str | None = None,
         objective: str | None = None, inner_trials: int | None = None,
         inner_sampler: str | None = None, stock_vta: bool | None = None) -> NetworkSpace:
    """Read and validate a network space file; options override the file's choices
    (``hw`` fixes the hardware; ``stock_vta`` True or False replaces ``[constraints]
    stock_vta``)."""
    p = resolve(name_or_path)
    raw = read_toml(p)
    if "network" not in raw:
        raise ConfigError(str(p), ["no [network] table: not a network space file"])
    return from_dict(raw, str(p), hw=hw, board=board, objective=objective,
                     inner_trials=inner_trials, inner_sampler=inner_sampler,
                     stock_vta=stock_vta)


def from_dict(raw: dict[str, Any], source: str, *, hw: str | None = None,
              board: str | None = None, objective: str | None = None,
              inner_trials: int | None = None, inner_sampler: str | None = None,
              stock_vta: bool | None = None) -> NetworkSpace:
    """Validate a network space given as a dict; ``ConfigError`` listing every problem (a
    ``board`` that cannot be read is its own error, not the network file's)."""
    from vtatune.hardware import boards
    from vtatune.search import space as spaces

    if board is not None:
        boards.load(board)

    problems = [f"unknown section [{k}] (known: {', '.join(SECTIONS)})"
                for k in raw if k not in SECTIONS]
    problems += table_problems(raw.get("network"))
    inner, inner_problems = _inner(raw.get("inner", {}), inner_trials, inner_sampler)
    problems += inner_problems
    network = None
    if not table_problems(raw.get("network")):
        network = from_table(raw["network"], source, default_name=Path(source).stem)
    shared = {k: raw[k] for k in ("study", "hardware", "objective", "constraints") if k in raw}
    want = raw.get("schedule", {}).get("knobs", "all") if isinstance(
        raw.get("schedule", {}), dict) else None
    if not (want == "all" or (isinstance(want, list) and all(isinstance(k, str) for k in want))):
        problems.append('[schedule] knobs must be "all" or a list of knob names')
        want = "all"
    per_unit: dict[str, spaces.SearchSpace] = {}
    known_knobs: set[str] = set()
    if network is not None:
        entries = {e["name"]: e for e in raw["network"]["layers"]}
        for unit in network.units():
            entry = entries[unit.name]
            table = {k: entry[k] for k in ("kind", "layer") if k in entry}
            if "shape" in entry:
                table["shape"] = shape_text(entry["shape"])
            try:
                sp = spaces.from_dict({**shared, "workload": table}, source,
                                      hw=hw, board=board, objective=objective,
                                      stock_vta=stock_vta)
            except ConfigError as exc:
                problems += [p for p in exc.problems if p not in problems]
                break
            per_unit[unit.signature] = sp
            known_knobs.update(sp.knobs)
            if want != "all":
                from vtatune.schedules import knob_space

                known_knobs.update(knob_space(unit.workload, sp.base_hw).names)
    if isinstance(want, list) and per_unit:
        bad = [k for k in want if k not in known_knobs]
        if bad:
            problems.append(f"[schedule] unknown knobs {bad} (knobs of this network's layers: "
                            f"{', '.join(sorted(known_knobs))})")
    if per_unit and next(iter(per_unit.values())).latency != LATENCY:
        problems.append(f"[objective] latency must be {LATENCY!r} for a network (every layer "
                        "run is one call, accelerator + host); 'accelerator' applies to "
                        "single-operator searches")
    if problems:
        raise ConfigError(source, problems)
    assert network is not None
    first = next(iter(per_unit.values()))
    knobs = {sig: sp.knobs if want == "all" else tuple(k for k in want if k in _all_knobs(sp))
             for sig, sp in per_unit.items()}
    name = raw.get("study", {}).get("name", Path(source).stem)
    return NetworkSpace(name=name, network=network, board=first.board, base_hw=first.base_hw,
                        hw_choices=first.hw_choices, knobs=knobs, objective=first.objective,
                        fit_board=first.fit_board, max_area_mm2=first.max_area_mm2,
                        inner=inner, source=source, stock_vta=first.stock_vta)


def _all_knobs(sp: SearchSpace) -> list[str]:
    from vtatune.schedules import knob_space

    return knob_space(sp.workload, sp.base_hw).names


def _inner(raw: Any, trials: int | None, sampler: str | None
           ) -> tuple[InnerSettings, list[str]]:
    if not isinstance(raw, dict):
        return InnerSettings(), ["[inner] must be a table"]
    problems = [f"[inner] unknown key {k!r} (known: {', '.join(INNER_KEYS)})"
                for k in raw if k not in INNER_KEYS]
    default = InnerSettings()
    values: dict[str, Any] = {}
    for key in ("trials", "min_per_layer"):
        v = raw.get(key, getattr(default, key))
        if key == "trials" and trials is not None:
            v = trials
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_INNER_TRIALS:
            problems.append(f"[inner] {key} must be an integer from 1 to {MAX_INNER_TRIALS:,}, "
                            f"got {v!r}")
            v = getattr(default, key)
        values[key] = v
    if values["min_per_layer"] > values["trials"]:  # else a design's tuning never ends
        problems.append(f"[inner] min_per_layer ({values['min_per_layer']:,}) must not exceed "
                        f"the layer evaluations per design ([inner] trials or --layer-trials: "
                        f"{values['trials']:,})")
    from vtatune.search.samplers import layer_names

    s = sampler if sampler is not None else raw.get("sampler", default.sampler)
    if s not in layer_names():  # xgb: one cost model across layers and designs; random
        problems.append(f"[inner] sampler {s!r} is not one of {', '.join(layer_names())}")
        s = default.sampler
    return InnerSettings(values["trials"], values["min_per_layer"], s), problems
