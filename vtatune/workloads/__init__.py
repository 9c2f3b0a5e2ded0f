"""Operators VTA runs, one module each (``Workload`` subclasses registered in ``registry``):
conv2d, dense, ... with the shift/clip/cast epilogue of the VTA tutorials."""

from __future__ import annotations

from vtatune.workloads.base import DEFAULT_SHIFT, Workload
from vtatune.workloads.conv2d import RESNET18, Conv2d, resnet18_layer
from vtatune.workloads.dense import Dense
from vtatune.workloads.registry import (
    from_signature,
    get,
    kinds,
    operators,
    parse,
    parse_layer,
    register,
)

__all__ = ["DEFAULT_SHIFT", "RESNET18", "Conv2d", "Dense", "Workload", "from_signature", "get",
           "kinds", "operators", "parse", "parse_layer", "register", "resnet18_layer"]
