"""Search strategies behind one interface (``Sampler``), built by name with ``make``.

The family is open and registers as operators do (``vtatune.families``): every sampler is an
entry point of the ``vtatune.samplers`` group (vtatune's own are declared in pyproject.toml),
so a sampler outside the package is an installed module away, and ``register`` adds one at
run time. The inner samplers of a network search are a family of their own, by the same
means (``layer_names``, ``layer_class``, ``register_layer``). Classes are
imported lazily, when first made, so listing the names (``--sampler``'s help) imports neither
Optuna nor XGBoost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vtatune.errors import UserError
from vtatune.families import Family
from vtatune.search.samplers._base import Observation, Params, Sampler

if TYPE_CHECKING:
    from vtatune.search.space import SearchSpace

__all__ = ["ENTRY_POINT_GROUP", "LAYER_ENTRY_POINT_GROUP", "Observation", "Params", "Sampler",
           "described", "layer_class", "layer_names", "make", "names", "register",
           "register_layer", "require"]

#: Entry-point group of samplers (``name = "module:Class"``).
ENTRY_POINT_GROUP = "vtatune.samplers"
#: The samplers (``Sampler`` subclasses taking ``(space, n_objectives, seed, **kw)``).
SAMPLERS = Family("sampler", ENTRY_POINT_GROUP, lambda: Sampler)

#: Entry-point group of the inner samplers of a network search (``[inner] sampler``, how one
#: design's layers are tuned: ``networks.tuner.LayerSampler`` subclasses taking the tuner's
#: keywords); vtatune's own are named here.
LAYER_ENTRY_POINT_GROUP = "vtatune.layer_samplers"
LAYER_SAMPLERS = Family("inner sampler", LAYER_ENTRY_POINT_GROUP, lambda: Sampler, {
    "xgb": "vtatune.networks.tuner:RankedLayerSampler",
    "random": "vtatune.networks.tuner:RandomLayerSampler"})


def register(name: str, module: str, cls: str) -> None:
    """Make ``module.cls`` (a ``Sampler`` subclass) available as ``name``."""
    SAMPLERS.register(name, module, cls)


def described() -> str:
    """The names for help texts: ``"tpe, nsga2, ... or xgb"``."""
    found = names()
    if not found:
        return "none registered (reinstall vtatune)"
    *first, last = found
    return f"{', '.join(first)} or {last}" if first else last


def names() -> tuple[str, ...]:
    """Every sampler name ``make`` accepts (vtatune's first, in pyproject.toml's order)."""
    return SAMPLERS.names()


def make(name: str, space: SearchSpace, n_objectives: int, seed: int | None = None, **kw: Any
         ) -> Sampler:
    """The sampler called ``name``; ``UserError`` naming the known ones otherwise."""
    return _class(name)(space, n_objectives, seed, **kw)


def require(name: str) -> None:
    """``UserError`` unless sampler ``name`` exists and its libraries are installed (gp needs
    the opt-in torch extra); imports neither the sampler's libraries nor TVM."""
    _class(name).check_available()


def _class(name: str) -> type[Sampler]:
    if not names():  # an install made before the group existed, or a bare checkout
        raise UserError(f"no samplers are registered (entry-point group {ENTRY_POINT_GROUP}): "
                        "reinstall vtatune (make setup, or pip install -e .)")
    return SAMPLERS.get(name)  # type: ignore[no-any-return]


def layer_names() -> tuple[str, ...]:
    """Every inner sampler name (``--inner-sampler``, ``[inner] sampler``)."""
    return LAYER_SAMPLERS.names()


def register_layer(name: str, module: str, cls: str) -> None:
    """Make ``module.cls`` (a ``networks.tuner.LayerSampler`` subclass) the inner sampler
    ``name``."""
    LAYER_SAMPLERS.register(name, module, cls)


def layer_class(name: str) -> type[Sampler]:
    """The inner sampler class called ``name`` (``UserError`` naming the known ones)."""
    return LAYER_SAMPLERS.get(name)  # type: ignore[no-any-return]
