"""from_signature: the inverse of Workload.signature."""

from __future__ import annotations

import pytest

from vtatune.errors import WorkloadError
from vtatune.workloads import RESNET18, Conv2d, Dense, from_signature


def test_round_trips_every_resnet18_layer_with_its_name() -> None:
    for name, layer in RESNET18.items():
        wl = from_signature(layer.signature)
        assert wl == layer and wl.name == name


def test_round_trips_plain_shapes() -> None:
    for wl in (Dense(16, 64, 64), Dense(1, 3, 5), Conv2d(2, 16, 8, 9, 32, 3, 1, 0, 2)):
        assert from_signature(wl.signature) == wl


@pytest.mark.parametrize("sig", ["", "dense_m16_k64", "conv2d_n1_c16", "gemm_m1_k2_n3",
                                 "dense_m16_k64_n64_extra", "dense_m0_k64_n64"])
def test_rejects_what_is_not_a_signature(sig: str) -> None:
    with pytest.raises(WorkloadError):
        from_signature(sig)
