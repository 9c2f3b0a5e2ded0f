"""Learned cost models for the search: proposal features and XGBoost rankers.

Cost models are an open family (``CostModel``, ``base.py``; ``vtatune.families``): ``make``
builds one by name, vtatune's own (``xgb``), entry points of ``ENTRY_POINT_GROUP`` or
``COST_MODELS.register``'s; the per-layer ``xgb`` sampler and the network tuner take theirs
from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vtatune.families import Family

if TYPE_CHECKING:
    from vtatune.search.cost_model.base import CostModel


def _base() -> type:
    from vtatune.search.cost_model.base import CostModel

    return CostModel


#: Entry-point group of cost models (``name = "module:Class"``, a ``CostModel`` subclass).
ENTRY_POINT_GROUP = "vtatune.cost_models"
COST_MODELS = Family("cost model", ENTRY_POINT_GROUP, _base,
                     {"xgb": "vtatune.search.cost_model.xgb_model:XGBCostModel"})


def make(name: str, *args: Any, **kw: Any) -> CostModel:
    """The cost model called ``name`` built with ``args``/``kw``."""
    return COST_MODELS.get(name)(*args, **kw)  # type: ignore[no-any-return]
