"""2-D convolution in VTA's packed NCHWnc layout with the int8 fixed-point epilogue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtatune.errors import WorkloadError
from vtatune.workloads.base import DEFAULT_SHIFT, Workload, ceil_div

if TYPE_CHECKING:
    import numpy as np

    from vtatune.hardware.config import HwConfig

#: Largest value of the clip in the epilogue: int8's maximum (ReLU then saturate).
CLIP_MAX = 127


@dataclass(frozen=True)
class Conv2d(Workload):
    """conv2d(N, Cin, H, W) * (Cout, Cin, KH, KW), symmetric padding ``pad``, ``stride``."""

    n: int
    cin: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    pad: int
    stride: int
    name: str = ""

    kind = "conv2d"

    def __post_init__(self) -> None:
        problems = [f"{f}={getattr(self, f)} must be >= 1"
                    for f in ("n", "cin", "h", "w", "cout", "kh", "kw", "stride")
                    if getattr(self, f) < 1]
        if self.pad < 0:
            problems.append(f"pad={self.pad} must be >= 0")
        if not problems and (self.oh < 1 or self.ow < 1):
            problems.append(
                f"kernel {self.kh}x{self.kw} does not fit the padded {self.h}x{self.w} input")
        if problems:
            raise WorkloadError("conv2d shape: " + "; ".join(problems))

    @property
    def oh(self) -> int:
        return (self.h + 2 * self.pad - self.kh) // self.stride + 1

    @property
    def ow(self) -> int:
        return (self.w + 2 * self.pad - self.kw) // self.stride + 1

    @property
    def signature(self) -> str:
        return (f"conv2d_n{self.n}_c{self.cin}_h{self.h}_w{self.w}_o{self.cout}"
                f"_k{self.kh}x{self.kw}_p{self.pad}_s{self.stride}")

    @property
    def macs(self) -> int:
        return self.n * self.cout * self.oh * self.ow * self.cin * self.kh * self.kw

    def tiles(self, hw: HwConfig) -> dict[str, int]:
        """Extents in tiles: batch (BATCH), input channels (BLOCK_IN), output (BLOCK_OUT)."""
        return {"b": ceil_div(self.n, hw.batch), "ci": ceil_div(self.cin, hw.block_in),
                "co": ceil_div(self.cout, hw.block_out), "oh": self.oh, "ow": self.ow}

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
        from tvm import te, topi

        shapes = self.packed_shapes(hw)
        data = te.placeholder(shapes["data"], name="data", dtype=hw.inp_dtype)
        kernel = te.placeholder(shapes["kernel"], name="kernel", dtype=hw.wgt_dtype)
        if self.pad:
            p = self.pad
            data_buf = topi.nn.pad(data, [0, 0, p, p, 0, 0], name="data_buf")
        else:
            data_buf = te.compute(shapes["data"], lambda *i: data(*i), "data_buf")
        kernel_buf = te.compute(shapes["kernel"], lambda *i: kernel(*i), "kernel_buf")
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

        p, s = self.pad, self.stride
        x = np.pad(data.astype(np.int64), ((0, 0), (0, 0), (p, p), (p, p)))
        w = kernel.astype(np.int64)
        acc = np.zeros((self.n, self.cout, self.oh, self.ow), dtype=np.int64)
        for ky in range(self.kh):
            for kx in range(self.kw):
                win = x[:, :, ky:ky + s * (self.oh - 1) + 1:s, kx:kx + s * (self.ow - 1) + 1:s]
                acc += np.einsum("nchw,oc->nohw", win, w[:, :, ky, kx])
        return apply_epilogue(acc.astype(np.int32), shift)

    def pack_inputs(self, data: np.ndarray, kernel: np.ndarray, hw: HwConfig
                    ) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        t = self.tiles(hw)
        b, bi, bo = hw.batch, hw.block_in, hw.block_out
        d = np.zeros((t["b"] * b, t["ci"] * bi, self.h, self.w), dtype=np.int8)
        d[: self.n, : self.cin] = data
        d = d.reshape(t["b"], b, t["ci"], bi, self.h, self.w).transpose(0, 2, 4, 5, 1, 3)
        k = np.zeros((t["co"] * bo, t["ci"] * bi, self.kh, self.kw), dtype=np.int8)
        k[: self.cout, : self.cin] = kernel
        k = k.reshape(t["co"], bo, t["ci"], bi, self.kh, self.kw).transpose(0, 2, 4, 5, 1, 3)
        return np.ascontiguousarray(d), np.ascontiguousarray(k)

    def unpack_output(self, res: np.ndarray, hw: HwConfig) -> np.ndarray:
        t = self.tiles(hw)
        r = res.transpose(0, 4, 1, 5, 2, 3).reshape(
            t["b"] * hw.batch, t["co"] * hw.block_out, self.oh, self.ow)
        return r[: self.n, : self.cout].copy()


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
