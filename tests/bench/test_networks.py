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
