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
#: a schedule VTA's compiler builds, with two virtual threads (their micro-op kernels are
#: cached per call site, as VTA's runtime does, so a small micro-op buffer evicts them)
KNOBS = dict(tile_b=1, tile_h=7, tile_w=14, tile_ci=1, tile_co=1, h_nthread=2, oc_nthread=1)
#: the same program on buffers that accept it, evict micro-op kernels, or reject it
SIZES = [dict(), dict(log_uop_buff_size=7), dict(log_inp_buff_size=11),
         dict(log_uop_buff_size=8), dict(log_acc_buff_size=13, log_wgt_buff_size=16)]


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


def test_a_measurement_is_reused_only_where_the_build_gives_the_same_instructions(
        monkeypatch) -> None:
    """Builds are shared between micro-op buffers that place every kernel alike (no eviction,
    deep enough for what the build used); in any order of evaluation the records equal fresh
    ones, and a buffer that evicts is built for itself."""
    import vtatune.runtime.build as build

    board = load_board("pynq-z1")
    # log2 bytes of the micro-op buffer: this program's kernels take 50 entries, so 32
    # entries (7) evict and 64 (8) and more hold them all
    hws = {u: replace(config.default(), log_uop_buff_size=u) for u in (7, 8, 9, 11)}
    fresh = {}
    for u, hw in hws.items():
        default_cache().clear()
        fresh[u] = _untimed(evaluate(Candidate(WL, hw, KNOBS), board))
    assert all(r.status == "ok" for r in fresh.values())
    assert fresh[7].counters["uop_load_nbytes"] > fresh[8].counters["uop_load_nbytes"]
    builds: list[int] = []
    real = build.run_host

    def counted(host, wl, hw, **kw):
        builds.append(hw.log_uop_buff_size)
        return real(host, wl, hw, **kw)

    monkeypatch.setattr(build, "run_host", counted)
    for order, built in (([11, 8, 7, 9, 7], [11, 7]), ([7, 8, 11, 9, 7], [7, 8])):
        default_cache().clear()
        builds.clear()
        got = [_untimed(evaluate(Candidate(WL, hws[u], KNOBS), board)) for u in order]
        assert got == [fresh[u] for u in order]
        assert builds == built
