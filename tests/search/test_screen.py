"""Hardware designs screened before they become trials (``search.screen``): one function for
single-operator and network searches; --trials N means N designs evaluated."""

from __future__ import annotations

import itertools

import pytest

from vtatune.area import estimate, fit
from vtatune.hardware import boards, config
from vtatune.hardware.stock import stock_problems
from vtatune.search import runner
from vtatune.search import space as spaces
from vtatune.search.screen import Screen, screen
from vtatune.store import Store

#: dense 16x64x64 over 27 GEMM shapes on pynq-z1: 4 pass, 6 cannot be encoded, 17 do not fit
CROWDED = {"workload": {"kind": "dense", "shape": "16,64,64"},
           "hardware": {"LOG_BATCH": [0, 1, 2], "LOG_BLOCK_IN": [3, 4, 5],
                        "LOG_BLOCK_OUT": [3, 4, 5]},
           "schedule": {"knobs": ["tile_co"]},
           "objective": {"kind": "area-latency"}}
KEYS = ("LOG_BATCH", "LOG_BLOCK_IN", "LOG_BLOCK_OUT")


def _designs(sp):
    return [dict(zip(KEYS, c, strict=True)) for c in itertools.product(
        *(sp.hw_choices[k] for k in KEYS))]


def _reference(sp, params) -> str:
    """The screen's reason, from the models directly (an independent restatement)."""
    hw = sp.hardware(params)
    if config.problems_of(hw):
        return "hw_invalid"
    board = boards.load(sp.board)
    if sp.stock_vta and stock_problems(hw, board):
        return "not_stock_vta"
    report = estimate(hw, board)
    if sp.fit_board and not fit(report, board).fits:
        return "no_fit"
    if sp.max_area_mm2 is not None and report.area_mm2 > sp.max_area_mm2:
        return "over_area"
    return ""


@pytest.mark.parametrize("cons", [{}, {"stock_vta": True}, {"max_area_mm2": 39.0},
                                  {"fit_board": False, "stock_vta": True}])
def test_the_screen_applies_every_hardware_constraint(cons) -> None:
    sp = spaces.from_dict({**CROWDED, "constraints": cons}, "crowded.toml")
    reasons = [screen(sp, sp.hardware(p)).reason for p in _designs(sp)]
    assert reasons == [_reference(sp, p) for p in _designs(sp)]
    assert "" in reasons and len(set(reasons)) >= 2


def test_screened_designs_are_counted_once_with_an_example() -> None:
    sp = spaces.from_dict(CROWDED, "crowded.toml")
    s = Screen(sp)
    for p in _designs(sp) * 2:
        s.check({**p, "u_tile_co": 0.5})  # knobs do not change the design
    d = s.describe()
    assert d["designs"] == 23 and d["by_reason"] == {"hw_invalid": 6, "no_fit": 17}
    assert "does not fit pynq-z1" in d["examples"]["no_fit"]


@pytest.mark.parametrize("sampler", ["random", "tpe", "xgb"])
def test_trials_count_evaluated_designs_not_screened_ones(tmp_path, sampler) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    sp = spaces.from_dict(CROWDED, "crowded.toml")
    r = runner.run(sp, sampler=sampler, trials=6, study="c", db=db, workers=1, seed=0,
                   warm_start=False)
    recs = [t.candidate for t in Store(db).trials("c")]
    assert r.trials == len(recs) == 6 and not r.exhausted
    for c in recs:  # every trial is a design the screen passes, evaluated
        assert _reference(sp, {k: c.hw[k] for k in KEYS}) == ""
        assert c.status not in ("hw_invalid", "no_fit")
    assert r.screened["designs"] >= 1
    assert set(r.screened["by_reason"]) <= {"hw_invalid", "no_fit"}


def test_a_space_with_fewer_passing_candidates_is_exhausted_and_says_so(tmp_path) -> None:
    from vtatune.search.enumeration import candidates

    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    sp = spaces.from_dict(CROWDED, "crowded.toml")
    every = candidates(sp) or []
    passing = [k for k, p in every if _reference(sp, p) == ""]
    r = runner.run(sp, sampler="random", trials=len(every), study="x", db=db, workers=1,
                   seed=1)
    assert r.exhausted and r.trials == r.space_size == len(passing)
    assert r.space_screened == len(every) - len(passing) > 0
    assert {t.candidate.key for t in Store(db).trials("x")} == set(passing)


def test_two_processes_share_one_screened_study(tmp_path) -> None:
    # slots are claimed only for designs that pass: two runs of one study (one after the
    # other, as a second process continues it) hold the requested number of trials
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    sp = spaces.from_dict(CROWDED, "crowded.toml")
    runner.run(sp, sampler="tpe", trials=3, study="r", db=db, workers=1, seed=2)
    again = runner.run(sp, sampler="tpe", trials=7, study="r", db=db, workers=1, seed=2)
    trials = Store(db).trials("r")
    assert again.trials == 7 and again.new_trials == 4
    assert [t.number for t in trials] == list(range(7))
    assert all(_reference(sp, {k: t.candidate.hw[k] for k in KEYS}) == "" for t in trials)


def test_stock_vta_option_is_the_space_constraint(tmp_path) -> None:
    from vtatune.store.identity import context

    p = tmp_path / "s.toml"
    body = ('[workload]\nkind = "dense"\nshape = "16,64,64"\n[hardware]\n'
            'LOG_BLOCK_IN = [3, 4]\nLOG_BLOCK_OUT = [3, 4]\n')
    p.write_text(body)
    q = tmp_path / "q.toml"
    q.write_text(body + "[constraints]\nstock_vta = true\n")
    flag, file = spaces.load(p, stock_vta=True), spaces.load(q)
    assert flag.stock_vta and file.stock_vta and flag.constraints == file.constraints
    ctx = context(flag.board, flag.constraints)
    assert runner.study_identity(flag, ctx) == runner.study_identity(
        file, context(file.board, file.constraints))
    assert not spaces.load(p).stock_vta


def test_two_processes_at_once_fill_one_study_with_passing_designs(tmp_path) -> None:
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    space_file = tmp_path / "crowded.toml"
    space_file.write_text(
        '[workload]\nkind = "dense"\nshape = "16,64,64"\n[hardware]\nLOG_BATCH = [0, 1, 2]\n'
        'LOG_BLOCK_IN = [3, 4, 5]\nLOG_BLOCK_OUT = [3, 4, 5]\n[schedule]\nknobs = ["tile_co"]\n'
        '[objective]\nkind = "area-latency"\n')
    sp = spaces.load(space_file)
    assert sp.hw_choices == spaces.from_dict(CROWDED, "crowded.toml").hw_choices
    db = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    n = 8
    procs = [subprocess.Popen(
        [sys.executable, "-m", "vtatune", "search", "--space", str(space_file), "--trials",
         str(n), "--sampler", "random", "--seed", str(seed), "--workers", "1", "--db", db,
         "--study", "shared", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONPATH": str(root)}) for seed in (0, 1)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    results = [json.loads(out) for out, _ in outs]
    assert sum(r["new_trials"] for r in results) == n
    assert all(r["trials"] == n for r in results)
    trials = Store(db).trials("shared")
    assert [t.number for t in trials] == list(range(n))
    assert len({t.candidate.key for t in trials}) == n
    assert all(_reference(sp, {k: t.candidate.hw[k] for k in KEYS}) == "" for t in trials)
    assert any(r["screened"]["designs"] for r in results)


def test_a_schedule_vtas_compiler_refuses_realizes_to_the_nearest_it_builds() -> None:
    # C8 (3x3, pad 1) at the default design: a tile over several input-channel tiles pads
    # inside VTA's 2-D DMA ("Do not support pad on the innermost block", VTA's compiler's
    # answer in tests/passes/data/vta_oracle_conv2d.json): the proposal realizes to one
    # input-channel tile, and passes the screen; a space with no such point is screened
    from vtatune import schedules

    sp = spaces.from_dict({"workload": {"kind": "conv2d", "layer": "C8"},
                           "schedule": {"knobs": ["tile_ci"]}}, "c8.toml")
    cand, _ = sp.realize({"u_tile_ci": 1.0})
    ks = schedules.knob_space(sp.workload, cand.hw)
    assert cand.knobs["tile_ci"] == 1 and ks.problem(cand.knobs) is None
    assert "Do not support pad on the innermost block" in ks.problem(
        {**cand.knobs, "tile_ci": 16})
    s = Screen(sp)
    assert s.check({"u_tile_ci": 1.0}).passed and s.describe()["designs"] == 0
