"""Studies of several networks whose members may be ONNX models: ``networks.members`` (one
accelerator for several networks, network-set files) with ONNX models read as members. Lives
above ``models`` so that ``networks`` never reaches up into it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vtatune.networks import members
from vtatune.networks.space import NetworkSpace


def read_member(ref: str, **opts: Any) -> NetworkSpace:
    """One member's own space: an ONNX model's (``models.space.network_space``) or a
    network's (``networks.members.read_member``)."""
    from vtatune.models.space import is_model_path, network_space

    if is_model_path(ref):
        return network_space(ref, **opts)[0]
    return members.read_member(ref, **opts)


def load_members(refs: Any, weights: Any = None, **opts: Any) -> NetworkSpace:
    """``networks.members.load_members`` with ONNX models as members."""
    return members.load_members(refs, weights, read=read_member, **opts)


def load_set(path: str | Path, **opts: Any) -> NetworkSpace:
    """``networks.members.load_set`` with ONNX models as members."""
    return members.load_set(path, read=read_member, **opts)
