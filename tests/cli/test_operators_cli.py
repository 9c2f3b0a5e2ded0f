"""vtatune operators: every registered operator with its shape, layers and knobs."""

from __future__ import annotations

import json

from vtatune.cli.main import main
from vtatune.workloads import registry


def test_operators_json_lists_every_registered_operator(capsys) -> None:
    assert main(["operators", "--json"]) == 0
    ops = {o["kind"]: o for o in json.loads(capsys.readouterr().out)["operators"]}
    assert set(ops) == set(registry.kinds())
    conv = ops["conv2d"]
    assert conv["shape"] == "N,CIN,H,W,COUT,KH,KW,PAD,STRIDE" and "C8" in conv["layers"]
    roles = {k["name"]: (k["role"], k["unit"]) for k in conv["knobs"]}
    assert roles["tile_ci"] == ("reduction", "BLOCK_IN tiles")
    assert roles["h_nthread"][0] == "thread" and roles["tile_h"] == ("spatial", "output rows")


def test_operators_table(capsys) -> None:
    assert main(["operators"]) == 0
    out = capsys.readouterr().out
    assert "M,K,N" in out and "oc_nthread" in out
