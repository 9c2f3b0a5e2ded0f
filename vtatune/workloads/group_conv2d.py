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
never reads another group's input. With ``m = 1`` these are byte for byte VTA's tensors
``(N/B, GROUPS*CI, H, W, B, BI)``, ``(GROUPS*CO, CI, KH, KW, BO, BI)`` and
``(N/B, GROUPS*CO, OH, OW, B, BO)``.

Knobs: conv2d's plus ``tile_g``; how ``tile_co`` / ``oc_nthread`` count depends on the packing:

- **Groups fill whole tiles** (``whole_tiles``: ``CIN/GROUPS`` a multiple of BLOCK_IN and
  ``COUT/GROUPS`` of BLOCK_OUT, VTA's case): as in VTA's ``group_conv2d_packed``, ``tile_co``
  counts BLOCK_OUT tiles over *all* groups' output tiles (``GROUPS * CO`` of them, group-major)
  and ``oc_nthread`` splits the outer tiles of that axis, so threads may take different groups;
  ``tile_ci`` counts a group's input tiles (VTA's ``k_o``), ``tile_g`` is 1. A tile of at most
  ``CO`` tiles cuts each group's tiles (a tail per group when it does not divide ``CO``); a
  larger one holds whole groups (a multiple of ``CO``), so a tile never straddles a group
  boundary — VTA's tile_co (a divisor of ``GROUPS * CO``) is always one of these when ``CO``
  and ``GROUPS`` are powers of two. Loads, GEMMs, ALU ops and stores per tile are those of
  VTA's loop nest, with one difference: a tile of k groups with ``tile_ci < CI`` loads each
  group's ``tile_ci`` input tiles per step, where VTA's bound inference loads the whole
  channel range from the first group's to the last's (``(k-1)*CI + tile_ci`` tiles); with
  ``tile_ci = CI`` (MobileNet-G on 16-wide blocks: CI = 1) the loads are the same. The GEMM
  loops inside a tile are in VTA's order (``conv2d.schedule_tile``), the group loop with the
  output channels (VTA's group-major ``x_co``).
- **Groups packed together** (m > 1, depthwise): ``tile_g`` groups per output tile (a multiple
  of m), ``tile_co`` / ``tile_ci`` tiles of a packed group, ``oc_nthread`` over a packed
  group's output tiles.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from vtatune.schedules import knobs as kn
from vtatune.workloads.base import (
    CONV_SIGNATURE,
    DEFAULT_SHIFT,
    Convolution,
    Workload,
    apply_epilogue,
    ceil_div,
    conv_copies,
    epilogue,
    gemm_footprint,
    gemm_traffic,
    gemm_uops,
    te_inputs,
)
from vtatune.workloads.conv2d import schedule_tile
from vtatune.workloads.registry import register

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig
    from vtatune.passes.vta_copy_rules import Copy
    from vtatune.schedules.knobs import Knobs

GROUPS = kn.Unit("groups")

KNOBS = (
    kn.spatial("tile_b", "b", kn.BATCH_TILES, "BATCH tiles per output tile"),
    kn.spatial("tile_g", "g", GROUPS, "groups per output tile (a multiple of the groups "
               "packed together; 1 when groups fill whole tiles)"),
    kn.spatial("tile_h", "oh", kn.ROWS, "output rows per output tile"),
    kn.spatial("tile_w", "ow", kn.COLS, "output columns per output tile"),
    kn.reduction("tile_ci", "ci", kn.IN_CHANNEL_TILES,
                 "BLOCK_IN channel tiles of a (packed) group loaded per reduction step"),
    kn.spatial("tile_co", "co", kn.OUT_CHANNEL_TILES,
               "BLOCK_OUT channel tiles per output tile: over all groups' output tiles when "
               "groups fill whole tiles (VTA's), else of a packed group"),
    kn.thread("h_nthread", "tile_h", "virtual threads over output-row tiles"),
    kn.thread("oc_nthread", "tile_co", "virtual threads over output-channel tiles (of all "
              "groups when groups fill whole tiles)"),
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
class GroupConv2d(Convolution):
    """group_conv2d(N, CIN, H, W) * (COUT, CIN/GROUPS, KH, KW), ``pad``, ``stride``."""

    groups: int
    name: str = ""

    kind: ClassVar[str] = "group_conv2d"
    KNOBS: ClassVar[tuple[kn.Knob, ...]] = KNOBS
    SHAPE: ClassVar[str] = "N,CIN,H,W,COUT,KH,KW,PAD,STRIDE,GROUPS"
    SIGNATURE: ClassVar[re.Pattern[str]] = re.compile(
        rf"group_conv2d_{CONV_SIGNATURE}_g(\d+)")
    DEFAULT: ClassVar[str] = "D5"
    LAYERS_FROM: ClassVar[str] = "MobileNet-G"

    def shape_problems(self) -> list[str]:
        problems = [f"{what.upper()}={getattr(self, what)} is not a multiple of "
                    f"GROUPS={self.groups}" for what in ("cin", "cout")
                    if getattr(self, what) % self.groups]
        return problems + super().shape_problems()

    @classmethod
    def layers(cls) -> Mapping[str, Workload]:
        return MOBILENET_G

    @property
    def cin_g(self) -> int:
        return self.cin // self.groups

    @property
    def cout_g(self) -> int:
        return self.cout // self.groups

    @property
    def signature(self) -> str:
        return f"{super().signature}_g{self.groups}"

    @property
    def macs(self) -> int:
        return self.n * self.cout * self.oh * self.ow * self.cin_g * self.kh * self.kw

    def packing(self, hw: HwConfig) -> tuple[int, int, int]:
        """(groups per packed group m, BLOCK_IN tiles, BLOCK_OUT tiles per packed group)."""
        return _packing(self.groups, self.cin_g, self.cout_g, hw.block_in, hw.block_out)

    def whole_tiles(self, hw: HwConfig) -> bool:
        """Every group fills whole BLOCK_IN and BLOCK_OUT tiles (VTA's group_conv2d layout):
        ``tile_co`` and ``oc_nthread`` then run over all groups' output tiles."""
        return self.cin_g % hw.block_in == 0 and self.cout_g % hw.block_out == 0

    def tiles(self, hw: HwConfig) -> dict[str, int]:
        _, ci, co = self.packing(hw)
        if self.whole_tiles(hw):
            co *= self.groups
        return {"b": ceil_div(self.n, hw.batch), "g": self.groups, "ci": ci, "co": co,
                "oh": self.oh, "ow": self.ow}

    def output_tile(self, hw: HwConfig, knobs: Knobs) -> tuple[int, int]:
        """(packed groups, BLOCK_OUT tiles of each) one output tile holds: with whole tiles a
        ``tile_co`` of at most a group's tiles stays in one group, a larger one holds
        ``tile_co / CO`` whole groups."""
        m, _, co = self.packing(hw)
        if not self.whole_tiles(hw):
            return knobs["tile_g"] // m, knobs["tile_co"]
        tc = knobs["tile_co"]
        return (1, tc) if tc <= co else (tc // co, co)

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
        from tvm import te

        shapes = self.packed_shapes(hw)
        ph, pw = self.pad, self.pad_cols
        data, kernel, data_buf, kernel_buf = te_inputs(shapes, hw, [0, 0, 0, ph, pw, 0, 0])
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

        ph, pw, s, g = self.pad, self.pad_cols, self.stride, self.groups
        x = np.pad(data.astype(np.int64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
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
        m, _, co = self.packing(hw)
        if knob.axis == "g":
            if self.whole_tiles(hw):
                return (1,)
            # whole packed groups of m groups each
            return tuple(m * v for v in kn.tile_sizes(extent // m))
        if knob.axis == "co" and self.whole_tiles(hw):
            # within a group, or whole groups
            return tuple(sorted(set(kn.tile_sizes(co))
                                | {co * v for v in kn.tile_sizes(self.groups)}))
        return super().knob_values(hw, knob, extent)

    def knob_legal(self, hw: HwConfig, knob: kn.Knob, extent: int, value: int) -> str | None:
        m, _, co = self.packing(hw)
        if self.whole_tiles(hw):
            if knob.axis == "g" and value != 1:
                return (f"{knob.name}={value}: each group fills whole tiles on "
                        f"{hw.shape_label}, so tile_co counts the output tiles of all groups "
                        f"and tile_g is 1 (tile_co={value * co} holds {value} groups)")
            if knob.axis == "co" and value > co and value % co:
                return (f"{knob.name}={value}: a tile larger than a group's {co} output "
                        f"tiles holds whole groups (a multiple of {co})")
            return None
        if knob.axis == "g" and value % m:
            return (f"{knob.name}={value}: {m} groups share each GEMM tile on "
                    f"{hw.shape_label}, so a tile holds a multiple of {m} groups")
        return None

    def knob_constraint(self, hw: HwConfig, knobs: Knobs) -> str | None:
        _, _, co = self.packing(hw)
        tc = knobs["tile_co"]
        if self.whole_tiles(hw) and knobs["oc_nthread"] > 1 and tc < co and co % tc:
            return (f"oc_nthread={knobs['oc_nthread']} needs whole tiles, but tile_co={tc} "
                    f"leaves a tail of {co % tc} in each group's {co} output tiles")
        return super().knob_constraint(hw, knobs)

    def copies(self, hw: HwConfig, knobs: Knobs) -> list[Copy]:
        """conv2d's copies with the packed group axis after the batch."""
        gp, tco = self.output_tile(hw, knobs)
        _, ci, co = self.packing(hw)
        return conv_copies(hw, knobs, self.packed_shapes(hw), (knobs["tile_b"], gp), tco,
                           self.kh, self.kw, self.stride, self.pad, self.oh, self.ow, ci,
                           co if tco <= co else tco, pad_w=self.pad_cols)

    def schedule(self, sch: Any, hw: HwConfig, knobs: Knobs) -> None:
        gp, tco = self.output_tile(hw, knobs)
        _, _, co = self.packing(hw)
        schedule_grouped(sch, hw, {**knobs, "tile_g_packed": gp, "tile_co": tco}, co)

    def footprint(self, hw: HwConfig, knobs: Knobs) -> dict[str, int]:
        k = knobs
        gp, tco = self.output_tile(hw, knobs)
        s = self.stride
        rows = (k["tile_h"] - 1) * s + self.kh
        cols = (k["tile_w"] - 1) * s + self.kw
        uops = gemm_uops([k["tile_b"], k["tile_ci"], k["tile_w"], self.kw, self.kh, gp, tco,
                          k["tile_h"]])
        return gemm_footprint(hw, k["tile_b"], k["tile_ci"], tco, groups=gp,
                              inp_pixels=rows * cols, wgt_taps=self.kh * self.kw,
                              out_pixels=k["tile_h"] * k["tile_w"],
                              threads=k["h_nthread"] * k["oc_nthread"], uops=uops)

    def traffic(self, hw: HwConfig, knobs: Knobs) -> int:
        k = knobs
        m, ci, co = self.packing(hw)
        pg, nb = self.groups // m, ceil_div(self.n, hw.batch)
        s = self.stride
        hs, ws = kn.split_sizes(self.oh, k["tile_h"]), kn.split_sizes(self.ow, k["tile_w"])
        rows = sum((h - 1) * s + self.kh for h in hs)
        cols = sum((w - 1) * s + self.kw for w in ws)
        return gemm_traffic(hw, nb, ci, co, k["tile_b"], self.output_tile(hw, knobs)[1],
                            groups=pg, inp_pixels=rows * cols,
                            wgt_taps=len(hs) * len(ws) * self.kh * self.kw,
                            out_pixels=self.oh * self.ow)


def schedule_grouped(sch: Any, hw: HwConfig, k: Knobs, co: int) -> None:
    """conv2d's template (``conv2d.schedule_conv``) over the packed tensors' group axis:
    output tiles of ``tile_g_packed`` packed groups x ``tile_co`` of each one's ``co`` output
    tiles, groups outside the channel tiles, rows of tiles outside both (VTA's order); the
    reduction over a group's input tiles outermost in a tile.

    ``oc_nthread`` splits the output-channel tiles of all groups, group-major as VTA's
    template numbers them: within a group when it has an even number of tiles, across groups
    when a tile holds a whole group or more (threads take neighbouring groups), else over both
    loops fused.
    """
    b, g, oc, y, x, b_t, oc_t = sch.get_loops(sch.get_sblock("res"))
    g_o, g_i = sch.split(g, [None, k["tile_g_packed"]])
    b_o, b_i = sch.split(b, [None, k["tile_b"]])
    oc_o, oc_i = sch.split(oc, [None, k["tile_co"]])
    y_o, y_i = sch.split(y, [None, k["tile_h"]])
    x_o, x_i = sch.split(x, [None, k["tile_w"]])
    sch.reorder(b_o, g_o, oc_o, y_o, x_o, b_i, g_i, oc_i, y_i, x_i, b_t, oc_t)
    channels = [g_o, oc_o]
    threads = []
    nt = k["oc_nthread"]
    if nt > 1:
        per_group = ceil_div(co, k["tile_co"])
        if per_group % nt == 0:
            oc_o, oc_v = sch.split(oc_o, [None, nt])
            channels = [g_o, oc_o]
        elif per_group == 1:
            g_o, oc_v = sch.split(g_o, [None, nt])
            channels = [g_o, oc_o]
        else:
            fused, oc_v = sch.split(sch.fuse(g_o, oc_o), [None, nt])
            channels = [fused]
        threads.append(oc_v)
    if k["h_nthread"] > 1:
        y_o, y_v = sch.split(y_o, [None, k["h_nthread"]])
        threads.append(y_v)
    # output tiles in VTA's order (rows of tiles, then channel tiles, then columns)
    sch.reorder(*threads, b_o, y_o, *channels, x_o, b_i, g_i, oc_i, y_i, x_i, b_t, oc_t)
    for v in threads:
        sch.bind(v, "cthread")
    schedule_tile(sch, hw, k, x_o, b_i, grouped=True)


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
