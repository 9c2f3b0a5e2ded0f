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
from vtatune.workloads.registry import register

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig
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

    def __post_init__(self) -> None:
        bad = check_fields(self.kind, self, ("m", "k", "n"))
        if bad:
            raise WorkloadError("dense shape: " + "; ".join(bad))

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
        data = te.placeholder(shapes["data"], name="data", dtype=hw.inp_dtype)
        kernel = te.placeholder(shapes["kernel"], name="kernel", dtype=hw.wgt_dtype)
        data_buf = te.compute(shapes["data"], lambda *i: data(*i), "data_buf")
        kernel_buf = te.compute(shapes["kernel"], lambda *i: kernel(*i), "kernel_buf")
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
        import numpy as np

        t = self.tiles(hw)
        b, bi, bo = hw.batch, hw.block_in, hw.block_out
        d = np.zeros((t["b"] * b, t["ci"] * bi), dtype=np.int8)
        d[: self.m, : self.k] = data
        k = np.zeros((t["co"] * bo, t["ci"] * bi), dtype=np.int8)
        k[: self.n, : self.k] = kernel
        d = d.reshape(t["b"], b, t["ci"], bi).transpose(0, 2, 1, 3)
        k = k.reshape(t["co"], bo, t["ci"], bi).transpose(0, 2, 1, 3)
        return np.ascontiguousarray(d), np.ascontiguousarray(k)

    def unpack_output(self, res: np.ndarray, hw: HwConfig) -> np.ndarray:
        t = self.tiles(hw)
        r = res.transpose(0, 2, 1, 3).reshape(t["b"] * hw.batch, t["co"] * hw.block_out)
        return r[: self.m, : self.n].copy()

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
        sch.reorder(ko_o, gb_i, goc_i, ko_i, gb_t, goc_t, ki)

        stage_and_tensorize(sch, hw, ko_o, b_i, 4)

    def footprint(self, hw: HwConfig, knobs: Knobs) -> dict[str, int]:
        k = knobs
        threads = k["oc_nthread"]
        b = k["tile_b"] * hw.batch
        inp = b * k["tile_ci"] * hw.block_in * hw.inp_bits // 8
        wgt = k["tile_co"] * hw.block_out * k["tile_ci"] * hw.block_in * hw.wgt_bits // 8
        acc = b * k["tile_co"] * hw.block_out * hw.acc_bits // 8
        loops = [e for e in (k["tile_b"], k["tile_co"], k["tile_ci"]) if e > 1]
        uops = 1
        for e in loops[2:]:
            uops *= e
        return {"inp": inp * threads, "wgt": wgt * threads, "acc": acc * threads,
                "uops": uops}

    def traffic(self, hw: HwConfig, knobs: Knobs) -> int:
        """Inputs re-read per output-channel tile, weights per batch tile, the output once."""
        k = knobs
        t = self.tiles(hw)
        n_b = len(kn.split_sizes(t["b"], k["tile_b"]))
        n_co = len(kn.split_sizes(t["co"], k["tile_co"]))
        ci = t["ci"] * hw.block_in
        inp = t["b"] * hw.batch * n_co * ci
        wgt = n_b * t["co"] * hw.block_out * ci
        return inp + wgt + t["b"] * hw.batch * t["co"] * hw.block_out
