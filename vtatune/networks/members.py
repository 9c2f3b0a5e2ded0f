"""One accelerator for several networks: the members of a study, from the command line
(``vtatune search resnet18 mobilenet_v1 --weights 3,1``) or a network-set file.

A **network-set file** is a TOML file with a ``[networks]`` table::

    [networks]
    members = [{network = "resnet18", weight = 3},       # a name under spaces/,
               {network = "mobilenet_v1"},                # a network file or an
               {network = "models/tiny.onnx", weight = 1}] # ONNX model (weight: default 1)

    # optional: the hardware space of every member (else the members' own, which must agree)
    [study]
    board = "pynq-z1"
    [hardware]
    LOG_BLOCK_IN = [3, 4]
    [objective]
    kind = "area-latency"
    [constraints]
    fit_board = true
    [inner]
    trials = 64

A member's path is read relative to the set file's folder where such a file exists.

**The hardware space** (board, ``[hardware]`` choices, objective, constraints) is one for all
members. When the set file gives any of ``[study] board``, ``[hardware]``, ``[objective]``,
``[constraints]`` it is the set file's (sections it leaves out take their defaults);
otherwise every member's space file must state the same one (the first member's is used;
zoo networks and imported models all share ``resnet18``'s). ``[inner]`` is the set file's
(or ``--layer-trials``); else each network brings the layer budget its own ``[inner]`` gives
it per distinct shape (``trials`` / its distinct shapes, for the shapes no earlier network
has), summed and rounded up, with the largest ``min_per_layer`` and the first member's
sampler: every network's layers are tuned as in its own study. Each layer is searched over
the ``[schedule]`` knobs of the network it came from (the first network listing its shape,
for a shape in several).

**Semantics.** A trial is one hardware design with every layer of every network tuned; a
shape that appears in several networks is one unit, tuned once on the design (its count in
each network kept). The objective is area and the weighted sum of the networks' latencies,
each the count-weighted sum of its layers' best latencies, as a single network's.
A single network is a study of one member exactly as before (its weight has no effect).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from vtatune.errors import ConfigError, UserError
from vtatune.networks.network import _show
from vtatune.networks.space import (
    INNER_KEYS,
    LATENCY,
    InnerSettings,
    Member,
    NetworkSpace,
    _inner,
    _is,
    combined,
    read_toml,
    resolve,
)

#: Most networks one study designs an accelerator for.
MAX_MEMBERS = 16
#: Largest weight of a network in the objective.
MAX_WEIGHT = 1e6
#: Sections of a network-set file.
SET_SECTIONS = ("study", "networks", "hardware", "objective", "constraints", "inner")
#: Sections (and ``[study] board``) that, in a set file, give the hardware space.
HW_SECTIONS = ("hardware", "objective", "constraints")
MEMBER_KEYS = ("network", "weight")


def is_set_file(name_or_path: str | Path) -> bool:
    """True when ``name_or_path`` is a TOML file with a ``[networks]`` table."""
    p = Path(name_or_path)
    if p.suffix.lower() != ".toml" or not _is(p.is_file, p):
        return False
    try:
        return "networks" in read_toml(p, "network-set file")
    except ConfigError:
        return False


def weight_problem(value: Any) -> str | None:
    """Why ``value`` is not a network's weight (a positive finite number up to
    ``MAX_WEIGHT``), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"weight {_show(value)} must be a number"
    if not math.isfinite(value) or not 0 < value <= MAX_WEIGHT:
        return f"weight {_show(value)} must be a positive finite number up to {MAX_WEIGHT:g}"
    return None


def parse_weights(text: str, n: int) -> list[float]:
    """``--weights 3,1``: one positive finite number per network, in order
    (``UserError`` otherwise)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != n:
        raise UserError(f"--weights {_show(text)} gives {len(parts)} weight"
                        f"{'s' if len(parts) != 1 else ''} for {n} network"
                        f"{'s' if n != 1 else ''}: give one per network, in order "
                        "(e.g. --weights 3,1)")
    out = []
    for p in parts:
        try:
            w = float(p)
        except ValueError:
            raise UserError(f"--weights: {_show(p)} is not a number") from None
        problem = weight_problem(w)
        if problem:
            raise UserError(f"--weights: {problem.replace(repr(w), _show(p), 1)}")
        out.append(w)
    return out


def load_members(refs: Sequence[str], weights: Sequence[float] | None = None, *,
                 hw: str | None = None, board: str | None = None,
                 objective: str | None = None, inner_trials: int | None = None,
                 inner_sampler: str | None = None, stock_vta: bool | None = None,
                 sections: dict[str, Any] | None = None, source: str = "",
                 name: str | None = None,
                 read: Callable[..., NetworkSpace] | None = None) -> NetworkSpace:
    """The space of one accelerator for the networks ``refs`` (names, network files; ONNX
    models with ``models.sets``' reader) weighted by ``weights`` (1 each when None);
    ``sections``: a set file's hardware space and ``[inner]`` (see the module docstring);
    ``read``: a member's space from its reference (default ``read_member``). One network
    gives its own space, exactly as ``vtatune search NETWORK`` searches it."""
    if not refs:
        raise UserError("no network given")
    if len(refs) > MAX_MEMBERS:
        raise UserError(f"{len(refs)} networks given; at most {MAX_MEMBERS}")
    given = [1.0] * len(refs) if weights is None else list(weights)
    if len(given) != len(refs):
        raise UserError(f"{len(given)} weights for {len(refs)} networks: give one per "
                        "network, in order")
    for w in given:
        problem = weight_problem(w)
        if problem:
            raise UserError(problem)
    weights = [float(w) for w in given]
    sections = sections or {}
    set_board = sections.get("study", {}).get("board") if isinstance(
        sections.get("study"), dict) else None
    board_opt = board if board is not None else set_board
    inner_raw = sections.get("inner")
    opts = dict(hw=hw, board=board_opt, objective=objective, inner_trials=inner_trials,
                inner_sampler=inner_sampler, stock_vta=stock_vta)
    spaces = [(read or read_member)(r, **opts) for r in refs]
    if len(spaces) == 1 and not sections:
        return spaces[0]
    problems = []
    names = [sp.network.name for sp in spaces]
    for i, n in enumerate(names):
        if n in names[:i]:
            problems.append(f"network {_show(n)} is given twice (networks: "
                            f"{', '.join(names)})")
    qualified = Counter(f"{sp.network.name}.{la.name}" for sp in spaces
                        for la in sp.network.layers)
    clashes = [q for q, k in qualified.items() if k > 1]
    if clashes and not any("given twice" in p for p in problems):
        problems.append(f"layer names {', '.join(_show(q) for q in clashes[:3])} are the "
                        "same in two networks (NETWORK.LAYER): rename a network or a layer")
    first = spaces[0]
    hw_given = any(k in sections for k in HW_SECTIONS) or set_board is not None
    if hw_given:
        lead = first.units[0]
        base = _hw_space(sections, lead, source or "network-set file", hw=hw,
                         board=board_opt, objective=objective, stock_vta=stock_vta)
    else:
        base = first
        for sp in spaces[1:]:
            diff = _hw_differences(first, sp)
            if diff:
                problems.append(
                    f"networks {_show(first.network.name)} and {_show(sp.network.name)} "
                    f"have different hardware spaces ({', '.join(diff)}): give one in a "
                    "network-set file ([study] board, [hardware], [objective], [constraints])")
    inner = first.inner if inner_trials is not None else _joint_inner(spaces)
    if inner_raw is not None:
        inner, inner_problems = _inner(inner_raw, inner_trials, inner_sampler)
        problems += inner_problems
    if problems:
        raise ConfigError(source or "networks", problems)
    members = tuple(Member(sp.network, w) for sp, w in zip(spaces, weights, strict=True))
    knobs: dict[str, tuple[str, ...]] = {}
    for sp in spaces:
        for sig, k in sp.knobs.items():
            knobs.setdefault(sig, k)
    if len(members) == 1:  # a set file of one network: that network's study
        return replace(first, board=base.board, base_hw=base.base_hw,
                       hw_choices=dict(base.hw_choices), objective=base.objective,
                       fit_board=base.fit_board, max_area_mm2=base.max_area_mm2,
                       stock_vta=base.stock_vta, inner=inner)
    net = combined(members)
    return NetworkSpace(name=name or net.name, network=net, board=base.board,
                        base_hw=base.base_hw, hw_choices=dict(base.hw_choices), knobs=knobs,
                        objective=base.objective, fit_board=base.fit_board,
                        max_area_mm2=base.max_area_mm2, inner=inner,
                        source=source or ", ".join(sp.source for sp in spaces),
                        stock_vta=base.stock_vta, members=members)


def load_set(path: str | Path, *, hw: str | None = None, board: str | None = None,
             objective: str | None = None, inner_trials: int | None = None,
             inner_sampler: str | None = None, stock_vta: bool | None = None,
             read: Callable[..., NetworkSpace] | None = None) -> NetworkSpace:
    """Read and validate a network-set file (the module docstring); ``ConfigError``
    listing every problem of the file. ``read``: as ``load_members``'."""
    p = Path(path)
    raw = read_toml(p, "network-set file")
    problems = [f"unknown section [{_show(k)}] (known: {', '.join(SET_SECTIONS)})"
                for k in raw if k not in SET_SECTIONS]
    table = raw.get("networks")
    refs: list[str] = []
    weights: list[float] = []
    if not isinstance(table, dict):
        problems.append("[networks] must be a table with members = [{network = ...}, ...]")
    else:
        problems += [f"[networks] unknown key {_show(k)} (known: members)"
                     for k in table if k != "members"]
        members = table.get("members")
        if not isinstance(members, list) or not members:
            problems.append("[networks] members must be a non-empty list of "
                            "{network = NAME_OR_FILE, weight = W}")
        elif len(members) > MAX_MEMBERS:
            problems.append(f"[networks] has {len(members)} members; at most {MAX_MEMBERS}")
        else:
            for i, m in enumerate(members, 1):
                if not isinstance(m, dict):
                    problems.append(f"member {i}: must be a table {{network = ..., "
                                    "weight = ...}")
                    continue
                problems += [f"member {i}: unknown key {_show(k)} (known: "
                             f"{', '.join(MEMBER_KEYS)})" for k in m if k not in MEMBER_KEYS]
                ref = m.get("network")
                if not isinstance(ref, str) or not ref or len(ref) > 4096 \
                        or not ref.isprintable():
                    problems.append(f"member {i}: network {_show(ref)} must name a network, "
                                    "a network file or an ONNX model")
                else:
                    refs.append(_relative(ref, p))
                w = m.get("weight", 1.0)
                problem = weight_problem(w)
                if problem:
                    problems.append(f"member {i}: {problem}")
                else:
                    weights.append(float(w))
    study = raw.get("study", {})
    if not isinstance(study, dict):
        problems.append("[study] must be a table")
    else:
        problems += [f"[study] unknown key {_show(k)} (known: board, name)"
                     for k in study if k not in ("board", "name")]
        if "name" in study and not (isinstance(study["name"], str) and study["name"]
                                    and study["name"].isprintable()
                                    and len(study["name"]) <= 200):
            problems.append("[study] name must be a line of 1-200 printable characters")
        if "board" in study and not isinstance(study["board"], str):
            problems.append("[study] board must be a board name")
    for k in (*HW_SECTIONS, "inner"):
        if k in raw and not isinstance(raw[k], dict):
            problems.append(f"[{k}] must be a table")
    if isinstance(raw.get("inner"), dict):
        problems += [f"[inner] unknown key {_show(k)} (known: {', '.join(INNER_KEYS)})"
                     for k in raw["inner"] if k not in INNER_KEYS]
    if problems:
        raise ConfigError(str(p), problems)
    sections = {k: raw[k] for k in (*HW_SECTIONS, "inner", "study") if k in raw}
    if "board" not in sections.get("study", {}):
        sections.pop("study", None)
    name = study.get("name") or p.stem
    return load_members(refs, weights, hw=hw, board=board, objective=objective,
                        inner_trials=inner_trials, inner_sampler=inner_sampler,
                        stock_vta=stock_vta, sections=sections, source=str(p), name=name,
                        read=read)


def _relative(ref: str, set_file: Path) -> str:
    """A member's path relative to the set file's folder when a file is there."""
    near = set_file.parent / ref
    if not Path(ref).is_absolute() and _is(near.is_file, near):
        return str(near)
    return ref


def read_member(ref: str, **opts: Any) -> NetworkSpace:
    """One member's own space: a network's (a name or a network space file). ONNX models are
    read a layer up (``models.sets.read_member``, which falls back on this)."""
    from vtatune.networks import space as nspace

    p = resolve(ref)
    if not _is(p.is_file, p):
        raise UserError(f"{_show(ref, 80)} is not a network, a network file or an ONNX "
                        f"model (networks: {', '.join(nspace.builtin_names())})")
    if is_set_file(p):
        raise UserError(f"{_show(ref, 80)} is a network-set file: a member must be a network "
                        "(list its members instead)")
    return nspace.load(p, **opts)  # a file that is no network space: names what is wrong


def _hw_differences(a: NetworkSpace, b: NetworkSpace) -> list[str]:
    out = []
    if a.board != b.board:
        out.append(f"board {a.board} vs {b.board}")
    if a.hw_choices != b.hw_choices or a.base_hw != b.base_hw:
        out.append("[hardware]")
    if a.objective != b.objective:
        out.append(f"objective {a.objective} vs {b.objective}")
    if (a.fit_board, a.max_area_mm2, a.stock_vta) != (b.fit_board, b.max_area_mm2,
                                                      b.stock_vta):
        out.append("[constraints]")
    return out


def _hw_space(sections: dict[str, Any], lead: Any, source: str, **opts: Any) -> Any:
    """The set file's hardware space, validated as a search space of one of the layers."""
    from vtatune.search import space as spaces
    from vtatune.workloads.registry import shape_text

    raw = {k: v for k, v in sections.items() if k in (*HW_SECTIONS, "study")}
    raw["workload"] = {"kind": lead.workload.kind, "shape": shape_text(lead.workload)}
    sp = spaces.from_dict(raw, source, **opts)
    if sp.latency != LATENCY:
        raise ConfigError(source, [f"[objective] latency must be {LATENCY!r} for networks"])
    return sp


def _joint_inner(spaces: Sequence[NetworkSpace]) -> InnerSettings:
    """The layer budget of one design of several networks without a set file's ``[inner]``:
    each network's per-shape budget (its ``[inner] trials`` over its distinct shapes) for
    each shape no earlier network lists, summed and rounded up; the largest
    ``min_per_layer``; the first network's sampler."""
    seen: set[str] = set()
    budget = 0.0
    for sp in spaces:
        units = sp.units
        new = [u for u in units if u.signature not in seen]
        seen.update(u.signature for u in units)
        budget += sp.inner.trials * len(new) / len(units)
    return InnerSettings(trials=math.ceil(budget - 1e-9),
                         min_per_layer=max(sp.inner.min_per_layer for sp in spaces),
                         sampler=spaces[0].inner.sampler)
