"""The search benchmark's figure of VTA's DMA rules (``bench.search.refused_share``)."""

from __future__ import annotations

import itertools
import re

from vtatune import schedules
from vtatune.bench.search import refused_share, vta_refusals
from vtatune.hardware import config
from vtatune.store.records import CandidateRecord
from vtatune.workloads import RESNET18


def test_refused_share_counts_at_least_every_padded_tile_over_several_channel_tiles() -> None:
    _, text = refused_share()
    refused, total = (int(x.replace(",", "")) for x in re.findall(r"[\d,]+", text)[:2])
    # independent lower bound: C8 pads its input (pad 1), so VTA refuses every tile_ci > 1
    # ("Do not support pad on the innermost block"), whatever the other knobs
    ks = schedules.knob_space(RESNET18["C8"], config.default())
    threads_ok = 0
    for combo in itertools.product(*ks.axes.values()):
        k = dict(zip(ks.names, combo, strict=True))
        if k["tile_ci"] > 1 and not any(
                w in (ks.constraint(k) or "") for w in ("needs whole tiles", "does not divide")):
            threads_ok += 1
    assert threads_ok <= refused < total


def test_vta_refusals_reads_screened_proposals_and_refused_trials() -> None:
    rec = CandidateRecord(key="k", workload="w", hw_key="h", hw={}, hw_name="x", knobs={},
                          status="invalid", reason="VTA's compiler refuses the copy: Do not "
                          "support pad on the innermost block (_inject_copy)")
    other = CandidateRecord(key="k2", workload="w", hw_key="h", hw={}, hw_name="x", knobs={},
                            status="invalid", reason="acc buffer needs 1 bytes")
    d = {"screened": {"by_reason": {"vta_refuses": 3, "no_fit": 2}}}
    assert vta_refusals(d, [rec, other]) == (3, 1)
