"""Fixtures of the store tests: a fresh database per test on SQLite and on PostgreSQL (a real
server the test session starts itself: ``pg_server`` in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vtatune.store import CandidateRecord

HW = {"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0,
      "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15,
      "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}
HW_KEY = "_".join(str(v) for v in HW.values())
WORKLOAD = "conv2d:1x64x56x56-64x3x3-p1s1"


def record(i: int, workload: str = WORKLOAD, **kw: Any) -> CandidateRecord:
    """A plausible candidate record number ``i`` (feasible unless ``status`` says otherwise)."""
    knobs = {"tile_h": 1 + i % 7, "tile_co": 1 + i // 7, "oc_nthread": 1}
    key = f"{workload}|{HW_KEY}|" + ",".join(f"{k}={v}" for k, v in sorted(knobs.items()))
    ok = kw.get("status", "ok") == "ok"
    values: dict[str, Any] = dict(
        key=key, workload=workload, hw_key=HW_KEY, hw=dict(HW), hw_name="1x16x16-i32w256a128u32",
        knobs=knobs, status="ok", reason="",
        cycles=100_000 + 37 * i if ok else None, seconds=(100_000 + 37 * i) / 100e6 if ok else None,
        counters={"gemm": 451_584, "load_inp": 12 + i}, bounds={"compute_cycles": 90_000,
                                                               "memory_cycles": 40_000},
        efficiency=0.9 if ok else None, area_mm2=1.5 + (i % 5) / 10 if ok else None,
        resources={"lut": 23_000.0, "ff": 11_000.0, "bram": 116.0, "uram": 0.0, "dsp": 0.0,
                   "fits": True, "over": []},
        compile_ms=12.5, sim_ms=3.25)
    values.update(kw)
    return CandidateRecord(**values)


@pytest.fixture
def make_record() -> Callable[..., CandidateRecord]:
    return record


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database URL on each backend (PostgreSQL: the session's server)."""
    if request.param == "postgresql":
        return request.getfixturevalue("pg_url")
    return f"sqlite:///{tmp_path / 'db' / 'vtatune.sqlite'}"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'vtatune.sqlite'}"
