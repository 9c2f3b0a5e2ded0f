"""Timing of built programs: never below the physical bounds; virtual threads hide latency."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from conftest import build, hw_named, shipped_names

from vtatune import schedules
from vtatune.hardware import boards
from vtatune.program import GemmInsn
from vtatune.simulator import bounds, load_params, simulate
from vtatune.workloads import Conv2d, Dense

SEED = 7
N_CANDIDATES = 60


def _candidates() -> list:
    rng = random.Random(SEED)
    names = shipped_names()
    out = []
    for i in range(N_CANDIDATES):
        name = names[i % len(names)]
        hw = hw_named(name)
        if i % 4 == 0:
            wl = Dense(rng.randint(1, 40), rng.randint(1, 300), rng.randint(1, 200))
        else:
            k = rng.choice((1, 3, 5))
            stride = rng.choice((1, 2))
            pad = rng.choice((0, k // 2))
            wl = Conv2d(1, rng.randint(1, 70), rng.randint(k, 16), rng.randint(max(2, k), 16),
                        rng.randint(1, 70), k, k, pad, stride)
        knobs = rng.choice(list(schedules.knob_space(wl, hw)))
        out.append(pytest.param(name, wl, knobs, id=f"{name}-{wl.signature}-{i}"))
    return out


@pytest.mark.parametrize(("hw_name", "wl", "knobs"), _candidates())
def test_cycles_never_beat_the_physical_bounds(hw_name: str, wl, knobs) -> None:
    hw = hw_named(hw_name)
    program = build(wl, hw, knobs)
    # padded channels only add work: GEMM tile-ops x MACs per tile-op >= the layer's MACs
    tile_ops = sum(i.ops for i in program.insns if isinstance(i, GemmInsn) and not i.reset)
    assert tile_ops * hw.macs_per_cycle >= wl.macs
    for board in boards.names():
        t = simulate(program, board)
        b = bounds(wl.macs, wl.compulsory_bytes(hw), hw, board)
        assert t.cycles >= b.compute_cycles and t.cycles >= b.memory_cycles, (board, t.cycles, b)
        assert 0 < b.efficiency(t.cycles) <= 1


def test_two_virtual_threads_hide_load_latency() -> None:
    """Loads and GEMMs are comparable here; a second thread overlaps them."""
    wl = Conv2d(1, 32, 14, 14, 32, 3, 3, 1, 1)
    hw = hw_named("default")
    knobs = dict(tile_b=1, tile_h=7, tile_w=7, tile_ci=2, tile_co=1, h_nthread=1, oc_nthread=1)
    # fixed constants (not the board's fitted ones): this checks the overlap mechanism
    p = replace(load_params("pynq-z1"), dma_row_cycles=30.0, dma_beat_cycles=2.0,
                alu_refill_cycles=2.0, gemm_refill_cycles=4.0)
    one = simulate(build(wl, hw, knobs), "pynq-z1", p)
    two = simulate(build(wl, hw, {**knobs, "oc_nthread": 2}), "pynq-z1", p)
    load, compute = one.modules["load"].busy_cycles, one.modules["compute"].busy_cycles
    assert 0.5 < load / compute < 2  # comparable
    assert two.gemm_ops == one.gemm_ops
    assert two.cycles < 0.9 * one.cycles
    # the overlap is where the time went: less stalling, same work
    assert two.modules["compute"].token_stall_cycles < one.modules["compute"].token_stall_cycles
