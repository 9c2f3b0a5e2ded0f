"""What every workload provides, and the one entry point that turns CLI words into one."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtatune.errors import WorkloadError

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig

#: Default fixed-point epilogue: ``clip(acc >> SHIFT, 0, 127)`` cast to int8.
DEFAULT_SHIFT = 8


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Workload(ABC):
    """An int8 operator with int32 accumulation and the shift / clip(0, 127) / cast epilogue.

    Workloads are plain shapes; ``te`` builds the TVM tensor expression for one ``HwConfig``
    (channels padded up to whole BLOCK_IN/BLOCK_OUT tiles, batch up to whole BATCH tiles).
    """

    kind = "workload"

    @property
    @abstractmethod
    def signature(self) -> str:
        """A stable string that identifies the shape (used as a key in the store)."""

    @property
    @abstractmethod
    def macs(self) -> int:
        """Multiply-accumulates of the unpadded operator."""

    @abstractmethod
    def packed_shapes(self, hw: HwConfig) -> dict[str, tuple[int, ...]]:
        """Packed (tiled) shapes of ``data``, ``kernel`` and ``res`` for ``hw``."""

    @abstractmethod
    def te(self, hw: HwConfig, shift: int = DEFAULT_SHIFT) -> list[Any]:
        """``[data, kernel, res]`` TE tensors of the packed computation."""

    @abstractmethod
    def reference(self, data: np.ndarray, kernel: np.ndarray, shift: int = DEFAULT_SHIFT
                  ) -> np.ndarray:
        """numpy result (plain layout, int8) for plain-layout int8 inputs."""

    @abstractmethod
    def pack_inputs(self, data: np.ndarray, kernel: np.ndarray, hw: HwConfig
                    ) -> tuple[np.ndarray, np.ndarray]:
        """Plain-layout inputs to the packed, zero-padded layout of ``hw``."""

    @abstractmethod
    def unpack_output(self, res: np.ndarray, hw: HwConfig) -> np.ndarray:
        """Packed output back to the plain layout, padding dropped."""

    @abstractmethod
    def plain_shapes(self) -> dict[str, tuple[int, ...]]:
        """Plain shapes of ``data``, ``kernel`` and the result."""

    def compulsory_bytes(self, hw: HwConfig) -> int:
        """Bytes that must cross the memory bus at least once: packed inputs and output."""
        s = self.packed_shapes(hw)
        n_data = _prod(s["data"]) * hw.inp_bits // 8
        n_kernel = _prod(s["kernel"]) * hw.wgt_bits // 8
        n_res = _prod(s["res"]) * hw.out_bits // 8
        return n_data + n_kernel + n_res

    def describe(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"kind": self.kind, "signature": self.signature, **asdict(self)}


def _prod(xs: tuple[int, ...]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _ints(text: str, count: int, what: str) -> list[int]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != count:
        raise WorkloadError(
            f"--shape for {what} takes {count} comma-separated integers, got {text!r}")
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise WorkloadError(f"--shape {text!r}: every field must be an integer") from None


def parse(kind: str, layer: str | None = None, shape: str | None = None) -> Workload:
    """A workload from CLI words: ``conv2d --layer C8``, ``conv2d --shape ...``, ``dense --shape``.

    Defaults: conv2d is ResNet-18 C8 (the conv2d tutorial's layer), dense is 16,256,256.
    """
    from vtatune.workloads.conv2d import Conv2d
    from vtatune.workloads.dense import Dense
    from vtatune.workloads.resnet18 import resnet18_layer

    if layer is not None and shape is not None:
        raise WorkloadError("give either --layer or --shape, not both")
    if kind == "conv2d":
        if shape is not None:
            n, cin, h, w, cout, kh, kw, pad, stride = _ints(
                shape, 9, "conv2d (N,CIN,H,W,COUT,KH,KW,PAD,STRIDE)")
            return Conv2d(n, cin, h, w, cout, kh, kw, pad, stride)
        return resnet18_layer(layer or "C8")
    if kind == "dense":
        if layer is not None:
            raise WorkloadError("dense has no named layers; use --shape M,K,N")
        m, k, n = _ints(shape or "16,256,256", 3, "dense (M,K,N)")
        return Dense(m, k, n)
    raise WorkloadError(f"unknown workload {kind!r} (known: conv2d, dense)")


#: ``Workload.signature`` of each kind, with the constructor's fields in order.
_SIGNATURES = {
    "conv2d": re.compile(r"conv2d_n(\d+)_c(\d+)_h(\d+)_w(\d+)_o(\d+)_k(\d+)x(\d+)"
                         r"_p(\d+)_s(\d+)"),
    "dense": re.compile(r"dense_m(\d+)_k(\d+)_n(\d+)"),
}


def from_signature(signature: str) -> Workload:
    """The workload whose ``signature`` this is (as stored in results and bundles).

    A conv2d shape of VTA's ResNet-18 table comes back as that named layer (``C8``).
    """
    from vtatune.workloads.conv2d import Conv2d
    from vtatune.workloads.dense import Dense
    from vtatune.workloads.resnet18 import RESNET18

    for kind, pattern in _SIGNATURES.items():
        m = pattern.fullmatch(signature)
        if m is None:
            continue
        fields = [int(g) for g in m.groups()]
        if kind == "dense":
            return Dense(*fields)
        conv = Conv2d(*fields)
        named = [layer for layer in RESNET18.values()
                 if layer.signature == conv.signature]
        return named[0] if named else conv
    raise WorkloadError(f"not a workload signature: {signature!r} (expected e.g. "
                        "conv2d_n1_c256_h14_w14_o256_k3x3_p1_s1 or dense_m16_k256_n256)")
