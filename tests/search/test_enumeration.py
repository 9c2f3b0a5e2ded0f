"""enumeration.candidates: every candidate of a space once, each reachable by its parameters."""

from __future__ import annotations

from vtatune import schedules
from vtatune.hardware import config
from vtatune.search import space as spaces
from vtatune.search.enumeration import candidates
from vtatune.search.evaluate import hw_invalid_record
from vtatune.search.space import Candidate

JOINT = """
[study]
board = "pynq-z1"
[workload]
kind = "dense"
shape = "16,64,64"
[hardware]
LOG_BLOCK_IN = [4, 5]
LOG_BLOCK_OUT = [3, 4]
LOG_WGT_BUFF_SIZE = [16, 18, 19]
[schedule]
knobs = ["tile_co", "oc_nthread"]
[objective]
kind = "area-latency"
"""


def _key(sp, params) -> str:
    cand, why = sp.realize(params)
    return cand.key if cand is not None else hw_invalid_record(
        sp.workload, sp.hardware(params), why).key


def test_schedule_space_is_its_knob_space() -> None:
    sp = spaces.load("conv2d_schedule", shape="1,96,16,16,96,3,3,1,2")
    found = candidates(sp)
    hw = config.default()
    want = {Candidate(sp.workload, hw, k).key for k in schedules.knob_space(sp.workload, hw)}
    # Counted from first principles: output 8x8, 96 channels = 6 blocks of 16. A tile of t
    # over extent e is any ceil(e / n); two virtual threads need whole tiles and an even
    # number of them. tile_h x h_nthread: 8, tile_w: 5, tile_co x oc_nthread: 6, tile_ci: 4.
    def tiles(e: int) -> set[int]:
        return {-(-e // n) for n in range(1, e + 1)}

    def with_threads(e: int) -> int:
        return sum(1 + (e % t == 0 and (e // t) % 2 == 0) for t in tiles(e))

    assert with_threads(8) * len(tiles(8)) * with_threads(6) * len(
        tiles(6)) == 960  # the 672 divisor-only tiles, plus tiles with one tail
    # ... of which VTA's compiler builds the tiles of one input-channel tile (the input is
    # padded: "Do not support pad on the innermost block"), 1 of tile_ci's 4 values, and of
    # those the ones whose output store and input loads fold into one 2-D DMA
    assert len(found) == len(want) == 128 < 960 // 4
    assert {k for k, _ in found} == want
    assert all(_key(sp, p) == k for k, p in found)


def test_joint_space_counts_unbuildable_hardware_once_per_config(tmp_path) -> None:
    path = tmp_path / "joint.toml"
    path.write_text(JOINT)
    sp = spaces.load(path)
    found = candidates(sp)
    keys = [k for k, _ in found]
    assert len(keys) == len(set(keys))
    invalid = [k for k in keys if k.endswith("|hardware")]
    buildable = 0
    for bi in (4, 5):
        for bo in (3, 4):
            for wgt in (16, 18, 19):
                hw = sp.hardware({"LOG_BLOCK_IN": bi, "LOG_BLOCK_OUT": bo,
                                  "LOG_WGT_BUFF_SIZE": wgt})
                if config.problems_of(hw):
                    continue
                base = schedules.suggest(sp.workload, hw)
                buildable += len({(k["tile_co"], k["oc_nthread"])
                                  for k in schedules.knob_space(sp.workload, hw)
                                  if all(k[n] == base[n] for n in ("tile_b", "tile_ci"))})
    assert invalid and len(keys) == buildable + len(invalid)
    assert all(_key(sp, p) == k for k, p in found)
    assert set(found[0][1]) == set(sp.param_space())


def test_too_large_a_space_is_not_enumerated() -> None:
    sp = spaces.load("conv2d_schedule", shape="1,96,16,16,96,3,3,1,2")
    assert candidates(sp, limit=100) is None
