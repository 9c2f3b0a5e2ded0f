"""The one place operators are registered, looked up by name, and parsed from words.

Operators register themselves (``@register`` on their ``Workload`` subclass), as VTA registers
its strategies in ``op.py`` and Optuna accepts any sampler. The registry finds them without
naming them: every public module of ``vtatune.workloads`` is imported on the first lookup, and
so is every entry point of the ``vtatune.operators`` group, so an operator outside the package
is an installed module away. Adding an operator is one new module (and its tests).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from vtatune.errors import WorkloadError
from vtatune.escaping import shown

if TYPE_CHECKING:
    from vtatune.workloads.base import Workload

#: Entry-point group of operators that live outside vtatune.
ENTRY_POINT_GROUP = "vtatune.operators"
#: Modules of this package that are machinery, not operators.
_NOT_OPERATORS = frozenset({"base", "registry"})

W = TypeVar("W", bound="type[Workload]")

_operators: dict[str, type[Workload]] = {}
_discovered = False


def register(cls: W) -> W:
    """Class decorator: make ``cls`` (a ``Workload`` subclass) known by its ``kind``."""
    kind = cls.kind
    problems = []
    if not kind or kind == "workload":
        problems.append("set a kind")
    if not cls.SHAPE:
        problems.append("set SHAPE (the --shape fields)")
    names = [k.name for k in cls.KNOBS]
    if len(set(names)) != len(names):
        problems.append(f"knob names repeat: {names}")
    for k in cls.KNOBS:
        if k.over and k.over not in names:
            problems.append(f"thread knob {k.name} splits unknown knob {k.over!r}")
    if problems:
        raise TypeError(f"operator {cls.__name__}: " + "; ".join(problems))
    other = _operators.get(kind)
    if other is not None and other.__qualname__ != cls.__qualname__:
        raise TypeError(f"operator kind {kind!r} is registered twice ({other.__module__}."
                        f"{other.__qualname__} and {cls.__module__}.{cls.__qualname__})")
    _operators[kind] = cls
    return cls


def operators() -> dict[str, type[Workload]]:
    """Every registered operator, by kind (discovers them on first use)."""
    _discover()
    return dict(_operators)


def kinds() -> tuple[str, ...]:
    return tuple(operators())


def get(kind: str) -> type[Workload]:
    """The operator called ``kind``; ``WorkloadError`` listing the known ones otherwise."""
    ops = operators()
    if kind not in ops:
        raise WorkloadError(f"unknown workload {shown(kind)} (known: {', '.join(ops)})")
    return ops[kind]


def parse(kind: str, layer: str | None = None, shape: str | None = None) -> Workload:
    """A workload from CLI words: ``conv2d --layer C8``, ``dense --shape 16,256,256``, ...

    Without ``layer`` and ``shape`` the operator's ``DEFAULT`` (a layer name or a shape).
    """
    cls = get(kind)
    if layer is not None and shape is not None:
        raise WorkloadError("give either --layer or --shape, not both")
    if shape is not None:
        return cls.from_shape(shape)
    if layer is not None:
        return _layer(cls, layer)
    return parse_layer(kind, cls.DEFAULT)


def shape_text(wl: Workload) -> str:
    """The workload's shape as ``--shape`` takes it (its ``SHAPE`` fields, in order)."""
    fields = [f.lower() for f in wl.SHAPE.split(",")]
    return ",".join(str(getattr(wl, f)) for f in fields)


def parse_layer(kind: str, text: str) -> Workload:
    """A workload of operator ``kind`` from one word: a named layer (``C8``, ``CT2``) or a
    shape (``1,64,56,56,64,3,3,1,1``), as network files write layers."""
    cls = get(kind)
    if "," in text or text.strip().isdigit():
        return cls.from_shape(text)
    return _layer(cls, text)


def from_signature(signature: str) -> Workload:
    """The workload whose ``signature`` this is (as stored in results and bundles); a shape of
    a named layer comes back as that layer."""
    for cls in operators().values():
        wl = cls.from_signature(signature)
        if wl is not None:
            return wl
    examples = " or ".join(f"{c.kind}_..." for c in operators().values())
    raise WorkloadError(f"not a workload signature: {shown(signature)} (expected {examples})")


def _layer(cls: type[Workload], name: str) -> Workload:
    layers = cls.layers()
    if not layers:
        raise WorkloadError(f"{cls.kind} has no named layers; use --shape {cls.SHAPE}")
    key = name.strip().upper()
    if key not in layers:
        raise WorkloadError(f"unknown layer {shown(name)} for {cls.kind} (known: "
                            f"{', '.join(layers)})")
    return layers[key]


def _discover() -> None:
    """Import every operator module of this package and every installed plug-in (once)."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    import importlib
    import pkgutil
    from importlib.metadata import entry_points

    # by name: the registry knows its package, not the operators in it
    package = importlib.import_module(__name__.rpartition(".")[0])
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_") and info.name not in _NOT_OPERATORS:
            importlib.import_module(f"{package.__name__}.{info.name}")
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()
