"""Functional simulator: bit-exact against numpy and a naive loop-order interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from vtatune.errors import ProgramError, SimulationError
from vtatune.hardware.config import HwConfig, default, load
from vtatune.program import (
    AluInsn,
    AluOp,
    DepFlags,
    GemmInsn,
    MemId,
    ProgramBuilder,
    Uop,
    deps,
)
from vtatune.program.examples import DenseShape, dense_inputs, dense_program, unpack_rows
from vtatune.simulator import functional
from vtatune.simulator.functional import run

CONFIGS = ["default", "1x8x8", "2x16x16", "1x16x32"]


# ---- whole programs ----------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", CONFIGS)
def test_dense_matmul_shift_clip_is_bit_exact(name: str, threads: int) -> None:
    hw = load(name)
    s = DenseShape(m=4 * hw.batch, k=6 * hw.block_in, n=4 * hw.block_out, tm=2, tk=3, tn=2,
                   shift=8, threads=threads)  # fmt: skip
    prog = dense_program(hw, s)
    inputs, expected = dense_inputs(hw, s, seed=threads)
    res = run(prog, inputs)
    shape = (s.m // hw.batch, s.n // hw.block_out, hw.batch, hw.block_out)
    got = unpack_rows(res.region("res", np.int8, shape))
    np.testing.assert_array_equal(got, expected)
    assert 0 < (expected > 0).mean() < 1  # the clip is exercised on both sides
    c = res.counters
    assert c.inp_load_nbytes == s.m * s.k * (s.n // hw.block_out // s.tn)
    assert c.wgt_load_nbytes == s.n * s.k * (s.m // hw.batch // s.tm)
    assert c.out_store_nbytes == s.m * s.n
    # resets are not counted (VTA's sim_driver.cc)
    assert c.gemm_counter == (s.m // hw.batch) * (s.n // hw.block_out) * (s.k // hw.block_in)
    assert c.alu_counter == 3 * (s.m // hw.batch) * (s.n // hw.block_out)
    assert c.uop_load_nbytes == prog.uop_buffer_bytes
    assert sorted(res.order) == list(range(len(prog.insns)))
    assert all(v == 0 for v in res.leftover_tokens.values())


# ---- DMA ---------------------------------------------------------------------------------------


def _image(hw: HwConfig, rows: int, cols: int, seed: int = 0) -> np.ndarray:
    """A (rows, cols) grid of INP tiles with distinct random values."""
    rng = np.random.default_rng(seed)
    return rng.integers(-128, 128, size=(rows, cols, hw.batch, hw.block_in), dtype=np.int8)


@pytest.mark.parametrize("name", ["default", "2x16x16"])
def test_padded_2d_load_matches_np_pad(name: str) -> None:
    hw = load(name)
    img = _image(hw, 9, 12)
    b = ProgramBuilder(hw)
    b.add_region("data", img.nbytes)
    # Window rows 2..6, cols 3..9 of the 12-wide image, padded (y 1, 2) and (x 3, 1).
    b.load(MemId.INP, 5, "data", 2 * 12 + 3, 5, 7, 12, pads=(1, 2, 3, 1))
    res = run(b.build(), {"data": img})
    want = np.pad(img[2:7, 3:10], ((1, 2), (3, 1), (0, 0), (0, 0)))
    got = res.srams.inp[5 : 5 + want.shape[0] * want.shape[1]].reshape(want.shape)
    np.testing.assert_array_equal(got, want)
    assert not res.srams.inp[:5].any()
    assert res.counters.inp_load_nbytes == 5 * 7 * hw.inp_tile_bytes  # pads are not read


def test_acc_loads_and_strided_store() -> None:
    hw = default()
    rng = np.random.default_rng(1)
    acc = rng.integers(-(2**31), 2**31, size=(6, hw.batch, hw.block_out), dtype=np.int64)
    acc = acc.astype(np.int32)
    acc8 = rng.integers(-128, 128, size=(6, hw.batch, hw.block_out), dtype=np.int8)
    b = ProgramBuilder(hw)
    b.add_region("acc", acc.nbytes)
    b.add_region("acc8", acc8.nbytes)
    b.add_region("res", 64 * hw.out_tile_bytes)
    b.load(MemId.ACC, 0, "acc", 0, 2, 3, pads=(0, 0, 1, 0))
    b.load(MemId.ACC_8BIT, 10, "acc8", 0, 1, 6)
    # An ALU add of 0 writes acc to the out buffer (truncated), which we then store.
    rng_u = b.load_uops(b.add_uop_kernel([Uop(i, i) for i in range(16)], "alu"), 0)
    b.alu(AluOp.ADD, rng_u, imm=0)
    b.store(1, "res", 3, 2, 3, x_stride=5, deps=deps())
    res = run(b.build(), {"acc": acc, "acc8": acc8})
    sram = res.srams.acc
    np.testing.assert_array_equal(sram[0], 0)
    np.testing.assert_array_equal(sram[1:4], acc[0:3])
    np.testing.assert_array_equal(sram[5:8], acc[3:6])
    np.testing.assert_array_equal(sram[10:16], acc8.astype(np.int32))  # sign-extended
    np.testing.assert_array_equal(res.srams.out[:16], sram[:16].astype(np.int8))
    out = res.region("res", np.int8, (64, hw.batch, hw.block_out))
    np.testing.assert_array_equal(out[3:6], res.srams.out[1:4])
    np.testing.assert_array_equal(out[8:11], res.srams.out[4:7])
    assert not out[:3].any() and not out[6:8].any() and not out[11:].any()
    c = res.counters
    assert c.acc_load_nbytes == acc.nbytes + acc8.nbytes
    assert c.out_store_nbytes == 6 * hw.out_tile_bytes and c.uop_load_nbytes == 64


# ---- GEMM and ALU against a naive interpreter --------------------------------------------------


def _wrap32(x: np.ndarray) -> np.ndarray:
    return ((x.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int64)


def _naive(hw, insn, uops, inp, wgt, acc) -> np.ndarray:
    """Loop-order execution of one GEMM/ALU instruction on int64 copies."""
    acc = acc.astype(np.int64).copy()
    for i0 in range(insn.iter_out):
        for i1 in range(insn.iter_in):
            for u in uops:
                d = u.dst + i0 * insn.dst_factor_out + i1 * insn.dst_factor_in
                s = u.src + i0 * insn.src_factor_out + i1 * insn.src_factor_in
                if isinstance(insn, GemmInsn):
                    w = u.wgt + i0 * insn.wgt_factor_out + i1 * insn.wgt_factor_in
                    prod = inp[s].astype(np.int64) @ wgt[w].astype(np.int64).T
                    acc[d] = 0 if insn.reset else _wrap32(acc[d] + prod)
                    continue
                x, y = acc[d], (np.int64(insn.imm) if insn.use_imm else acc[s].copy())
                op = insn.alu_opcode
                if op == AluOp.MIN:
                    acc[d] = np.minimum(x, y)
                elif op == AluOp.MAX:
                    acc[d] = np.maximum(x, y)
                elif op == AluOp.ADD:
                    acc[d] = _wrap32(x + y)
                elif op == AluOp.MUL:
                    acc[d] = _wrap32(x * y)
                else:
                    y = np.broadcast_to(y, x.shape)
                    acc[d] = [
                        a >> min(int(k), 31) if k >= 0
                        else (_wrap32(np.int64((int(a) << -int(k)) & 0xFFFFFFFF)) if -k < 32 else 0)
                        for a, k in zip(x.ravel(), y.ravel(), strict=True)
                    ]  # fmt: skip
    return acc


def _run_one(hw, insn, uops, kind, inp, wgt, acc):
    b = ProgramBuilder(hw)
    for name, arr in (("inp", inp), ("wgt", wgt), ("acc", acc)):
        b.add_region(name, arr.nbytes)
    b.load(MemId.INP, 0, "inp", 0, 1, inp.shape[0])
    b.load(MemId.WGT, 0, "wgt", 0, 1, wgt.shape[0], deps=deps("push_next"))
    b.load(MemId.ACC, 0, "acc", 0, 1, acc.shape[0], deps=deps("pop_prev"))
    lo, hi = b.load_uops(b.add_uop_kernel(uops, kind), 7)
    b.append(_with_range(insn, lo, hi))
    res = run(b.build(), {"inp": inp, "wgt": wgt, "acc": acc})
    want = _naive(hw, insn, uops, inp, wgt, acc)
    n = acc.shape[0]
    np.testing.assert_array_equal(res.srams.acc[:n], want)
    touched = np.zeros(n, bool)
    for i0 in range(insn.iter_out):
        for i1 in range(insn.iter_in):
            for u in uops:
                touched[u.dst + i0 * insn.dst_factor_out + i1 * insn.dst_factor_in] = True
    np.testing.assert_array_equal(res.srams.out[:n][touched], want[touched].astype(np.int8))
    assert not res.srams.out[:n][~touched].any()
    return res


def _with_range(insn, lo, hi):
    from dataclasses import replace

    return replace(insn, uop_bgn=lo, uop_end=hi)


def _data(hw, n_inp, n_wgt, n_acc, seed, acc_range=2**31):
    rng = np.random.default_rng(seed)
    inp = rng.integers(-128, 128, size=(n_inp, hw.batch, hw.block_in), dtype=np.int8)
    wgt = rng.integers(-128, 128, size=(n_wgt, hw.block_out, hw.block_in), dtype=np.int8)
    acc = rng.integers(-acc_range, acc_range, size=(n_acc, hw.batch, hw.block_out))
    return inp, wgt, acc.astype(np.int32), rng


@pytest.mark.parametrize(
    ("n_uops", "n_inp", "n_wgt", "path"),
    [
        (64, 4, 4, "pairs"),  # few distinct tiles: one all-pairs matmul
        (1024, 1024, 8, "group"),  # weight reuse: one matmul per weight tile
        (256, 4, 256, "batched"),  # input reuse
        (48, 48, 48, "batched"),  # no reuse: one batched matmul
    ],
)
@pytest.mark.parametrize("name", ["default", "2x16x16", "1x16x32"])
def test_gemm_paths_match_naive(name, n_uops, n_inp, n_wgt, path, monkeypatch) -> None:
    hw = load(name)
    inp, wgt, acc, rng = _data(hw, n_inp, n_wgt, 24, seed=n_uops)
    if path == "pairs":
        src, wg = rng.integers(0, n_inp, n_uops), rng.integers(0, n_wgt, n_uops)
    else:  # a permutation of every tile, so the distinct counts are exact
        src = rng.permutation(n_uops) % n_inp
        wg = rng.permutation(n_uops) % n_wgt
    uops = [Uop(int(d), int(s), int(w))
            for d, s, w in zip(rng.integers(0, 8, n_uops), src, wg, strict=True)]  # fmt: skip
    groups = []
    real = functional._groups
    monkeypatch.setattr(functional, "_groups",
                        lambda inv, count: groups.append(count) or real(inv, count))  # fmt: skip
    insn = GemmInsn(DepFlags(), False, 0, 0)
    _run_one(hw, insn, uops, "gemm", inp, wgt, acc)  # repeated acc tiles and int32 wrap-around
    assert bool(groups) == (path == "group")


def test_gemm_reset_and_loops() -> None:
    hw = load("1x8x8")
    inp, wgt, acc, _ = _data(hw, 16, 16, 32, seed=3)
    uops = [Uop(0, 0, 0), Uop(1, 2, 3)]
    _run_one(hw, GemmInsn(DepFlags(), False, 0, 0, 3, 2, 4, 2, 3, 1, 2, 5), uops, "gemm", inp,
             wgt, acc)  # fmt: skip
    _run_one(hw, GemmInsn(DepFlags(), True, 0, 0, 3, 2, 4, 2, 3, 1, 2, 5), uops, "gemm", inp,
             wgt, acc)  # fmt: skip


@pytest.mark.parametrize("op", list(AluOp))
def test_alu_immediate_with_repeated_tiles(op: AluOp) -> None:
    hw = default()
    inp, wgt, acc, rng = _data(hw, 2, 2, 16, seed=int(op))
    uops = [Uop(int(d), 0) for d in rng.integers(0, 6, 12)]  # each tile hit several times
    for imm in (-40, -3, 0, 5, 31, 1000):
        insn = AluInsn(DepFlags(), False, 0, 0, 2, 2, 4, 1, 0, 0, op, True, imm)
        _run_one(hw, insn, uops, "alu", inp, wgt, acc)


@pytest.mark.parametrize("op", list(AluOp))
def test_alu_tensor_ops_in_loop_order(op: AluOp) -> None:
    hw = default()
    small = 40 if op == AluOp.SHR else 2**31  # shift amounts around +-32
    inp, wgt, acc, rng = _data(hw, 2, 2, 24, seed=10 + int(op), acc_range=small)
    # No hazards: distinct dst, sources never written earlier.
    plain = [Uop(i, 12 + i) for i in range(6)]
    _run_one(hw, AluInsn(DepFlags(), False, 0, 0, 2, 1, 6, 0, 6, 0, op), plain, "alu", inp,
             wgt, acc)  # fmt: skip
    # A reduction into one tile, then a chain where each element reads the previous result.
    reduce_ = [Uop(0, s) for s in range(1, 9)]
    chain = [Uop(i + 1, i) for i in range(10)]
    rand = [Uop(int(d), int(s)) for d, s in zip(rng.integers(0, 12, 30), rng.integers(0, 12, 30),
                                               strict=True)]  # fmt: skip
    for uops in (reduce_, chain, rand):
        _run_one(hw, AluInsn(DepFlags(), False, 0, 0, 2, 1, 1, 0, 1, 0, op), uops, "alu", inp,
                 wgt, acc)  # fmt: skip


# ---- dependences and errors ----------------------------------------------------------------------


def _two_loads_one_gemm(hw: HwConfig, with_tokens: bool):
    """LOAD A into inp[0]; GEMM; LOAD B into inp[0] again; GEMM — the second load must wait
    for the first GEMM (WAR) and each GEMM for its load (RAW)."""
    img = _image(hw, 1, 2, seed=5)
    wgt = np.ones((1, hw.block_out, hw.block_in), np.int8)
    b = ProgramBuilder(hw)
    b.add_region("data", img.nbytes)
    b.add_region("kernel", wgt.nbytes)
    b.add_region("res", 4 * hw.out_tile_bytes)
    t = deps if with_tokens else (lambda *_: DepFlags())
    b.load(MemId.WGT, 0, "kernel", 0, 1, 1)
    b.load(MemId.INP, 0, "data", 0, 1, 1, deps=t("push_next"))
    g = b.load_uops(b.add_uop_kernel([Uop(0, 0, 0)]), 0)
    g2 = b.load_uops(b.add_uop_kernel([Uop(1, 0, 0)]), 1)
    b.gemm(g, deps=t("pop_prev", "push_prev"))
    b.load(MemId.INP, 0, "data", 1, 1, 1, deps=t("pop_next", "push_next"))
    b.gemm(g2, deps=t("pop_prev"))
    return b.build(), img, wgt


def test_tokens_order_loads_after_their_consumers() -> None:
    hw = default()
    prog, img, wgt = _two_loads_one_gemm(hw, with_tokens=True)
    res = run(prog, {"data": img, "kernel": wgt})
    sums = img.astype(np.int32).sum(axis=-1)  # all-ones weights: each output = row sum
    np.testing.assert_array_equal(res.srams.acc[0], np.repeat(sums[0, 0][:, None], hw.block_out, 1))
    np.testing.assert_array_equal(res.srams.acc[1], np.repeat(sums[0, 1][:, None], hw.block_out, 1))
    assert res.order.index(5) < res.order.index(6)  # GEMM #5 before the reload #6

    # Without tokens the load module runs ahead and both GEMMs see the second tile.
    racy, _, _ = _two_loads_one_gemm(hw, with_tokens=False)
    res = run(racy, {"data": img, "kernel": wgt})
    np.testing.assert_array_equal(res.srams.acc[0], res.srams.acc[1])


def test_deadlock_raises_with_blocked_instructions() -> None:
    hw = default()
    b = ProgramBuilder(hw)
    b.add_region("data", 4 * hw.inp_tile_bytes)
    b.load(MemId.INP, 0, "data", 0, 1, 1, deps=deps("pop_next", "push_next"))
    b.gemm((0, 0), deps=deps("pop_prev", "push_prev"))
    with pytest.raises(SimulationError) as exc:
        run(b.build())
    msg = str(exc.value)
    assert "deadlock after 0 of 2" in msg
    assert "load module blocked at #0 LOAD_INP popping c2l" in msg
    assert "compute module blocked at #1 GEMM popping l2c" in msg

    b = ProgramBuilder(hw)
    b.store(0, b.add_region("res", 64), 0, 1, 1, deps=deps("pop_prev"))
    with pytest.raises(SimulationError, match="store module blocked at #0 STORE popping c2s"):
        run(b.build())


def test_out_of_range_accesses_raise() -> None:
    hw = default()
    b = ProgramBuilder(hw)
    b.add_region("data", 4 * hw.inp_tile_bytes)
    b.load(MemId.INP, hw.inp_depth - 1, "data", 0, 1, 2)
    with pytest.raises(SimulationError, match=r"inp tiles \[2047, 2049\) out of range"):
        run(b.build())

    b = ProgramBuilder(hw)
    b.add_region("data", 4 * hw.inp_tile_bytes)
    b.load(MemId.INP, 0, "data", 3, 1, 2)
    with pytest.raises(SimulationError, match=r"bytes \[48, 80\) are not inside one region"):
        run(b.build())

    b = ProgramBuilder(hw)
    b.add_region("data", 4 * hw.inp_tile_bytes)
    b.load(MemId.INP, 0, "data", 100, 1, 2)
    with pytest.raises(SimulationError, match="beyond the 256-byte DRAM"):
        run(b.build())

    b = ProgramBuilder(hw)
    g = b.load_uops(b.add_uop_kernel([Uop(hw.acc_depth - 1, 0, 0)]), 0)
    b.gemm(g, iter_out=2, dst_factor=(1, 0))
    with pytest.raises(SimulationError, match=r"acc index 2048 out of range \[0, 2048\)"):
        run(b.build())

    b = ProgramBuilder(hw)
    b.gemm((5, 3))
    with pytest.raises(SimulationError, match="micro-ops"):
        run(b.build())


def test_misrouted_program_is_rejected_before_running() -> None:
    hw = default()
    b = ProgramBuilder(hw)
    b.load(MemId.WGT, 0, b.add_region("w", 256), 0, 1, 1, deps=deps("push_prev"))
    with pytest.raises(ProgramError, match="no previous module"):
        run(b.build())
