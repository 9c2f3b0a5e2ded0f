"""compile_host: the host loop nest as Python; kernels evaluated once per free-variable key."""

from __future__ import annotations

from conftest import TUTORIAL, build, hw_named

from vtatune.compiler import compile_candidate
from vtatune.program import Program
from vtatune.runtime import build_program, compile_host, execute, random_inputs
from vtatune.workloads import Dense, resnet18_layer


def test_dense_host_program_names_regions_and_runtime_calls() -> None:
    wl, hw = Dense(16, 64, 32), hw_named("default")
    res = compile_candidate(wl, hw, {"tile_b": 16, "tile_ci": 2, "tile_co": 1, "oc_nthread": 2})
    assert res.ok
    host = compile_host(res.module["main"])
    assert set(host.regions) == {"data", "kernel", "res"}
    for call in ("_load('data'", "_load('kernel'", "_store(", "_push(", "_pop(", "_task(0",
                 "_sync()"):
        assert call in host.source
    assert host.kernels and all(k.source.startswith(f"def _kernel{k.index}(")
                                for k in host.kernels)


def test_tutorial_kernels_depend_only_on_the_virtual_thread() -> None:
    wl, hw = resnet18_layer("C8"), hw_named("default")
    program = build(wl, hw, TUTORIAL)
    stats = program.meta["build"]
    # 80 tasks, but each scope's kernel is evaluated once per virtual thread at most
    assert stats["tasks"] == 80
    assert stats["kernel_evaluations"] <= 2 * 5
    assert stats["insns"] == len(program.insns)
    assert program.meta["knobs"] == TUTORIAL and program.meta["workload"] == wl.signature
    # every field encodes, and the program survives program.bin
    assert program.check() == []
    back = Program.from_bytes(hw, program.to_bytes())
    assert back == program


def test_program_bin_round_trip_runs_identically() -> None:
    wl, hw = Dense(5, 40, 36), hw_named("2x16x16")
    res = compile_candidate(wl, hw, {"tile_b": 1, "tile_ci": 3, "tile_co": 1, "oc_nthread": 1})
    program = build_program(res, wl, hw)
    data, kernel = random_inputs(wl, 3)
    a = execute(program, wl, data, kernel)
    b = execute(Program.from_bytes(hw, program.to_bytes()), wl, data, kernel)
    assert (a.output == b.output).all() and a.result.counters == b.result.counters
