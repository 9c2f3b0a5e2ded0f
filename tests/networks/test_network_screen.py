"""A network study honours every hardware constraint a single-operator study does (the same
screen, ``search.screen``), and --trials N means N designs tuned."""

from __future__ import annotations

from tests.networks.tiny_space import TINY
from vtatune.hardware import boards
from vtatune.hardware.config import HwConfig
from vtatune.hardware.stock import stock_problems
from vtatune.networks import runner
from vtatune.networks import space as nspace
from vtatune.search.screen import screen
from vtatune.store import Store

#: the tiny network over 27 GEMM shapes on pynq-z1: most cannot be encoded or do not fit
CROWDED_HW = {"LOG_BATCH": [0, 1, 2], "LOG_BLOCK_IN": [3, 4, 5], "LOG_BLOCK_OUT": [3, 4, 5]}


def _hw(t) -> HwConfig:
    return HwConfig.from_params(t.hw)


def test_a_network_study_with_stock_vta_gets_only_stock_designs(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'n.sqlite'}"
    sp = nspace.from_dict({**TINY, "constraints": {"stock_vta": True}}, "tiny.toml")
    assert sp.stock_vta and sp.hw_space.stock_vta
    assert all(u.stock_vta for u in sp.unit_spaces.values())
    r = runner.run(sp, sampler="random", trials=8, study="s", db=db, workers=1, seed=0,
                   warm_start=False)
    trials = Store(db).network_trials("s")
    board = boards.load(sp.board)
    assert trials and all(not stock_problems(_hw(t), board) for t in trials)
    # the space holds 8 designs, 4 of them square (BLOCK_IN == BLOCK_OUT): the others are
    # screened, and the study is exhausted at 4
    assert r.screened["by_reason"] == {"not_stock_vta": 4}
    assert r.trials == 4 and r.exhausted and (r.space_size, r.space_passing) == (8, 4)
    assert "stock VTA" in r.screened["examples"]["not_stock_vta"]


def test_stock_vta_option_is_the_space_constraint(tmp_path) -> None:
    from vtatune.store.identity import context

    p = tmp_path / "tiny.toml"
    from tests.cli.test_network_cli import _toml

    p.write_text(_toml(TINY))
    q = tmp_path / "tiny_stock.toml"
    q.write_text(_toml(TINY) + "[constraints]\nstock_vta = true\n")
    flag, file = nspace.load(p, stock_vta=True), nspace.load(q)
    assert flag.hw_space.constraints == file.hw_space.constraints
    assert flag.hw_space.constraints["stock_vta"] is True
    assert runner.study_identity(flag, context(flag.board, flag.hw_space.constraints)) == \
        runner.study_identity(file, context(file.board, file.hw_space.constraints))
    assert not nspace.load(p).stock_vta


def test_network_trials_are_designs_tuned_not_screened_ones(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'n.sqlite'}"
    sp = nspace.from_dict({**TINY, "hardware": CROWDED_HW,
                           "inner": {"trials": 4, "min_per_layer": 1}}, "crowded.toml")
    verdicts = {}
    for t in [{"LOG_BATCH": b, "LOG_BLOCK_IN": i, "LOG_BLOCK_OUT": o}
              for b in (0, 1, 2) for i in (3, 4, 5) for o in (3, 4, 5)]:
        verdicts[sp.hw_space.hardware(t).key] = screen(sp.hw_space, sp.hw_space.hardware(t))
    passing = sum(v.passed for v in verdicts.values())
    assert 3 <= passing < len(verdicts) / 2  # most designs are screened
    r = runner.run(sp, sampler="xgb", trials=3, study="c", db=db, workers=1, seed=0,
                   warm_start=False)
    trials = Store(db).network_trials("c")
    assert r.trials == len(trials) == 3 and not r.exhausted
    assert all(verdicts[t.hw_key].passed for t in trials)
    assert all(t.status not in ("hw_invalid", "no_fit") for t in trials)
    assert r.screened["designs"] >= 1
    assert set(r.screened["by_reason"]) <= {"hw_invalid", "no_fit"}


def test_the_area_budget_screens_network_designs(tmp_path) -> None:
    import itertools

    from vtatune.area import estimate

    db = f"sqlite:///{tmp_path / 'n.sqlite'}"
    board = boards.load("pynq-z1")
    base = nspace.from_dict(TINY, "tiny.toml")
    names = list(base.hw_choices)
    areas = sorted(estimate(base.hw_space.hardware(dict(zip(names, c, strict=True))),
                            board).area_mm2
                   for c in itertools.product(*base.hw_choices.values()))
    cap = (areas[3] + areas[4]) / 2  # half the designs are over it
    sp = nspace.from_dict({**TINY, "constraints": {"max_area_mm2": cap},
                           "inner": {"trials": 3, "min_per_layer": 1}}, "tiny.toml")
    r = runner.run(sp, sampler="random", trials=8, study="a", db=db, workers=1, seed=0,
                   warm_start=False)
    trials = Store(db).network_trials("a")
    assert trials and all(t.area_mm2 <= cap for t in trials)
    assert r.screened["by_reason"] == {"over_area": 4}
    assert r.trials == 4 and r.exhausted
