"""The runtime benchmark measures C2 and reports bit-exact results."""

from __future__ import annotations

import vtatune.bench.runtime as bench


def test_bench_simulator_rows(monkeypatch, capsys) -> None:
    from vtatune import schedules
    from vtatune.hardware import config
    from vtatune.workloads import RESNET18

    # only the suggested point, twice (keeps the test to a few seconds)
    monkeypatch.setattr(bench, "GOOD_CANDIDATES", ())
    monkeypatch.setattr(bench, "FINE", dict(schedules.suggest(RESNET18["C2"], config.default())))
    rows = bench.bench_simulator()
    assert len(rows) == 8 and all(isinstance(a, str) and isinstance(b, str) for a, b in rows)
    assert "bit-exact True" in rows[0][1] and "insn/s" in rows[1][1]
    bench.main()
    out = capsys.readouterr().out
    assert out.startswith("| figure | value |") and out.count("\n") == 10
