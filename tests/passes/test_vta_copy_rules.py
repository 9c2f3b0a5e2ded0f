"""VTA's DMA rules, pinned by VTA's own compiler's answers.

``data/vta_oracle_conv2d.json`` holds, for 51 (ResNet-18 / MobileNet layer, knobs) cases, what
VTA's compiler (TVM 0.19 + VTA's Python package: its ``conv2d_packed.vta`` template built by
``vta.build``) answered: "OK" or its exact error. It was produced by
``/tmp/oldtvm/bin/python tests/passes/vta_oracle_cases.py tests/passes/data/vta_oracle_conv2d.json``
(the oracle of /work/shared/vta-oracle). Both vtatune's lowering (``passes.inject_dma``) and
the schedule space's cheap screen (``Workload.vta_copy_problem``) must give the same answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtatune.compiler import compile_candidate
from vtatune.hardware import config
from vtatune.passes.vta_copy_rules import REFUSED, Copy, CopyRefused, fold_buffer_dim
from vtatune.workloads import Conv2d

ORACLE = json.loads((Path(__file__).parent / "data" / "vta_oracle_conv2d.json").read_text())
CASES = ORACLE["cases"]
#: VTA's own refusals of a DMA copy (the other errors are its SRAM bound).
DMA_ERRORS = ("Do not support pad", "cannot detect 2d pattern", "Cannot prove compact",
              "need to have block", "Limitation of 2D pad load")


def _vta_message(answer: str) -> str:
    """VTA's message without the exception type (``ValueError: ...``)."""
    return answer.split(": ", 1)[1]


def _case(c: dict) -> tuple[Conv2d, dict[str, int]]:
    h, w, cin, cout, k, pad, s = c["shape"]
    return (Conv2d(1, cin, h, w, cout, k, k, pad, s),
            {"tile_b": 1, **c["knobs"], "h_nthread": 1, "oc_nthread": 1})


def test_the_cases_cover_accepts_and_every_kind_of_refusal() -> None:
    answers = [c["vta"] for c in CASES]
    assert len(answers) >= 20
    assert sum(a == "OK" for a in answers) >= 10
    assert any("pad on the innermost block" in a for a in answers)
    assert any("local.inp_buffer]: cannot detect 2d pattern" in a for a in answers)
    assert any("local.acc_buffer]: cannot detect 2d pattern" in a for a in answers)
    shapes = {tuple(c["shape"]) for c in CASES}
    assert {s[4] for s in shapes} == {1, 3} and {s[6] for s in shapes} == {1, 2}


@pytest.mark.parametrize("case", CASES, ids=lambda c: "{}-{}".format(
    c["layer"], "-".join(str(v) for v in c["knobs"].values())))
def test_vtatune_accepts_and_refuses_as_vta_does(case: dict) -> None:
    wl, knobs = _case(case)
    hw = config.load("default")
    answer = case["vta"]
    screened = wl.vta_copy_problem(hw, knobs)
    r = compile_candidate(wl, hw, knobs)
    if answer == "OK":
        assert screened is None
        assert r.status == "valid", r.reason
    elif any(e in answer for e in DMA_ERRORS):
        message = _vta_message(answer)
        assert screened is not None and message in screened
        assert r.status == "invalid" and message in r.reason and REFUSED in r.reason
    else:  # VTA's SRAM bound ("Allocation exceed bound of memory tag"): refused either way
        assert "Allocation exceed bound" in answer
        assert r.status == "invalid"


def test_fold_merges_contiguous_dimensions_as_vta() -> None:
    # a full-width input tile over 4 channel tiles: one contiguous run above the block
    assert fold_buffer_dim([4, 14, 14, 16], [3136, 224, 16, 1], "inp", 16) == (
        [56 * 14, 16], [16, 1])
    # part of the width: rows, then channel tiles, stay apart
    assert fold_buffer_dim([4, 7, 7, 16], [3136, 224, 16, 1], "inp", 16) == (
        [4, 7, 7, 16], [3136, 224, 16, 1])
    # a single column: VTA adds a unit dimension of stride elem_block
    assert fold_buffer_dim([3, 16], [896, 1], "inp", 16) == ([3, 1, 16], [896, 16, 1])


def test_a_padded_dimension_without_a_loop_cannot_be_matched() -> None:
    c = Copy("local.inp_buffer", True, (1, 1, 5, 16), (80, 80, 16, 1), 16,
             (False, True, True, False))
    with pytest.raises(CopyRefused, match="Cannot match copy pattern"):
        c.pattern()
