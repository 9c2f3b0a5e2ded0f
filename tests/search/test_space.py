"""Search spaces: TOML validation, the log-position parameterization, realize/params_of."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vtatune.errors import ConfigError
from vtatune.hardware import config
from vtatune.passes.vta_copy_rules import REFUSED
from vtatune.search import space as spaces
from vtatune.search.space import log_position, nearest_log


@pytest.mark.parametrize("name, joint, objective", [
    ("conv2d", True, "area-latency"), ("conv2d_schedule", False, "latency"),
    ("dense", True, "area-latency")])
def test_shipped_spaces_load(name: str, joint: bool, objective: str) -> None:
    sp = spaces.load(name)
    assert sp.joint is joint and sp.objective == objective
    kinds = {k: v[0] for k, v in sp.param_space().items()}
    assert all(v == "float" for k, v in kinds.items() if k.startswith("u_"))
    if name.startswith("conv2d"):
        assert "u_tile_b" not in kinds  # batch-1 layers have nothing to tile in batch


def test_cli_overrides_make_a_schedule_only_space() -> None:
    sp = spaces.load("conv2d", hw="1x32x32", layer="C2", board="ultra96", objective="latency")
    assert not sp.joint and sp.base_hw.block_in == 32 and sp.workload.name == "C2"
    assert sp.board == "ultra96" and sp.objective == "latency"


def test_malformed_space_lists_every_problem(tmp_path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text('[workload]\nkind = "conv2d"\nlayer = "C42"\n[hardware]\nLOG_BLOK = [4]\n'
                 'LOG_INP_BUFF_SIZE = ["big"]\n[schedule]\nknobs = ["tile_q"]\n'
                 '[objective]\nkind = "speed"\n[constraints]\nmax_area_mm2 = -1\n[extra]\n')
    with pytest.raises(ConfigError) as err:
        spaces.load(p)
    text = str(err.value)
    for fragment in ("unknown section [extra]", "unknown layer 'C42'", "LOG_BLOK",
                     "LOG_INP_BUFF_SIZE must be", "objective 'speed'", "max_area_mm2"):
        assert fragment in text
    with pytest.raises(ConfigError, match="not valid TOML"):
        (tmp_path / "x.toml").write_text("[study\n")
        spaces.load(tmp_path / "x.toml")
    with pytest.raises(ConfigError, match="unknown board"):
        spaces.load("conv2d", board="vcu9000")


def test_nearest_log_and_inverse() -> None:
    values = (1, 2, 4, 7, 8, 14, 28, 56)
    assert nearest_log(values, 0.0) == 1 and nearest_log(values, 1.0) == 56
    assert nearest_log(values, 0.25) == 2  # 56 ** 0.25 = 2.7
    assert nearest_log((1, 2, 4, 8, 16), 0.75, unit=16) == 4  # 256 ** 0.75 = 64 = 4 x 16
    for v in values:
        assert nearest_log(values, log_position(values, v)) == v


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 600), min_size=1, max_size=30, unique=True),
       st.one_of(st.floats(-0.5, 1.5), st.sampled_from([0.0, 0.5, 1.0, math.nan])),
       st.sampled_from([1, 3, 16]), st.booleans())
def test_nearest_log_is_the_nearest_of_all(values: list[int], u: float, unit: int,
                                           ordered: bool) -> None:
    """The search over the sorted logs picks what looking at every value picks: the nearest
    in log scale, the smaller of two equally near (unsorted axes: every value is looked at)."""
    axis = tuple(sorted(values)) if ordered else tuple(values)
    top = axis[-1] * unit
    target = math.log(top) * min(max(u, 0.0), 1.0) if top > 1 else 0.0
    want = min(axis, key=lambda v: (abs(math.log(v * unit) - target), v))
    assert nearest_log(axis, u, unit) == want
    assert nearest_log(list(axis), u, unit) == want  # an axis given as a list
    for v in axis if ordered else ():
        assert nearest_log(axis, log_position(axis, v, unit), unit) == v


def test_a_position_means_the_same_work_on_other_hardware() -> None:
    sp = spaces.load("conv2d", layer="C8")
    params = {"LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_INP_BUFF_SIZE": 15,
              "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17, "LOG_UOP_BUFF_SIZE": 15,
              "u_tile_h": 0.5, "u_tile_w": 1.0, "u_tile_ci": 0.0, "u_tile_co": 0.75,
              "h_nthread": 1, "oc_nthread": 2}
    a, _ = sp.realize(params)
    b, _ = sp.realize({**params, "LOG_BLOCK_OUT": 5, "LOG_ACC_BUFF_SIZE": 18})
    assert a is not None and b is not None
    # u = 0.75 of 256 channels is 64 channels per tile on both: 4 tiles of 16, 2 tiles of 32
    assert a.knobs["tile_co"] * 16 == b.knobs["tile_co"] * 32 == 64


def test_realize_and_params_of_round_trip() -> None:
    import random

    sp = spaces.load("conv2d")
    rng = random.Random(0)
    hw_invalid = 0
    for _ in range(60):
        p = {k: rng.choice(v) if kind == "categorical" else rng.random()
             for k, (kind, v) in sp.param_space().items()}
        cand, why = sp.realize(p)
        if cand is None:
            assert why.startswith("hardware:")
            assert config.problems_of(sp.hardware(p))
            hw_invalid += 1
            continue
        assert sp.realize(sp.params_of(cand))[0] == cand
    assert 0 < hw_invalid < 60


def test_two_threads_fall_back_to_one_when_they_cannot_split() -> None:
    sp = spaces.load("conv2d_schedule", layer="C11")  # 7x7 output
    cand, _ = sp.realize({"u_tile_h": 1.0, "u_tile_w": 1.0, "u_tile_ci": 0.0,
                          "u_tile_co": 1.0, "h_nthread": 2, "oc_nthread": 2})
    assert cand is not None and cand.knobs["h_nthread"] == 1 and cand.knobs["oc_nthread"] == 1


@pytest.mark.parametrize("name", ["conv2d", "dense"])
def test_realize_uses_the_suggestion_exactly_for_knobs_it_is_not_given(name: str) -> None:
    """realize skips the (costly) suggestion when every knob is given: the candidate is the
    one "start from the suggestion, then apply the parameters" gives, knob order included."""
    import random

    from vtatune import schedules
    from vtatune.search.space import U_PREFIX

    sp = spaces.load(name)
    rng = random.Random(0)
    kinds = sp.param_space()
    compared = 0
    for i in range(60):
        params = {k: rng.choice(v) if kind == "categorical" else rng.random()
                  for k, (kind, v) in kinds.items()}
        if i % 3 == 0:
            params.pop(rng.choice([k for k in params if k not in sp.hw_choices]))
        cand, _ = sp.realize(params)
        if cand is None:
            continue
        ks = schedules.knob_space(sp.workload, cand.hw)
        want = dict(schedules.suggest(sp.workload, cand.hw))
        for knob in sp.knobs:
            if knob in sp.thread_knobs:
                want[knob] = int(params.get(knob, want[knob]))
            elif U_PREFIX + knob in params:
                want[knob] = nearest_log(ks.axes[knob], float(params[U_PREFIX + knob]),
                                         ks.elements[knob])
        for knob in sp.thread_knobs:
            why = ks.problem(want) if knob in want and want[knob] > 1 else None
            if why and REFUSED not in why:
                want[knob] = 1
        if ks.problem(want):  # VTA's compiler refuses it: realize took the nearest it builds
            assert REFUSED in ks.problem(want) and ks.problem(cand.knobs) is None
            continue
        assert list(cand.knobs.items()) == list(want.items())
        compared += 1
    assert compared >= 20


@pytest.mark.parametrize("kind", ["conv2d", "dense", "conv2d_transpose", "group_conv2d"])
def test_every_operator_realizes_in_the_joint_space(kind: str) -> None:
    """An operator without a space file of its own searches conv2d's hardware choices."""
    import numpy as np

    from vtatune import schedules

    sp = spaces.load("conv2d", workload=kind)
    assert sp.workload.kind == kind
    rng = np.random.default_rng(0)
    realized = 0
    for _ in range(40):
        params = {k: (v[int(rng.integers(len(v)))] if kind_ == "categorical" else rng.random())
                  for k, (kind_, v) in sp.param_space().items()}
        cand, _ = sp.realize(params)
        if cand is None:
            continue
        realized += 1
        assert schedules.knob_space(sp.workload, cand.hw).problem(cand.knobs) is None
        assert sp.realize(sp.params_of(cand))[0] == cand
    assert realized > 10


def test_stock_vta_constraint_keeps_to_designs_stock_vta_builds(tmp_path) -> None:
    p = tmp_path / "stock.toml"
    p.write_text('[workload]\nkind = "conv2d"\nlayer = "C8"\n[hardware]\nLOG_BLOCK_IN = [4, 5]\n'
                 'LOG_BLOCK_OUT = [4]\n[constraints]\nstock_vta = true\n')
    sp = spaces.load(p)
    assert sp.stock_vta and sp.describe()["stock_vta"] is True
    square = {"LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4}
    cand, why = sp.realize(square)
    assert cand is not None and why == ""
    cand, why = sp.realize({"LOG_BLOCK_IN": 5, "LOG_BLOCK_OUT": 4})
    assert cand is None and "not stock VTA: BLOCK_IN 32 != BLOCK_OUT 16" in why
    plain = spaces.load(p.write_text(p.read_text().replace("true", "false")) and p)
    assert plain.realize({"LOG_BLOCK_IN": 5, "LOG_BLOCK_OUT": 4})[0] is not None
    (tmp_path / "bad.toml").write_text('[workload]\nkind = "conv2d"\n[constraints]\n'
                                       'stock_vta = "yes"\n')
    with pytest.raises(ConfigError, match="stock_vta must be true or false"):
        spaces.load(tmp_path / "bad.toml")


def test_latency_objective_end_to_end_by_default_accelerator_on_request(tmp_path) -> None:
    p = tmp_path / "lat.toml"
    p.write_text('[workload]\nkind = "conv2d"\nlayer = "C8"\n')
    assert spaces.load(p).latency == "end-to-end"
    assert spaces.load(p, latency="accelerator").describe()["latency"] == "accelerator"
    p.write_text(p.read_text() + '[objective]\nlatency = "accelerator"\n')
    assert spaces.load(p).latency == "accelerator"
    p.write_text(p.read_text().replace('"accelerator"', '"wall"'))
    with pytest.raises(ConfigError, match="latency 'wall' is not one of end-to-end, accel"):
        spaces.load(p)


def test_board_with_a_timing_profile() -> None:
    sp = spaces.load("conv2d", board="pynq-z1@2019-07")
    assert sp.board == "pynq-z1@2019-07"
    for bad, message in (("pynq-z1@nope", "timing profile 'nope' is not here"),
                         ("pynq-z1@", "is not a profile name")):
        with pytest.raises(ConfigError, match=message):
            spaces.load("conv2d", board=bad)


def _dense_space(tmp_path, hardware: str) -> spaces.SearchSpace:
    p = tmp_path / "block.toml"
    p.write_text(f'[workload]\nkind = "dense"\nshape = "16,64,64"\n[hardware]\n{hardware}\n')
    return spaces.load(p)


def test_log_block_fixed_is_both_blocks(tmp_path) -> None:
    # VTA's own vta_config.json key: LOG_BLOCK = 3 is BLOCK_IN = BLOCK_OUT = 8
    sp = _dense_space(tmp_path, "LOG_BLOCK = 3\nLOG_INP_BUFF_SIZE = [14, 15]")
    same = _dense_space(tmp_path, "LOG_BLOCK_IN = 3\nLOG_BLOCK_OUT = 3\n"
                                  "LOG_INP_BUFF_SIZE = [14, 15]")
    assert sp.hw_choices == same.hw_choices and list(sp.hw_choices) == list(config.LOG_KEYS)
    assert sp.describe()["hardware"] == same.describe()["hardware"]
    hw = sp.hardware({"LOG_INP_BUFF_SIZE": 14})
    assert (hw.block_in, hw.block_out) == (8, 8)


def test_log_block_searched_gives_square_designs_only(tmp_path) -> None:
    from vtatune.search.enumeration import candidates

    sp = _dense_space(tmp_path, "LOG_BLOCK = [3, 4, 5]")
    # one sampler parameter for the pair, BLOCK_OUT follows it
    assert sp.searched_hw == {"LOG_BLOCK_IN": (3, 4, 5)}
    assert "LOG_BLOCK_OUT" not in sp.param_space()
    found = candidates(sp)
    shapes = {(h.block_in, h.block_out) for h in (sp.hardware(p) for _, p in found)}
    assert shapes == {(8, 8), (16, 16), (32, 32)}  # 8x8 with these buffers: hw_invalid
    cands = [sp.realize(params)[0] for _, params in found]
    for c in [c for c in cands if c is not None][::7]:
        again, why = sp.realize(sp.params_of(c))
        assert why == "" and again is not None and again.key == c.key
    from dataclasses import replace

    odd = next(c for c in cands if c is not None)
    odd = spaces.Candidate(odd.workload, replace(odd.hw, log_block_out=odd.hw.log_block_in + 1),
                           odd.knobs)
    with pytest.raises(KeyError):  # not a design of this space (warm starts skip it)
        sp.params_of(odd)


@pytest.mark.parametrize(("hardware", "needle"), [
    ("LOG_BLOCK = [4]\nLOG_BLOCK_IN = [4]", "either LOG_BLOCK or LOG_BLOCK_IN/LOG_BLOCK_OUT"),
    ("LOG_BLOCK = [0, 4]", "LOG_BLOCK values 0 are outside [1, 7]"),
    ('LOG_BLOCK = "4"', "LOG_BLOCK must be an integer"),
])
def test_log_block_mistakes_are_named(tmp_path, hardware: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        _dense_space(tmp_path, hardware)


def test_a_search_of_a_log_block_space_stores_square_designs(tmp_path) -> None:
    from vtatune.search import runner
    from vtatune.store import Store

    sp = _dense_space(tmp_path, "LOG_BLOCK = [4, 5]\nLOG_WGT_BUFF_SIZE = [16, 18]")
    db = f"sqlite:///{tmp_path / 'b.sqlite'}"
    runner.run(sp, sampler="xgb", trials=6, study="block", db=db, workers=1, seed=0)
    trials = Store(db).trials("block")
    assert len(trials) == 6
    blocks = {(t.candidate.hw["LOG_BLOCK_IN"], t.candidate.hw["LOG_BLOCK_OUT"]) for t in trials}
    assert blocks <= {(4, 4), (5, 5)}


def test_an_operators_space_file_searches_its_default_workload() -> None:
    # `search dense` and `compile dense` name one workload: the operator's default
    from vtatune.search.space import spaces_dir
    from vtatune.workloads import registry

    checked = 0
    for kind in registry.kinds():
        if (spaces_dir() / f"{kind}.toml").is_file():
            sp = spaces.load(kind)
            assert sp.workload.signature == registry.parse(kind).signature, kind
            checked += 1
    assert checked >= 2  # conv2d and dense at least
