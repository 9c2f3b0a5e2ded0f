"""Search strategies behind one interface (``Sampler``), built by name with ``make``.

The family is open: ``register(name, module, cls)`` adds a sampler (imported lazily when first
made), so a new strategy is one module and one call, as Optuna accepts any sampler.
"""

from __future__ import annotations

from typing import Any

from vtatune.search.samplers._base import Observation, Params, Sampler

__all__ = ["NAMES", "OPTUNA_BACKED", "Observation", "Params", "Sampler", "make", "names",
           "register", "require"]

#: Sampler names accepted by ``--sampler``, each with its module and class (imported lazily).
_REGISTRY = {
    "tpe": ("vtatune.search.samplers._optuna", "TPESampler"),
    "nsga2": ("vtatune.search.samplers._optuna", "NSGA2Sampler"),
    "gp": ("vtatune.search.samplers._optuna", "GPSampler"),
    "random": ("vtatune.search.samplers._optuna", "RandomSampler"),
    "grid": ("vtatune.search.samplers._optuna", "GridSampler"),
    "xgb": ("vtatune.search.samplers._xgb", "XGBSampler"),
}
#: The samplers vtatune ships (``names()`` includes registered ones).
NAMES = tuple(_REGISTRY)
#: Samplers whose state is an Optuna study (kept in the search's database).
OPTUNA_BACKED = ("tpe", "nsga2", "gp", "random", "grid")


def register(name: str, module: str, cls: str) -> None:
    """Make ``module.cls`` (a ``Sampler`` subclass taking ``(space, n_objectives, seed,
    **kw)``) available as ``name``."""
    if name in _REGISTRY and _REGISTRY[name] != (module, cls):
        raise ValueError(f"sampler {name!r} is already registered as {_REGISTRY[name]}")
    _REGISTRY[name] = (module, cls)


def names() -> tuple[str, ...]:
    """Every sampler name ``make`` accepts."""
    return tuple(_REGISTRY)


def make(name: str, space: Any, n_objectives: int, seed: int | None = None, **kw: Any
         ) -> Sampler:
    """The sampler called ``name``; ``UserError`` naming the known ones otherwise."""
    return _class(name)(space, n_objectives, seed, **kw)


def require(name: str) -> None:
    """``UserError`` unless sampler ``name`` exists and its libraries are installed (gp needs
    the opt-in torch extra); imports neither the sampler's libraries nor TVM."""
    _class(name).check_available()


def _class(name: str) -> type[Sampler]:
    import importlib

    from vtatune.errors import UserError

    if name not in _REGISTRY:
        raise UserError(f"unknown sampler {name!r} (known: {', '.join(names())})")
    module, cls = _REGISTRY[name]
    return getattr(importlib.import_module(module), cls)
