"""Workloads VTA runs: conv2d and dense, with the shift/clip/cast epilogue of the VTA tutorials."""

from __future__ import annotations

from vtatune.workloads.base import Workload, from_signature, parse
from vtatune.workloads.conv2d import Conv2d
from vtatune.workloads.dense import Dense
from vtatune.workloads.resnet18 import RESNET18, resnet18_layer

__all__ = ["RESNET18", "Conv2d", "Dense", "Workload", "from_signature", "parse", "resnet18_layer"]
