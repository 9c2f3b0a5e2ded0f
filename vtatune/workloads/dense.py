"""Dense (matrix multiply ``data[M,K] x kernel[N,K]^T``) in VTA's packed layout, with its
schedule template.

Knobs (in whole tiles): ``tile_b`` BATCH tiles and ``tile_co`` BLOCK_OUT tiles per output
tile, ``tile_ci`` BLOCK_IN tiles per reduction step, ``oc_nthread`` virtual threads (1 or 2)
over output-channel tiles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from vtatune.passes.scopes import ACC_SCOPE, INP_SCOPE, WGT_SCOPE
from vtatune.schedules import knobs as kn
from vtatune.workloads.base import (
    DEFAULT_SHIFT,
    Workload,
    apply_epilogue,
    ceil_div,
    epilogue,
    gemm_footprint,
    gemm_traffic,
    gemm_uops,
    pack,
    te_inputs,
    tile_copy,
    tile_variants,
    unpack,
)
from vtatune.workloads.registry import register

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig
    from vtatune.passes.vta_copy_rules import Copy
    from vtatune.schedules.knobs import Knobs

KNOBS = (
    kn.spatial("tile_b", "b", kn.BATCH_TILES, "BATCH tiles per output tile"),
    kn.reduction("tile_ci", "ci", kn.IN_CHANNEL_TILES,
                 "BLOCK_IN tiles loaded per reduction step"),
    kn.spatial("tile_co", "co", kn.OUT_CHANNEL_TILES, "BLOCK_OUT tiles per output tile"),
    kn.thread("oc_nthread", "tile_co", "virtual threads over output-channel tiles"),
)


@register
@dataclass(frozen=True)
class Dense(Workload):
    """res[M, N] = epilogue(data[M, K] . kernel[N, K]^T)."""

    m: int
    k: int
    n: int
    name: str = ""

    kind: ClassVar[str] = "dense"
    KNOBS: ClassVar[tuple[kn.Knob, ...]] = KNOBS
    SHAPE: ClassVar[str] = "M,K,N"
    SIGNATURE: ClassVar[re.Pattern[str]] = re.compile(r"dense_m(\d+)_k(\d+)_n(\d+)")
    DEFAULT: ClassVar[str] = "16,256,256"

    @property
    def signature(self) -> str:
        return f"dense_m{self.m}_k{self.k}_n{self.n}"

    @property
    def macs(self) -> int:
        return self.m * self.k * self.n

    def tiles(self, hw: HwConfig) -> dict[str, int]:
        return {"b": ceil_div(self.m, hw.batch), "ci": ceil_div(self.k, hw.block_in),
                "co": ceil_div(self.n, hw.block_out)}

    def padded_macs(self, hw: HwConfig) -> int:
        t = self.tiles(hw)
        return t["b"] * hw.batch * t["ci"] * hw.block_in * t["co"] * hw.block_out

    def packed_shapes(self, hw: HwConfig) -> dict[str, tuple[int, ...]]:
        t = self.tiles(hw)
        return {"data": (t["b"], t["ci"], hw.batch, hw.block_in),
                "kernel": (t["co"], t["ci"], hw.block_out, hw.block_in),
                "res": (t["b"], t["co"], hw.batch, hw.block_out)}

    def plain_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"data": (self.m, self.k), "kernel": (self.n, self.k), "res": (self.m, self.n)}

    def te(self, hw: HwConfig, shift: int = DEFAULT_SHIFT) -> list[Any]:
        from tvm import te

        shapes = self.packed_shapes(hw)
        data, kernel, data_buf, kernel_buf = te_inputs(shapes, hw)
        ko = te.reduce_axis((0, shapes["data"][1]), name="ko")
        ki = te.reduce_axis((0, hw.block_in), name="ki")
        acc = hw.acc_dtype
        res_gemm = te.compute(
            shapes["res"],
            lambda bo, co, bi, c: te.sum(
                data_buf[bo, ko, bi, ki].astype(acc) * kernel_buf[co, ko, c, ki].astype(acc),
                axis=[ko, ki]),
            name="res_conv")
        return [data, kernel, *epilogue(res_gemm, shapes["res"], hw, shift)]

    def reference(self, data: np.ndarray, kernel: np.ndarray, shift: int = DEFAULT_SHIFT
                  ) -> np.ndarray:
        import numpy as np

        acc = data.astype(np.int64) @ kernel.astype(np.int64).T
        return apply_epilogue(acc.astype(np.int32), shift)

    def pack_inputs(self, data: np.ndarray, kernel: np.ndarray, hw: HwConfig
                    ) -> tuple[np.ndarray, np.ndarray]:
        t = self.tiles(hw)
        return (pack(data, (t["b"], t["ci"]), (hw.batch, hw.block_in)),
                pack(kernel, (t["co"], t["ci"]), (hw.block_out, hw.block_in)))

    def unpack_output(self, res: np.ndarray, hw: HwConfig) -> np.ndarray:
        return unpack(res, (self.m, self.n))

    # ---- schedule template -------------------------------------------------------------------
    def schedule(self, sch: Any, hw: HwConfig, knobs: Knobs) -> None:
        from vtatune.schedules._stage import stage_and_tensorize, stage_epilogue

        k = knobs
        b, oc, b_t, oc_t = sch.get_loops(sch.get_sblock("res"))
        b_o, b_i = sch.split(b, [None, k["tile_b"]])
        oc_o, oc_i = sch.split(oc, [None, k["tile_co"]])
        threads = []
        if k["oc_nthread"] > 1:
            oc_o, oc_v = sch.split(oc_o, [None, k["oc_nthread"]])
            threads.append(oc_v)
        sch.reorder(*threads, b_o, oc_o, b_i, oc_i, b_t, oc_t)
        for v in threads:
            sch.bind(v, "cthread")

        stage_epilogue(sch, oc_o)
        *_, gb_i, goc_i, gb_t, goc_t, ko, ki = sch.get_loops(sch.get_sblock("res_conv"))
        ko_o, ko_i = sch.split(ko, [None, k["tile_ci"]])
        # VTA's order (``vta_dense.py``: ``reorder(x_bo, k_o, x_co)``, k_o split by tile_ci):
        # the channel tiles of a reduction step outside the output channel tiles
        sch.reorder(ko_o, gb_i, ko_i, goc_i, gb_t, goc_t, ki)

        stage_and_tensorize(sch, hw, ko_o, b_i, 4)

    def copies(self, hw: HwConfig, knobs: Knobs) -> list[Copy]:
        """The input, weight and output tiles, full and partial."""
        k, sh, t = knobs, self.packed_shapes(hw), self.tiles(hw)
        bs, cis, cos = (tile_variants(t[a], k[n]) for a, n in (("b", "tile_b"),
                                                                ("ci", "tile_ci"),
                                                                ("co", "tile_co")))
        full = {n: k[n] for n in ("tile_b", "tile_ci", "tile_co")}
        out = {}
        for tb in bs:
            for tci in cis:
                for tco in cos:
                    for c in (
                        tile_copy(INP_SCOPE, True, (tb, tci, hw.batch, hw.block_in),
                                  sh["data"], (), (full["tile_b"], full["tile_ci"],
                                                   hw.batch, hw.block_in)),
                        tile_copy(WGT_SCOPE, True, (tco, tci, hw.block_out, hw.block_in),
                                  sh["kernel"], (), (full["tile_co"], full["tile_ci"],
                                                     hw.block_out, hw.block_in)),
                        tile_copy(ACC_SCOPE, False, (tb, tco, hw.batch, hw.block_out),
                                  sh["res"], (), (full["tile_b"], full["tile_co"], hw.batch,
                                                  hw.block_out))):
                        out[c] = c
        return list(out.values())

    def footprint(self, hw: HwConfig, knobs: Knobs) -> dict[str, int]:
        k = knobs
        return gemm_footprint(hw, k["tile_b"], k["tile_ci"], k["tile_co"],
                              threads=k["oc_nthread"],
                              uops=gemm_uops([k["tile_b"], k["tile_ci"], k["tile_co"]]))

    def traffic(self, hw: HwConfig, knobs: Knobs) -> int:
        """Inputs re-read per output-channel tile, weights per batch tile, the output once."""
        t = self.tiles(hw)
        return gemm_traffic(hw, t["b"], t["ci"], t["co"], knobs["tile_b"], knobs["tile_co"])
