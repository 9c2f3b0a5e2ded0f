"""The search loop serves a stored result only where it is right: same board, constraints and
models, and a deterministic outcome; transient failures are retried and re-evaluated."""

from __future__ import annotations

import pytest

from vtatune.errors import UserError
from vtatune.search import runner
from vtatune.search import space as spaces
from vtatune.store import Store

SHAPE = "16,64,64"  # a small dense layer: evaluations take tens of ms


@pytest.fixture()
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'search.sqlite'}"


def _space(**kw):
    return spaces.load("dense", shape=SHAPE, **kw)


def test_another_board_is_evaluated_afresh(db) -> None:
    # on one hardware design (which both boards fit) the same seed proposes the same
    # candidates; a joint space would screen other designs out on the smaller board
    a = runner.run(_space(hw="default"), sampler="random", trials=6, study="pynq", db=db,
                   workers=1, seed=3)
    b = runner.run(_space(hw="default", board="zcu104"), sampler="random", trials=6,
                   study="zcu", db=db, workers=1, seed=3)
    assert a.evaluated == 6 and b.evaluated == 6 and b.cached == 0
    store = Store(db)
    zcu = store.trials("zcu")
    assert {t.candidate.board for t in zcu} == {"zcu104"}
    assert {t.candidate.board for t in store.trials("pynq")} == {"pynq-z1"}
    # the same candidates, stored once per board: a zcu104 record is never a pynq-z1 one
    assert ({t.candidate.key for t in zcu} == {t.candidate.key for t in store.trials("pynq")})
    assert {t.candidate.context for t in zcu}.isdisjoint(
        {t.candidate.context for t in store.trials("pynq")})
    # and on pynq-z1 again, every candidate is served from the store
    c = runner.run(_space(hw="default"), sampler="random", trials=6, study="pynq2", db=db,
                   workers=1, seed=3)
    assert c.cached == 6 and c.evaluated == 0


def test_other_constraints_are_evaluated_afresh(db, tmp_path) -> None:
    runner.run(_space(), sampler="random", trials=5, study="fit", db=db, workers=1, seed=4)
    p = tmp_path / "nofit.toml"
    p.write_text(f'[workload]\nkind = "dense"\nshape = "{SHAPE}"\n'
                 '[hardware]\nLOG_BLOCK_IN = [3, 4, 5]\nLOG_BLOCK_OUT = [3, 4, 5]\n'
                 'LOG_BATCH = [0, 1]\nLOG_INP_BUFF_SIZE = [13, 14, 15, 16]\n'
                 'LOG_WGT_BUFF_SIZE = [15, 16, 17, 18]\nLOG_ACC_BUFF_SIZE = [14, 15, 16, 17, 18]'
                 '\n[constraints]\nfit_board = false\n')
    r = runner.run(spaces.load(p), sampler="random", trials=5, study="nofit", db=db, workers=1,
                   seed=4)
    assert r.cached == 0


def test_transient_failures_are_retried_and_never_served(db) -> None:
    r = runner.run(_space(), sampler="random", trials=3, study="hurried", db=db, workers=1,
                   seed=5, timeout=1e-6)  # below even a retry its worker has measured
    hurried = Store(db).trials("hurried")
    timed_out = [t for t in hurried if t.candidate.status == "timeout"]
    assert timed_out and r.retries >= len(timed_out)  # each was tried twice before it was kept
    # the same search with a sane timeout evaluates them again: a timeout is not a result
    again = runner.run(_space(), sampler="random", trials=3, study="patient", db=db, workers=1,
                       seed=5)
    patient = {t.candidate.key: t for t in Store(db).trials("patient")}
    for t in timed_out:
        fresh = patient[t.candidate.key]
        assert not fresh.cached and fresh.candidate.status != "timeout"
    assert again.evaluated >= len(timed_out)
    # the stored record is now the deterministic outcome (never replaced by a transient one)
    store = Store(db)
    assert all(store.lookup(t.candidate.key, t.candidate.context) is not None
               for t in timed_out)


def test_timeout_counts_from_the_start_of_the_evaluation(db) -> None:
    # worker start-up (TVM import and a warm-up compile) takes seconds; evaluations of this
    # layer take tens of ms (tests/search/test_workers.py checks the clock itself)
    r = runner.run(_space(), sampler="random", trials=6, study="t", db=db, workers=2, seed=6,
                   timeout=10.0)
    statuses = [t.candidate.status for t in Store(db).trials("t")]
    assert r.trials == 6 and "timeout" not in statuses, statuses


def test_a_continuation_on_other_hardware_is_refused(db) -> None:
    runner.run(_space(hw="default"), sampler="random", trials=2, study="s", db=db, workers=1,
               seed=0)
    with pytest.raises(UserError) as info:
        runner.run(_space(hw="1x8x8"), sampler="random", trials=4, study="s", db=db, workers=1,
                   seed=0)
    msg = str(info.value)
    assert "study 's' is for hardware 1x16x16" in msg and "not 1x8x8" in msg
    assert "\n" not in msg
    with pytest.raises(UserError, match="board pynq-z1, not zcu104"):
        runner.run(_space(hw="default", board="zcu104"), sampler="random", trials=4, study="s",
                   db=db, workers=1, seed=0)
    assert len(Store(db).trials("s")) == 2  # nothing was added by the refused runs


def test_a_model_change_refuses_the_continuation(db, monkeypatch) -> None:
    import vtatune.simulator.timing as timing

    runner.run(_space(), sampler="random", trials=2, study="m", db=db, workers=1, seed=0)
    monkeypatch.setattr(timing, "MODEL_VERSION", timing.MODEL_VERSION + 1)
    with pytest.raises(UserError, match="model timing_model"):
        runner.run(_space(), sampler="random", trials=3, study="m", db=db, workers=1, seed=0)


def test_warm_start_judges_other_constraints() -> None:
    from vtatune.store.records import CandidateRecord

    sp = _space()
    base = dict(key="k", workload="w", hw_key="h", hw={}, hw_name="n", knobs={})
    fits = CandidateRecord(status="ok", cycles=10, area_mm2=5.0, resources={"fits": True},
                           **base)
    big = CandidateRecord(status="ok", cycles=10, area_mm2=500.0, resources={"fits": False},
                          **base)
    unmeasured = CandidateRecord(status="no_fit", area_mm2=5.0, resources={"fits": True},
                                 **base)
    failed = CandidateRecord(status="failed", **base)
    assert runner.judged(sp, fits) is fits
    assert runner.judged(sp, big).status == "no_fit"  # type: ignore[union-attr]
    assert runner.judged(sp, unmeasured) is None and runner.judged(sp, failed) is None


def test_warm_start_judges_stock_vta() -> None:
    # A design measured by a study without the constraint is hw_invalid under stock_vta when
    # stock VTA cannot build it (here BLOCK_IN != BLOCK_OUT); one refused only for that
    # reason tells a study without the constraint nothing.
    from dataclasses import replace

    from vtatune.hardware import config
    from vtatune.store.records import CandidateRecord

    free, stock = _space(), _space()
    stock = replace(stock, stock_vta=True)
    square = config.default()
    wide = replace(square, log_block_out=square.log_block_in + 1)
    assert not stock.hardware_problems(square) and stock.hardware_problems(wide)

    def rec(hw, **kw):
        return CandidateRecord(key="k", workload="w", hw_key=hw.key, hw=hw.log_params(),
                               hw_name=hw.name, knobs={}, area_mm2=5.0,
                               resources={"fits": True}, **kw)

    ok_square, ok_wide = rec(square, status="ok", cycles=10), rec(wide, status="ok", cycles=10)
    assert runner.judged(stock, ok_square) is ok_square
    judged = runner.judged(stock, ok_wide)
    assert judged is not None and judged.status == "hw_invalid" and judged.cycles is None
    assert "not stock VTA" in judged.reason and runner.judged(free, ok_wide) is ok_wide
    refused = rec(wide, status="hw_invalid", reason=judged.reason)
    assert runner.judged(free, refused) is None and runner.judged(stock, refused) is refused
    broken = rec(wide, status="hw_invalid", reason="hardware: micro-op needs 34 bits > 32")
    assert runner.judged(free, broken) is broken
