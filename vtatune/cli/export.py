"""``vtatune export STUDY --pick ...``: write one stored design as a deployment bundle."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.options import DbOption, JsonOption, ms_of, valid_text
from vtatune.cli.report import OutOption, default_out, open_study, write_files

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
    checksums, source study and trial, the design's VTA name as bitstream). A network
    study's bundle holds every layer's program under programs/; a study of several networks
    adds networks/<network>.json, each network's own schedule, beside the union's.

    Examples:

    \b
      vtatune export conv2d-C8-xgb               # the knee of the front
      vtatune export conv2d-C8-xgb --pick fastest --out bundle/
      vtatune verify-export bundle/
    """
    from vtatune.escaping import shell_command
    from vtatune.export.autotvm import summary
    from vtatune.export.bundle import weighted

    t0 = time.perf_counter()
    loaded = open_study(study, db)
    info, trials, net = loaded.info, list(loaded.trials), loaded.kind == "network"
    chosen = loaded.of.pick(info, trials, pick)  # bad picks fail here
    folder = out if out is not None else default_out(info.name, f"export-trial{chosen.number}")
    res = write_files(lambda: loaded.of.write_bundle(info, trials, pick, folder,
                                                     loaded.display_url), folder)
    elapsed = time.perf_counter() - t0
    if json_:
        console.print_json({
            "study": res.study, "trial": res.trial, "pick": res.pick, "out": str(res.folder),
            "hw_name": res.hw_name, "cycles": res.cycles, "stored_cycles": res.stored_cycles,
            "seconds": res.seconds, "area_mm2": res.area_mm2,
            "files": {k: str(v) for k, v in res.files.items()}, "stock_vta": res.stock_vta,
            "stock_vta_problems": list(res.stock_vta_problems), **res.vta_flow,
            **({"network": res.network, "accelerator_seconds": res.accelerator_seconds,
                "host_seconds": res.host_seconds, "layers": list(res.layers)} if net else
               {"knobs": res.knobs}),
            **({"networks": list(res.networks), "weighted": weighted(res.networks)}
               if res.networks else {}), "elapsed_s": elapsed})
        return
    if net:
        console.line(f"trial {res.trial} of {res.study} ({res.pick}): network {res.network} on "
                     f"{res.hw_name}; {ms_of(res.seconds)} ms per run (accelerator "
                     f"{ms_of(res.accelerator_seconds)} ms, {formats.cycles(res.cycles)} cycles "
                     f"+ host {ms_of(res.host_seconds)} ms), {formats.area(res.area_mm2)} mm², "
                     f"{formats.counted(len(res.layers), 'layer')}")
        for m in res.networks:
            console.line(f"  network {m['network']} (weight {m['weight']:g}): "
                         f"{ms_of(m['latency_ms'] / 1e3)} ms per run (accelerator "
                         f"{ms_of(m['accelerator_ms'] / 1e3)} ms, "
                         f"{formats.cycles(m['cycles'])} cycles + host "
                         f"{ms_of(m['host_ms'] / 1e3)} ms), schedule {m['schedule']}")
        if res.networks:
            console.line(f"  weighted sum (the study's objective): "
                         f"{ms_of(weighted(res.networks)['latency_ms'] / 1e3)} ms; the line "
                         "above is one run of every network")
    else:
        console.line(f"trial {res.trial} of {res.study} ({res.pick}): {res.hw_name}, "
                     + ", ".join(f"{k}={v}" for k, v in sorted(res.knobs.items()))
                     + f"; {formats.cycles(res.cycles)} cycles, {ms_of(res.seconds)} "
                     f"ms per call, {formats.area(res.area_mm2)} mm²")
    changed = (f"note: the study measured {res.stored_cycles:,} cycles; the compiler or "
               "simulator changed since, the bundle holds the rebuilt program"
               + ("s'" if net else "'s") + " cycles")
    if res.cycles != res.stored_cycles and not net:
        console.line(changed)
    if res.stock_vta:
        console.line("stock VTA: yes (vta_config.json carries LOG_BLOCK; apache/tvm-vta builds "
                     + ("this design" if net else "it") + " as it is)")
    else:
        console.line("stock VTA: no, it cannot build this design as it is: "
                     + "; ".join(res.stock_vta_problems))
    if res.cycles != res.stored_cycles and net:
        console.line(changed)
    console.line(summary(res.vta_flow))
    files = formats.counted(len(res.files), "file") if net else ", ".join(res.files)
    console.line(f"wrote {res.folder}/ ({files}) in {elapsed:.1f} s; check it "
                 f"with: {shell_command(['vtatune', 'verify-export', str(res.folder)])}")


def register(app: typer.Typer) -> None:
    app.command("export")(export)
