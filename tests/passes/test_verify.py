"""VerifySram, VerifyUop and VerifyIsaFields reject what does not fit, naming it."""

from __future__ import annotations

from conftest import TUTORIAL, lower_until

from vtatune.compiler import compile_candidate
from vtatune.hardware import config
from vtatune.passes.verify_isa_fields import verify_isa_fields
from vtatune.passes.verify_sram import sram_bytes, verify_sram
from vtatune.passes.verify_uop import kernel_sizes, verify_uop
from vtatune.workloads import Conv2d, Dense


def test_sram_bytes_of_the_tutorial(hw, c8) -> None:
    mod = lower_until(c8, hw, TUTORIAL, ["front", "task", "thread"])
    used, problems = verify_sram(mod["main"], hw)
    assert used == {"inp": 4608, "wgt": 36864, "acc": 100352}  # VTA tutorial's buffers
    assert problems == []
    assert sram_bytes(mod["main"]) == used


def test_oversized_tile_is_rejected_naming_the_buffer(hw) -> None:
    # unpadded, whole planes: copies VTA's compiler accepts (C8 with tile_ci > 1 pads the
    # innermost block, which it refuses)
    wl = Conv2d(1, 256, 14, 14, 256, 3, 3, 0, 1)
    k = dict(tile_b=1, tile_h=12, tile_w=12, tile_ci=16, tile_co=16, h_nthread=1, oc_nthread=1)
    mod = lower_until(wl, hw, k, ["front", "task", "thread"])
    used, problems = verify_sram(mod["main"], hw)
    by_what = {p.what: p for p in problems}
    assert by_what["wgt buffer"].needed == 16 * 16 * 9 * 256
    assert by_what["wgt buffer"].available == hw.wgt_buff_bytes
    assert "wgt buffer needs 589,824 bytes, 262,144 available" in str(by_what["wgt buffer"])
    assert by_what["acc buffer"].needed == 16 * 144 * 64
    assert "inp buffer" in by_what


def test_uop_kernel_larger_than_the_buffer() -> None:
    hw = config.load("1x16x16_small")  # 16 KiB: 4096 micro-ops
    # VTA's order: the batch and channel-tile loops fold, the output tiles are micro-ops
    wl = Dense(32, 32, 16 * 8192)
    k = dict(tile_b=2, tile_ci=2, tile_co=8192, oc_nthread=1)
    mod = lower_until(wl, hw, k, ["front", "task", "thread", "hardware"])
    assert max(kernel_sizes(mod["main"])) == 8192
    largest, problems = verify_uop(mod["main"], hw)
    assert largest == 8192
    assert [str(p) for p in problems] == [
        "largest micro-op kernel needs 8,192 micro-ops, 4,096 available"]


def test_pad_wider_than_its_4_bit_field(hw) -> None:
    wl = Conv2d(1, 16, 2, 2, 16, 33, 33, 16, 1)
    k = dict(tile_b=1, tile_h=2, tile_w=2, tile_ci=1, tile_co=1, h_nthread=1, oc_nthread=1)
    mod = lower_until(wl, hw, k, ["front", "task", "thread", "hardware"])
    problems = {p.what: p for p in verify_isa_fields(mod["main"], hw)}
    assert problems["LOAD inp x_pad_0"].needed == 16
    assert problems["LOAD inp x_pad_0"].available == 15
    assert "LOAD inp y_pad_1" in problems


def test_valid_candidates_have_no_field_problems(hw, c8) -> None:
    mod = lower_until(c8, hw, TUTORIAL, ["front", "task", "thread", "hardware"])
    assert verify_isa_fields(mod["main"], hw) == []


def test_interval_false_positives_are_refined_exactly(hw) -> None:
    # the padded-row DMA offset max(1 - 7i, 0)*14 - 14 + 98i is >= 0 for every i, although
    # interval arithmetic alone bounds it below by -14
    r = compile_candidate(Conv2d(1, 16, 14, 14, 16, 3, 3, 1, 1), hw,
                          dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=1, tile_co=1,
                               h_nthread=1, oc_nthread=1))
    assert r.status == "valid", r.reason
