"""``vtatune compile``: compile one candidate and report its status, SRAM use and operations."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vtatune.cli import console
from vtatune.cli.options import (
    HwOption,
    JsonOption,
    KnobsOption,
    LayerOption,
    PassesOption,
    ShapeOption,
    WorkloadArg,
)
from vtatune.hardware.boards import DEFAULT_BOARD

PRINT_CHOICES = ("tir", "scheduled")


def compile_cmd(
    workload: WorkloadArg = "conv2d",
    layer: LayerOption = None,
    shape: ShapeOption = None,
    hw: HwOption = "default",
    knobs: KnobsOption = None,
    print_: Annotated[str | None, typer.Option(
        "--print", help="Also print the IR: 'tir' (VTA-level) or 'scheduled' (before lowering).",
    )] = None,
    emit: Annotated[Path | None, typer.Option(
        "--emit", help="Write the candidate's program.bin, vta_config.json, schedule.json, "
        "resources.json and manifest.json into this folder (a bundle verify-export checks).",
    )] = None,
    board: Annotated[str, typer.Option(
        "--board", help="With --emit: the board the program is timed on and fitted to, whose "
        "VTA target goes into vta_config.json.")] = DEFAULT_BOARD,
    passes: PassesOption = None,
    list_phases: Annotated[bool, typer.Option(
        "--list-phases", help="List the phases user passes can run at, and exit.")] = False,
    json_: JsonOption = False,
) -> None:
    """Compile WORKLOAD on a VTA config through the schedule template and VTA passes.

    Exit code 0 when the candidate is valid, 1 when it is invalid or failed, 2 on bad input.

    Examples:

    \b
      vtatune compile conv2d --layer C8 --hw default --knobs tile_h=7,tile_co=8
      vtatune compile dense --shape 16,512,512 --print scheduled
    """
    from vtatune.errors import UserError

    if list_phases:
        _list_phases(json_)
        return
    if print_ is not None and print_ not in PRINT_CHOICES:
        from vtatune.escaping import shown

        raise UserError(f"--print takes one of {', '.join(PRINT_CHOICES)}, got {shown(print_)}")
    wl, cfg, k = resolve_candidate(workload, layer, shape, hw, knobs)
    if emit is not None and passes is not None:
        # a bundle is rebuilt and checked by the stock pipeline (verify-export)
        raise UserError("--emit cannot be combined with --passes: verify-export rebuilds "
                        "bundles without user passes")
    target_board = _board(board) if emit is not None else None
    user = load_passes(passes)

    from vtatune.compiler import compile_candidate

    res = compile_candidate(wl, cfg, k, passes=user)
    emitted = _emit(wl, cfg, res, target_board, emit, hw) if emit is not None and res.ok \
        else None
    if json_:
        console.print_json({**res.as_dict(), "hw_name": cfg.name, "layer": wl.name or None,
                            "macs": wl.macs, "emitted": emitted,
                            "user_passes": user.describe() if user is not None else None})
    else:
        _report(wl, cfg, res)
        if emitted is not None:
            from vtatune.escaping import shell_command

            check = shell_command(["vtatune", "verify-export", emitted["out"]])
            console.line(f"wrote {emitted['out']}/ ({', '.join(emitted['files'])}): "
                         f"{emitted['cycles']:,} cycles on {emitted['board']}; check it with: "
                         f"{check}")
    if emit is not None and not res.ok:
        console.note(f"nothing written to {emit}: the candidate is {res.status}")
    if print_ == "tir" and res.module is not None:
        console.line(res.module.script())
    elif print_ == "scheduled":
        console.line(scheduled_script(wl, cfg, k))
    if not res.ok:
        raise typer.Exit(1)


def _board(name: str) -> Any:
    from vtatune.hardware import boards

    return boards.load(name)


def _emit(wl: Any, cfg: Any, res: Any, board: Any, out: Path, hw_arg: str) -> dict[str, Any]:
    """Build, time and write the candidate as a bundle (export's writers); its manifest's
    source names this command instead of a study."""
    from vtatune.errors import UserError
    from vtatune.export.bundle import build, hw_of, write_design

    hw = hw_of(cfg.log_params(), board, cfg.name)  # the board's VTA target in vta_config
    built = build(wl, hw, res.knobs, board)
    source = {"command": "compile", "workload": wl.signature, "hw": hw_arg,
              "knobs": dict(sorted(res.knobs.items()))}
    try:
        files, area_mm2 = write_design(out, built, board, source, cfg.name or cfg.shape_label)
    except OSError as exc:
        from vtatune.escaping import shown

        raise UserError(f"cannot write to {shown(str(out))}: {exc.strerror or exc}") from None
    return {"out": str(out), "board": board.name, "cycles": built.timing.cycles,
            "seconds": built.timing.seconds, "area_mm2": area_mm2,
            "files": {k: str(v) for k, v in files.items()}}


def resolve_candidate(workload: str, layer: str | None, shape: str | None, hw: str,
                      knobs: str | None) -> tuple[Any, Any, dict[str, int]]:
    """Workload, validated hardware, and knobs (given ones completed with suggested ones)."""
    from vtatune import schedules
    from vtatune.hardware import config
    from vtatune.workloads import parse

    wl = parse(workload, layer, shape)
    cfg = config.load(hw)
    space = schedules.knob_space(wl, cfg)
    given = schedules.parse_knobs(knobs)
    for name in given:
        if name not in space.axes:
            space.check(given)  # raises naming the unknown knob
    full = dict(schedules.suggest(wl, cfg))
    full.update(given)
    return wl, cfg, space.check(full)


def load_passes(path: str | None) -> Any:
    """The user's ``--passes`` file as a ``PassSet`` (None without), or one-line UserError."""
    if path is None:
        return None
    from vtatune.passes.user import load

    return load(path)


def _list_phases(json_: bool) -> None:
    from vtatune.passes.user import PHASES

    if json_:
        console.print_json({"phases": [{"name": n, "tvm_phase": i, "ir": ir, "next": nxt}
                                       for n, i, ir, nxt in PHASES]})
        return
    console.table("phases user passes run at (PASSES = [(phase, pass), ...]), in order",
                  ["phase", "alias", "the IR your passes see", "what runs next"],
                  [[n, "-" if i is None else str(i), ir, nxt] for n, i, ir, nxt in PHASES])


def scheduled_script(wl: Any, cfg: Any, k: dict[str, int]) -> str:
    from tvm import s_tir

    from vtatune import schedules
    from vtatune.compiler.compile import prim_func

    sch = s_tir.Schedule(prim_func(wl, cfg))
    schedules.apply(sch, wl, cfg, k)
    return sch.mod.script()


def candidate_line(wl: Any, cfg: Any) -> str:
    """``conv2d C8 (conv2d_n1_c256_...) on default (1x16x16)``: what was compiled, where."""
    label = f"{wl.kind} {wl.name}" if wl.name else wl.kind
    return f"{label} ({wl.signature}) on {cfg.name or 'hw'} ({cfg.shape_label})"


def _report(wl: Any, cfg: Any, res: Any) -> None:
    console.line(candidate_line(wl, cfg))
    console.line("knobs: " + " ".join(f"{k}={v}" for k, v in res.knobs.items()))
    console.line(f"status: {res.status}" + (f" - {res.reason}" if res.reason else ""))
    if res.passes:
        console.line(f"user passes: {res.passes}")
    if res.sram_bytes:
        rows = []
        for scope in ("inp", "wgt", "acc", "uop"):
            used, cap = res.sram_bytes.get(scope, 0), res.sram_capacity[scope]
            rows.append([scope, used, cap, f"{100 * used / cap:.1f}%"])
        console.table(None, ["buffer", "bytes used", "capacity", "use"], rows)
    c = res.counts
    if c:
        console.line(
            f"operations: LOAD inp {c['load_inp']:,}, LOAD wgt {c['load_wgt']:,}, "
            f"STORE {c['store']:,}; GEMM {c['gemm']:,} instructions "
            f"({c['gemm_tile_ops']:,} tile-ops + {c['reset_tile_ops']:,} resets); "
            f"ALU {c['alu']:,} instructions ({c['alu_tile_ops']:,} tile-ops); "
            f"dependence tokens {c['dep_push']:,}")
    stages = ", ".join(f"{k} {v:.1f}" for k, v in res.stage_ms.items())
    console.line(f"compile time: {res.compile_ms:.1f} ms ({stages})")


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_cmd)
