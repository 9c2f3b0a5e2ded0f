"""The network half of ``vtatune search``: one accelerator for every layer of a network
(``cli/search.py`` dispatches here for ``resnet18`` or a space file with a ``[network]``
table). Reading a network study (show, report, compare, export) is the commands' own, on the
one study model (``reports.study``)."""

from __future__ import annotations

from typing import Any

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.options import ms_of
from vtatune.statuses import Status


def search_network(path: str | list[str], *, weights: str | None = None,
                   layer: str | None, shape: str | None, hw: str | None, board: str | None,
                   trials: int, sampler: str | None, objective: str | None,
                   study: str | None, db: str | None, workers: int,
                   seed: int | None, timeout: float, warm_start: bool,
                   layer_trials: int | None, inner_sampler: str | None, json_: bool,
                   latency: str | None = None, passes: str | None = None,
                   stock_vta: bool = False) -> None:
    """Validate the options (``studies.network_search``), run the network study of the space
    file ``path`` (or of the networks ``path`` lists, weighted by ``weights``: one accelerator
    for all), print its front (or JSON)."""
    import os

    from vtatune import studies

    job = studies.network_search(path, weights=weights, layer=layer, shape=shape, hw=hw,
                                 board=board, trials=trials, sampler=sampler, objective=objective,
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
            # (the least latency alone: the fewest cycles may be another design's)
            best = "-" if p.best_seconds is None else \
                f"{formats.ms(1e3 * p.best_seconds)} ms per run"
            front = f", front {p.pareto_size}" if sp.objective == "area-latency" else ""
            screened = sum(p.screened.values())
            bar.update(p.done, f"best {best}{front}, {p.rate:.1f} layer evals/s, from store "
                               f"{p.cached}" + console.screened_note(screened),
                       position=p.done + p.partial)

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
    from vtatune.reports.data import WEIGHTED_SUM
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
            "pareto": data["pareto"], "top": data["top"],
            **({"networks": data["networks"], "objective_latency": WEIGHTED_SUM}
               if "networks" in data else {})})
        return
    best = data["best_seconds"]
    console.line(f"study {result.study}: {formats.counted(data['trials'], 'design')} "
                 f"({result.new_trials} new; "
                 f"{result.evaluated} layer candidates evaluated, {result.cached} from the "
                 f"store) in {result.elapsed_s:.1f} s; {data['feasible']} feasible"
                 + (f"; best {1e3 * best:.3f} ms ({data['best_cycles']:,} cycles)"
                    if best is not None else ""))
    others = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != Status.OK)
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
    # several networks: "ms" is the weighted sum (the objective); each network's ms after it
    nets = [f"{n['network']} ms" for n in data.get("networks", [])]
    if rows:
        title = ("Pareto front (area vs network latency)"
                 if data["objective"] == "area-latency" else "fastest designs")
        if nets:
            title += f"; ms: the {WEIGHTED_SUM} (" + " + ".join(
                f"{n['weight']:g} x {n['network']}" for n in data["networks"]) + ")"
        console.table(title, ["trial", "ms", *nets, "cycles", "mm²", "of bound", "stock VTA",
                              "hardware"],
                      [[formats.count(r["trial"]), ms_of(r["seconds"]),
                        *[ms_of(n["seconds"]) for n in r.get("networks") or ()][:len(nets)],
                        formats.cycles(r["cycles"]), formats.area(r["area_mm2"]),
                        formats.percent(r["efficiency"]), console.stock_mark(r),
                        r["hw_name"]] for r in rows],
                      right=[True] * (5 + len(nets)) + [False, False])
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
