"""The simulator benchmark runs and checks its own result."""

from __future__ import annotations

from vtatune.bench.simulator import bench, main
from vtatune.hardware.config import default
from vtatune.program.examples import DenseShape


def test_bench_small_program(capsys) -> None:
    r = bench(default(), DenseShape(8, 64, 64, 2, 2, 2, threads=2), "ultra96")
    # VTA's gemm_counter counts no accumulator resets
    assert r.bit_exact and r.insns > 0 and r.cycles > 0 and r.gemm_ops == 8 * 4 * 4
    assert r.functional_s > 0 and r.timing_s > 0


def test_bench_main_prints_one_line_per_shape(capsys, monkeypatch) -> None:
    import vtatune.bench.simulator as mod

    monkeypatch.setattr(mod, "SHAPES", (DenseShape(4, 32, 32, 2, 1, 1),))
    main(["1x8x8", "de10-nano"])
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "bit-exact True" in out and "de10-nano" in out
