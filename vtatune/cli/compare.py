"""``vtatune compare STUDY...``: fronts, convergence and hypervolumes of several studies."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vtatune import formats
from vtatune.cli import console
from vtatune.cli.options import DbOption, JsonOption, valid_text
from vtatune.cli.report import OutOption, default_out, open_study, point_json, write_files

if TYPE_CHECKING:
    from vtatune.reports.study import Study

StudiesArg = Annotated[list[str], typer.Argument(
    help="Study names (same workload and board), e.g. one per sampler.", callback=valid_text)]


#: What the table's best-latency column holds, per study latency (a network's: end to end).
BEST_MS = {"end-to-end": "the least time per call, end to end (accelerator + host), as in "
                         "show, report and compare.csv",
           "accelerator": "the least accelerator time (cycles at the board clock), as in "
                          "show, report and compare.csv",
           "network": "the least network latency, end to end (accelerator + host per layer "
                      "run), as in show, report and compare.csv",
           "networks": "the least weighted sum of the networks' latencies (each end to end), "
                       "the studies' objective, as in show, report and compare.csv"}


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
    from vtatune.cli.studies import aligned
    from vtatune.errors import UserError
    from vtatune.reports import safe_name, write_comparison
    from vtatune.reports.data import WEIGHTED_SUM, require_comparable, study_latency
    from vtatune.reports.study import compare_data

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
    net = kind == "network"
    infos = [s.info for s in loaded]
    # a network study's network but its host operators (listed by newer versions only)
    # several networks: the objective is their weighted sum, so the same networks AND
    # weights, or the latencies are different quantities
    require_comparable(infos, [("networks and weights", _weights, _weights_text),
                               ("network", _compared_network, _short),
                               ("board", lambda i: i.board, str)] if net else
                       [("workload", lambda i: i.workload, str),
                        ("board", lambda i: i.board, str), ("latency", study_latency, str)])
    latency = study_latency(infos[0])
    members = _weights(infos[0]) if net else None
    if not any(s.has_feasible for s in loaded):
        raise UserError(f"none of the studies has a feasible {loaded[0].noun}: every front "
                        "is empty")
    data = compare_data(loaded)
    folder = out if out is not None else default_out(
        "compare-" + "-vs-".join(safe_name(n, 40) for n in names))
    files = write_files(lambda: write_comparison(data, folder), folder)
    elapsed = time.perf_counter() - t0
    if json_:
        console.print_json({
            "db": loaded[-1].display_url, "out": str(folder),
            "files": {k: str(v) for k, v in files.items()},
            **({"network": data.network} if net else {"workload": data.workload}),
            "board": data.board, "ref_point": data.ref_point,
            **({} if net else {"latency": latency}),
            **({"networks": members, "objective_latency": WEIGHTED_SUM} if members else {}),
            "studies": [{"study": s.study, "sampler": s.sampler, "trials": s.n_trials,
                         "feasible": s.n_feasible,
                         **({"layer_evaluations": s.evaluated} if net else
                            {"best_cycles": s.best_cycles}), "best_ms": s.best_ms,
                         "best_accelerator_energy_j": s.least_energy_j,
                         "hypervolume": s.hypervolume, "front_size": len(s.front),
                         "front": [point_json(p) for p in s.front]} for s in data.series],
            "elapsed_s": elapsed})
        return
    ref = data.ref_point
    hv = (" hypervolume: share of one box in log area and log "
          + ("network latency" if net else "latency")
          + ", from the fronts' ideal point to 10% beyond their nadir")
    ref_text = (f" (reference point {formats.area(ref[0])} mm², {formats.ms(ref[1])} ms)"
                if ref else "")
    if members:
        console.line(f"network {data.network} on {data.board}; latency: the {WEIGHTED_SUM} "
                     f"({_weights_text(members)});{hv}{ref_text}")
    elif net:
        console.line(f"network {data.network} on {data.board};{hv}{ref_text}")
    else:
        console.line(f"{data.workload} on {data.board};{hv}{ref_text}" if ref else data.workload)
    # "ms" is what the studies minimize, as show, report, compare.csv and index.html give it
    best_ms = "best ms" if latency == "end-to-end" else "best accel ms"
    energy = any(s.least_energy_j is not None for s in data.series)  # known: a column

    def least(s: Any) -> list[str]:
        return [formats.energy(s.least_energy_j)] if energy else []

    if net:
        for text in aligned(["study", "sampler", "designs", "feasible", "best ms", "front",
                             "hypervolume", "layer evals",
                             *(["least energy"] if energy else [])],
                            [[s.study, s.sampler, s.n_trials, s.n_feasible,
                              formats.ms(s.best_ms), len(s.front) if s.front else "empty",
                              formats.hypervolume(s.hypervolume), s.evaluated, *least(s)]
                             for s in data.series]):
            console.line(text)
    else:
        rows = [[s.study, s.sampler, formats.count(s.n_trials), formats.count(s.n_feasible),
                 formats.cycles(s.best_cycles), formats.ms(s.best_ms),
                 str(len(s.front)) if s.front else "empty",
                 formats.hypervolume(s.hypervolume), *least(s)]
                for s in data.series]
        console.table(None, ["study", "sampler", "trials", "feasible", "best cycles", best_ms,
                             "front", "hypervolume", *(["least energy"] if energy else [])],
                      rows, right=[False, False] + [True] * (6 + energy))
    console.line(f"{best_ms}: {BEST_MS['networks' if members else 'network' if net else latency]}")
    if energy:
        console.line("least energy: the least energy of the accelerator per "
                     f"{'inference' if net else 'call'} among feasible "
                     f"{'designs' if net else 'trials'} (an estimate: docs/methods/energy.md)")
    console.line(f"wrote {Path(folder) / 'index.html'}, compare.png, compare.svg, compare.csv "
                 f"in {elapsed:.1f} s")


#: Why a study cannot join a comparison of studies of another kind (the first study's).
_OTHER_KIND = {"operator": "is a network study: compare it with network studies",
               "network": "is not a network study: compare network studies with network "
                          "studies"}
#: What a study needs before it can be compared, by kind.
_NOTHING_YET = {"operator": "trials", "network": "finished design"}


def _compared_network(info: Any) -> Any:
    """What two network studies must share to be compared: their network but its host
    operators (which a study made before they were listed does not carry); of several
    networks, the union of their layers."""
    network = (info.space or {}).get("network")
    if not isinstance(network, dict):
        return network
    # several networks: the union's description names the weights, compared on their own
    drop = {"host_ops", "description"} if _weights(info) else {"host_ops"}
    return {k: v for k, v in network.items() if k not in drop}


def _weights(info: Any) -> list[dict[str, Any]] | None:
    """A study of several networks: each network's name and weight (None for one)."""
    from vtatune.reports.data import study_networks

    return [{"network": m.network, "weight": m.weight} for m in study_networks(info)] or None


def _weights_text(v: Any) -> str:
    if not v:
        return "one network"
    return " + ".join(f"{m['weight']:g} x {m['network']}" for m in v)


def _short(v: Any) -> str:
    if isinstance(v, dict):
        return f"{v.get('name', '?')} ({formats.counted(len(v.get('layers', [])), 'layer')})"
    return str(v)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
