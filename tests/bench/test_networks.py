"""The network benchmark's exhaustive reference: derived optima equal brute force."""

from __future__ import annotations

from vtatune.bench import networks as bench
from vtatune.networks.space import from_dict
from vtatune.search.evaluate import evaluate
from vtatune.search.space import Candidate

RAW = {"network": {"name": "micro", "layers": [
    {"name": "fc", "kind": "dense", "shape": "1,64,48", "count": 2},
    {"name": "c", "kind": "conv2d", "shape": "1,16,8,8,16,3,3,1,1", "count": 1}]},
    "hardware": {"LOG_INP_BUFF_SIZE": [10, 13], "LOG_WGT_BUFF_SIZE": [12, 15],
                 "LOG_ACC_BUFF_SIZE": [15]}}


def test_reference_equals_brute_force_on_every_design(tmp_path) -> None:
    from vtatune import schedules
    from vtatune.hardware import boards

    sp = from_dict(RAW, "micro.toml")
    db = f"sqlite:///{tmp_path / 'ref.sqlite'}"
    ref = bench.build_reference(sp, db, workers=1)
    assert len(ref.maximal) == 1 and len(ref.designs) >= 3
    board = boards.load(sp.board)
    for key, d in ref.designs.items():
        hw = next(sp.hw_space.hardware(dict(zip(sp.hw_choices, combo, strict=True)))
                  for combo in _combos(sp) if sp.hw_space.hardware(
                      dict(zip(sp.hw_choices, combo, strict=True))).key == key)
        best = {}
        for u in sp.units:  # every candidate evaluated for real on this very design
            for k in schedules.knob_space(u.workload, hw):
                rec = evaluate(Candidate(u.workload, hw, dict(k)), board)
                derived = ref.derived[(key, u.signature, tuple(sorted(k.items())))]
                assert derived == (rec.cycles if rec.feasible else None), (key, k, rec.reason)
                if rec.feasible and (u.signature not in best or rec.seconds < best[u.signature]):
                    best[u.signature] = rec.seconds
        if len(best) == len(sp.units):
            assert d.seconds == sum(u.count * best[u.signature] for u in sp.units)
        else:
            assert d.seconds is None


def _combos(sp):
    import itertools

    return itertools.product(*sp.hw_choices.values())


def test_a_reference_copies_what_another_stored_reference_measured(tmp_path) -> None:
    sp = from_dict(RAW, "micro.toml")
    first = bench.build_reference(sp, f"sqlite:///{tmp_path / 'a.sqlite'}", workers=1)
    assert first.measured == first.evaluated and first.copied == 0
    again = bench.build_reference(sp, f"sqlite:///{tmp_path / 'a.sqlite'}", workers=1)
    assert again.measured == 0 and again.copied == 0  # all stored already
    other = bench.build_reference(sp, f"sqlite:///{tmp_path / 'b.sqlite'}", workers=1,
                                  reuse=[f"sqlite:///{tmp_path / 'a.sqlite'}"])
    # what the first holds in the same context with a deterministic outcome is copied (a
    # failed or timed-out candidate would be measured again)
    from vtatune.store import Store

    stored = Store(f"sqlite:///{tmp_path / 'a.sqlite'}").lookup_many(
        _candidate_keys(sp), bench._context(sp).key)
    assert other.copied == len(stored) > 0
    assert other.copied + other.measured == other.evaluated
    assert other.designs == first.designs and other.derived == first.derived


def _candidate_keys(sp):
    from vtatune import schedules
    from vtatune.search.space import Candidate

    ref_hw = [sp.hw_space.hardware(dict(zip(sp.hw_choices, combo, strict=True)))
              for combo in _combos(sp)]
    return [Candidate(u.workload, hw, dict(k)).key for hw in ref_hw for u in sp.units
            for k in schedules.knob_space(u.workload, hw)]


def test_every_zoo_quality_space_loads_with_its_layers(tmp_path) -> None:
    from vtatune.networks import space as nspace

    for layers, quick in ((bench.ZOO_QUALITY, False), (bench.ZOO_QUICK, True)):
        for net, names in layers.items():
            path = tmp_path / f"{net}-{quick}.toml"
            path.write_text(bench.zoo_space(net, names, quick))
            sp = nspace.load(path)
            assert [la.name for la in sp.network.layers] == list(names)
    # a quick zoo space measures each layer on the quick hardware space's one GEMM shape
    quick = nspace.load(tmp_path / "resnet50-True.toml")
    varied = {k for k, v in quick.hw_choices.items() if len(v) > 1}
    assert varied == {"LOG_INP_BUFF_SIZE", "LOG_WGT_BUFF_SIZE", "LOG_ACC_BUFF_SIZE"}


def test_the_two_network_row_is_a_figure_or_says_what_it_needs() -> None:
    import re

    (what, value), = bench.bench_multi_speed(trials=1)
    assert "`vtatune search resnet18 mobilenet_v1 --trials 1`" in what
    if value.startswith("needs multi-network search"):  # a vtatune without it: its own words
        assert "vtatune: error:" in value
    else:  # a real run: its time, the networks' best latencies from the front's entries
        assert re.match(r"\d+ s \(", value)
        assert "resnet18 " in value and "mobilenet_v1 " in value
