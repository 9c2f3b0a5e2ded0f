"""``vtatune studies``: every study in a results database, with its progress."""

from __future__ import annotations

from typing import Any

import typer

from vtatune.cli import console
from vtatune.cli.options import DbOption, JsonOption


def studies(db: DbOption = None, json_: JsonOption = False) -> None:
    """List the studies in the results database (trials, feasible, best ms and cycles; the
    least accelerator energy when a study has energy)."""
    from vtatune import formats
    from vtatune.reports.study import best_ms
    from vtatune.store import Store, database_exists, normalize_url

    exists = database_exists(db)  # a read-only command does not create a SQLite file
    store = Store(db, readonly=True) if exists else None
    where = store.display_url if store else normalize_url(db)
    infos = store.studies() if store else []
    best = {i.name: best_ms(i, store) for i in infos} if store else {}
    if json_:
        console.print_json({"db": where, "studies": [{**_as_json(i), "best_ms": best[i.name]}
                                                     for i in infos]})
        return
    if not infos:
        console.line(f"no studies in {where}" + ("" if exists else " (no database there yet)"))
        return
    energy = any(i.best_accelerator_energy_j is not None for i in infos)  # known: a column
    rows: list[list[Any]] = [
        [i.name, i.n_trials, i.n_feasible, formats.ms(best[i.name]),
         "-" if i.best_cycles is None else i.best_cycles,
         *([formats.energy(i.best_accelerator_energy_j)] if energy else []),
         i.objective, i.sampler, i.board, _when(i.created_at), i.workload + _weights(i)]
        for i in infos
    ]
    for text in aligned(["study", "trials", "feasible", "best ms", "best cycles",
                         *(["least energy"] if energy else []), "objective", "sampler",
                         "board", "created", "workload"], rows):
        console.line(text)
    n = len(infos)
    console.line(f"{n} {'study' if n == 1 else 'studies'} in {where}; "
                 "details: vtatune show STUDY")


def aligned(columns: list[str], rows: list[list[Any]]) -> list[str]:
    """Plain text columns (numbers right-aligned) that are never cut: long values go last."""
    right = [bool(rows) and all(console.is_numeric(r[k]) for r in rows)
             for k in range(len(columns))]
    return console.aligned(columns, [[_cell(v) for v in r] for r in rows], right)


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def _as_json(i: Any) -> dict[str, Any]:
    return {"name": i.name, "workload": i.workload, "sampler": i.sampler,
            "objective": i.objective, "board": i.board, "seed": i.seed, "trials": i.n_trials,
            "feasible": i.n_feasible, "best_cycles": i.best_cycles,
            "best_accelerator_energy_j": i.best_accelerator_energy_j,
            "created_at": i.created_at.isoformat() if i.created_at else None,
            "optuna_study_name": i.optuna_study_name,
            **({"networks": [{"network": m.network, "weight": m.weight}
                             for m in _networks(i)]} if _networks(i) else {})}


def _networks(i: Any) -> tuple[Any, ...]:
    """A study of several networks: its networks and weights (empty otherwise)."""
    from vtatune.reports.data import study_networks

    return study_networks(i) if i.is_network else ()


def _weights(i: Any) -> str:
    """`` (weights 3,1)`` for a study of several networks: its best cycles are the weighted
    sum's, and two studies of the same networks differ by their weights."""
    nets = _networks(i)
    return " (weights " + ",".join(f"{m.weight:g}" for m in nets) + ")" if nets else ""


def _when(dt: Any) -> str:
    return "-" if dt is None else dt.astimezone().strftime("%Y-%m-%d %H:%M")


def register(app: typer.Typer) -> None:
    app.command("studies")(studies)
