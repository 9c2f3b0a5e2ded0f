"""Search strategies behind one interface (``Sampler``), built by name with ``make``."""

from __future__ import annotations

from typing import Any

from vtatune.search.samplers._base import Observation, Params, Sampler

__all__ = ["NAMES", "OPTUNA_BACKED", "Observation", "Params", "Sampler", "make"]

#: Sampler names accepted by ``--sampler``, each with its module and class (imported lazily).
_REGISTRY = {
    "tpe": ("vtatune.search.samplers._optuna", "TPESampler"),
    "nsga2": ("vtatune.search.samplers._optuna", "NSGA2Sampler"),
    "gp": ("vtatune.search.samplers._optuna", "GPSampler"),
    "random": ("vtatune.search.samplers._optuna", "RandomSampler"),
    "grid": ("vtatune.search.samplers._optuna", "GridSampler"),
    "xgb": ("vtatune.search.samplers._xgb", "XGBSampler"),
}
NAMES = tuple(_REGISTRY)
#: Samplers whose state is an Optuna study (kept in the search's database).
OPTUNA_BACKED = ("tpe", "nsga2", "gp", "random", "grid")


def make(name: str, space: Any, n_objectives: int, seed: int | None = None, **kw: Any
         ) -> Sampler:
    """The sampler called ``name``; ``UserError`` naming the known ones otherwise."""
    import importlib

    from vtatune.errors import UserError

    if name not in _REGISTRY:
        raise UserError(f"unknown sampler {name!r} (known: {', '.join(NAMES)})")
    module, cls = _REGISTRY[name]
    return getattr(importlib.import_module(module), cls)(space, n_objectives, seed, **kw)
