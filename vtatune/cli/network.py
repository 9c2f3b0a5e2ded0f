"""The network halves of ``vtatune search`` and ``vtatune show``: one accelerator for every
layer of a network (``cli/search.py`` dispatches here for ``resnet18`` or a space file with a
``[network]`` table; ``cli/show.py`` for a network study)."""

from __future__ import annotations

from typing import Any

from vtatune import formats
from vtatune.cli import console


def search_network(path: str, *, layer: str | None, shape: str | None, hw: str | None,
                   board: str | None, trials: int, sampler: str | None,
                   objective: str | None, study: str | None, db: str | None, workers: int,
                   seed: int | None, timeout: float, warm_start: bool,
                   layer_trials: int | None, inner_sampler: str | None, json_: bool,
                   latency: str | None = None, passes: str | None = None,
                   stock_vta: bool = False) -> None:
    """Validate the options (``studies.network_search``), run the network study of the space
    file ``path``, print its front (or JSON)."""
    import os

    from vtatune import studies

    job = studies.network_search(path, layer=layer, shape=shape, hw=hw, board=board,
                                 trials=trials, sampler=sampler, objective=objective,
                                 study=study, workers=workers, seed=seed, timeout=timeout,
                                 layer_trials=layer_trials, inner_sampler=inner_sampler,
                                 latency=latency, passes=passes,
                                 stock_vta=stock_vta)
    from vtatune.networks.runner import check_study

    # an unreachable database or a study made for something else fails here, before any
    # progress output
    check_study(job.space, job.study, db)
    run = _run(job, trials, db, workers or os.cpu_count() or 1, seed, timeout, warm_start,
               quiet=json_)
    _report(run.result, job.space, json_, db)
    if run.mirror_error:
        console.error(f"warning: the Optuna dashboard copy of the study was not updated "
                      f"({run.mirror_error}); the results are stored")


def _run(job: Any, trials: int, db: str | None, workers: int, seed: int | None,
         timeout: float, warm_start: bool, quiet: bool) -> Any:
    import typer

    from vtatune import formats, studies
    from vtatune.networks import runner

    sp, sampler, name = job.space, job.sampler, job.study

    plural = "s" if workers != 1 else ""
    header = (f"search {name}: network {sp.network.name} "
              f"({formats.counted(len(sp.network.layers), 'layer')}), up to "
              f"{formats.counted(trials, 'design')} of "
              f"{formats.counted(sp.inner.trials, 'layer evaluation')}, sampler {sampler} "
              f"(inner {sp.inner.sampler}), {sp.objective}, {sp.board}, {workers} "
              f"worker{plural}; db {_display_url(db)}")
    with console.Progress(name, trials, header=header, quiet=quiet,
                          waiting=f"starting {workers} worker{plural} (TVM loads, first "
                                  "compiles)") as bar:

        def on_progress(p: runner.Progress) -> None:
            best = "-" if p.best_cycles is None else (
                f"{formats.cycles(p.best_cycles)} cycles ({formats.ms(1e3 * p.best_seconds)} ms)")
            front = f", front {p.pareto_size}" if sp.objective == "area-latency" else ""
            screened = sum(p.screened.values())
            bar.update(p.done, f"best {best}{front}, {p.rate:.1f} layer evals/s, from store "
                               f"{p.cached}" + (f", {screened} designs screened"
                                                if screened else ""))

        try:
            run = studies.run_network(job, trials=trials, db=db, workers=workers, seed=seed,
                                      timeout=timeout, warm_start=warm_start,
                                      on_progress=on_progress)
        except KeyboardInterrupt:
            console.error(f"interrupted: finished designs and layer results are stored; rerun "
                          f"with --study {name} to continue")
            raise typer.Exit(130) from None
    return run


def _display_url(db: str | None) -> str:
    """``--db`` as a progress header shows it: normalized, any password hidden."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from vtatune.store import normalize_url

    try:
        return make_url(normalize_url(db)).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # a URL SQLAlchemy cannot parse: show none of it
        return "(database)"


def _report(result: Any, sp: Any, json_: bool, db: str | None) -> None:
    from vtatune.networks.summary import summarize
    from vtatune.store import Store

    store = Store(db, readonly=True)  # result.db hides the password
    data = summarize(store.study(result.study), store.network_trials(result.study))
    if json_:
        console.print_json({
            "study": result.study, "db": result.db, "network": data["network"],
            "trials": data["trials"], "new_trials": result.new_trials,
            "evaluated": result.evaluated, "cached": result.cached,
            "repeats": result.repeats, "feasible": data["feasible"],
            "best_cycles": data["best_cycles"], "best_seconds": data["best_seconds"],
            "elapsed_s": round(result.elapsed_s, 2), "exhausted": result.exhausted,
            "statuses": data["statuses"], "objective": data["objective"],
            "latency": data["latency"], "screened": result.screened,
            "space_size": result.space_size, "space_passing": result.space_passing,
            "pareto": data["pareto"], "top": data["top"]})
        return
    best = data["best_seconds"]
    console.line(f"study {result.study}: {formats.counted(data['trials'], 'design')} "
                 f"({result.new_trials} new; "
                 f"{result.evaluated} layer candidates evaluated, {result.cached} from the "
                 f"store) in {result.elapsed_s:.1f} s; {data['feasible']} feasible"
                 + (f"; best {1e3 * best:.3f} ms ({data['best_cycles']:,} cycles)"
                    if best is not None else ""))
    others = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != "ok")
    if others:
        console.line(f"not feasible: {others}")
        console.not_feasible(data["not_feasible"])
    from vtatune.search.screen import summary_line

    if summary_line(result.screened):
        console.line(summary_line(result.screened))
    if result.exhausted:
        console.line(_exhausted(result, data["trials"]))
    elif result.new_trials == 0:
        console.line(console.nothing_new(result.study, data["trials"], "design"))
    rows = data["pareto"] if data["objective"] == "area-latency" else data["top"]
    if rows:
        title = ("Pareto front (area vs network latency)"
                 if data["objective"] == "area-latency" else "fastest designs")
        console.table(title, ["trial", "ms", "cycles", "mm²", "of bound", "stock VTA",
                              "hardware"],
                      [[formats.count(r["trial"]), _ms(r["seconds"]),
                        formats.cycles(r["cycles"]), formats.area(r["area_mm2"]),
                        formats.percent(r["efficiency"]), console.stock_mark(r),
                        r["hw_name"]] for r in rows],
                      right=[True] * 5 + [False, False])
        console.line(console.BOUND_LEGEND)
        if console.stock_note(rows):
            console.line(console.stock_note(rows))
    else:
        console.line("no feasible design yet")
    console.line(f"results: {result.db}")
    for text in console.next_steps(result.study, result.db, db, data["objective"],
                                   shows="every front design, layer by layer",
                                   feasible=bool(data["feasible"])):
        console.line(text)


def _exhausted(result: Any, trials: int) -> str:
    """Why a network search stopped before the requested number of designs."""
    if result.space_passing is not None:
        return (f"stopped after {trials:,} of {result.requested:,} requested designs: every "
                f"design of the hardware space that passes the screen "
                f"({result.space_passing:,} of {result.space_size:,}) is in the study")
    return (f"stopped after {trials:,} of {result.requested:,} requested designs: no new "
            "hardware design that passes the screen left to propose")


def show_network(study: Any, json_: bool) -> None:
    """A network study: counts, then every front design with its per-layer breakdown."""
    from vtatune.cli.studies import aligned
    from vtatune.escaping import terminal
    from vtatune.networks.summary import summarize
    from vtatune.reports.data import host_ops_text

    info, host_ops = study.info, study.host_ops
    data = summarize(info, study.designs)
    if json_:
        console.print_json({**data, "host_ops": None if host_ops is None
                            else [h.describe() for h in host_ops]})
        return
    console.line(f"study {info.name}: network {data['network']} on {info.board}, objective "
                 f"{info.objective}, sampler {info.sampler} ({study.display_url})")
    others = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != "ok")
    best = data["best_seconds"]
    console.line(f"{formats.counted(data['trials'], 'design')}, {data['feasible']} feasible"
                 + (f" (not feasible: {others})" if others else "")
                 + (f", best {_ms(best)} ms ({formats.cycles(data['best_cycles'])} cycles)"
                    if best is not None else "")
                 + f"; {data['evaluated']} layer candidates evaluated, {data['cached']} from "
                 "the store" + (f"; {data['running']} design(s) interrupted (rerun the search "
                                "to continue)" if data["running"] else ""))
    console.not_feasible(data["not_feasible"])
    console.line(terminal(host_ops_text(host_ops)))
    if not data["feasible"]:
        console.line("no feasible design yet")
        return
    if info.objective == "area-latency":
        rows = data["pareto"]
        console.line(f"Pareto front, area_mm2 vs network latency "
                     f"({formats.counted(len(rows), 'design')}):")
    else:
        rows = data["top"]
        console.line(f"top {formats.counted(len(rows), 'design')} by network latency:")
    for r in rows:
        console.line("")
        split = "" if r["host_seconds"] is None else (
            f"accelerator {_ms(r['accelerator_seconds'])} ms + host "
            f"{_ms(r['host_seconds'])} ms, ")
        console.line(f"trial {r['trial']}: {r['hw_name']}, {_ms(r['seconds'])} ms per run "
                     f"({split}{formats.cycles(r['cycles'])} cycles, "
                     f"{formats.percent(r['efficiency'])} of the bound), "
                     f"{formats.area(r['area_mm2'])} mm²; stock VTA: "
                     + ("yes" if r.get("stock_vta") else
                        "no (" + "; ".join(r.get("stock_vta_problems") or ()) + ")"))
        for text in aligned(
                ["  layer", "count", "cycles", "ms", "share", "trials", "knobs"],
                [[f"  {la['name']}", la["count"], formats.cycles(la["cycles"]),
                  _ms(la["seconds"]), formats.percent(la["share"]), la["trials"],
                  formats.knobs(la["knobs"])]
                 for la in r["layers"]]):
            console.line(text)
    if console.stock_note(rows):
        console.line("")
        console.line(console.stock_note(rows))


def report_network(study: Any, out: Any, json_: bool, t0: float) -> None:
    """``vtatune report`` of a network study (the study model, ``vtatune.reports.study``)."""
    import time

    from vtatune.cli.files import default_out, write_files
    from vtatune.escaping import terminal
    from vtatune.reports.data import host_ops_text, network_report_data, require_feasible_design
    from vtatune.reports.network_write import write_network_report

    info, trials = study.info, study.designs
    require_feasible_design(info, trials)
    data = network_report_data(info, trials)
    folder = out if out is not None else default_out(info.name)
    files = write_files(lambda: write_network_report(data, folder), folder)
    elapsed = time.perf_counter() - t0
    picks = {"knee": data.knee, "fastest": data.fastest, "smallest": data.smallest}
    if json_:
        console.print_json({
            "study": data.study, "network": data.network, "db": study.display_url,
            "out": str(folder), "files": {k: str(v) for k, v in files.items()},
            "trials": data.n_trials, "feasible": data.n_feasible,
            "hypervolume": data.hypervolume, "ref_point": data.ref_point,
            "host_ops": None if data.host_ops is None
            else [h.describe() for h in data.host_ops],
            "front": [_point_json(p) for p in data.front],
            **{k: _point_json(p) for k, p in picks.items()}, "elapsed_s": elapsed})
        return
    console.line(f"study {data.study}: network {data.network} on {data.board}, "
                 f"{formats.counted(data.n_trials, 'design')}, {data.n_feasible} feasible; front "
                 f"{len(data.front)} design{'' if len(data.front) == 1 else 's'}, hypervolume "
                 f"{data.hypervolume:.4f}")
    console.line(terminal(host_ops_text(data.host_ops)))
    for label, p in picks.items():
        if p is not None:
            console.line(f"  {label:8s} trial {p.trial}: {p.hw_name}, "
                         f"{formats.ms(p.latency_ms)} ms ({formats.cycles(p.cycles)} cycles), "
                         f"{formats.area(p.area_mm2)} mm²{console.stock_text(p)}")
    others = ", ".join(n for n in files if n != "index.html")
    console.line(f"wrote {folder / 'index.html'} and {others} in {elapsed:.1f} s")


def _point_json(p: Any) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"trial": p.trial, "hw_name": p.hw_name, "hw": p.hw, "stock_vta": p.stock_vta,
            "stock_vta_problems": list(p.stock_vta_problems), "area_mm2": p.area_mm2,
            "cycles": p.cycles, "latency_ms": p.latency_ms, "bound_ms": p.bound_ms,
            "layers": [{"name": la.name, "count": la.count, "knobs": la.knobs,
                        "latency_ms": la.latency_ms, "share": la.share} for la in p.layers]}


def compare_network(studies: list[Any], out: Any, json_: bool, t0: float) -> None:
    """``vtatune compare`` of network studies (same network and board), as study models
    (``vtatune.reports.study``) that each have a finished design."""
    import time
    from pathlib import Path

    from vtatune.cli.files import default_out, write_files
    from vtatune.cli.studies import aligned
    from vtatune.errors import UserError
    from vtatune.reports import safe_name
    from vtatune.reports.data import network_compare_data, require_comparable
    from vtatune.reports.network_write import write_network_comparison

    names = [s.name for s in studies]
    loaded = [(s.info, s.finished) for s in studies]
    # the network's layers (not its host operators, listed by newer versions only)
    require_comparable([info for info, _ in loaded],
                       [("network", _compared_network, _short),
                        ("board", lambda i: i.board, str)])
    if not any(t.feasible for _, trials in loaded for t in trials):
        raise UserError("none of the studies has a feasible design: every front is empty")
    data = network_compare_data(loaded)
    folder = out if out is not None else default_out(
        "compare-" + "-vs-".join(safe_name(n, 40) for n in names))
    files = write_files(lambda: write_network_comparison(data, folder), folder)
    elapsed = time.perf_counter() - t0
    if json_:
        console.print_json({
            "db": studies[0].display_url, "out": str(folder),
            "files": {k: str(v) for k, v in files.items()}, "network": data.network,
            "board": data.board, "ref_point": data.ref_point,
            "studies": [{"study": s.study, "sampler": s.sampler, "trials": s.n_trials,
                         "feasible": s.n_feasible, "best_ms": s.best_ms,
                         "hypervolume": s.hypervolume, "front_size": len(s.front),
                         "layer_evaluations": s.evaluated,
                         "front": [_point_json(p) for p in s.front]} for s in data.series],
            "elapsed_s": elapsed})
        return
    ref = data.ref_point
    console.line(f"network {data.network} on {data.board}; hypervolume: share of one box in "
                 "log area and log network latency, from the fronts' ideal point to 10% beyond "
                 "their nadir" + (f" (reference point {formats.area(ref[0])} mm², "
                                  f"{formats.ms(ref[1])} ms)" if ref else ""))
    for text in aligned(["study", "sampler", "designs", "feasible", "best ms", "front",
                         "hypervolume", "layer evals"],
                        [[s.study, s.sampler, s.n_trials, s.n_feasible, formats.ms(s.best_ms),
                          len(s.front) if s.front else "empty", f"{s.hypervolume:.3f}",
                          s.evaluated]
                         for s in data.series]):
        console.line(text)
    console.line("best ms: the least network latency, end to end (accelerator + host per "
                 "layer run), as in show, report and compare.csv")
    console.line(f"wrote {Path(folder) / 'index.html'}, compare.png, compare.svg, compare.csv "
                 f"in {elapsed:.1f} s")


def _compared_network(info: Any) -> Any:
    """What two network studies must share to be compared: their network but its host
    operators (which a study made before they were listed does not carry)."""
    network = (info.space or {}).get("network")
    if not isinstance(network, dict):
        return network
    return {k: v for k, v in network.items() if k != "host_ops"}


def _short(v: Any) -> str:
    if isinstance(v, dict):
        return f"{v.get('name', '?')} ({formats.counted(len(v.get('layers', [])), 'layer')})"
    return str(v)


def export_network(study: Any, pick: str, out: Any, json_: bool, t0: float) -> None:
    """``vtatune export`` of a network study (the study model, ``vtatune.reports.study``):
    one bundle for the whole network."""
    import time

    from vtatune.cli.files import default_out, write_files
    from vtatune.export.network import pick_design, write_network_bundle

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
                 f"{res.hw_name}; {_ms(res.seconds)} ms per run (accelerator "
                 f"{_ms(res.accelerator_seconds)} ms, {formats.cycles(res.cycles)} cycles + "
                 f"host {_ms(res.host_seconds)} ms), {formats.area(res.area_mm2)} mm², "
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


def _ms(seconds: float | None) -> str:
    """Seconds as ``formats.ms`` milliseconds (the units of every other table)."""
    return formats.ms(None if seconds is None else 1e3 * seconds)
