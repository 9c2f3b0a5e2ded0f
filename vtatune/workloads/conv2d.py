"""2-D convolution in VTA's packed NCHWnc layout, with the conv2d tutorial's schedule template.

Knobs (tiles count whole hardware tiles or output rows/columns, so a value means the same work
on any BLOCK size): ``tile_b`` BATCH tiles and ``tile_co`` BLOCK_OUT channel tiles per output
tile, ``tile_h`` / ``tile_w`` output rows / columns per output tile, ``tile_ci`` BLOCK_IN
channel tiles loaded per reduction step, ``h_nthread`` / ``oc_nthread`` virtual threads over
output-row / channel tiles.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from vtatune.errors import WorkloadError
from vtatune.schedules import knobs as kn
from vtatune.workloads.base import (
    CONV_SIGNATURE,
    DEFAULT_SHIFT,
    Convolution,
    Workload,
    apply_epilogue,
    conv_copies,
    epilogue,
    gemm_footprint,
    gemm_traffic,
    gemm_uops,
    pack,
    te_inputs,
)
from vtatune.workloads.registry import register

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig
    from vtatune.passes.vta_copy_rules import Copy
    from vtatune.schedules.knobs import Knobs

#: The conv2d knobs (VTA's AutoTVM template for conv2d: the same names and meanings).
KNOBS = (
    kn.spatial("tile_b", "b", kn.BATCH_TILES, "BATCH tiles per output tile"),
    kn.spatial("tile_h", "oh", kn.ROWS, "output rows per output tile"),
    kn.spatial("tile_w", "ow", kn.COLS, "output columns per output tile"),
    kn.reduction("tile_ci", "ci", kn.IN_CHANNEL_TILES,
                 "BLOCK_IN channel tiles loaded per reduction step"),
    kn.spatial("tile_co", "co", kn.OUT_CHANNEL_TILES, "BLOCK_OUT channel tiles per output tile"),
    kn.thread("h_nthread", "tile_h", "virtual threads over output-row tiles"),
    kn.thread("oc_nthread", "tile_co", "virtual threads over output-channel tiles"),
)

#: ResNet-18's conv2d layers in VTA's benchmarks: name -> (H, W, Cin, Cout, k, pad, stride).
_RESNET18 = {
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


@register
@dataclass(frozen=True)
class Conv2d(Convolution):
    """conv2d(N, Cin, H, W) * (Cout, Cin, KH, KW), padding ``pad`` (rows; ``pad_w``
    columns), ``stride``."""

    name: str = ""

    kind: ClassVar[str] = "conv2d"
    KNOBS: ClassVar[tuple[kn.Knob, ...]] = KNOBS
    SIGNATURE: ClassVar[re.Pattern[str]] = re.compile(
        rf"conv2d_{CONV_SIGNATURE}")
    DEFAULT: ClassVar[str] = "C8"  # the conv2d tutorial's layer
    LAYERS_FROM: ClassVar[str] = "ResNet-18"

    @classmethod
    def layers(cls) -> Mapping[str, Workload]:
        return RESNET18

    @property
    def macs(self) -> int:
        return self.n * self.cout * self.oh * self.ow * self.cin * self.kh * self.kw

    def padded_macs(self, hw: HwConfig) -> int:
        t = self.tiles(hw)
        return (t["b"] * hw.batch * t["co"] * hw.block_out * self.oh * self.ow
                * t["ci"] * hw.block_in * self.kh * self.kw)

    def packed_shapes(self, hw: HwConfig) -> dict[str, tuple[int, ...]]:
        t = self.tiles(hw)
        return {
            "data": (t["b"], t["ci"], self.h, self.w, hw.batch, hw.block_in),
            "kernel": (t["co"], t["ci"], self.kh, self.kw, hw.block_out, hw.block_in),
            "res": (t["b"], t["co"], self.oh, self.ow, hw.batch, hw.block_out),
        }

    def plain_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"data": (self.n, self.cin, self.h, self.w),
                "kernel": (self.cout, self.cin, self.kh, self.kw),
                "res": (self.n, self.cout, self.oh, self.ow)}

    def te(self, hw: HwConfig, shift: int = DEFAULT_SHIFT) -> list[Any]:
        from tvm import te

        shapes = self.packed_shapes(hw)
        ph, pw = self.pad, self.pad_cols
        data, kernel, data_buf, kernel_buf = te_inputs(shapes, hw, [0, 0, ph, pw, 0, 0])
        ci = te.reduce_axis((0, shapes["data"][1]), name="ic")
        dy = te.reduce_axis((0, self.kh), name="dy")
        dx = te.reduce_axis((0, self.kw), name="dx")
        ci_t = te.reduce_axis((0, hw.block_in), name="ic_tns")
        s = self.stride
        acc = hw.acc_dtype
        res_conv = te.compute(
            shapes["res"],
            lambda bo, co, i, j, bi, c: te.sum(
                data_buf[bo, ci, i * s + dy, j * s + dx, bi, ci_t].astype(acc)
                * kernel_buf[co, ci, dy, dx, c, ci_t].astype(acc),
                axis=[ci, dy, dx, ci_t]),
            name="res_conv")
        return [data, kernel, *epilogue(res_conv, shapes["res"], hw, shift)]

    def reference(self, data: np.ndarray, kernel: np.ndarray, shift: int = DEFAULT_SHIFT
                  ) -> np.ndarray:
        import numpy as np

        ph, pw, s = self.pad, self.pad_cols, self.stride
        x = np.pad(data.astype(np.int64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
        w = kernel.astype(np.int64)
        acc = np.zeros((self.n, self.cout, self.oh, self.ow), dtype=np.int64)
        for ky in range(self.kh):
            for kx in range(self.kw):
                win = x[:, :, ky:ky + s * (self.oh - 1) + 1:s, kx:kx + s * (self.ow - 1) + 1:s]
                acc += np.einsum("nchw,oc->nohw", win, w[:, :, ky, kx])
        return apply_epilogue(acc.astype(np.int32), shift)

    def pack_inputs(self, data: np.ndarray, kernel: np.ndarray, hw: HwConfig
                    ) -> tuple[np.ndarray, np.ndarray]:
        t = self.tiles(hw)
        return (self.pack_data(data, hw),
                pack(kernel, (t["co"], t["ci"]), (hw.block_out, hw.block_in)))

    # ---- schedule template -------------------------------------------------------------------
    def schedule(self, sch: Any, hw: HwConfig, knobs: Knobs) -> None:
        schedule_conv(sch, hw, knobs)

    def copies(self, hw: HwConfig, knobs: Knobs) -> list[Copy]:
        """The input window (padded when ``pad`` > 0), its weights and the output tile, of
        full and partial tiles (VTA's template: the same copies)."""
        return conv_copies(hw, knobs, self.packed_shapes(hw), (knobs["tile_b"],),
                           knobs["tile_co"], self.kh, self.kw, self.stride, self.pad,
                           self.oh, self.ow, self.tiles(hw)["ci"], self.tiles(hw)["co"],
                           pad_w=self.pad_cols)

    def footprint(self, hw: HwConfig, knobs: Knobs) -> dict[str, int]:
        """The padded input window of one output tile for ``tile_ci`` channel tiles, the
        matching weights, the int32 output tile; virtual threads each own a copy."""
        k = knobs
        s = self.stride
        rows = (k["tile_h"] - 1) * s + self.kh
        cols = (k["tile_w"] - 1) * s + self.kw
        uops = gemm_uops([k["tile_b"], k["tile_ci"], k["tile_w"], self.kw, self.kh,
                          k["tile_co"], k["tile_h"]])
        return gemm_footprint(hw, k["tile_b"], k["tile_ci"], k["tile_co"],
                              inp_pixels=rows * cols, wgt_taps=self.kh * self.kw,
                              out_pixels=k["tile_h"] * k["tile_w"],
                              threads=k["h_nthread"] * k["oc_nthread"], uops=uops)

    def traffic(self, hw: HwConfig, knobs: Knobs) -> int:
        """Inputs (with their halo) and weights re-read per output tile, the output once;
        partial tiles count at their own size."""
        k = knobs
        t = self.tiles(hw)
        s = self.stride
        hs, ws = kn.split_sizes(self.oh, k["tile_h"]), kn.split_sizes(self.ow, k["tile_w"])
        rows = sum((h - 1) * s + self.kh for h in hs)
        cols = sum((w - 1) * s + self.kw for w in ws)
        return gemm_traffic(hw, t["b"], t["ci"], t["co"], k["tile_b"], k["tile_co"],
                            inp_pixels=rows * cols,
                            wgt_taps=len(hs) * len(ws) * self.kh * self.kw,
                            out_pixels=self.oh * self.ow)


def schedule_conv(sch: Any, hw: HwConfig, k: Knobs, phases: int = 1,
                  vta_order: bool = True) -> None:
    """The conv2d tutorial's recipe: output tiles, reduction over channel tiles outermost,
    DMA staging at each reduction step, virtual threads on ``cthread``.

    Shared by the convolution-like operators. ``phases`` > 1 (a transposed convolution's
    stride): an output tile whose rows/columns are whole multiples of the stride splits them
    into (row, phase) so the micro-op indices stay affine in the row. ``vta_order``: the
    loops inside a tile in the order of VTA's conv2d template (``schedule_tile``).
    """
    b, oc, y, x, b_t, oc_t = sch.get_loops(sch.get_sblock("res"))
    b_o, b_i = sch.split(b, [None, k["tile_b"]])
    oc_o, oc_i = sch.split(oc, [None, k["tile_co"]])
    y_o, y_i = sch.split(y, [None, k["tile_h"]])
    x_o, x_i = sch.split(x, [None, k["tile_w"]])
    threads = []
    if k["oc_nthread"] > 1:
        oc_o, oc_v = sch.split(oc_o, [None, k["oc_nthread"]])
        threads.append(oc_v)
    if k["h_nthread"] > 1:
        y_o, y_v = sch.split(y_o, [None, k["h_nthread"]])
        threads.append(y_v)
    # output tiles in VTA's order (``reorder(x_bo, x_i0, x_co0, x_j0, ...)``): rows of tiles,
    # then channel tiles, then columns
    if vta_order:
        sch.reorder(*threads, b_o, y_o, oc_o, x_o, b_i, oc_i, y_i, x_i, b_t, oc_t)
    else:
        sch.reorder(*threads, b_o, oc_o, y_o, x_o, b_i, oc_i, y_i, x_i, b_t, oc_t)
    for v in threads:
        sch.bind(v, "cthread")
    schedule_tile(sch, hw, k, x_o, b_i, phases=phases, vta_order=vta_order)


def schedule_tile(sch: Any, hw: HwConfig, k: Knobs, x_o: Any, b_i: Any, grouped: bool = False,
                  phases: int = 1, vta_order: bool = True) -> None:
    """Inside one output tile (at ``x_o``; ``b_i`` its batch loop): the accumulator stages,
    the reduction over ``tile_ci`` channel tiles outermost with DMA staging at each step, and
    the tensorized GEMM. ``grouped``: the packed tensors have a group axis after the batch.

    ``vta_order``: the GEMM's loops inside a reduction step in the order of VTA's conv2d
    template (apache/tvm ``vta/python/vta/top/vta_conv2d.py``, ``schedule_conv2d_packed``:
    ``reorder(x_bo, k_o, x_j, d_j, d_i, x_co, x_i, ...)`` with ``k_o`` split by ``tile_ci``):
    channel tiles, output columns, kernel columns, kernel rows, output channel tiles, output
    rows. FoldUopLoop folds the two outermost of them (of extent > 1) into the GEMM
    instruction's loops and the rest are the micro-op kernel, as VTA's, so the instructions
    and micro-ops are VTA's. The batch (and group) loops stay outside (VTA's ``x_bo`` is
    outside the reduction step: the same program for a one-image tile)."""
    from vtatune.schedules._stage import GEMM_STAGE, stage_and_tensorize, stage_epilogue

    # The accumulator stages live in one output tile (acc SRAM), computed at x_o.
    stage_epilogue(sch, x_o)
    conv_loops = sch.get_loops(sch.get_sblock(GEMM_STAGE))
    if grouped:
        *_, cb_i, cg_i, coc_i, cy_i, cx_i, cb_t, coc_t, ci, dy, dx, ci_t = conv_loops
        outer = [cb_i, cg_i]
    else:
        *_, cb_i, coc_i, cy_i, cx_i, cb_t, coc_t, ci, dy, dx, ci_t = conv_loops
        outer = [cb_i]
    ci_o, ci_i = sch.split(ci, [None, k["tile_ci"]])
    inner_y, inner_x = [], []
    if phases > 1 and k["tile_h"] % phases == 0:
        cy_i, cpy = sch.split(cy_i, [None, phases])
        inner_y = [cpy]
    if phases > 1 and k["tile_w"] % phases == 0:
        cx_i, cpx = sch.split(cx_i, [None, phases])
        inner_x = [cpx]
    if vta_order:
        # VTA's order; a group axis goes with the output channels (VTA's x_co is group-major)
        chans = [outer.pop()] if grouped else []
        sch.reorder(ci_o, *outer, ci_i, cx_i, *inner_x, dx, dy, *chans, coc_i, cy_i, *inner_y,
                    cb_t, coc_t, ci_t)
    else:
        # Reduction over channel tiles outermost; one of the output axes (x) right above the
        # tensorized tile so consecutive GEMMs write different accumulator tiles.
        sch.reorder(ci_o, *outer, coc_i, cy_i, ci_i, dy, dx, cx_i, *inner_y, *inner_x, cb_t,
                    coc_t, ci_t)

    # Input and weight tiles go to their SRAMs at every reduction step, by DMA.
    stage_and_tensorize(sch, hw, ci_o, b_i, 7 if grouped else 6)


RESNET18: dict[str, Conv2d] = {
    name: Conv2d(1, cin, h, w, cout, k, k, pad, stride, name=name)
    for name, (h, w, cin, cout, k, pad, stride) in _RESNET18.items()
}


def resnet18_layer(name: str) -> Conv2d:
    """A ResNet-18 layer by name (``C1`` .. ``C11``, any case)."""
    key = name.upper()
    if key not in RESNET18:
        raise WorkloadError(f"unknown layer {name!r} (known: {', '.join(RESNET18)})")
    return RESNET18[key]
