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

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from vtatune.errors import WorkloadError

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig
    from vtatune.passes.vta_copy_rules import Copy
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
    ``DEFAULT`` (the layer name or shape text used when none is given), ``LAYERS_FROM``
    (the network its named layers come from, for people reading a layer name) and
    ``NON_NEGATIVE`` (the ``SHAPE`` fields that may be 0; every other one must be >= 1).
    Subclasses are frozen dataclasses whose first fields are ``SHAPE``'s, in order, and whose
    last field is ``name: str = ""`` (a named layer's name).
    """

    kind: ClassVar[str] = "workload"
    KNOBS: ClassVar[tuple[Knob, ...]] = ()
    SHAPE: ClassVar[str] = ""
    SIGNATURE: ClassVar[re.Pattern[str]] = re.compile(r"(?!)")
    DEFAULT: ClassVar[str] = ""
    LAYERS_FROM: ClassVar[str] = ""
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        """``WorkloadError`` naming every field out of range, else ``shape_problems()``'s."""
        values = {f: getattr(self, f) for f in _shape_fields(self)}
        positive = [f for f in values if f not in self.NON_NEGATIVE]
        problems = [f"{f}={values[f]} must be >= 1" for f in positive if values[f] < 1]
        problems += [f"{f}={values[f]} must be >= 0" for f in self.NON_NEGATIVE if values[f] < 0]
        if not problems:
            problems = self.shape_problems()
        if problems:
            raise WorkloadError(f"{self.kind} shape: " + "; ".join(problems))

    def shape_problems(self) -> list[str]:
        """What is wrong with a shape whose fields are each in range (default: nothing)."""
        return []

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
        n_data = math.prod(s["data"]) * hw.inp_bits // 8
        n_kernel = math.prod(s["kernel"]) * hw.wgt_bits // 8
        n_res = math.prod(s["res"]) * hw.out_bits // 8
        return n_data + n_kernel + n_res

    def summary(self) -> str:
        """One line for a person: ``C8, a ResNet-18 layer: conv2d N=1, CIN=256, ...`` (the
        shape's ``--shape`` fields; a named layer says which network it belongs to)."""
        names = self.SHAPE.split(",")
        shape = f"{self.kind} " + ", ".join(f"{n}={v}" for n, v in zip(
            names, self.shape_fields(), strict=True))
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
        rule every space has (default: VTA's compiler refuses one of its copies,
        ``vta_copy_problem``)."""
        return self.vta_copy_problem(hw, knobs)

    def copies(self, hw: HwConfig, knobs: Knobs) -> list[Copy]:
        """The DMA copies of one (full) output tile and reduction step of ``knobs``, as VTA's
        lowering sees them (``passes.vta_copy_rules.Copy``); [] when the operator does not
        describe them (the lowering still applies VTA's rules)."""
        return []

    def vta_copy_problem(self, hw: HwConfig, knobs: Knobs) -> str | None:
        """Why VTA's compiler refuses a copy of ``knobs``' full tiles (its message), or None:
        the cheap form of the rules ``passes.inject_dma`` applies to every copy (a tail tile
        of a tile that does not divide its axis is checked there only)."""
        for c in self.copies(hw, knobs):
            why = c.problem()
            if why:
                return why
        return None

    # ---- how the shape is written ------------------------------------------------------------
    @classmethod
    def layers(cls) -> Mapping[str, Workload]:
        """Named layers of this operator (upper-case names), from VTA's benchmark tables."""
        return {}

    def shape_fields(self) -> list[str]:
        """The ``SHAPE`` fields' values as ``--shape`` writes them (``from_shape`` reads
        them back)."""
        return [str(getattr(self, f)) for f in _shape_fields(self)]

    @classmethod
    def from_shape(cls, text: str) -> Workload:
        """The workload of a ``--shape`` text (``SHAPE``'s comma-separated integers)."""
        fields = cls.SHAPE.split(",")
        return addressable(cls(*parse_ints(text, len(fields),  # type: ignore[call-arg]
                                           f"{cls.kind} ({cls.SHAPE})")))

    @classmethod
    def _from_groups(cls, groups: tuple[str | None, ...]) -> Workload:
        """The workload of ``SIGNATURE``'s groups (default: the fields in order)."""
        return cls(*(int(g) for g in groups))  # type: ignore[call-arg]

    @classmethod
    def from_signature(cls, signature: str) -> Workload | None:
        """The workload whose ``signature`` this is (a named layer when it is one), or None."""
        m = cls.SIGNATURE.fullmatch(signature)
        if m is None:
            return None
        # int() of 5,000 digits refuses
        if any(g is not None and len(g) > MAX_DIGITS for g in m.groups()):
            raise WorkloadError(f"{cls.kind} signature has a dimension of more than "
                                f"{MAX_DIGITS} digits")
        wl = addressable(cls._from_groups(m.groups()))
        named = [layer for layer in cls.layers().values() if layer.signature == wl.signature]
        return named[0] if named else wl


#: A convolution's signature up to its stride: ``..._k{KH}x{KW}_p{PAD}`` or, padded per axis,
#: ``_p{PAD_H}x{PAD_W}``; an operator's ``SIGNATURE`` is ``{kind}_`` + this + its own fields.
CONV_SIGNATURE = r"n(\d+)_c(\d+)_h(\d+)_w(\d+)_o(\d+)_k(\d+)x(\d+)_p(\d+)(?:x(\d+))?_s(\d+)"
#: Index of the optional ``x{PAD_W}`` group in ``CONV_SIGNATURE``.
_PAD_W_GROUP = 8


@dataclass(frozen=True)
class Convolution(Workload):
    """What the 2-D convolutions share (conv2d, conv2d_transpose, group_conv2d): the fields
    of input ``(N, CIN, H, W)``, ``COUT`` output channels, a ``KH x KW`` kernel, padding and
    ``stride``, their ``--shape`` words and signature, and the packed layout of their data
    and result (NCHWnc: batch and channel tiles outermost, BATCH and BLOCK lanes innermost).
    ``oh``/``ow`` are a direct convolution's; an operator adds its own fields after
    ``stride``.

    **Padding per axis**, as VTA's templates take it (``vta_conv2d.py``: ``padding[0]`` rows
    above and below, ``padding[1]`` columns left and right): ``pad`` is the rows' (``pad_h``)
    and, unless the keyword ``pad_w`` says otherwise, the columns'. Inception's 1x7 kernel
    pads ``(0, 3)``: ``Conv2d(..., 0, 1, pad_w=3)``, ``--shape`` PAD ``0x3``, signature
    ``_p0x3``. A convolution padded alike on both axes keeps the one-number forms (``PAD``,
    ``_p1``) it always had, so stored results and exported records still match.
    """

    n: int
    cin: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    pad: int
    stride: int
    pad_w: int | None = field(default=None, kw_only=True)  # None: ``pad``

    SHAPE: ClassVar[str] = "N,CIN,H,W,COUT,KH,KW,PAD,STRIDE"
    NON_NEGATIVE: ClassVar[tuple[str, ...]] = ("pad",)
    #: Index of PAD in ``SHAPE``.
    PAD_FIELD: ClassVar[int] = 7

    def __post_init__(self) -> None:
        if self.pad_w is None:
            object.__setattr__(self, "pad_w", self.pad)
        super().__post_init__()

    @property
    def pad_h(self) -> int:
        """Rows of zeros above and below the input."""
        return self.pad

    @property
    def pad_cols(self) -> int:
        """Columns of zeros left and right of the input (``pad_w``, resolved)."""
        return self.pad if self.pad_w is None else self.pad_w

    def shape_problems(self) -> list[str]:
        if self.pad_cols < 0:
            return [f"pad_w={self.pad_cols} must be >= 0"]
        if self.oh < 1 or self.ow < 1:
            return [f"kernel {self.kh}x{self.kw} does not fit the padded {self.h}x{self.w} "
                    "input"]
        return []

    @property
    def pad_text(self) -> str:
        """``3``, or ``0x3`` (rows x columns) when the axes differ."""
        return (str(self.pad) if self.pad_cols == self.pad
                else f"{self.pad}x{self.pad_cols}")

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        if self.pad_cols == self.pad:  # as before padding per axis (manifests, JSON)
            d.pop("pad_w", None)
        return d

    def shape_fields(self) -> list[str]:
        out = super().shape_fields()
        out[self.PAD_FIELD] = self.pad_text
        return out

    @classmethod
    def from_shape(cls, text: str) -> Workload:
        """As ``Workload.from_shape``; PAD may be ``PAD_HxPAD_W``."""
        parts = text.split(",")
        fields = cls.SHAPE.split(",")
        if len(parts) != len(fields) or "x" not in parts[cls.PAD_FIELD].lower():
            return super().from_shape(text)
        from vtatune.escaping import shown

        pad_h, _, pad_w = parts[cls.PAD_FIELD].strip().lower().partition("x")
        if not (pad_h.isdigit() and pad_w.isdigit()) or len(pad_h + pad_w) > MAX_DIGITS:
            raise WorkloadError(f"--shape {shown(text)}: PAD must be an integer or PAD_HxPAD_W "
                                f"(rows x columns, e.g. 0x3), got "
                                f"{shown(parts[cls.PAD_FIELD].strip())}")
        parts[cls.PAD_FIELD] = pad_h
        values = parse_ints(",".join(parts), len(fields), f"{cls.kind} ({cls.SHAPE})")
        return addressable(cls(*values, pad_w=int(pad_w)))  # type: ignore[call-arg]

    @classmethod
    def _from_groups(cls, groups: tuple[str | None, ...]) -> Workload:
        values = list(groups)
        cols = values.pop(_PAD_W_GROUP)
        return cls(*(int(g) for g in values),  # type: ignore[arg-type, call-arg]
                   pad_w=None if cols is None else int(cols))

    @property
    def oh(self) -> int:
        return (self.h + 2 * self.pad - self.kh) // self.stride + 1

    @property
    def ow(self) -> int:
        return (self.w + 2 * self.pad_cols - self.kw) // self.stride + 1

    @property
    def signature(self) -> str:
        return (f"{self.kind}_n{self.n}_c{self.cin}_h{self.h}_w{self.w}_o{self.cout}"
                f"_k{self.kh}x{self.kw}_p{self.pad_text}_s{self.stride}")

    def tiles(self, hw: HwConfig) -> dict[str, int]:
        """Extents in tiles: batch (BATCH), input channels (BLOCK_IN), output (BLOCK_OUT)."""
        return {"b": ceil_div(self.n, hw.batch), "ci": ceil_div(self.cin, hw.block_in),
                "co": ceil_div(self.cout, hw.block_out), "oh": self.oh, "ow": self.ow}

    def pack_data(self, data: np.ndarray, hw: HwConfig) -> np.ndarray:
        t = self.tiles(hw)
        return pack(data, (t["b"], t["ci"]), (hw.batch, hw.block_in))

    def unpack_output(self, res: np.ndarray, hw: HwConfig) -> np.ndarray:
        return unpack(res, (self.n, self.cout))


def pack(a: np.ndarray, tiles: tuple[int, int], lanes: tuple[int, int]) -> np.ndarray:
    """Plain int8 ``a`` of axes ``(A, B, *rest)`` zero-padded to ``tiles`` whole tiles of
    ``lanes`` on its first two axes and packed as VTA lays it out: ``(A/a, B/b, *rest, a, b)``
    (contiguous)."""
    import numpy as np

    rest = a.shape[2:]
    padded = np.zeros((tiles[0] * lanes[0], tiles[1] * lanes[1], *rest), dtype=np.int8)
    padded[: a.shape[0], : a.shape[1]] = a
    tiled = padded.reshape(tiles[0], lanes[0], tiles[1], lanes[1], *rest)
    return np.ascontiguousarray(tiled.transpose(0, 2, *range(4, 4 + len(rest)), 1, 3))


def unpack(res: np.ndarray, keep: tuple[int, int]) -> np.ndarray:
    """``pack``'s inverse: packed ``res`` ``(A/a, B/b, *rest, a, b)`` back to ``(A, B, *rest)``,
    cut to the first ``keep`` rows of its first two axes (padding dropped)."""
    ta, tb, *rest, a, b = res.shape
    axes = range(2, 2 + len(rest))
    plain = res.transpose(0, len(rest) + 2, 1, len(rest) + 3, *axes).reshape(ta * a, tb * b,
                                                                            *rest)
    return plain[: keep[0], : keep[1]].copy()


def te_inputs(shapes: dict[str, tuple[int, ...]], hw: HwConfig,
              pad_before: list[int] | None = None, pad_after: list[int] | None = None
              ) -> tuple[Any, Any, Any, Any]:
    """``data`` and ``kernel`` placeholders of the packed ``shapes`` and their ``data_buf``
    and ``kernel_buf`` stages; ``data_buf`` is zero-padded by ``pad_before`` (and
    ``pad_after``, default the same) elements per axis when any is nonzero."""
    from tvm import te, topi

    data = te.placeholder(shapes["data"], name="data", dtype=hw.inp_dtype)
    kernel = te.placeholder(shapes["kernel"], name="kernel", dtype=hw.wgt_dtype)
    if any(pad_before or ()) or any(pad_after or ()):
        data_buf = topi.nn.pad(data, pad_before, pad_after, name="data_buf")
    else:
        data_buf = te.compute(shapes["data"], lambda *i: data(*i), "data_buf")
    kernel_buf = te.compute(shapes["kernel"], lambda *i: kernel(*i), "kernel_buf")
    return data, kernel, data_buf, kernel_buf


def tile_copy(scope: str, load: bool, extents: tuple[int, ...], full: tuple[int, ...],
              padded: tuple[bool, ...] = (), buffer: tuple[int, ...] = ()) -> Copy:
    """A copy of ``extents`` of a packed tensor of shape ``full`` (row-major in DRAM) between
    DRAM and ``scope``; its element block is the last two dimensions (BATCH x BLOCK).
    ``buffer``: the SRAM buffer's extents when larger (a partial tile's copy)."""
    from vtatune.passes.vta_copy_rules import Copy

    strides, size = [], 1
    for e in reversed(full):
        strides.append(size)
        size *= e
    return Copy(scope, load, tuple(extents), tuple(reversed(strides)),
                full[-1] * full[-2], tuple(padded), tuple(buffer))


def tile_variants(extent: int, tile: int) -> tuple[int, ...]:
    """The sizes of the tiles ``tile`` cuts ``extent`` into: the full tile, and the tail's
    when it does not divide (``schedules.knobs.split_sizes``, deduplicated)."""
    tail = extent % tile
    return (tile, tail) if tail and tile < extent else (min(tile, extent),)


def conv_copies(hw: HwConfig, knobs: Knobs, shapes: dict[str, tuple[int, ...]],
                lead: tuple[int, ...], co: int, kh: int, kw: int, stride: int, pad: int,
                oh: int, ow: int, ci: int, co_extent: int, pad_w: int | None = None
                ) -> list[Copy]:
    """The copies of a convolution's tiles, full and partial (a tail of every tile knob that
    does not divide its axis): the input window (padded on rows when ``pad`` > 0 and on
    columns when ``pad_w`` (default ``pad``) > 0), its weights and the output tile;
    ``lead``: the extents of the packed tensors' axes
    before the channel tiles (batch, and a grouped convolution's groups), ``co``: output
    channel tiles per tile (of ``co_extent``), ``ci``: the input channel tiles of the axis
    ``tile_ci`` splits."""
    from vtatune.passes.scopes import ACC_SCOPE, INP_SCOPE, WGT_SCOPE

    k = knobs
    lead_pad = (False,) * len(lead)

    def window(t: int, kk: int) -> int:
        return (t - 1) * stride + kk

    rows_full, cols_full = window(k["tile_h"], kh), window(k["tile_w"], kw)
    out: dict[Any, Copy] = {}
    for tci in tile_variants(ci, k["tile_ci"]):
        for th in tile_variants(oh, k["tile_h"]):
            for tw in tile_variants(ow, k["tile_w"]):
                ext = (*lead, tci, window(th, kh), window(tw, kw), hw.batch, hw.block_in)
                full = (*lead, k["tile_ci"], rows_full, cols_full, hw.batch, hw.block_in)
                cols_padded = (pad if pad_w is None else pad_w) > 0
                c = tile_copy(INP_SCOPE, True, ext, shapes["data"],
                              (*lead_pad, False, pad > 0, cols_padded, False, False), full)
                out[c] = c
        for tco in tile_variants(co_extent, co):
            ext = (*lead[1:], tco, tci, kh, kw, hw.block_out, hw.block_in)
            full = (*lead[1:], co, k["tile_ci"], kh, kw, hw.block_out, hw.block_in)
            c = tile_copy(WGT_SCOPE, True, ext, shapes["kernel"], (), full)
            out[c] = c
    for tco in tile_variants(co_extent, co):
        for th in tile_variants(oh, k["tile_h"]):
            for tw in tile_variants(ow, k["tile_w"]):
                ext = (*lead, tco, th, tw, hw.batch, hw.block_out)
                full = (*lead, co, k["tile_h"], k["tile_w"], hw.batch, hw.block_out)
                c = tile_copy(ACC_SCOPE, False, ext, shapes["res"], (), full)
                out[c] = c
    return list(out.values())


def gemm_footprint(hw: HwConfig, tile_b: int, tile_ci: int, tile_co: int, *, groups: int = 1,
                   inp_pixels: int = 1, wgt_taps: int = 1, out_pixels: int = 1,
                   threads: int = 1, uops: int = 1) -> dict[str, int]:
    """SRAM bytes per scope of one output tile of ``tile_b`` BATCH and ``tile_co`` BLOCK_OUT
    tiles (of each of ``groups`` groups) and ``out_pixels`` pixels (int32), reading
    ``tile_ci`` BLOCK_IN tiles of ``inp_pixels`` input pixels and their weights of
    ``wgt_taps`` taps per reduction step; every virtual thread owns a copy. ``uops``: the
    largest micro-op kernel."""
    b = tile_b * hw.batch
    inp = b * groups * tile_ci * hw.block_in * inp_pixels * hw.inp_bits // 8
    wgt = (groups * tile_co * hw.block_out * tile_ci * hw.block_in * wgt_taps
           * hw.wgt_bits // 8)
    acc = b * groups * tile_co * hw.block_out * out_pixels * hw.acc_bits // 8
    return {"inp": inp * threads, "wgt": wgt * threads, "acc": acc * threads, "uops": uops}


def gemm_traffic(hw: HwConfig, b: int, ci: int, co: int, tile_b: int, tile_co: int, *,
                 groups: int = 1, inp_pixels: int = 1, wgt_taps: int = 1, out_pixels: int = 1
                 ) -> int:
    """DRAM elements (int8) a tiled GEMM over ``b`` BATCH, ``ci`` BLOCK_IN and ``co`` BLOCK_OUT
    tiles (of each of ``groups`` groups) moves: the inputs re-read per output-channel tile
    (``inp_pixels``: the input windows of the output tiles along the pixels, summed), the
    weights per batch tile (``wgt_taps``: the taps those tiles read, summed), the output
    (``out_pixels``) once; partial tiles count at their own size."""
    from vtatune.schedules.knobs import split_sizes

    n_b, n_co = len(split_sizes(b, tile_b)), len(split_sizes(co, tile_co))
    lanes = ci * hw.block_in
    inp = b * hw.batch * groups * n_co * lanes * inp_pixels
    wgt = n_b * groups * co * hw.block_out * lanes * wgt_taps
    out = b * hw.batch * groups * co * hw.block_out * out_pixels
    return inp + wgt + out


def gemm_uops(loops: list[int], affine: list[bool] | None = None) -> int:
    """Micro-ops of a GEMM kernel whose loops (outermost first) have the extents ``loops``:
    loops of extent 1 vanish, and the two outermost fold into the GEMM instruction's loops
    when the micro-op indices are affine in them (``affine``; default every loop)."""
    kept = [(e, a) for e, a in zip(loops, affine or [True] * len(loops), strict=True) if e > 1]
    folded = 0
    while folded < 2 and folded < len(kept) and kept[folded][1]:
        folded += 1
    return math.prod(e for e, _ in kept[folded:])


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

    total = sum(math.prod(s) for s in wl.plain_shapes().values())  # int8: bytes = elements
    if total > MAX_DRAM_BYTES:
        raise WorkloadError(f"{wl.kind} shape needs {total:,} bytes of input, weights and "
                            f"output, more than VTA's {MAX_DRAM_BYTES:,}-byte (32-bit) DRAM")
    return wl


def _shape_fields(wl: Workload) -> list[str]:
    """Names of ``wl``'s ``SHAPE`` fields (its first dataclass fields)."""
    from dataclasses import fields

    return [f.name for f in fields(wl) if not f.kw_only][:len(wl.SHAPE.split(","))]


def epilogue(res_acc: Any, shape: tuple[int, ...], hw: HwConfig, shift: int) -> list[Any]:
    """shift right, clip to [0, 127] (two ALU stages: min, then max, as VTA's tutorial and
    TopHub's tuning define the clip, so the ALU instructions come in VTA's order), then cast
    to the output type."""
    from tvm import te

    res_shr = te.compute(shape, lambda *i: res_acc(*i) >> shift, name="res_shr")
    res_min = te.compute(shape, lambda *i: te.min(res_shr(*i), CLIP_MAX), name="res_min")
    res_max = te.compute(shape, lambda *i: te.max(res_min(*i), 0), name="res_max")
    res = te.compute(shape, lambda *i: res_max(*i).astype(hw.out_dtype), name="res")
    return [res]


def apply_epilogue(acc: np.ndarray, shift: int) -> np.ndarray:
    """numpy twin of ``epilogue``: arithmetic shift, clip(0, 127), int8."""
    import numpy as np

    return np.clip(acc >> shift, 0, CLIP_MAX).astype(np.int8)
