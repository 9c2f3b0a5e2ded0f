"""``vtatune search``: joint hardware x schedule search, stored in a database."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from vtatune.cli import console
from vtatune.cli.options import (
    SEED_MAX,
    TIMEOUT_MAX_S,
    TRIALS_MAX,
    WORKERS_MAX,
    DbOption,
    JsonOption,
    LayerOption,
    PassesOption,
    ShapeOption,
    finite_in,
    int_in,
    valid_text,
)
from vtatune.search import samplers
from vtatune.studies import DEFAULT_SAMPLER


def search(
    workloads: Annotated[list[str] | None, typer.Argument(
        metavar="WORKLOAD",
        help="Operator (see `vtatune operators`), network (resnet18, a network file) or ONNX "
        "model (MODEL.onnx); default: the --space file's, else conv2d. Several networks (or "
        "a network-set file): one accelerator for all of them.",
        show_default=False)] = None,
    layer: LayerOption = None,
    shape: ShapeOption = None,
    space: Annotated[str | None, typer.Option(
        "--space", help="Space file (default: spaces/<workload>.toml).")] = None,
    hw: Annotated[str | None, typer.Option(
        "--hw", help="Fix the hardware to this config: a schedule-only search.")] = None,
    board: Annotated[str | None, typer.Option(
        "--board", help="Target board (default: the space's).")] = None,
    trials: Annotated[int, typer.Option("--trials", "-n", callback=int_in(1, TRIALS_MAX),
                                        help="Trials the study should hold.")] = 100,
    sampler: Annotated[str | None, typer.Option(
        "--sampler", help=f"{samplers.described()} (default {DEFAULT_SAMPLER}; for a network: "
        "over its hardware designs).")] = None,
    objective: Annotated[str | None, typer.Option(
        "--objective", help="area-latency (Pareto front) or latency; with the accelerator's "
        "energy: area-energy, latency-energy (fronts), edp (energy x latency) or "
        "area-latency-energy (a front of three).")] = None,
    latency: Annotated[str | None, typer.Option(
        "--latency", help="What latency means: end-to-end (seconds per call, accelerator + "
        "host; default) or accelerator (cycles). Default: the space's [objective] latency.")
    ] = None,
    study: Annotated[str | None, typer.Option(
        "--study", callback=valid_text,
        help="Study name; an existing study is continued.")] = None,
    db: DbOption = None,
    workers: Annotated[int, typer.Option(
        "--workers", "-j", callback=int_in(0, WORKERS_MAX),
        help="Evaluation worker processes (0: one per core).")] = 0,
    seed: Annotated[int | None, typer.Option("--seed", callback=int_in(0, SEED_MAX),
                                             help="Sampler seed.")] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", callback=finite_in(0.0, TIMEOUT_MAX_S),
        help="Seconds one evaluation may take before it is stopped.")] = 120.0,
    warm_start: Annotated[bool, typer.Option(
        "--warm-start/--no-warm-start",
        help="xgb: learn from stored results of the workload in other studies.")] = True,
    passes: PassesOption = None,
    layer_trials: Annotated[int | None, typer.Option(
        "--layer-trials", callback=int_in(1, TRIALS_MAX),
        help="Network search: layer evaluations per hardware design (default: the space's "
        "[inner] trials).")] = None,
    inner_sampler: Annotated[str | None, typer.Option(
        "--inner-sampler", help="Network search: how each design's layers are tuned: xgb (one "
        "cost model across layers and designs) or random.")] = None,
    stock_vta: Annotated[bool, typer.Option(
        "--stock-vta", help="Keep to hardware designs stock VTA (apache/tvm-vta as it is) "
        "builds on the board, as stock_vta = true in the space file's constraints does; "
        "the others are screened out before they become trials.")] = False,
    weights: Annotated[str | None, typer.Option(
        "--weights", help="Several networks: each one's weight in the objective (the weighted "
        "sum of their latencies), one positive number per network, in order (default 1 "
        "each), e.g. 3,1.")] = None,
    json_: JsonOption = False,
) -> None:
    """Search hardware parameters and schedule knobs of WORKLOAD together.

    Every candidate is compiled through the VTA passes, checked against its SRAMs and the board,
    simulated, and stored; identical candidates are served from the store. WORKLOAD may be a
    network (resnet18 and the zoo's others, --space FILE with a [network] table, or an ONNX
    model MODEL.onnx): a trial is then one hardware design with every layer's schedule tuned.
    Several networks (or a network-set file): one design for all of them, the objective the
    weighted sum of their latencies (--weights).

    Examples:

    \b
      vtatune search conv2d --layer C8 --trials 200   # hardware x schedule
      vtatune search dense --shape 16,512,512 --hw default --trials 50
      vtatune search resnet18 --trials 20             # one VTA, every layer
      vtatune search resnet18 mobilenet_v1 --weights 3,1   # one VTA for both
      vtatune search --space my.toml --study mine     # rerun: continues
    """
    from vtatune import studies

    job = studies.plan_search(workloads or None, weights=weights, space=space, layer=layer,
                              shape=shape, hw=hw, board=board, trials=trials, sampler=sampler,
                              objective=objective, study=study, workers=workers, seed=seed,
                              timeout=timeout, latency=latency, passes=passes,
                              layer_trials=layer_trials, inner_sampler=inner_sampler,
                              stock_vta=stock_vta)
    if _held(job.study, db) < trials:  # (a rerun with nothing to do answers without TVM)
        _start_workers_server()
    # an unreachable database or a study made for something else fails here, before any
    # progress output
    job.check(db)
    result = _run(job, trials, db, workers or os.cpu_count() or 1, seed, timeout, warm_start,
                  quiet=json_)
    if job.network:
        from vtatune.cli.network import _report as report_network

        report_network(result, job.space, json_, db)
        if result.mirror_error:
            console.error(f"warning: the Optuna dashboard copy of the study was not updated "
                          f"({result.mirror_error}); the results are stored")
    else:
        _report(result, json_, db, exportable=job.space.passes is None)


def _held(study: str, db: str | None) -> int:
    """How many trials ``study`` holds in ``db`` (0 when there is no such database or study;
    what is wrong with them is said later, by the search)."""
    from vtatune.errors import UserError
    from vtatune.store import Store, database_exists

    try:
        if not database_exists(db):
            return 0
        return Store(db, readonly=True).trial_count(study)
    except (UserError, ValueError):
        return 0


def _start_workers_server() -> None:
    """Start the evaluation workers' fork server (TVM's import, ~1 s of CPU) as soon as the
    search's input is read, beside the rest of this process's set-up (opening the store and
    the study, the sampler), so that the first workers are ready when the first candidates
    are; a search that turns out to have nothing to evaluate (a complete study) kills it
    unused at exit."""
    from vtatune.search.workers import boot

    boot()


def _run(job: Any, trials: int, db: str | None, workers: int, seed: int | None,
         timeout: float, warm_start: bool, quiet: bool) -> Any:
    from vtatune.escaping import shell_word
    from vtatune.store import normalize_url

    header = job.describe(trials, workers, _hide_password(normalize_url(db)))
    with console.Progress(job.study, trials, header=header, quiet=quiet,
                          waiting=f"starting {workers} worker"
                                  f"{'s' if workers != 1 else ''} (TVM loads, first compiles)"
                          ) as bar:
        line = _network_line if job.network else _operator_line(job.space)
        try:
            return job.run(trials=trials, db=db, workers=workers, seed=seed, timeout=timeout,
                           warm_start=warm_start,
                           on_progress=lambda p: bar.update(p.done, line(job.space, p),
                                                            position=p.done + p.partial))
        except KeyboardInterrupt:
            what = "designs and layer results" if job.network else "trials"
            console.error(f"interrupted: finished {what} are stored; rerun with --study "
                          f"{shell_word(job.study)} to continue")
            raise typer.Exit(130) from None


def _operator_line(sp: Any) -> Any:
    """The progress line of an operator search."""
    from vtatune import formats
    from vtatune.hardware import boards

    clock = boards.load(sp.board).clock_mhz

    def line(sp: Any, p: Any) -> str:
        if sp.latency == "accelerator" or p.best_seconds is None:
            best = "-" if p.best_cycles is None else (
                f"{formats.ms_of_cycles(p.best_cycles, clock)} ms "
                f"({formats.cycles(p.best_cycles)} cycles)")
        else:  # the study's latency: end to end per call, as its tables
            best = f"{formats.ms(1e3 * p.best_seconds)} ms per call"
        front = f", front {p.pareto_size}" if is_front(sp.objective) else ""
        screened = sum(p.screened.values())
        return (f"{p.rate:.1f} trials/s, best {best}{front}{_energy_text(sp, p)}, infeasible "
                f"{formats.percent(p.infeasible_share)}, from store {p.cached}"
                + console.screened_note(screened))

    return line


def _network_line(sp: Any, p: Any) -> str:
    """The progress line of a network search (its rate counts layer evaluations)."""
    from vtatune import formats

    # (the least latency alone: the fewest cycles may be another design's)
    best = "-" if p.best_seconds is None else f"{formats.ms(1e3 * p.best_seconds)} ms per run"
    front = f", front {p.pareto_size}" if is_front(sp.objective) else ""
    screened = sum(p.screened.values())
    return (f"best {best}{front}{_energy_text(sp, p)}, {p.rate:.1f} layer evals/s, "
            f"from store {p.cached}" + console.screened_note(screened))


def is_front(objective: str) -> bool:
    from vtatune.search import objectives

    return objectives.is_front(objective)


def _energy_text(sp: Any, p: Any) -> str:
    """``, least energy 1.2 mJ`` for a study whose objective has energy ("" otherwise)."""
    from vtatune import formats
    from vtatune.search import objectives

    if not objectives.uses_energy(sp.objective):
        return ""
    return f", least energy {formats.energy(p.best_energy_j)}"


def _hide_password(url: str) -> str:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # a URL SQLAlchemy cannot parse: show none of it
        return "(database)"


def _report(result: Any, json_: bool, db: str | None, exportable: bool = True) -> None:
    from vtatune import formats
    from vtatune.search.summary import summarize
    from vtatune.store import Store

    store = Store(db, readonly=True)  # result.db hides the password
    data = summarize(store.study(result.study), store.trials(result.study))
    if json_:
        if result.mirror_error:
            console.error(f"warning: the Optuna dashboard copy of the study was not updated "
                          f"({result.mirror_error}); the results are stored")
        console.print_json({
            "study": result.study, "db": result.db, "trials": data["trials"],
            "new_trials": result.new_trials, "evaluated": result.evaluated,
            "cached": result.cached, "repeats": result.repeats,
            "feasible": data["feasible"],
            "best_cycles": data["best_cycles"], "best_seconds": data["best_seconds"],
            "best_accelerator_energy_j": data["best_accelerator_energy_j"],
            "elapsed_s": round(result.elapsed_s, 2),
            "statuses": data["statuses"], "objective": data["objective"],
            "latency": data["latency"],
            "pareto": [{k: r[k] for k in ("trial", "hw", "hw_name", "knobs", "cycles", "seconds",
                                          "accelerator_seconds", "host_seconds", "area_mm2",
                                          "efficiency", "accelerator_energy_j",
                                          "board_energy_j", "stock_vta",
                                          "stock_vta_problems", "timing_domain", "ties")}
                       for r in data["pareto"]],
            "top": data["top"], "exhausted": result.exhausted,
            "space_size": result.space_size, "screened": result.screened})
        return
    console.line(f"study {result.study}: {formats.counted(data['trials'], 'trial')} "
                 f"({result.new_trials} new: "
                 f"{result.evaluated} evaluated, {result.cached} from the store; "
                 f"{result.repeats} repeated proposals skipped) in "
                 f"{result.elapsed_s:.1f} s; {data['feasible']} feasible"
                 + (f"; best {formats.cycles(data['best_cycles'])} cycles"
                    if data["best_cycles"] else ""))
    wl = console.workload_of(data["workload"])
    if wl is not None:
        console.line(f"workload: {wl.summary()}")
    from vtatune.search.screen import summary_line

    if summary_line(result.screened):
        console.line(summary_line(result.screened))
    if result.exhausted:
        console.line(_exhausted(result, data["trials"]))
    elif result.new_trials == 0:
        console.line(console.nothing_new(result.study, data["trials"], "trial"))
    rows = data["pareto"] if is_front(data["objective"]) else data["top"]
    title = console.designs_title(data["objective"], data["latency"])
    if rows:
        console.designs(title, rows, wl)
    else:
        console.line("no feasible trial yet")
    console.line(f"results: {result.db}")
    for text in console.next_steps(result.study, result.db, db, data["objective"], exportable,
                                   feasible=bool(data["feasible"])):
        console.line(text)
    console.line(console.dashboard_step(result.db))
    if result.mirror_error:
        console.error(f"warning: the Optuna dashboard copy of the study was not updated "
                      f"({result.mirror_error}); the results are stored")


def _exhausted(result: Any, trials: int) -> str:
    """Why a search stopped before the requested number of trials."""
    if result.space_size is not None and result.space_screened:
        return (f"space exhausted after {trials:,} of {result.requested:,} requested trials: "
                f"every candidate of the space whose hardware passes the screen "
                f"({result.space_size:,}) has been evaluated; {result.space_screened:,} more "
                "are on hardware designs the screen refuses (see above)")
    if result.space_size is not None:
        return (f"space exhausted after {trials:,} of {result.requested:,} requested trials: "
                f"every candidate of the space ({result.space_size:,}) has been evaluated")
    return (f"stopped after {trials:,} of {result.requested:,} requested trials: no unseen "
            "candidate found by the sampler or by random draws (the space is too large to "
            "enumerate)")


def register(app: typer.Typer) -> None:
    app.command("search")(search)
