"""Search strategies behind one interface (``Sampler``), built by name with ``make``.

The family is open and registers as operators do: every sampler is an entry point of the
``vtatune.samplers`` group (vtatune's own are declared in pyproject.toml), so a sampler outside
the package is an installed module away, and ``register`` adds one at run time. Classes are
imported lazily, when first made, so listing the names (``--sampler``'s help) imports neither
Optuna nor XGBoost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vtatune.errors import UserError
from vtatune.escaping import shown
from vtatune.search.samplers._base import Observation, Params, Sampler

if TYPE_CHECKING:
    from vtatune.search.space import SearchSpace

__all__ = ["ENTRY_POINT_GROUP", "LAYER_ENTRY_POINT_GROUP", "Observation", "Params", "Sampler",
           "described", "layer_class", "layer_names", "make", "names", "register",
           "register_layer", "require"]

#: Entry-point group of samplers (``name = "module:Class"``).
ENTRY_POINT_GROUP = "vtatune.samplers"

#: Sampler name -> "module:Class", from the entry points and ``register``.
_registry: dict[str, str] = {}
_discovered = False

#: Entry-point group of the inner samplers of a network search (``[inner] sampler``, how one
#: design's layers are tuned: ``networks.tuner.LayerSampler`` subclasses taking the tuner's
#: keywords), read as the outer samplers' group is.
LAYER_ENTRY_POINT_GROUP = "vtatune.layer_samplers"
#: Inner sampler name -> "module:Class": vtatune's own, then the group's and ``register_layer``.
_layers: dict[str, str] = {"xgb": "vtatune.networks.tuner:RankedLayerSampler",
                           "random": "vtatune.networks.tuner:RandomLayerSampler"}
_layers_discovered = False


def register(name: str, module: str, cls: str) -> None:
    """Make ``module.cls`` (a ``Sampler`` subclass taking ``(space, n_objectives, seed,
    **kw)``) available as ``name``."""
    _discover()
    target = f"{module}:{cls}"
    if _registry.get(name, target) != target:
        raise ValueError(f"sampler {name!r} is already registered as {_registry[name]}")
    _registry[name] = target


def described() -> str:
    """The names for help texts: ``"tpe, nsga2, ... or xgb"``."""
    found = names()
    if not found:
        return "none registered (reinstall vtatune)"
    *first, last = found
    return f"{', '.join(first)} or {last}" if first else last


def names() -> tuple[str, ...]:
    """Every sampler name ``make`` accepts (vtatune's first, in pyproject.toml's order)."""
    _discover()
    return tuple(_registry)


def make(name: str, space: SearchSpace, n_objectives: int, seed: int | None = None, **kw: Any
         ) -> Sampler:
    """The sampler called ``name``; ``UserError`` naming the known ones otherwise."""
    return _class(name)(space, n_objectives, seed, **kw)


def require(name: str) -> None:
    """``UserError`` unless sampler ``name`` exists and its libraries are installed (gp needs
    the opt-in torch extra); imports neither the sampler's libraries nor TVM."""
    _class(name).check_available()


def _class(name: str) -> type[Sampler]:
    import importlib

    _discover()
    if not _registry:  # an install made before the group existed, or a bare checkout
        raise UserError(f"no samplers are registered (entry-point group {ENTRY_POINT_GROUP}): "
                        "reinstall vtatune (make setup, or pip install -e .)")
    if name not in _registry:
        raise UserError(f"unknown sampler {shown(name)} (known: {', '.join(names())})")
    module, _, attr = _registry[name].partition(":")
    cls = getattr(importlib.import_module(module), attr)
    if not (isinstance(cls, type) and issubclass(cls, Sampler)):
        raise TypeError(f"sampler {name!r} ({_registry[name]}) is not a Sampler subclass")
    return cls


def _discover() -> None:
    """Read the entry points of ``ENTRY_POINT_GROUP`` (once; nothing is imported)."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    _read_group(ENTRY_POINT_GROUP, _registry)


def _read_group(group: str, into: dict[str, str]) -> None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        into.setdefault(ep.name, ep.value)


# ---- inner samplers (one design's layers) -----------------------------------------------------

def layer_names() -> tuple[str, ...]:
    """Every inner sampler name (``--inner-sampler``, ``[inner] sampler``)."""
    global _layers_discovered
    if not _layers_discovered:
        _layers_discovered = True
        _read_group(LAYER_ENTRY_POINT_GROUP, _layers)
    return tuple(_layers)


def register_layer(name: str, module: str, cls: str) -> None:
    """Make ``module.cls`` (a ``networks.tuner.LayerSampler`` subclass) the inner sampler
    ``name``."""
    target = f"{module}:{cls}"
    if _layers.get(name, target) != target:
        raise ValueError(f"inner sampler {name!r} is already registered as {_layers[name]}")
    _layers[name] = target


def layer_class(name: str) -> type[Sampler]:
    """The inner sampler class called ``name`` (``UserError`` naming the known ones)."""
    import importlib

    if name not in layer_names():
        raise UserError(f"unknown inner sampler {shown(name)} (known: "
                        f"{', '.join(layer_names())})")
    module, _, attr = _layers[name].partition(":")
    cls = getattr(importlib.import_module(module), attr)
    if not (isinstance(cls, type) and issubclass(cls, Sampler)):
        raise TypeError(f"inner sampler {name!r} ({_layers[name]}) is not a Sampler subclass")
    return cls
