"""The network halves of ``vtatune search`` and ``vtatune show``: one accelerator for every
layer of a network (``cli/search.py`` dispatches here for ``resnet18`` or a space file with a
``[network]`` table; ``cli/show.py`` for a network study)."""

from __future__ import annotations

from typing import Any

from vtatune.cli import console

#: Outer sampler of network searches when --sampler is not given.
DEFAULT_NETWORK_SAMPLER = "xgb"


def search_network(network: str | None, *, space: str | None, layer: str | None,
                   shape: str | None, hw: str | None, board: str | None, trials: int,
                   sampler: str | None, objective: str | None, study: str | None,
                   db: str | None, workers: int, seed: int | None, timeout: float,
                   warm_start: bool, layer_trials: int | None, inner_sampler: str | None,
                   json_: bool) -> None:
    """Validate the options, run the network study, print its front (or JSON)."""
    import os

    from vtatune.errors import UserError
    from vtatune.networks import space as nspace
    from vtatune.search.samplers import NAMES
    from vtatune.store import Store

    if layer is not None or shape is not None:
        raise UserError("--layer and --shape select one layer; a network search tunes every "
                        "layer of the network (edit its [network] table to change them)")
    sampler = sampler or DEFAULT_NETWORK_SAMPLER
    if trials < 1:
        raise UserError(f"--trials must be at least 1, got {trials}")
    if sampler not in NAMES:
        raise UserError(f"unknown sampler {sampler!r} (known: {', '.join(NAMES)})")
    if timeout <= 0:
        raise UserError(f"--timeout must be positive, got {timeout:g}")
    if workers < 0:
        raise UserError(f"--workers must be 0 (one per core) or more, got {workers}")
    if layer_trials is not None and layer_trials < 1:
        raise UserError(f"--layer-trials must be at least 1, got {layer_trials}")
    if inner_sampler is not None and inner_sampler not in nspace.INNER_SAMPLERS:
        raise UserError(f"unknown --inner-sampler {inner_sampler!r} (known: "
                        f"{', '.join(nspace.INNER_SAMPLERS)})")
    if hw is not None and objective is None:
        objective = "latency"
    sp = nspace.load(space or network, hw=hw, board=board, objective=objective,
                     inner_trials=layer_trials, inner_sampler=inner_sampler)
    name = study or f"network-{sp.network.name}-{'sched-' if hw else ''}{sampler}"
    Store(db).studies()  # an unreachable database fails here, before any progress output
    result = _run(sp, sampler, trials, name, db, workers or os.cpu_count() or 1, seed,
                  timeout, warm_start, quiet=json_)
    _report(result, sp, json_)


def _run(sp: Any, sampler: str, trials: int, name: str, db: str | None, workers: int,
         seed: int | None, timeout: float, warm_start: bool, quiet: bool) -> Any:
    import typer
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from vtatune.networks import runner

    columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[stats]}"), TimeElapsedColumn()]
    with Progress(*columns, console=console.err, disable=quiet, transient=False) as bar:
        task = bar.add_task(name, total=trials, stats="starting workers")

        def on_progress(p: runner.NetworkProgress) -> None:
            best = f"{1e3 * p.best_seconds:.3f} ms" if p.best_seconds is not None else "-"
            front = f", front {p.pareto_size}" if sp.objective == "area-latency" else ""
            bar.update(task, completed=p.done, stats=(
                f"best {best}{front}, {p.rate:.1f} layer evals/s, from store {p.cached}"))

        try:
            return runner.run(sp, sampler=sampler, trials=trials, study=name, db=db,
                              workers=workers, seed=seed, timeout=timeout,
                              warm_start=warm_start, on_progress=on_progress)
        except KeyboardInterrupt:
            console.error(f"interrupted: finished designs and layer results are stored; rerun "
                          f"with --study {name} to continue")
            raise typer.Exit(130) from None


def _report(result: Any, sp: Any, json_: bool) -> None:
    from vtatune.networks.summary import summarize
    from vtatune.store import Store

    store = Store(result.db if "://" in result.db else None)
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
            "pareto": data["pareto"], "top": data["top"]})
        return
    best = data["best_seconds"]
    console.line(f"study {result.study}: {data['trials']} designs ({result.new_trials} new; "
                 f"{result.evaluated} layer candidates evaluated, {result.cached} from the "
                 f"store) in {result.elapsed_s:.1f} s; {data['feasible']} feasible"
                 + (f"; best {1e3 * best:.3f} ms ({data['best_cycles']:,} cycles)"
                    if best is not None else ""))
    others = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != "ok")
    if others:
        console.line(f"not feasible: {others}")
    if result.exhausted:
        console.line("stopped early: no new hardware design left to propose (the hardware "
                     "space is exhausted)")
    rows = data["pareto"] if data["objective"] == "area-latency" else data["top"]
    if rows:
        title = ("Pareto front (area vs network latency)"
                 if data["objective"] == "area-latency" else "fastest designs")
        console.table(title, ["trial", "ms", "cycles", "area mm2", "of bound", "hardware"],
                      [[r["trial"], round(1e3 * (r["seconds"] or 0), 3), r["cycles"],
                        round(r["area_mm2"] or 0, 2),
                        f"{100 * (r['efficiency'] or 0):.0f}%", r["hw_name"]] for r in rows])
    else:
        console.line("no feasible design yet")
    console.line(f"results: {result.db} (per-layer breakdown: vtatune show {result.study})")


def show_network(store: Any, info: Any, json_: bool) -> None:
    """A network study: counts, then every front design with its per-layer breakdown."""
    from vtatune.cli.studies import aligned
    from vtatune.networks.summary import summarize

    data = summarize(info, store.network_trials(info.name))
    if json_:
        console.print_json(data)
        return
    console.line(f"study {info.name}: network {data['network']} on {info.board}, objective "
                 f"{info.objective}, sampler {info.sampler} ({store.display_url})")
    others = ", ".join(f"{k} {v}" for k, v in data["statuses"].items() if k != "ok")
    best = data["best_seconds"]
    console.line(f"{data['trials']} designs, {data['feasible']} feasible"
                 + (f" (not feasible: {others})" if others else "")
                 + (f", best {1e3 * best:.3f} ms ({data['best_cycles']:,} cycles)"
                    if best is not None else "")
                 + f"; {data['evaluated']} layer candidates evaluated, {data['cached']} from "
                 "the store" + (f"; {data['running']} design(s) interrupted (rerun the search "
                                "to continue)" if data["running"] else ""))
    if not data["feasible"]:
        console.line("no feasible design yet")
        return
    if info.objective == "area-latency":
        rows = data["pareto"]
        console.line(f"Pareto front, area_mm2 vs network latency ({len(rows)} designs):")
    else:
        rows = data["top"]
        console.line(f"top {len(rows)} designs by network latency:")
    for r in rows:
        console.line("")
        console.line(f"trial {r['trial']}: {r['hw_name']}, {1e3 * r['seconds']:.3f} ms "
                     f"({r['cycles']:,} cycles, {100 * (r['efficiency'] or 0):.0f}% of the "
                     f"bound), {r['area_mm2']:.2f} mm2")
        for text in aligned(
                ["  layer", "count", "cycles", "ms", "share", "trials", "knobs"],
                [[f"  {la['name']}", la["count"], la["cycles"],
                  None if la["seconds"] is None else round(1e3 * la["seconds"], 4),
                  "-" if la["share"] is None else f"{100 * la['share']:.1f}%", la["trials"],
                  ",".join(f"{k}={v}" for k, v in sorted(la["knobs"].items()))]
                 for la in r["layers"]]):
            console.line(text)
