"""The exhaustive reference: every candidate of a schedule space, evaluated in workers exactly
as one fresh in-process evaluation gives it."""

from __future__ import annotations

import pytest

from vtatune import schedules
from vtatune.hardware import boards, config
from vtatune.search import exhaustive
from vtatune.search.evaluate import evaluate
from vtatune.search.space import Candidate
from vtatune.workloads import parse

#: dense on the default config: 30 schedules, all feasible
DENSE = ("dense", "4,32,64")
#: a schedule of an unpadded 1x1 conv2d (VTA builds tiles over several input-channel tiles
#: of it) that overflows the small-buffer config's input buffer
OVERFLOW = {"tile_b": 1, "tile_h": 14, "tile_w": 14, "tile_ci": 8, "tile_co": 1, "h_nthread": 1,
            "oc_nthread": 1}


@pytest.fixture(scope="module")
def ref() -> exhaustive.Reference:
    seen: list[tuple[str, bool]] = []
    r = exhaustive.reference(parse(DENSE[0], None, DENSE[1]), config.load("default"), "pynq-z1",
                             workers=1, on_record=lambda rec, new: seen.append((rec.key, new)))
    assert sorted(seen) == sorted((rec.key, True) for rec in r.records)
    return r


def test_every_legal_schedule_once_in_knob_space_order(ref: exhaustive.Reference) -> None:
    wl, hw = ref.workload, ref.hw
    assert [r.knobs for r in ref.records] == list(schedules.knob_space(wl, hw))
    assert len({r.key for r in ref.records}) == len(ref.records) == 30
    assert ref.statuses == {"ok": 30}


def test_best_is_the_fewest_cycles(ref: exhaustive.Reference) -> None:
    best = ref.best
    assert best is not None and best.cycles == min(r.cycles or 0 for r in ref.records)
    assert best == min(ref.records, key=lambda r: r.cycles or 0)


def test_worker_records_equal_a_fresh_in_process_evaluation(ref: exhaustive.Reference) -> None:
    board = boards.load("pynq-z1")
    for rec in (ref.records[0], ref.best, ref.records[-1]):
        assert rec is not None
        fresh = evaluate(Candidate(ref.workload, ref.hw, rec.knobs), board)
        assert (fresh.key, fresh.status, fresh.cycles, fresh.seconds, fresh.area_mm2) == \
            (rec.key, rec.status, rec.cycles, rec.seconds, rec.area_mm2)


def test_served_records_are_not_evaluated_again(ref: exhaustive.Reference) -> None:
    news: list[bool] = []
    again = exhaustive.reference(ref.workload, ref.hw, "pynq-z1",
                                 known=lambda cs: {c.key: r for c, r in
                                                   zip(cs, ref.records, strict=True)},
                                 on_record=lambda rec, new: news.append(new))
    assert again.records == ref.records and news == [False] * 30


def test_a_rejected_schedule_is_a_record_with_its_reason() -> None:
    wl = parse("conv2d", None, "1,128,14,14,16,1,1,0,1")
    hw = config.load("hwconfigs/1x16x16_small.json")
    [rec] = exhaustive.evaluate_all([Candidate(wl, hw, OVERFLOW)], "pynq-z1")
    assert rec.status == "invalid" and "inp buffer" in rec.reason and rec.cycles is None
