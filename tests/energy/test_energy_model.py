"""The energy model against independent references: monotone in every event it counts,
within physical bounds (static power below, the board's supply above), and the one published
VTA figure (~2 W for the PYNQ-Z1 board running ResNet-18) inside the constants' range."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tests.energy.conftest import c8_program, timed
from vtatune.energy import activity, estimate, estimate_activity
from vtatune.energy import constants as ec
from vtatune.energy.model import COMPONENTS, primitives_per_access
from vtatune.hardware import boards, config
from vtatune.paths import project_root


def test_every_figure_is_within_its_range_and_sums_up() -> None:
    program = c8_program()
    b = boards.load("pynq-z1")
    cycles, seconds = timed(program, "pynq-z1")
    r = estimate(program, cycles, seconds, b)
    assert tuple(r.components) == COMPONENTS
    for f in (*r.components.values(), r.accelerator_j, r.board_j, r.accelerator_w, r.board_w):
        assert 0 < f.low <= f.value <= f.high
    for case in ("value", "low", "high"):
        acc = sum(f.pick(case) for n, f in r.components.items() if n != "base")
        assert r.accelerator_j.pick(case) == pytest.approx(acc)
        assert r.board_j.pick(case) == pytest.approx(acc + r.components["base"].pick(case))
        assert r.board_w.pick(case) == pytest.approx(r.board_j.pick(case) / seconds)


@pytest.mark.parametrize("field", ["gemm_uops", "alu_uops", "macs", "alu_lane_ops",
                                   "dram_read_bytes", "dram_write_bytes", "insn_fetch_bytes",
                                   *(f"sram_reads.{s}" for s in ("inp", "wgt", "acc", "out",
                                                                 "uop")),
                                   *(f"sram_writes.{s}" for s in ("inp", "wgt", "acc", "out",
                                                                  "uop"))])
def test_energy_grows_with_every_counted_event(field: str) -> None:
    program = c8_program()
    b = boards.load("pynq-z1")
    cycles, seconds = timed(program, "pynq-z1")
    act = activity(program)
    if "." in field:
        which, buf = field.split(".")
        counts = dict(getattr(act, which))
        counts[buf] += 1000
        more = dataclasses.replace(act, **{which: counts})
    else:
        more = dataclasses.replace(act, **{field: getattr(act, field) + 1000})
    base = estimate_activity(act, program.hw, cycles, seconds, b)
    bigger = estimate_activity(more, program.hw, cycles, seconds, b)
    if field in ("gemm_uops", "alu_uops"):  # priced through their accesses and lane-ops
        assert bigger.accelerator_j.value == base.accelerator_j.value
    else:
        assert bigger.accelerator_j.value > base.accelerator_j.value
        assert bigger.accelerator_j.low > base.accelerator_j.low
    # and with time: more cycles cost the clocked logic, more seconds the static power
    slower = estimate_activity(act, program.hw, cycles * 2, seconds * 2, b)
    assert slower.accelerator_j.value > base.accelerator_j.value
    assert slower.board_j.value > base.board_j.value


@pytest.mark.parametrize("board", ["pynq-z1", "ultra96", "zcu104", "de10-nano"])
def test_board_power_lies_between_static_power_and_the_supply(board: str) -> None:
    program = c8_program()
    b = boards.load(board)
    k = ec.load().for_board(b.name, b.family)
    cycles, seconds = timed(program, board)
    r = estimate(program, cycles, seconds, b)
    for case in ("value", "low", "high"):
        static = k["pl_static_w"].pick(case) + k["base_w"].pick(case)
        assert r.board_w.pick(case) >= static
        assert r.board_w.pick(case) <= k["supply_max_w"].value
        # the accelerator alone draws less than the board
        assert r.accelerator_w.pick(case) < r.board_w.pick(case)


def test_one_access_enables_one_block_per_column() -> None:
    """The default design's weight SRAM: a 2048-bit row in 2 banks of 1024 bits (vta-hw
    max_bus_width), each bank as wide as its columns of block RAM (36 bits wide in TDP mode)."""
    from vtatune.area import coefficients
    from vtatune.area.model import sram_mappings

    hw = config.default()
    b = boards.load("pynq-z1")
    fam = coefficients.load().family(b.family)
    m = sram_mappings(hw, b)["wgt"]
    assert m.banks == 2
    width = sum(c.count * c.shape[1] for c in m.columns)
    assert width >= 1024
    k = primitives_per_access(m, fam.half_block)
    assert 2 * 1024 / 36 <= k <= 2 * (1024 / 36 + 1)


#: VTA's name of the default design (1x16x16, buffers 15/15/18/17) in the measured records.
DEFAULT_DESIGN = "pynq_1x16_i8w8a32_15_15_18_17"


def _measured_resnet18() -> list[dict[str, Any]]:
    path = project_root() / "hwconfigs" / "timing" / "measured" / "vta_pynq_measured.json"
    return [r for r in json.loads(path.read_text())
            if "Resnet-18" in r["source"] and r["model"] == DEFAULT_DESIGN]


def test_resnet18_board_power_range_holds_the_published_two_watts() -> None:
    """T. Moreau (TVM forum, 'VTA Performance: FPS and Power'): VTA on the PYNQ-Z1 runs
    ResNet-18 at ~2 W for the whole board. The default design with the schedules measured on
    that board (TopHub's ResNet-18 records), each layer as often as ResNet-18 runs it: the
    range the constants imply must hold 2 W."""
    from vtatune.compiler import compile_candidate
    from vtatune.runtime import build_program
    from vtatune.workloads.conv2d import Conv2d

    hw = config.default()
    b = boards.load("pynq-z1")
    # how often ResNet-18 runs each measured shape (spaces/resnet18.toml, He et al. Table 1)
    runs = {(64, 56, 64, 3, 1): 4, (128, 28, 128, 3, 1): 3, (256, 14, 256, 3, 1): 3,
            (512, 7, 512, 3, 1): 3}
    energy = {"value": 0.0, "low": 0.0, "high": 0.0}
    seconds = 0.0
    records = _measured_resnet18()
    assert len(records) == 10
    for r in records:
        s = r["shape"]
        wl = Conv2d.from_shape(",".join(str(s[k]) for k in ("n", "cin", "h", "w", "cout", "kh",
                                                              "kw", "pad", "stride")))
        res = compile_candidate(wl, hw, r["knobs"])
        assert res.ok, (r["knobs"], res.reason)
        program = build_program(res, wl, hw)
        cycles, t = timed(program, "pynq-z1")
        e = estimate(program, cycles, t, b)
        n = runs.get((s["cin"], s["h"], s["cout"], s["kh"], s["stride"]), 1)
        seconds += n * t
        for case in energy:
            energy[case] += n * e.board_j.pick(case)
    low, high = energy["low"] / seconds, energy["high"] / seconds
    assert low <= 2.0 <= high, (low, energy["value"] / seconds, high)


def test_a_timing_profile_of_the_board_prices_with_the_board_constants() -> None:
    """``pynq-z1@2019-07`` is the PYNQ-Z1 with another timing profile: the same constants."""
    program = c8_program()
    cycles, seconds = timed(program, "pynq-z1")
    plain = estimate(program, cycles, seconds, boards.load("pynq-z1"))
    profiled = estimate(program, cycles, seconds, boards.load("pynq-z1@2019-07"))
    assert profiled.accelerator_j == plain.accelerator_j
    assert profiled.board_j == plain.board_j
