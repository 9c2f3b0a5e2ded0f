"""``vtatune compare STUDY...``: fronts, convergence and hypervolumes of several studies."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.options import DbOption, JsonOption, valid_text
from vtatune.cli.report import OutOption, default_out, open_study, point_json, write_files

if TYPE_CHECKING:
    from vtatune.reports.study import Study

StudiesArg = Annotated[list[str], typer.Argument(
    help="Study names (same workload and board), e.g. one per sampler.", callback=valid_text)]


#: What the table's best-latency column holds, per study latency.
BEST_MS = {"end-to-end": "the least time per call, end to end (accelerator + host), as in "
                         "show, report and compare.csv",
           "accelerator": "the least accelerator time (cycles at the board clock), as in "
                          "show, report and compare.csv"}


def compare(studies: StudiesArg, db: DbOption = None, out: OutOption = None,
            json_: JsonOption = False) -> None:
    """Compare studies: overlaid fronts and convergence, hypervolumes, a table.

    Hypervolumes share one reference point. Writes compare.png/.svg, compare.csv and
    index.html.

    Examples:

    \b
      vtatune compare conv2d-C8-xgb conv2d-C8-tpe conv2d-C8-random
      vtatune compare conv2d-C8-xgb conv2d-C8-tpe --json | jq '.studies[]'
    """
    from vtatune.errors import UserError

    t0 = time.perf_counter()
    names = list(dict.fromkeys(studies))
    loaded: list[Study] = []
    for name in names:
        study = open_study(name, db)
        kind = loaded[0].kind if loaded else study.kind
        if study.kind != kind:
            raise UserError(f"study '{name}' {_OTHER_KIND[kind]}")
        if not study.finished:
            raise UserError(f"study '{name}' has no {_NOTHING_YET[kind]} yet")
        loaded.append(study)
    _COMPARE[kind](loaded, out, json_, t0)


#: Why a study cannot join a comparison of studies of another kind (the first study's).
_OTHER_KIND = {"operator": "is a network study: compare it with network studies",
               "network": "is not a network study: compare network studies with network "
                          "studies"}
#: What a study needs before it can be compared, by kind.
_NOTHING_YET = {"operator": "trials", "network": "finished design"}


def compare_operators(studies: list[Study], out: Path | None, json_: bool, t0: float) -> None:
    """``vtatune compare`` of operator studies (same workload, board and latency)."""
    from vtatune.errors import UserError
    from vtatune.reports import compare_data, safe_name, write_comparison

    names = [s.name for s in studies]
    where = studies[-1].display_url
    from vtatune.reports.data import require_comparable, study_latency

    loaded = [(s.info, list(s.trials)) for s in studies]
    require_comparable([info for info, _ in loaded],
                       [("workload", lambda i: i.workload, str), ("board", lambda i: i.board, str),
                        ("latency", study_latency, str)])
    kinds = {study_latency(info) for info, _ in loaded}
    if not any(t.candidate.feasible for _, trials in loaded for t in trials):
        raise UserError("none of the studies has a feasible trial: every front is empty")
    data = compare_data(loaded)
    latency = kinds.pop()
    folder = out if out is not None else default_out(
        "compare-" + "-vs-".join(safe_name(n, 40) for n in names))
    files = write_files(lambda: write_comparison(data, folder), folder)
    elapsed = time.perf_counter() - t0
    if json_:
        console.print_json({
            "db": where, "out": str(folder), "files": {k: str(v) for k, v in files.items()},
            "workload": data.workload, "board": data.board, "ref_point": data.ref_point,
            "latency": latency,
            "studies": [{"study": s.study, "sampler": s.sampler, "trials": s.n_trials,
                         "feasible": s.n_feasible, "best_cycles": s.best_cycles,
                         "best_ms": s.best_ms,
                         "hypervolume": s.hypervolume, "front_size": len(s.front),
                         "front": [point_json(p) for p in s.front]} for s in data.series],
            "elapsed_s": elapsed})
        return
    ref = data.ref_point
    console.line(f"{data.workload} on {data.board}; hypervolume: share of one box in log area "
                 f"and log latency, from the fronts' ideal point to 10% beyond their nadir "
                 f"(reference point {formats.area(ref[0])} mm², {formats.ms(ref[1])} "
                 f"ms)" if ref else data.workload)
    rows = [[s.study, s.sampler, formats.count(s.n_trials), formats.count(s.n_feasible),
             formats.cycles(s.best_cycles), formats.ms(s.best_ms),
             str(len(s.front)) if s.front else "empty", f"{s.hypervolume:.3f}"]
            for s in data.series]
    # "ms" is what the studies minimize, as show, report, compare.csv and index.html give it
    best_ms = "best ms" if latency == "end-to-end" else "best accel ms"
    console.table(None, ["study", "sampler", "trials", "feasible", "best cycles", best_ms,
                         "front", "hypervolume"], rows, right=[False, False] + [True] * 6)
    console.line(f"{best_ms}: {BEST_MS[latency]}")
    console.line(f"wrote {Path(folder) / 'index.html'}, compare.png, compare.svg, compare.csv "
                 f"in {elapsed:.1f} s")


def _compare_networks(studies: list[Study], out: Path | None, json_: bool, t0: float) -> None:
    from vtatune.cli.network import compare_network

    compare_network(studies, out, json_, t0)


#: The comparison of studies of each kind.
_COMPARE: dict[str, Callable[[list[Study], Path | None, bool, float], None]] = {
    "operator": compare_operators, "network": _compare_networks}


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
