"""Transposed 2-D convolution (TVM's ``conv2d_transpose_nchw``) mapped onto VTA's GEMM core.

``out[n, co, y, x] = sum x[n, ci, iy, ix] * w[ci, co, ky, kx]`` over every input pixel and tap
with ``iy * S + ky - PAD = y`` and ``ix * S + kx - PAD = x``; the output is
``(H - 1) * S - 2 * PAD + KH`` rows (and columns likewise), the kernel ``(CIN, COUT, KH, KW)``.

VTA runs it as a stride-1 convolution over the input dilated by S (zeros between the pixels)
and padded by ``KH - 1 - PAD``, with the kernel flipped and its channel axes swapped; its
``InjectConv2DTransposeSkip`` pass then skips the GEMMs that would read dilation zeros, and the
dilated input crosses DRAM S^2 times larger than the input. vtatune computes the same nonzero
products without the zeros (the sub-pixel form): output row ``y`` only meets input rows
``q - t`` with ``q = (y + PAD) // S`` and taps ``ky = (y + PAD) % S + t * S``, ``t < T =
ceil(KH / S)``. So the packed computation reads the input itself (padded on the fly by the DMA
engine) and a phase-major kernel ``(COUT/BO, CIN/BI, S*T, S*T, BO, BI)`` whose row
``((y + PAD) % S) * T + (T - 1 - t)`` holds tap ``ky``; taps past ``KH`` (when S does not
divide KH) are zero and are the only wasted work.

The schedule template is conv2d's (same knobs); an output tile whose rows (columns) are a
multiple of S splits them into (row, phase) so its micro-ops stay affine and fold into the
GEMM instruction's loops.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from vtatune.schedules import knobs as kn
from vtatune.workloads.base import (
    CONV_SIGNATURE,
    DEFAULT_SHIFT,
    Convolution,
    Workload,
    apply_epilogue,
    ceil_div,
    epilogue,
    gemm_footprint,
    gemm_traffic,
    gemm_uops,
    pack,
    te_inputs,
)
from vtatune.workloads.conv2d import KNOBS, schedule_conv
from vtatune.workloads.registry import register

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig
    from vtatune.schedules.knobs import Knobs

#: DCGAN's transposed convolutions in VTA's benchmarks (batch 1):
#: name -> (H, W, CIN, COUT, K, PAD, STRIDE).
_DCGAN = {
    "CT1": (4, 4, 1024, 512, 4, 1, 2),
    "CT2": (8, 8, 512, 256, 4, 1, 2),
    "CT3": (16, 16, 256, 128, 4, 1, 2),
}


@register
@dataclass(frozen=True)
class Conv2dTranspose(Convolution):
    """conv2d_transpose(N, CIN, H, W) * (CIN, COUT, KH, KW), padding ``pad``, ``stride``."""

    name: str = ""

    kind: ClassVar[str] = "conv2d_transpose"
    KNOBS: ClassVar[tuple[kn.Knob, ...]] = KNOBS
    SIGNATURE: ClassVar[re.Pattern[str]] = re.compile(
        rf"conv2d_transpose_{CONV_SIGNATURE}")
    DEFAULT: ClassVar[str] = "CT2"
    LAYERS_FROM: ClassVar[str] = "DCGAN"

    def shape_problems(self) -> list[str]:
        if self.oh < 1 or self.ow < 1:
            return [f"padding {self.pad_text} leaves no output of the {self.h}x{self.w} input with "
                    f"a {self.kh}x{self.kw} kernel at stride {self.stride}"]
        return []

    @classmethod
    def layers(cls) -> Mapping[str, Workload]:
        return DCGAN

    @property
    def oh(self) -> int:
        return (self.h - 1) * self.stride - 2 * self.pad + self.kh

    @property
    def ow(self) -> int:
        return (self.w - 1) * self.stride - 2 * self.pad_cols + self.kw

    @property
    def taps(self) -> tuple[int, int]:
        """Kernel taps per phase (rows, columns): ``ceil(K / S)``."""
        return ceil_div(self.kh, self.stride), ceil_div(self.kw, self.stride)

    def _pads(self, k: int, extent: int, out: int, pad: int) -> tuple[int, int, int]:
        """(rows of zeros before, after the input, index offset) along one axis padded by
        ``pad``: the input rows ``(y + PAD) // S - t`` of outputs ``y < out`` and taps
        ``t < T``."""
        s, t = self.stride, ceil_div(k, self.stride)
        before = max(0, t - 1 - pad // s)
        after = max(0, (out - 1 + pad) // s + 1 - extent)
        return before, after, before - (t - 1)

    @property
    def macs(self) -> int:
        """Every input pixel times every tap (the usual count; as conv2d's, it includes the
        products that padding makes vanish, here those cropped at the borders)."""
        return self.n * self.cin * self.cout * self.h * self.w * self.kh * self.kw

    def padded_macs(self, hw: HwConfig) -> int:
        t = self.tiles(hw)
        ty, tx = self.taps
        return (t["b"] * hw.batch * t["co"] * hw.block_out * self.oh * self.ow
                * t["ci"] * hw.block_in * ty * tx)

    def packed_shapes(self, hw: HwConfig) -> dict[str, tuple[int, ...]]:
        t = self.tiles(hw)
        ty, tx = self.taps
        s = self.stride
        return {
            "data": (t["b"], t["ci"], self.h, self.w, hw.batch, hw.block_in),
            "kernel": (t["co"], t["ci"], s * ty, s * tx, hw.block_out, hw.block_in),
            "res": (t["b"], t["co"], self.oh, self.ow, hw.batch, hw.block_out),
        }

    def plain_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"data": (self.n, self.cin, self.h, self.w),
                "kernel": (self.cin, self.cout, self.kh, self.kw),
                "res": (self.n, self.cout, self.oh, self.ow)}

    def te(self, hw: HwConfig, shift: int = DEFAULT_SHIFT) -> list[Any]:
        from tvm import te

        shapes = self.packed_shapes(hw)
        top, bottom, oy = self._pads(self.kh, self.h, self.oh, self.pad)
        left, right, ox = self._pads(self.kw, self.w, self.ow, self.pad_cols)
        data, kernel, data_buf, kernel_buf = te_inputs(
            shapes, hw, [0, 0, top, left, 0, 0], [0, 0, bottom, right, 0, 0])
        ty, tx = self.taps
        ci = te.reduce_axis((0, shapes["data"][1]), name="ic")
        dy = te.reduce_axis((0, ty), name="dy")
        dx = te.reduce_axis((0, tx), name="dx")
        ci_t = te.reduce_axis((0, hw.block_in), name="ic_tns")
        s, p, q = self.stride, self.pad, self.pad_cols
        acc = hw.acc_dtype
        res_conv = te.compute(
            shapes["res"],
            lambda bo, co, i, j, bi, c: te.sum(
                data_buf[bo, ci, (i + p) // s + dy + oy, (j + q) // s + dx + ox, bi,
                         ci_t].astype(acc)
                * kernel_buf[co, ci, (i + p) % s * ty + dy, (j + q) % s * tx + dx, c,
                             ci_t].astype(acc),
                axis=[ci, dy, dx, ci_t]),
            name="res_conv")
        return [data, kernel, *epilogue(res_conv, shapes["res"], hw, shift)]

    def reference(self, data: np.ndarray, kernel: np.ndarray, shift: int = DEFAULT_SHIFT
                  ) -> np.ndarray:
        """Scatter form of the definition: every input pixel times every tap."""
        import numpy as np

        s, p, q = self.stride, self.pad, self.pad_cols
        full = np.zeros((self.n, self.cout, (self.h - 1) * s + self.kh,
                         (self.w - 1) * s + self.kw), dtype=np.int64)
        x = data.astype(np.int64)
        w = kernel.astype(np.int64)
        for ky in range(self.kh):
            for kx in range(self.kw):
                full[:, :, ky:ky + (self.h - 1) * s + 1:s, kx:kx + (self.w - 1) * s + 1:s] += \
                    np.einsum("nchw,co->nohw", x, w[:, :, ky, kx])
        acc = full[:, :, p:p + self.oh, q:q + self.ow]
        return apply_epilogue(acc.astype(np.int32), shift)

    def pack_inputs(self, data: np.ndarray, kernel: np.ndarray, hw: HwConfig
                    ) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        t = self.tiles(hw)
        # phase-major taps: row r * T + (T - 1 - t) holds ky = r + t * S (zero past KH)
        s = self.stride
        ty, tx = self.taps
        ph = np.zeros((self.cout, self.cin, s * ty, s * tx), dtype=np.int8)
        for ky in range(self.kh):
            row = (ky % s) * ty + ty - 1 - ky // s
            for kx in range(self.kw):
                col = (kx % s) * tx + tx - 1 - kx // s
                ph[:, :, row, col] = kernel[:, :, ky, kx].T
        return (self.pack_data(data, hw),
                pack(ph, (t["co"], t["ci"]), (hw.block_out, hw.block_in)))

    # ---- schedule template -------------------------------------------------------------------
    def knob_values(self, hw: HwConfig, knob: kn.Knob, extent: int) -> tuple[int, ...]:
        """Row and column tiles start on a phase boundary: 1, the whole extent, or a multiple
        of the stride (a tile of other sizes reads a window whose size alternates between
        tiles, which no fixed DMA describes); the tile sizes are rounded up to one."""
        values = super().knob_values(hw, knob, extent)
        if knob.axis not in ("oh", "ow"):
            return values
        s = self.stride
        return tuple(sorted({v if v in (1, extent) else min(extent, ceil_div(v, s) * s)
                             for v in values}))

    def knob_legal(self, hw: HwConfig, knob: kn.Knob, extent: int, value: int) -> str | None:
        if knob.axis in ("oh", "ow") and value not in (1, extent) and value % self.stride:
            return (f"{knob.name}={value}: a tile of a stride-{self.stride} transposed "
                    f"convolution is 1, all {extent}, or a multiple of {self.stride} "
                    "(it must start on a phase boundary)")
        return None

    def schedule(self, sch: Any, hw: HwConfig, knobs: Knobs) -> None:
        schedule_conv(sch, hw, knobs, phases=self.stride, vta_order=False)

    def _window(self, tile: int, k: int) -> int:
        """Input rows one output tile of ``tile`` rows reads, at the worst alignment."""
        return ceil_div(tile - 1, self.stride) + ceil_div(k, self.stride)

    def footprint(self, hw: HwConfig, knobs: Knobs) -> dict[str, int]:
        k = knobs
        s = self.stride
        ty, tx = self.taps
        rows, cols = self._window(k["tile_h"], self.kh), self._window(k["tile_w"], self.kw)
        # the weights of every phase the tile meets (one phase: a single row or column)
        wrows = ty * (1 if k["tile_h"] == 1 else s)
        wcols = tx * (1 if k["tile_w"] == 1 else s)
        return gemm_footprint(hw, k["tile_b"], k["tile_ci"], k["tile_co"],
                              inp_pixels=rows * cols, wgt_taps=wrows * wcols,
                              out_pixels=k["tile_h"] * k["tile_w"],
                              threads=k["h_nthread"] * k["oc_nthread"], uops=self._uops(k))

    def _uops(self, k: Knobs) -> int:
        """Micro-ops of the GEMM kernel: its loops, of which the two outermost fold into the
        instruction when the micro-op indices are affine in them (rows and columns are, when
        split by phase)."""
        s = self.stride
        ty, tx = self.taps
        split_h = s > 1 and k["tile_h"] % s == 0
        split_w = s > 1 and k["tile_w"] % s == 0
        loops = [(k["tile_b"], True), (k["tile_co"], True),
                 (k["tile_h"] // s if split_h else k["tile_h"], split_h or s == 1),
                 (k["tile_ci"], True), (ty, True), (tx, True),
                 (k["tile_w"] // s if split_w else k["tile_w"], split_w or s == 1),
                 (s if split_h else 1, False), (s if split_w else 1, False)]
        return gemm_uops([e for e, _ in loops], [affine for _, affine in loops])

    def traffic(self, hw: HwConfig, knobs: Knobs) -> int:
        k = knobs
        t = self.tiles(hw)
        ty, tx = self.taps
        hs, ws = kn.split_sizes(self.oh, k["tile_h"]), kn.split_sizes(self.ow, k["tile_w"])
        rows = sum(self._window(h, self.kh) for h in hs)
        cols = sum(self._window(w, self.kw) for w in ws)
        wrows = sum(ty * (1 if h == 1 else self.stride) for h in hs)
        wcols = sum(tx * (1 if w == 1 else self.stride) for w in ws)
        return gemm_traffic(hw, t["b"], t["ci"], t["co"], k["tile_b"], k["tile_co"],
                            inp_pixels=rows * cols, wgt_taps=wrows * wcols,
                            out_pixels=self.oh * self.ow)


DCGAN: dict[str, Conv2dTranspose] = {
    name: Conv2dTranspose(1, cin, h, w, cout, k, k, pad, stride, name=name)
    for name, (h, w, cin, cout, k, pad, stride) in _DCGAN.items()
}
