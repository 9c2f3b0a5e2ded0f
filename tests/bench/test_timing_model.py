"""The timing-model bench part: its rows cover every record and every shipped profile."""

from __future__ import annotations

import json

from vtatune.bench.timing_model import bench_timing
from vtatune.simulator.timing import timing_dir


def test_quick_rows_cover_every_record_and_profile() -> None:
    rows = dict(bench_timing(quick=True))
    raw = json.loads((timing_dir() / "pynq-z1.json").read_text())
    for name in ("leave-one-out", "leave-one-network-out", "leave-one-design-out",
                 "leave-one-build-out"):
        key = next(k for k in rows if f", {name} (" in k)
        assert "over all 31 records" in key and "%" in rows[key]
    for prof in raw["profiles"]:
        spec = f"pynq-z1@{prof}" + (" (default)" if prof == raw["default_profile"] else "")
        assert f"timing profile {spec} as shipped: median / worst |error| over all 31 " \
               "records" in " ".join(rows)
        ms = rows[f"timing profile {spec}: `simulate conv2d --shape 1,32,112,112,64,1,1,0,1`"]
        assert 1.0 < float(ms.split()[0]) < 100.0  # ms per call of a 118 M-MAC layer
    constants = next(v for k, v in rows.items() if k.startswith("timing model constants"))
    assert "held at prior" in constants and "x/÷" in constants
