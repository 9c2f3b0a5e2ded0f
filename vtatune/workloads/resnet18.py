"""ResNet-18's conv2d layers as used by VTA's benchmarks (batch 1)."""

from __future__ import annotations

from vtatune.errors import WorkloadError
from vtatune.workloads.conv2d import Conv2d

#: name -> (H, W, Cin, Cout, k, pad, stride), from VTA's ResNet-18 benchmark table.
_TABLE = {
    "C1": (224, 224, 3, 64, 7, 3, 2),
    "C2": (56, 56, 64, 64, 3, 1, 1),
    "C3": (56, 56, 64, 128, 3, 1, 2),
    "C4": (56, 56, 64, 128, 1, 0, 2),
    "C5": (28, 28, 128, 128, 3, 1, 1),
    "C6": (28, 28, 128, 256, 3, 1, 2),
    "C7": (28, 28, 128, 256, 1, 0, 2),
    "C8": (14, 14, 256, 256, 3, 1, 1),
    "C9": (14, 14, 256, 512, 3, 1, 2),
    "C10": (14, 14, 256, 512, 1, 0, 2),
    "C11": (7, 7, 512, 512, 3, 1, 1),
}

RESNET18: dict[str, Conv2d] = {
    name: Conv2d(1, cin, h, w, cout, k, k, pad, stride, name=name)
    for name, (h, w, cin, cout, k, pad, stride) in _TABLE.items()
}


def resnet18_layer(name: str) -> Conv2d:
    key = name.upper()
    if key not in RESNET18:
        raise WorkloadError(f"unknown layer {name!r} (known: {', '.join(RESNET18)})")
    return RESNET18[key]
