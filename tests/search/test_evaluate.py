"""evaluate: a candidate whose program was compiled for another buffer size gets the record a
fresh evaluation gives (only the measured milliseconds differ)."""

from __future__ import annotations

from dataclasses import replace

from vtatune.compiler.cache import default_cache
from vtatune.hardware import config
from vtatune.hardware.boards import load as load_board
from vtatune.search.evaluate import evaluate
from vtatune.search.space import Candidate
from vtatune.workloads import Conv2d

WL = Conv2d(1, 64, 14, 14, 64, 3, 3, 1, 1)
KNOBS = dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=4, tile_co=2, h_nthread=1, oc_nthread=1)
#: the same program on buffers that accept it, evict micro-op kernels, or reject it
SIZES = [dict(), dict(log_uop_buff_size=11), dict(log_inp_buff_size=13),
         dict(log_uop_buff_size=10), dict(log_acc_buff_size=14, log_wgt_buff_size=16)]


def _untimed(rec):
    return replace(rec, compile_ms=None, sim_ms=None)


def test_records_of_a_shared_program_equal_fresh_evaluations() -> None:
    board = load_board("pynq-z1")
    cands = [Candidate(WL, replace(config.default(), **s), KNOBS) for s in SIZES]
    fresh = []
    for c in cands:
        default_cache().clear()
        fresh.append(evaluate(c, board))
    default_cache().clear()
    shared = [evaluate(c, board) for c in cands]
    stats = default_cache().stats()
    assert (stats.misses, stats.hits) == (1, len(cands) - 1)
    assert [_untimed(r) for r in shared] == [_untimed(r) for r in fresh]
    assert {r.status for r in shared} == {"ok", "invalid"}
    assert len({r.cycles for r in shared if r.cycles}) > 1  # the uop buffer changes cycles


def test_seconds_split_and_the_latency_objective() -> None:
    from vtatune.search import space as spaces
    from vtatune.search.evaluate import latency_of, objective_values

    board = load_board("pynq-z1")
    rec = evaluate(Candidate(WL, config.default(), KNOBS), board)
    assert rec.status == "ok"
    # seconds per call = the accelerator's cycles at the board clock + the host's share
    assert rec.accelerator_seconds == rec.cycles / board.clock_hz
    assert rec.host_seconds > 0
    assert rec.seconds == rec.accelerator_seconds + rec.host_seconds
    sp = spaces.load("conv2d_schedule")
    assert sp.latency == "end-to-end"
    assert objective_values(sp, rec) == (rec.seconds,)
    acc = replace(sp, latency="accelerator")
    assert objective_values(acc, rec) == (float(rec.cycles),) == (latency_of(rec, "accelerator"),)
    assert objective_values(sp, replace(rec, status="invalid")) is None
