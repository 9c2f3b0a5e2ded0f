"""What an operator is: the ``Workload`` contract every operator module implements.

An operator is one module holding one ``Workload`` subclass (as VTA keeps compute and schedule
of an operator in one ``vta_<op>.py``): the computation (TE in VTA's packed layout, packing and
unpacking, a numpy reference, MACs and compulsory bytes), its schedule template, the knobs the
template reads (``KNOBS``: each knob's role and unit, see ``schedules.knobs``) and how its shape
is written (``--shape`` fields, named layers, the stored signature). Operators register
themselves with ``registry.register``; nothing else in the package lists them.

Workloads are plain frozen shapes; methods that depend on the accelerator take the ``HwConfig``
(channels padded up to whole BLOCK_IN/BLOCK_OUT tiles, batch up to whole BATCH tiles).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from vtatune.errors import WorkloadError

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig
    from vtatune.schedules.knobs import Knob, Knobs

#: Default fixed-point epilogue: ``clip(acc >> SHIFT, 0, 127)`` cast to int8.
DEFAULT_SHIFT = 8
#: Largest value of the clip in the epilogue: int8's maximum (ReLU then saturate).
CLIP_MAX = 127


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Workload(ABC):
    """One operator's shape, with everything the compile path and the search need of it.

    Class attributes an operator sets: ``kind`` (its name on the command line and in
    signatures), ``KNOBS`` (its schedule knobs), ``SHAPE`` (the ``--shape`` fields, e.g.
    ``"M,K,N"``), ``SIGNATURE`` (a regex whose groups are the constructor's fields in order)
    ``DEFAULT`` (the layer name or shape text used when none is given) and ``LAYERS_FROM``
    (the network its named layers come from, for people reading a layer name). Subclasses are
    frozen dataclasses whose last field is ``name: str = ""`` (a named layer's name).
    """

    kind: ClassVar[str] = "workload"
    KNOBS: ClassVar[tuple[Knob, ...]] = ()
    SHAPE: ClassVar[str] = ""
    SIGNATURE: ClassVar[re.Pattern[str]] = re.compile(r"(?!)")
    DEFAULT: ClassVar[str] = ""
    LAYERS_FROM: ClassVar[str] = ""

    # ---- the computation -------------------------------------------------------------------
    @property
    @abstractmethod
    def signature(self) -> str:
        """A stable string that identifies the shape (used as a key in the store)."""

    @property
    @abstractmethod
    def macs(self) -> int:
        """Multiply-accumulates of the unpadded operator (the useful work)."""

    @abstractmethod
    def tiles(self, hw: HwConfig) -> dict[str, int]:
        """Extent of every axis a knob tiles, in that knob's units (``Knob.axis`` keys)."""

    @abstractmethod
    def padded_macs(self, hw: HwConfig) -> int:
        """Multiply-accumulates the GEMM core performs on ``hw`` (padding included)."""

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

    def summary(self) -> str:
        """One line for a person: ``C8, a ResNet-18 layer: conv2d N=1, CIN=256, ...`` (the
        shape's ``--shape`` fields; a named layer says which network it belongs to)."""
        from dataclasses import fields

        names = self.SHAPE.split(",")
        values = [getattr(self, f.name) for f in fields(self)][:len(names)]
        shape = f"{self.kind} " + ", ".join(f"{n}={v}" for n, v in zip(names, values,
                                                                         strict=True))
        name = getattr(self, "name", "")
        if not name:
            return shape
        return f"{name}, a {self.LAYERS_FROM} layer: {shape}" if self.LAYERS_FROM \
            else f"{name}: {shape}"

    def describe(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"kind": self.kind, "signature": self.signature, **asdict(self)}

    # ---- the schedule template ---------------------------------------------------------------
    @abstractmethod
    def schedule(self, sch: Any, hw: HwConfig, knobs: Knobs) -> None:
        """Apply the schedule template with ``knobs`` to ``sch`` (an ``s_tir.Schedule`` of
        ``te``'s PrimFunc), in place."""

    @abstractmethod
    def footprint(self, hw: HwConfig, knobs: Knobs) -> dict[str, int]:
        """Analytic SRAM bytes per scope (``inp``, ``wgt``, ``acc``, all virtual threads) and
        the largest micro-op kernel (``uops``) of a knob setting: what the compile path
        allocates (the verification passes remain the authority)."""

    @abstractmethod
    def traffic(self, hw: HwConfig, knobs: Knobs) -> int:
        """Analytic DRAM bytes a knob setting moves."""

    def knob_values(self, hw: HwConfig, knob: Knob, extent: int) -> tuple[int, ...]:
        """Legal values of tile knob ``knob`` over ``extent`` units on ``hw`` (default:
        ``schedules.knobs.tile_sizes``: the divisors and the tiles that leave a tail)."""
        from vtatune.schedules.knobs import tile_sizes

        return tile_sizes(extent)

    def knob_legal(self, hw: HwConfig, knob: Knob, extent: int, value: int) -> str | None:
        """Why ``value`` (in 1..extent) is not a legal tile for ``knob``, or None (default:
        every tile is; the lowering partitions off the tail of one that does not divide)."""
        return None

    def knob_constraint(self, hw: HwConfig, knobs: Knobs) -> str | None:
        """Why a combination of legal knob values is not legal together, beyond the thread
        rule every space has (default: nothing)."""
        return None

    # ---- how the shape is written ------------------------------------------------------------
    @classmethod
    def layers(cls) -> Mapping[str, Workload]:
        """Named layers of this operator (upper-case names), from VTA's benchmark tables."""
        return {}

    @classmethod
    def from_shape(cls, text: str) -> Workload:
        """The workload of a ``--shape`` text (``SHAPE``'s comma-separated integers)."""
        fields = cls.SHAPE.split(",")
        return addressable(cls(*parse_ints(text, len(fields),  # type: ignore[call-arg]
                                           f"{cls.kind} ({cls.SHAPE})")))

    @classmethod
    def from_signature(cls, signature: str) -> Workload | None:
        """The workload whose ``signature`` this is (a named layer when it is one), or None."""
        m = cls.SIGNATURE.fullmatch(signature)
        if m is None:
            return None
        if any(len(g) > MAX_DIGITS for g in m.groups()):  # int() of 5,000 digits refuses
            raise WorkloadError(f"{cls.kind} signature has a dimension of more than "
                                f"{MAX_DIGITS} digits")
        wl = addressable(cls(*(int(g) for g in m.groups())))  # type: ignore[call-arg]
        named = [layer for layer in cls.layers().values() if layer.signature == wl.signature]
        return named[0] if named else wl


def _prod(xs: tuple[int, ...]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


#: Most digits of one shape field (a dimension beyond 10^12 cannot be addressed by VTA).
MAX_DIGITS = 12


def parse_ints(text: str, count: int, what: str) -> list[int]:
    """``count`` comma-separated integers, or a ``WorkloadError`` naming ``what``."""
    from vtatune.escaping import shown

    parts = [p.strip() for p in text.split(",")]
    if len(parts) != count:
        raise WorkloadError(
            f"--shape for {what} takes {count} comma-separated integers, got {shown(text)}")
    if any(len(p.lstrip("+-")) > MAX_DIGITS for p in parts):
        raise WorkloadError(f"--shape {shown(text)}: a field has more than {MAX_DIGITS} digits")
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise WorkloadError(f"--shape {shown(text)}: every field must be an integer") from None


def addressable(wl: Workload) -> Workload:
    """``wl``, or ``WorkloadError`` when its int8 tensors cannot fit VTA's DRAM together
    (``hardware.config.MAX_DRAM_BYTES``): no program could run it."""
    from vtatune.hardware.config import MAX_DRAM_BYTES

    total = sum(_prod(s) for s in wl.plain_shapes().values())  # int8: bytes = elements
    if total > MAX_DRAM_BYTES:
        raise WorkloadError(f"{wl.kind} shape needs {total:,} bytes of input, weights and "
                            f"output, more than VTA's {MAX_DRAM_BYTES:,}-byte (32-bit) DRAM")
    return wl


def check_fields(kind: str, wl: Any, positive: tuple[str, ...],
                 non_negative: tuple[str, ...] = ()) -> list[str]:
    """Problems of fields that must be >= 1 or >= 0 (for ``__post_init__``)."""
    problems = [f"{f}={getattr(wl, f)} must be >= 1" for f in positive if getattr(wl, f) < 1]
    problems += [f"{f}={getattr(wl, f)} must be >= 0" for f in non_negative
                 if getattr(wl, f) < 0]
    return problems


def epilogue(res_acc: Any, shape: tuple[int, ...], hw: HwConfig, shift: int) -> list[Any]:
    """shift right, clip to [0, 127] (two ALU stages), then cast to the output type."""
    from tvm import te

    res_shr = te.compute(shape, lambda *i: res_acc(*i) >> shift, name="res_shr")
    res_max = te.compute(shape, lambda *i: te.max(res_shr(*i), 0), name="res_max")
    res_min = te.compute(shape, lambda *i: te.min(res_max(*i), CLIP_MAX), name="res_min")
    res = te.compute(shape, lambda *i: res_min(*i).astype(hw.out_dtype), name="res")
    return [res]


def apply_epilogue(acc: np.ndarray, shift: int) -> np.ndarray:
    """numpy twin of ``epilogue``: arithmetic shift, clip(0, 127), int8."""
    import numpy as np

    return np.clip(acc >> shift, 0, CLIP_MAX).astype(np.int8)
