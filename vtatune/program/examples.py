"""Hand-assembled reference programs (no TVM): tests, benchmarks and a template for runtimes.

``dense_program`` computes C = clip((A . B^T) >> shift, 0, 127) as int8 for A (M, K) and
B (N, K) int8, tiled on chip and optionally double-buffered (``threads=2``) the way VTA's
virtual threads are: loads of step s+1 overlap the GEMM of step s, synchronized by tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vtatune.errors import ProgramError
from vtatune.hardware.config import HwConfig
from vtatune.program.isa import AluOp, MemId, Uop
from vtatune.program.program import Program, ProgramBuilder, deps

#: The int8 output range the clip keeps (ReLU then saturate), as in VTA's GEMM tutorial.
OUT_MIN, OUT_MAX = 0, 127


@dataclass(frozen=True)
class DenseShape:
    """Sizes in elements (m, k, n) and on-chip tiles per block (tm, tk, tn, in tiles)."""

    m: int
    k: int
    n: int
    tm: int = 1
    tk: int = 1
    tn: int = 1
    shift: int = 8
    threads: int = 1


def pack_rows(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(R, C) -> (R/rows, C/cols, rows, cols): VTA's packed tile layout, C-contiguous."""
    r, c = x.shape
    return np.ascontiguousarray(x.reshape(r // rows, rows, c // cols, cols).transpose(0, 2, 1, 3))


def unpack_rows(x: np.ndarray) -> np.ndarray:
    """Inverse of ``pack_rows``."""
    a, b, rows, cols = x.shape
    return x.transpose(0, 2, 1, 3).reshape(a * rows, b * cols)


def dense_reference(a: np.ndarray, b: np.ndarray, shift: int) -> np.ndarray:
    """The numpy result the program must reproduce bit for bit."""
    acc = a.astype(np.int64) @ b.astype(np.int64).T
    acc = acc.astype(np.int32) >> shift  # int32 wrap, then arithmetic shift as VTA's ALU
    clipped: np.ndarray = np.clip(acc, OUT_MIN, OUT_MAX).astype(np.int8)
    return clipped


def dense_program(hw: HwConfig, s: DenseShape) -> Program:
    """Assemble the tiled dense program. DRAM regions: "data" (A packed (M/BATCH, K/BLOCK_IN,
    BATCH, BLOCK_IN)), "kernel" (B packed (N/BLOCK_OUT, K/BLOCK_IN, BLOCK_OUT, BLOCK_IN)),
    "res" (C packed (M/BATCH, N/BLOCK_OUT, BATCH, BLOCK_OUT))."""
    mt, kt, nt = s.m // hw.batch, s.k // hw.block_in, s.n // hw.block_out
    problems = []
    if s.m % hw.batch or s.k % hw.block_in or s.n % hw.block_out:
        problems.append(f"shape {s.m}x{s.k}x{s.n} is not a multiple of {hw.shape_label}")
    if mt % s.tm or kt % s.tk or nt % s.tn:
        problems.append(f"tiles {mt}x{kt}x{nt} are not multiples of {s.tm}x{s.tk}x{s.tn}")
    if s.threads * s.tm * s.tk > hw.inp_depth or s.threads * s.tn * s.tk > hw.wgt_depth:
        problems.append("input or weight block does not fit its SRAM")
    if s.tm * s.tn > hw.acc_depth:
        problems.append("accumulator block does not fit the acc SRAM")
    if problems:
        raise ProgramError("dense program: " + "; ".join(problems))

    b = ProgramBuilder(hw, name=f"dense_{s.m}x{s.k}x{s.n}")
    b.add_region("data", s.m * s.k)
    b.add_region("kernel", s.n * s.k)
    b.add_region("res", s.m * s.n)

    # Micro-op kernels: per thread, GEMM over the reduction tiles of that thread's buffers
    # (the same acc tile is hit tk times); a reset; one ALU tile. The (m, n) block is folded
    # into iter_out/iter_in. All are loaded once, one after another in the uop SRAM.
    inp_buf, wgt_buf = s.tm * s.tk, s.tn * s.tk
    sram = 0
    gemm_u = []
    for t in range(s.threads):
        kern = b.add_uop_kernel(
            [Uop(0, t * inp_buf + k, t * wgt_buf + k) for k in range(s.tk)], "gemm"
        )
        gemm_u.append(b.load_uops(kern, sram))
        sram = gemm_u[-1][1]
    reset_u = b.load_uops(b.add_uop_kernel([Uop(0, 0, 0)], "gemm"), sram)
    alu_u = b.load_uops(b.add_uop_kernel([Uop(0, 0)], "alu"), reset_u[1])

    blocks = [(mo, no) for mo in range(mt // s.tm) for no in range(nt // s.tn)]
    ksteps = kt // s.tk
    total_steps = len(blocks) * ksteps
    step = 0
    for j, (mo, no) in enumerate(blocks):
        # Reset the accumulators; wait until the previous block's STORE read the out buffer.
        b.gemm(reset_u, s.tm, s.tn, dst_factor=(s.tn, 1), reset=True,
               deps=deps("pop_next") if j else deps())  # fmt: skip
        for ko in range(ksteps):
            t = step % s.threads
            # Loads wait for the GEMM that last read this buffer (WAR), then signal (RAW).
            b.load(MemId.INP, t * inp_buf, "data", (mo * s.tm) * kt + ko * s.tk, s.tm, s.tk, kt,
                   deps=deps("pop_next") if step >= s.threads else deps())  # fmt: skip
            b.load(MemId.WGT, t * wgt_buf, "kernel", (no * s.tn) * kt + ko * s.tk, s.tn, s.tk,
                   kt, deps=deps("push_next"))  # fmt: skip
            flags = ["pop_prev"] + (["push_prev"] if step + s.threads < total_steps else [])
            b.gemm(gemm_u[t], s.tm, s.tn, dst_factor=(s.tn, 1), src_factor=(s.tk, 0),
                   wgt_factor=(0, s.tk), deps=deps(*flags))  # fmt: skip
            step += 1
        for op, imm in ((AluOp.SHR, s.shift), (AluOp.MAX, OUT_MIN), (AluOp.MIN, OUT_MAX)):
            last = op == AluOp.MIN
            b.alu(op, alu_u, s.tm, s.tn, dst_factor=(s.tn, 1), src_factor=(s.tn, 1), imm=imm,
                  deps=deps("push_next") if last else deps())  # fmt: skip
        b.store(0, "res", (mo * s.tm) * nt + no * s.tn, s.tm, s.tn, nt,
                deps=deps("pop_prev", "push_prev") if j + 1 < len(blocks) else deps("pop_prev"))
    b.finish()
    return b.build(meta={"kind": "dense", "m": s.m, "k": s.k, "n": s.n})


def dense_inputs(hw: HwConfig, s: DenseShape, seed: int = 0
                 ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Random A, B for ``dense_program`` packed into its regions, and the expected C (M, N)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, size=(s.m, s.k), dtype=np.int8)
    w = rng.integers(-128, 128, size=(s.n, s.k), dtype=np.int8)
    inputs = {
        "data": pack_rows(a, hw.batch, hw.block_in),
        "kernel": pack_rows(w, hw.block_out, hw.block_in),
    }
    return inputs, dense_reference(a, w, s.shift)
