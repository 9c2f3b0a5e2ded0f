"""Dense (matrix multiply ``data[M,K] x kernel[N,K]^T``) in VTA's packed layout."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtatune.errors import WorkloadError
from vtatune.workloads.base import DEFAULT_SHIFT, Workload, ceil_div
from vtatune.workloads.conv2d import apply_epilogue, epilogue

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig


@dataclass(frozen=True)
class Dense(Workload):
    """res[M, N] = epilogue(data[M, K] . kernel[N, K]^T)."""

    m: int
    k: int
    n: int
    name: str = ""

    kind = "dense"

    def __post_init__(self) -> None:
        bad = [f"{f}={getattr(self, f)} must be >= 1" for f in ("m", "k", "n")
               if getattr(self, f) < 1]
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
