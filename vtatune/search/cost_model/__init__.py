"""Learned cost models for the search: proposal features and XGBoost rankers.

Cost models are an open family (``CostModel``, ``base.py``): ``make`` builds one by name,
vtatune's own first (``xgb``), then the entry points of ``ENTRY_POINT_GROUP`` and ``register``;
the per-layer ``xgb`` sampler and the network tuner both take theirs from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vtatune.search.cost_model.base import CostModel

#: Entry-point group of cost models (``name = "module:Class"``, a ``CostModel`` subclass).
ENTRY_POINT_GROUP = "vtatune.cost_models"
#: Cost model name -> "module:Class": vtatune's own, then the group's and ``register``.
_registry: dict[str, str] = {"xgb": "vtatune.search.cost_model.xgb_model:XGBCostModel"}
_discovered = False


def names() -> tuple[str, ...]:
    global _discovered
    if not _discovered:
        from importlib.metadata import entry_points

        _discovered = True
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            _registry.setdefault(ep.name, ep.value)
    return tuple(_registry)


def register(name: str, module: str, cls: str) -> None:
    """Make ``module.cls`` (a ``CostModel`` subclass) the cost model ``name``."""
    target = f"{module}:{cls}"
    if _registry.get(name, target) != target:
        raise ValueError(f"cost model {name!r} is already registered as {_registry[name]}")
    _registry[name] = target


def make(name: str, *args: Any, **kw: Any) -> CostModel:
    """The cost model called ``name`` built with ``args``/``kw`` (``KeyError`` naming the
    known ones)."""
    import importlib

    from vtatune.search.cost_model.base import CostModel

    if name not in names():
        raise KeyError(f"unknown cost model {name!r} (known: {', '.join(names())})")
    module, _, attr = _registry[name].partition(":")
    cls = getattr(importlib.import_module(module), attr)
    if not (isinstance(cls, type) and issubclass(cls, CostModel)):
        raise TypeError(f"cost model {name!r} ({_registry[name]}) is not a CostModel")
    return cls(*args, **kw)
