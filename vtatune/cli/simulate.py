"""``vtatune simulate``: compile a candidate, build its VTA program, time it, optionally run it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vtatune.cli import console
from vtatune.cli.options import (
    SEED_MAX,
    BoardOption,
    HwOption,
    JsonOption,
    KnobsOption,
    LayerOption,
    PassesOption,
    ShapeOption,
    WorkloadArg,
    int_in,
)
from vtatune.hardware.boards import DEFAULT_BOARD
from vtatune.workloads.base import DEFAULT_SHIFT

#: Largest epilogue shift: the accumulator is 32 bits wide.
MAX_SHIFT = 31


def simulate_cmd(
    workload: WorkloadArg = "conv2d",
    layer: LayerOption = None,
    shape: ShapeOption = None,
    hw: HwOption = "default",
    board: BoardOption = DEFAULT_BOARD,
    knobs: KnobsOption = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Run the functional simulator and compare with the numpy reference.",
    )] = False,
    inputs: Annotated[Path | None, typer.Option(
        "--inputs", help="IN.npz with int8 'data' and 'kernel' in the operator's plain layouts "
        "(conv2d: N,CIN,H,W and COUT,CIN,KH,KW; dense: M,K and N,K; see docs/guide/compile.md); "
        "default: random int8 from --seed.",
    )] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", help="Write the result (int8, plain layout: N,COUT,OH,OW or M,N) to OUT.npy.",
    )] = None,
    shift: Annotated[int, typer.Option(
        "--shift", callback=int_in(0, MAX_SHIFT),
        help="Epilogue: clip(acc >> SHIFT, 0, 127) as int8.",
    )] = DEFAULT_SHIFT,
    seed: Annotated[int, typer.Option("--seed", callback=int_in(0, SEED_MAX),
                                      help="Seed of the random inputs.")] = 0,
    passes: PassesOption = None,
    json_: JsonOption = False,
) -> None:
    """Simulate WORKLOAD on a VTA config: cycles, time at the board clock, bounds, efficiency.

    With --check, --inputs or --output the program also runs bit-exactly. Exit code 0 when the
    candidate is valid (and the check passes), 1 when it is invalid or the check fails, 2 on
    bad input (without --json an invalid candidate is bad input).

    Examples:

    \b
      vtatune simulate conv2d --layer C8 --hw default --check
      vtatune simulate conv2d --layer C2 --board ultra96 --json
    """
    from vtatune.cli.compile import load_passes, resolve_candidate
    from vtatune.errors import UserError

    wl, cfg, k = resolve_candidate(workload, layer, shape, hw, knobs)
    given = _read_inputs(inputs, wl) if inputs is not None else None
    user = load_passes(passes)

    from vtatune.compiler import compile_candidate
    from vtatune.hardware import boards, timing_profiles
    from vtatune.runtime import build_program, execute, program_counters, random_inputs
    from vtatune.simulator import bounds, simulate

    brd = boards.load(board)
    res = compile_candidate(wl, cfg, k, shift=shift, passes=user)
    head = {"workload": wl.signature, "layer": wl.name or None, "hw": cfg.key,
            "hw_name": cfg.name, "board": brd.name, "knobs": k, "shift": shift,
            "passes": res.passes or None}
    if not res.ok:
        if json_:
            console.print_json({"status": res.status, "reason": res.reason, **head,
                                "cycles": None, "seconds": None,
                                "accelerator_seconds": None, "host_seconds": None,
                                "counters": None, "energy": None,
                                "bounds": None, "efficiency": None, "check": None})
            raise typer.Exit(1)
        raise UserError(f"candidate is {res.status}: {res.reason}")

    program = build_program(res, wl, cfg)
    timing = simulate(program, brd)
    dom = timing_profiles.domain(brd.name, cfg, [wl.kind])
    bnd = bounds(wl.macs, wl.compulsory_bytes(cfg), cfg, brd)
    counters = program_counters(program)
    ok: bool | None = None
    if check or given is not None or output is not None:
        data, kernel = given if given is not None else random_inputs(wl, seed)
        run = execute(program, wl, data, kernel)
        counters = run.result.counters
        if check:
            ok = bool((run.output == wl.reference(data, kernel, shift)).all())
        if output is not None:
            _write_output(output, run.output)

    from vtatune.energy import estimate as estimate_energy

    energy = estimate_energy(program, timing.cycles, timing.seconds, brd)
    summary = {
        "status": res.status, **head, "macs": wl.macs,
        "cycles": timing.cycles, "seconds": timing.seconds,
        "accelerator_seconds": timing.accelerator_seconds, "host_seconds": timing.host_seconds,
        "clock_mhz": timing.clock_mhz, "timing_model": timing.model_version,
        "timing_domain": dom.as_dict(),
        "bounds": {"compute_cycles": bnd.compute_cycles, "memory_cycles": bnd.memory_cycles},
        "efficiency": bnd.efficiency(timing.cycles),
        "counters": counters.as_dict(), "check": ok,
        "instructions": program.counts(),
        "modules": {m: {"insns": t.insns, "busy_cycles": t.busy_cycles,
                        "token_stall_cycles": t.token_stall_cycles,
                        "dram_stall_cycles": t.dram_stall_cycles}
                    for m, t in timing.modules.items()},
        "dram_bytes": {"read": timing.dram_read_bytes, "write": timing.dram_write_bytes},
        "uop_image_bytes": program.uop_image_bytes,
        "energy": energy.as_dict(),
        "build": dict(program.meta["build"]), "compile_ms": res.compile_ms,
        "output": str(output) if output is not None else None,
    }
    if json_:
        console.print_json(summary)
    else:
        _report(wl, cfg, summary)
    if ok is False:
        raise typer.Exit(1)


def _read_inputs(path: Path, wl: Any) -> tuple[Any, Any]:
    """``data`` and ``kernel`` from an .npz, checked against the workload's plain shapes
    before they are read (no other member is touched)."""
    from vtatune.readers import read_npz

    shapes = wl.plain_shapes()
    arrays = read_npz(path, {name: (tuple(shapes[name]), "int8") for name in ("data", "kernel")},
                      what=f"--inputs (for {wl.signature})")
    return arrays["data"], arrays["kernel"]


def _write_output(path: Path, result: Any) -> None:
    import numpy as np

    from vtatune.errors import UserError
    from vtatune.escaping import shown

    try:
        with open(path, "wb") as f:
            np.save(f, result)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UserError(f"--output {shown(str(path))}: cannot write ({reason})") from None


def _report(wl: Any, cfg: Any, s: dict[str, Any]) -> None:
    from vtatune.cli.compile import candidate_line

    console.line(f"{candidate_line(wl, cfg)}, board {s['board']} at {s['clock_mhz']:g} MHz")
    console.line("knobs: " + " ".join(f"{k}={v}" for k, v in s["knobs"].items())
                 + f"; epilogue clip(acc >> {s['shift']}, 0, 127)")
    b = s["bounds"]
    console.line(f"time per call: {s['seconds'] * 1e3:.3f} ms = accelerator "
                 f"{s['accelerator_seconds'] * 1e3:.3f} ms ({s['cycles']:,} cycles) + host "
                 f"{s['host_seconds'] * 1e3:.3f} ms")
    from vtatune.hardware.timing_profiles import domain_line

    if domain_line(s["timing_domain"]):
        console.line(domain_line(s["timing_domain"]))
    console.line(f"bounds: compute {b['compute_cycles']:,.0f}, memory "
                 f"{b['memory_cycles']:,.0f} cycles; efficiency {100 * s['efficiency']:.1f}%")
    rows = [[m, t["insns"], t["busy_cycles"], t["token_stall_cycles"], t["dram_stall_cycles"]]
            for m, t in s["modules"].items()]
    console.table(None, ["module", "insns", "busy", "token stall", "dram stall"], rows)
    n = s["instructions"]
    console.line(f"instructions: {n['total']:,} (LOAD inp {n['LOAD_INP']:,}, wgt "
                 f"{n['LOAD_WGT']:,}, uop {n['LOAD_UOP']:,}; GEMM {n['GEMM']:,}; ALU "
                 f"{n['ALU']:,}; STORE {n['STORE']:,}; {s['build']['nops']:,} no-ops); "
                 f"built in {s['build']['build_ms']:.1f} ms")
    console.line("counters: " + ", ".join(f"{k} {v:,}" for k, v in s["counters"].items()))
    _report_energy(s["energy"])
    if s["check"] is not None:
        console.line("check: " + ("bit-exact vs numpy" if s["check"] else "MISMATCH vs numpy"))
    if s["output"]:
        console.line(f"output: {s['output']}")


def _report_energy(e: dict[str, Any]) -> None:
    from vtatune.formats import energy_range, power_range

    console.line(f"energy per call: accelerator {energy_range(e['accelerator_j'])}, board "
                 f"{energy_range(e['board_j'])}; average power: accelerator "
                 f"{power_range(e['accelerator_w'])}, board {power_range(e['board_w'])}")
    parts = sorted(e["components_j"].items(), key=lambda kv: -kv[1]["value"])
    console.line("energy by component: " + ", ".join(
        f"{name} {energy_range(f, ranged=False)}" for name, f in parts if f["value"] > 0))
    note = e["note"]
    if e["unsourced_constants"]:
        note += "; unsourced constants: " + ", ".join(e["unsourced_constants"])
    console.line(f"energy: {note}")


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate_cmd)
