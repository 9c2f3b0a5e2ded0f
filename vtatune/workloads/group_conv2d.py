"""Grouped 2-D convolution (depthwise included) in VTA's packed layout, with its template.

``GROUPS`` groups each convolve ``CIN / GROUPS`` input channels into ``COUT / GROUPS`` output
channels; the kernel is ``(COUT, CIN / GROUPS, KH, KW)`` (TVM's ``group_conv2d_nchw``).

VTA's ``group_conv2d_packed`` needs every group to fill whole BLOCK_IN / BLOCK_OUT tiles
(MobileNet-G's groups have 16 channels for that reason) and depthwise layers stay on the CPU.
vtatune packs **m groups per packed group**: their channels side by side in the same tiles and
a block-diagonal weight tile (zero between groups), with m the divisor of GROUPS that needs the
fewest GEMM operations (``m = 1``, VTA's layout, when groups fill whole tiles). A depthwise
layer on 16-wide blocks thus puts 16 channels in one tile with a diagonal weight: honest
padding, 16x the useful MACs on the GEMM core instead of 256x with one group per tile; the
efficiency figures count only the useful MACs.

The packed tensors carry the packed groups as an axis after the batch — data
``(N/B, PG, CI, H, W, B, BI)``, kernel ``(PG, CO, CI, KH, KW, BO, BI)``, result
``(N/B, PG, CO, OH, OW, B, BO)`` with ``CI``/``CO`` tiles per packed group — so an output tile
never reads another group's input. Knobs: conv2d's, with ``tile_ci``/``tile_co`` counted within
a packed group, plus ``tile_g``: groups per output tile (a multiple of m).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from vtatune.errors import WorkloadError
from vtatune.schedules import knobs as kn
from vtatune.workloads.base import (
    DEFAULT_SHIFT,
    Workload,
    apply_epilogue,
    ceil_div,
    check_fields,
    epilogue,
)
from vtatune.workloads.conv2d import schedule_conv
from vtatune.workloads.registry import register

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig
    from vtatune.schedules.knobs import Knobs

GROUPS = kn.Unit("groups")

KNOBS = (
    kn.spatial("tile_b", "b", kn.BATCH_TILES, "BATCH tiles per output tile"),
    kn.spatial("tile_g", "g", GROUPS, "groups per output tile (a multiple of the groups "
               "packed together)"),
    kn.spatial("tile_h", "oh", kn.ROWS, "output rows per output tile"),
    kn.spatial("tile_w", "ow", kn.COLS, "output columns per output tile"),
    kn.reduction("tile_ci", "ci", kn.IN_CHANNEL_TILES,
                 "BLOCK_IN channel tiles of a packed group loaded per reduction step"),
    kn.spatial("tile_co", "co", kn.OUT_CHANNEL_TILES,
               "BLOCK_OUT channel tiles of a packed group per output tile"),
    kn.thread("h_nthread", "tile_h", "virtual threads over output-row tiles"),
    kn.thread("oc_nthread", "tile_co", "virtual threads over output-channel tiles"),
)

#: MobileNet's grouped variant (MobileNet-G) in VTA's benchmarks (batch 1):
#: name -> (H, W, CIN, COUT, GROUPS, K, PAD, STRIDE).
_MOBILENET_G = {
    "D1": (112, 112, 32, 32, 2, 3, 1, 1),
    "D2": (112, 112, 64, 64, 4, 3, 1, 2),
    "D3": (56, 56, 128, 128, 8, 3, 1, 1),
    "D4": (56, 56, 128, 128, 8, 3, 1, 2),
    "D5": (28, 28, 256, 256, 16, 3, 1, 1),
    "D6": (28, 28, 256, 256, 16, 3, 1, 2),
    "D7": (14, 14, 512, 512, 32, 3, 1, 1),
    "D8": (14, 14, 512, 512, 32, 3, 1, 2),
    "D9": (7, 7, 1024, 1024, 64, 3, 1, 1),
}


@register
@dataclass(frozen=True)
class GroupConv2d(Workload):
    """group_conv2d(N, CIN, H, W) * (COUT, CIN/GROUPS, KH, KW), ``pad``, ``stride``."""

    n: int
    cin: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    pad: int
    stride: int
    groups: int
    name: str = ""

    kind: ClassVar[str] = "group_conv2d"
    KNOBS: ClassVar[tuple[kn.Knob, ...]] = KNOBS
    SHAPE: ClassVar[str] = "N,CIN,H,W,COUT,KH,KW,PAD,STRIDE,GROUPS"
    SIGNATURE: ClassVar[re.Pattern[str]] = re.compile(
        r"group_conv2d_n(\d+)_c(\d+)_h(\d+)_w(\d+)_o(\d+)_k(\d+)x(\d+)_p(\d+)_s(\d+)_g(\d+)")
    DEFAULT: ClassVar[str] = "D5"
    LAYERS_FROM: ClassVar[str] = "MobileNet-G"

    def __post_init__(self) -> None:
        problems = check_fields(self.kind, self, ("n", "cin", "h", "w", "cout", "kh", "kw",
                                                  "stride", "groups"), ("pad",))
        if not problems:
            for what in ("cin", "cout"):
                if getattr(self, what) % self.groups:
                    problems.append(f"{what.upper()}={getattr(self, what)} is not a multiple "
                                    f"of GROUPS={self.groups}")
            if self.oh < 1 or self.ow < 1:
                problems.append(f"kernel {self.kh}x{self.kw} does not fit the padded "
                                f"{self.h}x{self.w} input")
        if problems:
            raise WorkloadError("group_conv2d shape: " + "; ".join(problems))

    @classmethod
    def layers(cls) -> Mapping[str, Workload]:
        return MOBILENET_G

    @property
    def oh(self) -> int:
        return (self.h + 2 * self.pad - self.kh) // self.stride + 1

    @property
    def ow(self) -> int:
        return (self.w + 2 * self.pad - self.kw) // self.stride + 1

    @property
    def cin_g(self) -> int:
        return self.cin // self.groups

    @property
    def cout_g(self) -> int:
        return self.cout // self.groups

    @property
    def signature(self) -> str:
        return (f"group_conv2d_n{self.n}_c{self.cin}_h{self.h}_w{self.w}_o{self.cout}"
                f"_k{self.kh}x{self.kw}_p{self.pad}_s{self.stride}_g{self.groups}")

    @property
    def macs(self) -> int:
        return self.n * self.cout * self.oh * self.ow * self.cin_g * self.kh * self.kw

    def packing(self, hw: HwConfig) -> tuple[int, int, int]:
        """(groups per packed group m, BLOCK_IN tiles, BLOCK_OUT tiles per packed group)."""
        return _packing(self.groups, self.cin_g, self.cout_g, hw.block_in, hw.block_out)

    def tiles(self, hw: HwConfig) -> dict[str, int]:
        _, ci, co = self.packing(hw)
        return {"b": ceil_div(self.n, hw.batch), "g": self.groups, "ci": ci, "co": co,
                "oh": self.oh, "ow": self.ow}

    def padded_macs(self, hw: HwConfig) -> int:
        m, ci, co = self.packing(hw)
        return (ceil_div(self.n, hw.batch) * hw.batch * (self.groups // m) * co * hw.block_out
                * self.oh * self.ow * ci * hw.block_in * self.kh * self.kw)

    def packed_shapes(self, hw: HwConfig) -> dict[str, tuple[int, ...]]:
        m, ci, co = self.packing(hw)
        b, pg = ceil_div(self.n, hw.batch), self.groups // m
        return {
            "data": (b, pg, ci, self.h, self.w, hw.batch, hw.block_in),
            "kernel": (pg, co, ci, self.kh, self.kw, hw.block_out, hw.block_in),
            "res": (b, pg, co, self.oh, self.ow, hw.batch, hw.block_out),
        }

    def plain_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"data": (self.n, self.cin, self.h, self.w),
                "kernel": (self.cout, self.cin_g, self.kh, self.kw),
                "res": (self.n, self.cout, self.oh, self.ow)}

    def te(self, hw: HwConfig, shift: int = DEFAULT_SHIFT) -> list[Any]:
        from tvm import te, topi

        shapes = self.packed_shapes(hw)
        data = te.placeholder(shapes["data"], name="data", dtype=hw.inp_dtype)
        kernel = te.placeholder(shapes["kernel"], name="kernel", dtype=hw.wgt_dtype)
        if self.pad:
            p = self.pad
            data_buf = topi.nn.pad(data, [0, 0, 0, p, p, 0, 0], name="data_buf")
        else:
            data_buf = te.compute(shapes["data"], lambda *i: data(*i), "data_buf")
        kernel_buf = te.compute(shapes["kernel"], lambda *i: kernel(*i), "kernel_buf")
        ci = te.reduce_axis((0, shapes["data"][2]), name="ic")
        dy = te.reduce_axis((0, self.kh), name="dy")
        dx = te.reduce_axis((0, self.kw), name="dx")
        ci_t = te.reduce_axis((0, hw.block_in), name="ic_tns")
        s = self.stride
        acc = hw.acc_dtype
        res_conv = te.compute(
            shapes["res"],
            lambda bo, g, co, i, j, bi, c: te.sum(
                data_buf[bo, g, ci, i * s + dy, j * s + dx, bi, ci_t].astype(acc)
                * kernel_buf[g, co, ci, dy, dx, c, ci_t].astype(acc),
                axis=[ci, dy, dx, ci_t]),
            name="res_conv")
        return [data, kernel, *epilogue(res_conv, shapes["res"], hw, shift)]

    def reference(self, data: np.ndarray, kernel: np.ndarray, shift: int = DEFAULT_SHIFT
                  ) -> np.ndarray:
        import numpy as np

        p, s, g = self.pad, self.stride, self.groups
        x = np.pad(data.astype(np.int64), ((0, 0), (0, 0), (p, p), (p, p)))
        x = x.reshape(self.n, g, self.cin_g, *x.shape[2:])
        w = kernel.astype(np.int64).reshape(g, self.cout_g, self.cin_g, self.kh, self.kw)
        acc = np.zeros((self.n, g, self.cout_g, self.oh, self.ow), dtype=np.int64)
        for ky in range(self.kh):
            for kx in range(self.kw):
                win = x[..., ky:ky + s * (self.oh - 1) + 1:s, kx:kx + s * (self.ow - 1) + 1:s]
                acc += np.einsum("ngchw,goc->ngohw", win, w[..., ky, kx])
        return apply_epilogue(acc.reshape(self.n, self.cout, self.oh, self.ow)
                              .astype(np.int32), shift)

    def pack_inputs(self, data: np.ndarray, kernel: np.ndarray, hw: HwConfig
                    ) -> tuple[np.ndarray, np.ndarray]:
        """Group ``j`` of packed group ``p`` (group ``p * m + j``) takes input lanes
        ``j * CIN/GROUPS ...`` and output lanes ``j * COUT/GROUPS ...`` of ``p``'s tiles; its
        weights sit on the diagonal block ``j`` of ``p``'s weight tiles."""
        import numpy as np

        m, ci, co = self.packing(hw)
        b, bi, bo, pg = hw.batch, hw.block_in, hw.block_out, self.groups // m
        nb = ceil_div(self.n, b)
        d = np.zeros((nb * b, pg, ci * bi, self.h, self.w), dtype=np.int8)
        d[: self.n, :, : m * self.cin_g] = data.reshape(self.n, pg, m * self.cin_g,
                                                        self.h, self.w)
        d = d.reshape(nb, b, pg, ci, bi, self.h, self.w).transpose(0, 2, 3, 5, 6, 1, 4)
        k = np.zeros((pg, co * bo, ci * bi, self.kh, self.kw), dtype=np.int8)
        w = kernel.reshape(pg, m, self.cout_g, self.cin_g, self.kh, self.kw)
        for j in range(m):
            k[:, j * self.cout_g:(j + 1) * self.cout_g,
              j * self.cin_g:(j + 1) * self.cin_g] = w[:, j]
        k = k.reshape(pg, co, bo, ci, bi, self.kh, self.kw).transpose(0, 1, 3, 5, 6, 2, 4)
        return np.ascontiguousarray(d), np.ascontiguousarray(k)

    def unpack_output(self, res: np.ndarray, hw: HwConfig) -> np.ndarray:
        m, _, co = self.packing(hw)
        pg = self.groups // m
        nb = res.shape[0]
        r = res.transpose(0, 5, 1, 2, 6, 3, 4).reshape(
            nb * hw.batch, pg, co * hw.block_out, self.oh, self.ow)
        r = r[: self.n, :, : m * self.cout_g]
        return r.reshape(self.n, self.cout, self.oh, self.ow).copy()

    # ---- knobs and schedule template ---------------------------------------------------------
    def knob_values(self, hw: HwConfig, knob: kn.Knob, extent: int) -> tuple[int, ...]:
        if knob.axis != "g":
            return super().knob_values(hw, knob, extent)
        # whole packed groups of m groups each
        m, _, _ = self.packing(hw)
        return tuple(m * v for v in kn.tile_sizes(extent // m))

    def knob_legal(self, hw: HwConfig, knob: kn.Knob, extent: int, value: int) -> str | None:
        m, _, _ = self.packing(hw)
        if knob.axis == "g" and value % m:
            return (f"{knob.name}={value}: {m} groups share each GEMM tile on "
                    f"{hw.shape_label}, so a tile holds a multiple of {m} groups")
        return None

    def schedule(self, sch: Any, hw: HwConfig, knobs: Knobs) -> None:
        m, _, _ = self.packing(hw)
        schedule_conv(sch, hw, {**knobs, "tile_g_packed": knobs["tile_g"] // m}, grouped=True)

    def footprint(self, hw: HwConfig, knobs: Knobs) -> dict[str, int]:
        k = knobs
        m, _, _ = self.packing(hw)
        gp = k["tile_g"] // m
        s = self.stride
        rows = (k["tile_h"] - 1) * s + self.kh
        cols = (k["tile_w"] - 1) * s + self.kw
        threads = k["h_nthread"] * k["oc_nthread"]
        b = k["tile_b"] * hw.batch
        inp = b * gp * k["tile_ci"] * hw.block_in * rows * cols * hw.inp_bits // 8
        wgt = (gp * k["tile_co"] * hw.block_out * k["tile_ci"] * hw.block_in * self.kh
               * self.kw * hw.wgt_bits // 8)
        acc = b * gp * k["tile_co"] * hw.block_out * k["tile_h"] * k["tile_w"] \
            * hw.acc_bits // 8
        loops = [e for e in (k["tile_b"], gp, k["tile_co"], k["tile_h"], k["tile_ci"], self.kh,
                             self.kw, k["tile_w"]) if e > 1]
        uops = 1
        for e in loops[2:]:
            uops *= e
        return {"inp": inp * threads, "wgt": wgt * threads, "acc": acc * threads,
                "uops": uops}

    def traffic(self, hw: HwConfig, knobs: Knobs) -> int:
        k = knobs
        m, ci, co = self.packing(hw)
        pg, nb = self.groups // m, ceil_div(self.n, hw.batch)
        s = self.stride
        n_b = len(kn.split_sizes(nb, k["tile_b"]))
        n_co = len(kn.split_sizes(co, k["tile_co"]))
        hs, ws = kn.split_sizes(self.oh, k["tile_h"]), kn.split_sizes(self.ow, k["tile_w"])
        rows = sum((h - 1) * s + self.kh for h in hs)
        cols = sum((w - 1) * s + self.kw for w in ws)
        inp = nb * hw.batch * pg * n_co * ci * hw.block_in * rows * cols
        wgt = n_b * len(hs) * len(ws) * pg * co * hw.block_out * ci * hw.block_in \
            * self.kh * self.kw
        out = nb * hw.batch * pg * co * hw.block_out * self.oh * self.ow
        return inp + wgt + out


@lru_cache(maxsize=1024)
def _packing(groups: int, cin_g: int, cout_g: int, bi: int, bo: int) -> tuple[int, int, int]:
    best = None
    for m in kn.divisors(groups):
        ci, co = ceil_div(m * cin_g, bi), ceil_div(m * cout_g, bo)
        cost = (groups // m) * ci * co
        if best is None or cost < best[0]:
            best = (cost, m, ci, co)
    assert best is not None
    return best[1], best[2], best[3]


MOBILENET_G: dict[str, GroupConv2d] = {
    name: GroupConv2d(1, cin, h, w, cout, k, k, pad, stride, groups, name=name)
    for name, (h, w, cin, cout, groups, k, pad, stride) in _MOBILENET_G.items()
}
