"""Compile once per distinct program: a reused compile equals a fresh one on every buffer size.

"Fresh" lowers with the candidate's real hardware config (the buffer sizes present), as a
compile without any sharing would; "reused" lowers once on the program view of the hardware
and verifies against each candidate's buffers. They must agree in everything: the lowered
TIR, the verification outcome and its problems, the built program's bytes and its cycles.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from vtatune.compiler.cache import ProgramCache
from vtatune.compiler.compile import (
    BufferSizeDependence,
    ProgramKey,
    lower_program,
    program_hw,
    program_key,
    verify_program,
)
from vtatune.hardware import config
from vtatune.hardware.boards import load as load_board
from vtatune.hardware.config import HwConfig
from vtatune.workloads import Conv2d, Dense

#: (workload, GEMM shape as LOG_BATCH/BLOCK_IN/BLOCK_OUT, knobs): programs that are valid on
#: some buffer sizes of the variants below and rejected on others (tiles over several input
#: channel tiles are of unpadded layers: VTA's compiler refuses them on padded ones).
CASES = [
    (Conv2d(1, 64, 14, 14, 64, 3, 3, 1, 1), (0, 4, 4),
     dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=1, tile_co=2, h_nthread=1, oc_nthread=2)),
    (Conv2d(1, 64, 14, 14, 64, 3, 3, 0, 1), (0, 4, 4),
     dict(tile_b=1, tile_h=6, tile_w=12, tile_ci=4, tile_co=2, h_nthread=1, oc_nthread=1)),
    (Conv2d(1, 32, 17, 17, 64, 3, 3, 0, 2), (0, 3, 4),
     dict(tile_b=1, tile_h=4, tile_w=8, tile_ci=2, tile_co=4, h_nthread=2, oc_nthread=1)),
    (Conv2d(1, 64, 14, 14, 128, 1, 1, 0, 1), (0, 3, 3),
     dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=2, tile_co=4, h_nthread=2, oc_nthread=2)),
    (Dense(16, 256, 256), (0, 4, 4), dict(tile_b=8, tile_ci=16, tile_co=4, oc_nthread=2)),
    # one GEMM kernel of 504 micro-ops (VTA's loop order: w and kw folded, co x ci x h x kh
    # unrolled): more than a 1 KiB micro-op buffer holds
    (Conv2d(1, 64, 30, 30, 64, 3, 3, 0, 1), (0, 4, 4),
     dict(tile_b=1, tile_h=14, tile_w=28, tile_ci=2, tile_co=4, h_nthread=1, oc_nthread=1)),
]

#: Buffer sizes (LOG_INP/WGT/ACC/UOP_BUFF_SIZE) from roomy to tight: SRAM, micro-op and ISA
#: field (index width) rejections all occur among them.
BUFFERS = [(15, 18, 17, 15), (13, 15, 14, 13), (14, 16, 15, 11), (13, 15, 16, 14),
           (16, 17, 14, 12), (12, 14, 13, 10), (15, 18, 17, 10)]


def variants(shape: tuple[int, int, int]) -> list[HwConfig]:
    out = []
    for inp, wgt, acc, uop in BUFFERS:
        hw = HwConfig(log_batch=shape[0], log_block_in=shape[1], log_block_out=shape[2],
                      log_inp_buff_size=inp, log_wgt_buff_size=wgt, log_acc_buff_size=acc,
                      log_uop_buff_size=uop)
        if not config.problems_of(hw):
            out.append(hw)
    return out


def fresh(wl, hw, knobs):
    """A compile that shares nothing: lowered with the real config, buffer sizes included."""
    key = ProgramKey(wl, hw, tuple(sorted(knobs.items())), 8)
    return lower_program(key), verify_program(lower_program(key), hw)


def comparable(res) -> dict:
    d = res.as_dict()
    d.pop("compile_ms")
    d.pop("stage_ms")
    return d


@pytest.mark.parametrize("case", range(len(CASES)))
def test_reused_compile_equals_fresh_on_every_buffer_size(case: int) -> None:
    import tvm_ffi

    from vtatune.runtime.build import build_program, run_host
    from vtatune.simulator import simulate

    wl, shape, knobs = CASES[case]
    board = load_board("pynq-z1")
    cache = ProgramCache()
    statuses = set()
    for i, hw in enumerate(variants(shape)):
        low_fresh, want = fresh(wl, hw, knobs)
        got, low = cache.compile(wl, hw, knobs)
        assert got.reused == (i > 0) and not want.reused
        assert comparable(got) == comparable(want), hw
        assert got.problems == want.problems
        assert tvm_ffi.structural_equal(low.module, low_fresh.module)
        statuses.add(got.status)
        if got.ok:
            a = build_program(want, wl, hw)
            b = run_host(low.host(), wl, hw, knobs=got.knobs)
            assert a.to_bytes() == b.to_bytes()
            assert simulate(a, board).cycles == simulate(b, board).cycles
    assert cache.stats().misses == 1
    assert statuses == {"valid", "invalid"}  # the shared program is accepted and rejected


def test_rejections_of_every_kind_are_the_same_when_reused() -> None:
    kinds = set()
    for wl, shape, knobs in CASES:
        cache = ProgramCache()
        for hw in variants(shape):
            got, _ = cache.compile(wl, hw, knobs)
            kinds |= {p.kind for p in got.problems}
    assert kinds >= {"sram", "uop", "field", "index"}


def test_micro_op_buffer_changes_the_built_program_not_the_compiled_one() -> None:
    from vtatune.runtime.build import run_host

    # two threads' GEMM kernels of 252 micro-ops each (a kernel per call site, as VTA's
    # runtime caches them)
    wl = Conv2d(1, 64, 30, 30, 64, 3, 3, 0, 1)
    knobs = dict(tile_b=1, tile_h=7, tile_w=28, tile_ci=2, tile_co=4, h_nthread=2,
                 oc_nthread=1)
    big = config.default()
    small = replace(big, log_uop_buff_size=10)  # 256 micro-ops: kernels evicted and reloaded
    cache = ProgramCache()
    rb, low = cache.compile(wl, big, knobs)
    rs, low2 = cache.compile(wl, small, knobs)
    assert low is low2 and rb.ok and rs.ok
    pb = run_host(low.host(), wl, big)
    ps = run_host(low.host(), wl, small)
    assert ps.meta["build"]["uop_evictions"] > pb.meta["build"]["uop_evictions"] == 0
    assert len(ps.insns) > len(pb.insns)


def test_key_holds_what_the_program_depends_on() -> None:
    wl, _, knobs = CASES[0]
    hw = config.default()
    assert program_key(wl, hw, knobs) == program_key(wl, replace(hw, log_inp_buff_size=13),
                                                       knobs)
    for other in (program_key(wl, replace(hw, log_block_out=3), knobs),
                  program_key(wl, hw, {**knobs, "tile_co": 4}),
                  program_key(wl, hw, knobs, shift=7),
                  program_key(Conv2d(1, 64, 14, 14, 32, 3, 3, 1, 1), hw, knobs)):
        assert other != program_key(wl, hw, knobs)


def test_lowering_cannot_read_buffer_sizes(monkeypatch) -> None:
    view = program_hw(config.default())
    for prop in ("inp_buff_bytes", "wgt_depth", "uop_depth", "field_bits", "acc_buff_bytes"):
        with pytest.raises(BufferSizeDependence):
            getattr(view, prop)
    assert view.block_in == 16 and view.acc_bits == 32  # what a program may depend on

    from vtatune import schedules

    real = schedules.apply

    def peeking(sch, wl, hw, knobs):  # a template that sizes tiles by the input buffer
        knobs = dict(knobs)
        knobs["tile_h"] = 14 if hw.inp_buff_bytes > 16384 else 7
        real(sch, wl, hw, knobs)

    monkeypatch.setattr(schedules, "apply", peeking)
    wl, _, knobs = CASES[0]
    with pytest.raises(BufferSizeDependence):
        ProgramCache().compile(wl, config.default(), knobs)


def test_failed_lowering_is_shared_and_stays_failed() -> None:
    wl = Conv2d(1, 64, 14, 14, 64, 3, 3, 1, 1)
    # two virtual threads over row tiles with a tail (4, 4, 4, 2): the threads' programs would
    # differ, so the lowering cannot partition it (the knob space never proposes it)
    knobs = dict(tile_b=1, tile_h=4, tile_w=14, tile_ci=1, tile_co=2, h_nthread=2,
                 oc_nthread=1)
    cache = ProgramCache()
    a, _ = cache.compile(wl, config.default(), knobs)
    b, _ = cache.compile(wl, replace(config.default(), log_acc_buff_size=14), knobs)
    _, want = fresh(wl, replace(config.default(), log_acc_buff_size=14), knobs)
    assert a.status == b.status == want.status == "failed"
    assert b.reason == want.reason and b.reused


def test_cache_evicts_least_recently_used() -> None:
    wl, _, knobs = CASES[4]
    hw = config.default()
    cache = ProgramCache(size=2)
    for co in (1, 2, 4):
        cache.lower(wl, hw, {**knobs, "tile_co": co})
    assert cache.stats().size == 2 and cache.stats().misses == 3
    cache.lower(wl, hw, {**knobs, "tile_co": 4})
    cache.lower(wl, hw, {**knobs, "tile_co": 1})  # evicted: lowered again
    s = cache.stats()
    assert (s.hits, s.misses) == (1, 4) and s.hit_rate == pytest.approx(0.2)


def test_one_field_analysis_answers_every_buffer_configuration_in_any_order() -> None:
    """The field checks' bounds (refined by exact enumeration where a limit needs it) are
    computed once per program; checked against the variants in either order they give what a
    fresh analysis of the program gives on each."""
    from vtatune.passes.verify_isa_fields import FieldChecks, verify_isa_fields

    kinds = set()
    for wl, shape, knobs in CASES:
        hws = variants(shape)
        low = lower_program(program_key(wl, hws[0], knobs))
        func = low.module["main"]
        want = [verify_isa_fields(func, hw) for hw in hws]
        for order in (hws, hws[::-1]):
            checks = FieldChecks(func)
            got = {hw: checks.problems(hw) for hw in order}
            assert [got[hw] for hw in hws] == want
        kinds |= {p.kind for ps in want for p in ps}
    assert kinds == {"field", "index"}  # both kinds of rejection are among them
