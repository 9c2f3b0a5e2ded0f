"""One accelerator for several networks (``networks.members``): loading the members, the
network-set file, the weighted objective and the per-network breakdown of a real search, and a
single network kept exactly as it was."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from tests.networks.tiny_space import OTHER, TINY, toml_text
from vtatune import studies
from vtatune.errors import ConfigError, StoreError, UserError
from vtatune.networks import members, runner
from vtatune.networks import space as nspace
from vtatune.store import Store

SHARED = "conv2d_n1_c16_h8_w8_o16_k3x3_p1_s1"  # TINY's a/a2 and OTHER's x


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("members")
    a, b = d / "tiny.toml", d / "other.toml"
    a.write_text(toml_text(TINY))
    b.write_text(toml_text(OTHER))
    return a, b


@pytest.fixture(scope="module")
def searched(files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[nspace.NetworkSpace, str]:
    """A 4-design search of TINY (weight 3) and OTHER (weight 1) on one accelerator."""
    sp = members.load_members([str(files[0]), str(files[1])], [3, 1])
    db = f"sqlite:///{tmp_path_factory.mktemp('mdb') / 'm.sqlite'}"
    runner.run(sp, sampler="random", trials=4, study="m", db=db, workers=1, seed=2,
               warm_start=False)
    return sp, db


def test_units_are_the_union_of_the_shapes_with_weighted_counts(files) -> None:
    sp = members.load_members([str(files[0]), str(files[1])], [3, 1])
    assert sp.multi and sp.network.name == "tiny+other"
    assert [la.name for la in sp.network.layers] == [
        "tiny.a", "tiny.b", "tiny.a2", "tiny.fc", "other.x", "other.y"]
    sigs = [u.signature for u in sp.units]
    assert len(sigs) == len(set(sigs)) == 4  # the shared 3x3 shape is one unit
    # a: 2 + a2: 1 in tiny (x3), x: 3 in other (x1)
    assert sp.unit_weights[SHARED] == 3 * (2 + 1) + 1 * 3
    assert sp.unit_weights["dense_m1_k16_n32"] == 2.0
    desc = sp.describe()
    assert [(m["network"]["name"], m["weight"]) for m in desc["networks"]] == [
        ("tiny", 3.0), ("other", 1.0)]
    assert desc["networks"][0]["network"] == nspace.load(files[0]).network.describe()


def test_one_network_is_the_study_it_was(files) -> None:
    """One member (with or without a weight) is the single-network space, identity, name."""
    from vtatune.store.identity import context

    alone = nspace.load(files[0])
    for sp in (members.load_members([str(files[0])]),
               members.load_members([str(files[0])], [2.5]),
               studies.network_search([str(files[0])]).space):
        assert not sp.multi and sp.members == ()
        assert json.dumps(sp.describe()) == json.dumps(alone.describe())
        ctx = context(sp.board, sp.hw_space.constraints)
        assert runner.study_identity(sp, ctx) == runner.study_identity(alone, ctx)
        assert runner.study_workload(sp) == "network:tiny"
    assert studies.network_search(str(files[0])).study == "network-tiny-xgb"


def test_default_study_names_differ(files) -> None:
    a, b = str(files[0]), str(files[1])
    names = {studies.network_search(a).study, studies.network_search(b).study,
             studies.network_search([a, b]).study,
             studies.network_search([a, b], weights="3,1").study,
             studies.network_search([b, a]).study}
    assert len(names) == 5
    assert studies.network_search([a, b], weights=[3, 1]).study == "network-tiny+other-w3_1-xgb"


@pytest.mark.parametrize("text", ["3", "3,1,1", "3,-1", "0,1", "nan,1", "1,inf", "a,1", "1e400,1",
                                  ""])
def test_bad_weights_are_one_line(files, text: str) -> None:
    with pytest.raises(UserError) as exc:
        studies.network_search([str(files[0]), str(files[1])], weights=text)
    assert "\n" not in str(exc.value) and "weight" in str(exc.value)


@pytest.mark.parametrize("weights", [[1.0, float("nan")], [1, 0], [True, 1], ["1", 1], [1]])
def test_bad_weights_from_python(files, weights) -> None:
    with pytest.raises(UserError):
        members.load_members([str(files[0]), str(files[1])], weights)


def test_networks_given_twice_or_disagreeing_are_refused(files, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="given twice"):
        members.load_members([str(files[0]), str(files[0])])
    other_hw = tmp_path / "other_hw.toml"
    other_hw.write_text(toml_text({**OTHER, "hardware": {"LOG_BLOCK_IN": [4]}}))
    with pytest.raises(ConfigError, match=r"different hardware spaces \(\[hardware\]\)"):
        members.load_members([str(files[0]), str(other_hw)])


def test_set_file(files, tmp_path: Path) -> None:
    s = tmp_path / "pair.toml"
    s.write_text(toml_text({
        "networks": {"members": [{"network": str(files[0]), "weight": 3},
                                 {"network": "other.toml"}]},
        "hardware": {"LOG_BLOCK_IN": [4], "LOG_BLOCK_OUT": [4], "LOG_WGT_BUFF_SIZE": [16]},
        "inner": {"trials": 9, "min_per_layer": 1}}))
    (tmp_path / "other.toml").write_text(toml_text(OTHER))  # relative to the set file
    assert members.is_set_file(s) and studies.network_file(str(s), None) == str(s)
    sp = studies.network_search(str(s)).space
    assert [(m.network.name, m.weight) for m in sp.networks] == [("tiny", 3.0), ("other", 1.0)]
    # the set file's hardware space and inner settings, not the members'
    assert sp.searched_hw == {} and sp.hw_choices["LOG_BLOCK_IN"] == (4,)
    assert (sp.inner.trials, sp.inner.min_per_layer) == (9, 1)
    # the same networks and weights from the command line: the members' hardware space
    cli = studies.network_search([str(files[0]), str(files[1])], weights="3,1").space
    assert cli.hw_choices["LOG_BLOCK_IN"] == (3, 4)


def test_a_bad_set_file_lists_every_problem(tmp_path: Path) -> None:
    s = tmp_path / "bad.toml"
    s.write_text(toml_text({
        "networks": {"members": [{"network": "resnet18", "weight": -1},
                                 {"net": "x"}, {"network": "mobilenet_v1", "weight": "3"}],
                     "extra": 1},
        "cooling": {"fans": 2}}))
    with pytest.raises(ConfigError) as exc:
        members.load_set(s)
    text = str(exc.value)
    assert "\n" not in text
    for part in ("unknown section ['cooling']", "[networks] unknown key 'extra'",
                 "member 1: weight -1", "member 2: unknown key 'net'",
                 "member 2: network None", "member 3: weight '3' must be a number"):
        assert part in text, text
    empty = tmp_path / "empty.toml"
    empty.write_text("[networks]\nmembers = []\n")
    with pytest.raises(ConfigError, match="non-empty list"):
        members.load_set(empty)


def test_the_objective_is_the_weighted_sum_from_the_stored_layers(searched) -> None:
    sp, db = searched
    store = Store(db)
    trials = store.network_trials("m")
    ok = [t for t in trials if t.status == "ok"]
    assert len(trials) == 4 and ok
    from vtatune.store.identity import context

    ctx = context(sp.board, sp.hw_space.constraints)
    for t in ok:
        assert t.networks is not None and [n.network for n in t.networks] == ["tiny", "other"]
        total = bound = 0.0
        for n, raw in zip(t.networks, (TINY, OTHER), strict=True):
            assert [la.name for la in n.layers] == [e["name"] for e in raw["network"]["layers"]]
            s = c = 0.0
            for la in n.layers:
                rec = store.lookup(la.key, ctx.key)  # the pick is a stored candidate
                assert rec.feasible and rec.seconds == la.seconds and rec.cycles == la.cycles
                assert la.count == next(e["count"] for e in raw["network"]["layers"]
                                        if e["name"] == la.name)
                s += la.count * la.seconds
                c += la.count * la.cycles
            assert n.seconds == pytest.approx(s, rel=1e-12) and n.cycles == c
            assert n.accelerator_seconds + n.host_seconds == pytest.approx(n.seconds)
            total += n.weight * s
            bound += n.weight * n.bound_cycles
        assert t.seconds == pytest.approx(total, rel=1e-12)
        assert t.seconds == pytest.approx(3 * t.networks[0].seconds + t.networks[1].seconds)
        assert t.bound_cycles == pytest.approx(bound) and t.bound_cycles <= t.cycles
        # the shared shape has one pick on the design, whichever network it is in
        picks = {la.key for n in t.networks for la in n.layers if la.workload == SHARED}
        assert len(picks) == 1
        assert len(t.layers) == 6 and {la.key for la in t.layers} == {
            la.key for n in t.networks for la in n.layers}


def test_a_shared_shape_is_tuned_once_per_design(searched) -> None:
    sp, db = searched
    store = Store(db)
    evals = store.network_evals("m")
    for t in store.network_trials("m"):
        mine = [e for e in evals if e.number == t.number]
        if t.status != "ok":
            continue
        keys = [e.candidate.key for e in mine]
        assert len(keys) == len(set(keys))  # no layer candidate evaluated twice on a design
        per_shape = Counter(e.candidate.workload for e in mine)
        assert set(per_shape) == {u.signature for u in sp.units}  # 4 units, not 6 layers
        # the shape's evaluations are counted once, in every layer of that shape
        for n in t.networks:
            for la in n.layers:
                assert la.trials == per_shape[la.workload]
        # the budget of the design, or every unit's minimum when that is more
        assert sum(per_shape.values()) == t.evaluated + t.cached == max(
            sp.inner.trials, sp.inner.min_per_layer * len(sp.units))


def test_stored_space_and_identity(searched) -> None:
    sp, db = searched
    info = Store(db).study("m")
    assert info.workload == "network:tiny+other" and info.is_network
    assert [(m["network"]["name"], m["weight"]) for m in info.space["networks"]] == [
        ("tiny", 3.0), ("other", 1.0)]
    assert info.identity["networks"] == [{"network": "tiny", "weight": 3.0},
                                         {"network": "other", "weight": 1.0}]


def test_a_continuation_with_other_weights_or_networks_is_refused(searched, files) -> None:
    sp, db = searched
    a, b = str(files[0]), str(files[1])
    runner.check_study(sp, "m", db)  # the same: continues
    for other in (members.load_members([a, b], [1, 1]), members.load_members([a, b], [3, 2]),
                  members.load_members([b, a], [1, 3])):
        with pytest.raises(StoreError) as exc:
            runner.check_study(other, "m", db)
        assert "\n" not in str(exc.value)
    with pytest.raises(StoreError):
        runner.check_study(nspace.load(a), "m", db)


def test_summary_rows_carry_each_network(searched) -> None:
    from vtatune.networks.summary import summarize

    _, db = searched
    store = Store(db)
    data = summarize(store.study("m"), store.network_trials("m"))
    assert data["networks"] == [{"network": "tiny", "weight": 3.0},
                                {"network": "other", "weight": 1.0}]
    for row in data["pareto"]:
        nets = row["networks"]
        assert [n["network"] for n in nets] == ["tiny", "other"]
        assert row["seconds"] == pytest.approx(sum(n["weight"] * n["seconds"] for n in nets))
        for n in nets:
            assert math.isclose(sum(la["share"] for la in n["layers"]), 1.0, rel_tol=1e-9)


def test_layer_names_that_clash_across_networks_are_refused(tmp_path: Path) -> None:
    """``a.b`` + layer ``c`` and ``a`` + layer ``b.c`` are both ``a.b.c`` in the union."""
    one = {**TINY, "network": {"name": "a.b", "layers": [
        {"name": "c", "kind": "dense", "shape": "1,32,16"}]}}
    two = {**TINY, "network": {"name": "a", "layers": [
        {"name": "b.c", "kind": "dense", "shape": "1,16,32"}]}}
    paths = []
    for i, raw in enumerate((one, two)):
        paths.append(tmp_path / f"n{i}.toml")
        paths[-1].write_text(toml_text(raw))
    with pytest.raises(ConfigError, match="'a.b.c' are the same in two networks"):
        members.load_members([str(p) for p in paths])


def test_joint_layer_budget_is_each_networks_per_shape_budget() -> None:
    """Without a set file's [inner], a design's layer budget gives every network's shapes the
    budget its own [inner] gives them: resnet18 and mobilenet_v1 share no shape (48 + 48);
    resnet34 shares shapes with resnet18, which bring no second budget."""
    r18, mb, r34 = (nspace.load(n) for n in ("resnet18", "mobilenet_v1", "resnet34"))
    assert not {u.signature for u in r18.units} & {u.signature for u in mb.units}
    joint = members.load_members(["resnet18", "mobilenet_v1"])
    assert joint.inner.trials == r18.inner.trials + mb.inner.trials
    assert joint.inner.min_per_layer == max(r18.inner.min_per_layer, mb.inner.min_per_layer)
    shared = {u.signature for u in r18.units} & {u.signature for u in r34.units}
    assert shared  # the basic blocks' 3x3 convolutions
    both = members.load_members(["resnet18", "resnet34"])
    new = [u for u in r34.units if u.signature not in shared]
    assert both.inner.trials == math.ceil(
        r18.inner.trials + r34.inner.trials * len(new) / len(r34.units) - 1e-9)
    assert both.inner.trials < r18.inner.trials + r34.inner.trials
    # --layer-trials is the budget as given
    assert members.load_members(["resnet18", "mobilenet_v1"], inner_trials=30).inner.trials == 30
