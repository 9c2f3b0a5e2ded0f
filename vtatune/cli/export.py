"""``vtatune export STUDY --pick ...``: write one stored design as a deployment bundle."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.options import DbOption, JsonOption, ms_of, valid_text
from vtatune.cli.report import OutOption, default_out, open_study, write_files

if TYPE_CHECKING:
    from vtatune.reports.study import Study

PickOption = Annotated[str, typer.Option(
    "--pick", help="fastest (least latency, as the study measures it), smallest (least area), "
    "knee (of the front), or a trial number.")]


def export(study: str = typer.Argument(..., help="Study name (see `vtatune studies`).",
                                callback=valid_text),
           pick: PickOption = "knee", db: DbOption = None, out: OutOption = None,
           json_: JsonOption = False) -> None:
    """Export one design of a study as a deployment bundle.

    Files: vta_config.json, schedule.json, program.bin, resources.json, autotvm.log (the
    schedule as an AutoTVM record for VTA's own flow) and manifest.json (versions, sha256
    checksums, source study and trial, the design's VTA name as bitstream).

    Examples:

    \b
      vtatune export conv2d-C8-xgb               # the knee of the front
      vtatune export conv2d-C8-xgb --pick fastest --out bundle/
      vtatune verify-export bundle/
    """
    t0 = time.perf_counter()
    loaded = open_study(study, db)
    _EXPORT[loaded.kind](loaded, pick, out, json_, t0)


def export_operator(study: Study, pick: str, out: Path | None, json_: bool, t0: float) -> None:
    """``vtatune export`` of an operator study: one bundle for the picked trial."""
    from vtatune.export import pick_trial, write_bundle

    info, trials, where = study.info, list(study.trials), study.display_url
    trial = pick_trial(info, trials, pick)  # bad picks fail here, before any compile
    folder = out if out is not None else default_out(study.name,
                                                     f"export-trial{trial.number}")
    res = write_files(lambda: write_bundle(info, trials, pick, folder, where), folder)
    elapsed = time.perf_counter() - t0
    if json_:
        console.print_json({
            "study": res.study, "trial": res.trial, "pick": res.pick, "out": str(res.folder),
            "hw_name": res.hw_name, "knobs": res.knobs, "cycles": res.cycles,
            "stored_cycles": res.stored_cycles, "seconds": res.seconds,
            "area_mm2": res.area_mm2, "files": {k: str(v) for k, v in res.files.items()},
            "stock_vta": res.stock_vta, "stock_vta_problems": list(res.stock_vta_problems),
            **res.vta_flow, "elapsed_s": elapsed})
        return
    console.line(f"trial {res.trial} of {res.study} ({res.pick}): {res.hw_name}, "
                 + ", ".join(f"{k}={v}" for k, v in sorted(res.knobs.items()))
                 + f"; {formats.cycles(res.cycles)} cycles, {formats.ms(res.seconds * 1e3)} "
                 f"ms per call, {formats.area(res.area_mm2)} mm²")
    if res.cycles != res.stored_cycles:
        console.line(f"note: the study measured {res.stored_cycles:,} cycles; the compiler or "
                     "simulator changed since, the bundle holds the rebuilt program's cycles")
    from vtatune.escaping import shell_command

    if res.stock_vta:
        console.line("stock VTA: yes (vta_config.json carries LOG_BLOCK; apache/tvm-vta builds "
                     "it as it is)")
    else:
        console.line("stock VTA: no, it cannot build this design as it is: "
                     + "; ".join(res.stock_vta_problems))
    from vtatune.export.autotvm import summary

    console.line(summary(res.vta_flow))
    console.line(f"wrote {res.folder}/ ({', '.join(res.files)}) in {elapsed:.1f} s; check it "
                 f"with: {shell_command(['vtatune', 'verify-export', str(res.folder)])}")


def export_network(study: Study, pick: str, out: Path | None, json_: bool, t0: float
                   ) -> None:
    """``vtatune export`` of a network study (the study model, ``vtatune.reports.study``):
    one bundle for the whole network."""
    from vtatune.export.bundle import pick_design, write_network_bundle

    info, trials = study.info, study.designs
    design = pick_design(info, trials, pick)  # bad picks fail here, before any compile
    folder = out if out is not None else default_out(info.name, f"export-trial{design.number}")
    res = write_files(lambda: write_network_bundle(info, trials, pick, folder,
                                                   study.display_url), folder)
    elapsed = time.perf_counter() - t0
    if json_:
        console.print_json({
            "study": res.study, "trial": res.trial, "pick": res.pick, "out": str(res.folder),
            "network": res.network, "hw_name": res.hw_name, "cycles": res.cycles,
            "stored_cycles": res.stored_cycles, "seconds": res.seconds,
            "accelerator_seconds": res.accelerator_seconds, "host_seconds": res.host_seconds,
            "stock_vta": res.stock_vta, "stock_vta_problems": list(res.stock_vta_problems),
            "area_mm2": res.area_mm2, "layers": list(res.layers), **res.vta_flow,
            "files": {k: str(v) for k, v in res.files.items()}, "elapsed_s": elapsed})
        return
    console.line(f"trial {res.trial} of {res.study} ({res.pick}): network {res.network} on "
                 f"{res.hw_name}; {ms_of(res.seconds)} ms per run (accelerator "
                 f"{ms_of(res.accelerator_seconds)} ms, {formats.cycles(res.cycles)} cycles + "
                 f"host {ms_of(res.host_seconds)} ms), {formats.area(res.area_mm2)} mm², "
                 f"{formats.counted(len(res.layers), 'layer')}")
    if res.stock_vta:
        console.line("stock VTA: yes (vta_config.json carries LOG_BLOCK; apache/tvm-vta builds "
                     "this design as it is)")
    else:
        console.line("stock VTA: no, it cannot build this design as it is: "
                     + "; ".join(res.stock_vta_problems))
    if res.cycles != res.stored_cycles:
        console.line(f"note: the study measured {res.stored_cycles:,} cycles; the compiler or "
                     "simulator changed since, the bundle holds the rebuilt programs' cycles")
    from vtatune.export.autotvm import summary

    console.line(summary(res.vta_flow))
    console.line(f"wrote {res.folder}/ ({formats.counted(len(res.files), 'file')}) in "
                 f"{elapsed:.1f} s; check it "
                 f"with: vtatune verify-export {res.folder}")


#: The bundle of a study of each kind.
_EXPORT: dict[str, Callable[[Study, str, Path | None, bool, float], None]] = {
    "operator": export_operator, "network": export_network}


def register(app: typer.Typer) -> None:
    app.command("export")(export)
