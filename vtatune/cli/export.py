"""``vtatune export STUDY --pick ...``: write one stored design as a deployment bundle."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.options import DbOption, JsonOption, ms_of, valid_text
from vtatune.cli.report import OutOption, default_out, open_study, write_files

PickOption = Annotated[str, typer.Option(
    "--pick", help="fastest (least latency, as the study measures it), smallest (least area), "
    "knee (of the front), or a trial number.")]


StockOption = Annotated[bool, typer.Option(
    "--stock-vta", help="Pick among the designs that deploy through VTA's own flow: stock VTA "
    "(apache/tvm-vta as it is) builds the hardware on the board and, if any such design "
    "does, VTA's AutoTVM templates express every layer's schedule. --pick knee --stock-vta "
    "is the knee of their front.")]


def export(study: str = typer.Argument(..., help="Study name (see `vtatune studies`).",
                                callback=valid_text),
           pick: PickOption = "knee", stock_vta: StockOption = False, db: DbOption = None,
           out: OutOption = None, json_: JsonOption = False) -> None:
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
      vtatune export conv2d-C8-xgb --stock-vta  # one VTA's own flow deploys
      vtatune verify-export bundle/
    """
    from vtatune.escaping import shell_command
    from vtatune.export.autotvm import stock_line, summary
    from vtatune.export.bundle import weighted
    from vtatune.hardware import timing_profiles

    t0 = time.perf_counter()
    loaded = open_study(study, db)
    info, trials, net = loaded.info, list(loaded.trials), loaded.kind == "network"
    picker = loaded.of.pick
    stock, whole = _stock_designs(info, trials, net)
    if stock_vta:
        trials = _only_stock(info, trials, stock, pick)
    chosen = picker(info, trials, pick)  # bad picks fail here
    folder = out if out is not None else default_out(info.name, f"export-trial{chosen.number}")
    res = write_files(lambda: loaded.of.write_bundle(info, trials, pick, folder,
                                                     loaded.display_url), folder)
    elapsed = time.perf_counter() - t0
    dom = _timing_domain(res.files)
    warnings = _flow_warnings(res, info, (stock, whole), picker, pick, loaded.display_url,
                              db)
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
               if res.networks else {}), "timing_domain": dom, "stock_pick": stock_vta,
            "warnings": warnings, "elapsed_s": elapsed})
        return
    console.line(stock_line(res.stock_vta_problems, res.vta_flow))
    for w in warnings:  # then: what will not deploy through VTA's flow, and what would
        console.line(f"warning: {w}")
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
    if res.cycles != res.stored_cycles and net:
        console.line(changed)
    if timing_profiles.domain_line(dom):
        console.line(timing_profiles.domain_line(dom))
    console.line(summary(res.vta_flow))
    files = formats.counted(len(res.files), "file") if net else ", ".join(res.files)
    console.line(f"wrote {res.folder}/ ({files}) in {elapsed:.1f} s; check it "
                 f"with: {shell_command(['vtatune', 'verify-export', str(res.folder)])}")


def _timing_domain(files: dict[str, Any]) -> dict[str, Any] | None:
    """The bundle manifest's ``timing_domain`` (``timing_profiles.domain``)."""
    import json

    from vtatune.export.bundle import MANIFEST

    path = files.get(MANIFEST)
    try:
        return json.loads(Path(path).read_text()).get("timing_domain") if path else None
    except (OSError, ValueError):
        return None


def _stock_designs(info: Any, trials: list[Any], net: bool) -> tuple[list[Any], bool]:
    """The study's trials (a network study's designs) that ``--stock-vta`` picks from: those
    whose hardware stock VTA builds on the study's board as it is (``hardware.stock``) and
    whose every layer's schedule VTA's AutoTVM templates express (``export.autotvm.task_of``:
    they deploy through VTA's own flow as searched); when no feasible trial is both, those
    whose hardware stock VTA builds (VTA's flow then runs some layers with other schedules
    than the searched ones). The flag: whether they are the former."""
    from vtatune.errors import VtatuneError
    from vtatune.export.autotvm import NotInTemplate, task_of
    from vtatune.hardware.config import HwConfig
    from vtatune.hardware.stock import stock_of
    from vtatune.workloads import from_signature

    workloads: dict[str, Any] = {}

    def expressed(t: Any) -> bool:
        hw = t.hw if net else t.candidate.hw
        layers = ([(la.workload, la.knobs) for la in t.layers] if net
                  else [(t.candidate.workload, t.candidate.knobs)])
        try:
            cfg = HwConfig.from_params(hw)
            for sig, knobs in layers:
                if sig not in workloads:
                    workloads[sig] = from_signature(sig)
                task_of(workloads[sig], cfg, knobs)
        except (NotInTemplate, VtatuneError, TypeError, ValueError):
            return False
        return True

    stock = [t for t in trials
             if stock_of(t.hw if net else t.candidate.hw, info.board).get("stock_vta")]
    whole = [t for t in stock if expressed(t)]
    return (whole, True) if any(_feasible(t) for t in whole) else (stock, False)


def _only_stock(info: Any, trials: list[Any], stock: list[Any], pick: str) -> list[Any]:
    """``--stock-vta``: the trials to pick from; ``UserError`` when a picked trial number is
    not one of them, or none is feasible."""
    from vtatune.errors import UserError
    from vtatune.escaping import shell_word

    if pick.isdigit() and int(pick) in {t.number for t in trials} and \
            int(pick) not in {t.number for t in stock}:
        raise UserError(f"--stock-vta: trial {pick} of '{info.name}' does not deploy through "
                        "VTA's own flow as searched (export it without --stock-vta to see "
                        "why)")
    if not any(_feasible(t) for t in stock):
        raise UserError(f"--stock-vta: no feasible design of '{info.name}' is one stock VTA "
                        f"builds on {info.board}; search with --stock-vta (a new study, e.g. "
                        f"--study {shell_word(info.name + '-stock')})")
    return stock


def _feasible(t: Any) -> bool:
    cand = getattr(t, "candidate", None)
    return bool(cand.feasible if cand is not None else t.feasible)


def _flow_warnings(res: Any, info: Any, stock_designs: tuple[list[Any], bool], picker: Any,
                   pick: str, url: str, db: str | None) -> list[str]:
    """What of the exported design will not deploy through VTA's own flow (the design, which
    stock VTA cannot build; layers left out of autotvm.log), and the command that exports a
    design that does: the same pick among the designs stock VTA builds."""
    from vtatune.errors import UserError
    from vtatune.escaping import shell_command, shell_word

    stock, whole = stock_designs
    out, problems = [], []
    if not res.stock_vta:
        problems.append("stock VTA cannot build it as it is (" + "; ".join(
            res.stock_vta_problems) + ")")
    log = res.vta_flow.get("autotvm") or {}
    # layers VTA's flow runs on the CPU anyway (the stem, the classifier) need no record
    cpu = {str(x.get("layer")) for x in log.get("layers") or []
           if isinstance(x, dict) and not x.get("offloaded", True)}
    by_reason: dict[str, list[str]] = {}
    if res.vta_flow.get("bitstream") is not None:
        for x in log.get("not_in_log") or []:
            names = [str(n) for n in x.get("layers", []) or [x.get("workload", "?")]
                     if str(n) not in cpu]
            if names:
                by_reason.setdefault(str(x.get("reason", "")), []).extend(names)
    if by_reason:
        n = sum(len(v) for v in by_reason.values())
        problems.append(f"VTA's AutoTVM templates cannot express the schedule of "
                        f"{formats.counted(n, 'layer')}, left out of autotvm.log (" + "; ".join(
                            f"{_listed(names)}: {why}" for why, names in by_reason.items())
                        + ")")
    if problems:
        line = "this design will not deploy through VTA's own flow as searched: " + \
            "; ".join(problems)
        named = pick if not pick.isdigit() else "knee"
        try:
            alt = picker(info, stock, named) if stock else None
        except UserError:
            alt = None
        if alt is None:
            line += (". No feasible design of this study is one stock VTA builds: search "
                     f"with --stock-vta (e.g. --study {shell_word(info.name + '-stock')})")
        elif alt.number != res.trial:
            cmd = shell_command(["vtatune", "export", info.name, "--pick", named, "--stock-vta"]
                                + ([] if db is None else ["--db", url]))
            which = "that deploy" if whole else "whose hardware stock VTA builds"
            line += (f". The {named} of the designs {which} is trial {alt.number} "
                     f"({_design_of(alt)}): {cmd}")
        out.append(line)
    return out


def _design_of(t: Any) -> str:
    """``1x16x16-i32w256a128u32, 10.126 ms per call, 36.10 mm²`` of a trial or design."""
    rec = getattr(t, "candidate", t)
    per = "call" if rec is not t else "run"
    return ", ".join(x for x in (
        rec.hw_name, None if rec.seconds is None else f"{formats.ms(rec.seconds * 1e3)} ms "
        f"per {per}", None if rec.area_mm2 is None else f"{formats.area(rec.area_mm2)} mm²")
        if x)


def _listed(names: list[str], most: int = 6) -> str:
    """``a, b, c and 4 more``."""
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most])} and {len(names) - most} more"


def register(app: typer.Typer) -> None:
    app.command("export")(export)
