"""``vtatune space``: size of a knob space and how many of its candidates pass verification;
with ``--simulate``, every candidate built and timed: the schedule space's exhaustive optimum."""

from __future__ import annotations

import os
from collections import Counter
from typing import Annotated, Any

import typer

from vtatune.cli import console
from vtatune.cli.options import (
    TIMEOUT_MAX_S,
    WORKERS_MAX,
    BoardOption,
    DbOption,
    HwOption,
    JsonOption,
    LayerOption,
    PassesOption,
    ShapeOption,
    WorkloadArg,
    finite_in,
    int_in,
    refuse_memory_db,
)
from vtatune.hardware.boards import DEFAULT_BOARD

#: Fastest candidates listed by ``--simulate`` (all of them are in ``--json`` and ``--csv``).
TOP = 10


def space_cmd(
    workload: WorkloadArg = "conv2d",
    layer: LayerOption = None,
    shape: ShapeOption = None,
    hw: HwOption = "default",
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Worker processes (0: one per core).",
                                      callback=int_in(0, WORKERS_MAX))] = 0,
    simulate: Annotated[bool, typer.Option(
        "--simulate", help="Also build and time every candidate on --board (isolated workers): "
        "the best schedule and the whole table.")] = False,
    board: BoardOption = DEFAULT_BOARD,
    csv: Annotated[str | None, typer.Option(
        "--csv", help="With --simulate: write every candidate to this CSV file.")] = None,
    db: DbOption = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", help="With --simulate: seconds one evaluation may take.",
        callback=finite_in(0.0, TIMEOUT_MAX_S))] = 120.0,
    passes: PassesOption = None,
    json_: JsonOption = False,
) -> None:
    """Enumerate WORKLOAD's knob space on a config and compile every point (with --simulate:
    build and time every point too)."""
    from vtatune import schedules
    from vtatune.cli.compile import load_passes
    from vtatune.compiler.result import COMPILE_STATUSES
    from vtatune.errors import UserError
    from vtatune.hardware import config
    from vtatune.workloads import parse

    wl = parse(workload, layer, shape)
    cfg = config.load(hw)
    if not simulate and (csv is not None or db is not None):
        raise UserError("--csv and --db go with --simulate")
    if simulate and passes is not None:
        raise UserError("--simulate does not take --passes yet: the exhaustive reference runs "
                        "the stock pipeline")
    user = load_passes(passes)
    if simulate:
        _simulate(wl, cfg, hw, board, jobs or os.cpu_count() or 1, csv, db, timeout, json_)
        return
    space = schedules.knob_space(wl, cfg)
    points = list(space)
    results = _compile_all(wl, cfg, points, jobs or os.cpu_count() or 1, quiet=json_,
                           passes=user)
    status = Counter(r[0] for r in results)
    reasons = Counter(r[1] for r in results if r[1])
    summary = {
        "workload": wl.signature, "hw": cfg.name, "knobs": space.names,
        "axes": {k: list(v) for k, v in space.axes.items()},
        "product_size": space.product_size, "size": len(points),
        **{s: status.get(s, 0) for s in COMPILE_STATUSES},
        "rejections": dict(reasons.most_common()),
        "median_compile_ms": _median([r[2] for r in results]),
        "passes": user.fingerprint if user is not None else None,
    }
    if json_:
        console.print_json(summary)
        return
    console.line(f"{wl.kind} {wl.name or wl.signature} on {cfg.name} ({cfg.shape_label})")
    for k, v in space.axes.items():
        console.line(f"  {k:<11} {', '.join(map(str, v))}   [{space.units.get(k, '')}]")
    console.line(f"knob space: {space.product_size:,} combinations, {len(points):,} legal; "
                 f"valid {summary['valid']:,}, invalid {summary['invalid']:,}, "
                 f"failed {summary['failed']:,}")
    if reasons:
        console.table("what rejected candidates", ["first problem", "candidates"],
                      [[k, v] for k, v in reasons.most_common(10)])
    console.line(f"median compile+verify: {summary['median_compile_ms']:.1f} ms per candidate")


def _simulate(wl: Any, cfg: Any, hw_arg: str, board: str, jobs: int, csv: str | None,
              db: str | None, timeout: float, quiet: bool) -> None:
    from rich.progress import Progress

    from vtatune import formats, schedules
    from vtatune.hardware import boards
    from vtatune.search import exhaustive

    boards.load(board)  # an unknown board is one line, before any work
    refuse_memory_db(db)
    csv_path = _writable(csv) if csv is not None else None
    keep = _Keeper(db, _constraints(wl.kind, hw_arg, board), board) if db is not None else None
    n = len(schedules.knob_space(wl, cfg))
    with Progress(console=console.err, transient=True, disable=quiet) as bar:
        task = bar.add_task("simulating", total=n)

        def got(rec: Any, new: bool) -> None:
            if keep is not None and new:
                keep.save(rec)
            bar.advance(task)

        ref = exhaustive.reference(wl, cfg, board, workers=jobs, timeout=timeout,
                                   known=None if keep is None else keep.served, on_record=got)
    rows = [_row(r) for r in ref.records]
    best = ref.best
    summary = {
        "workload": wl.signature, "hw": cfg.name, "board": board, "size": len(rows),
        "statuses": dict(ref.statuses.most_common()),
        "best": _row(best) if best is not None else None,
        "candidates": rows,
    }
    if csv_path is not None:
        _write_csv(csv_path, rows, list(schedules.knob_space(wl, cfg).names))
    if quiet:
        console.print_json(summary)
        return
    console.line(f"{wl.kind} {wl.name or wl.signature} on {cfg.name} ({cfg.shape_label}), "
                 f"board {board}: {len(rows):,} candidates built and timed")
    console.line("statuses: " + ", ".join(f"{k} {v:,}" for k, v in ref.statuses.most_common()))
    if best is None:
        console.line("no feasible candidate")
    else:
        console.line(f"best: {formats.knobs(best.knobs)}: {formats.cycles(best.cycles)} "
                     f"cycles, {formats.ms(_ms(best.seconds))} ms")
        fastest = sorted((r for r in ref.records if r.feasible and r.cycles is not None),
                         key=lambda r: r.cycles)[:TOP]  # type: ignore[arg-type,return-value]
        console.table(f"the {len(fastest)} fastest", ["knobs", "cycles", "ms", "efficiency"],
                      [[formats.knobs(r.knobs), formats.cycles(r.cycles),
                        formats.ms(_ms(r.seconds)), formats.percent(r.efficiency)]
                       for r in fastest])
    if csv_path is not None:
        console.line(f"every candidate: {csv_path}")
    if keep is not None:
        console.line(f"stored in {keep.store.display_url}")


def _constraints(kind: str, hw: str, board: str) -> dict[str, Any]:
    """The constraints of the space ``vtatune search KIND --hw HW --board BOARD`` searches."""
    from vtatune.search import space as spaces
    from vtatune.studies import default_space

    return spaces.load(default_space(kind, hw), workload=kind, hw=hw, board=board,
                       objective="latency").constraints


def _row(r: Any) -> dict[str, Any]:
    return {"knobs": dict(r.knobs), "status": r.status, "reason": r.reason,
            "cycles": r.cycles, "seconds": r.seconds}


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def _writable(path: str) -> Any:
    from pathlib import Path

    from vtatune.errors import UserError
    from vtatune.escaping import shown

    p = Path(path)
    try:
        fits = not p.is_dir() and p.parent.is_dir()
    except OSError as exc:  # a name too long for the file system, say
        raise UserError(f"--csv {shown(path)}: {exc.strerror or exc}") from None
    if not fits:
        raise UserError(f"--csv {shown(path)}: not a file in an existing folder")
    return p


def _write_csv(path: Any, rows: list[dict[str, Any]], knobs: list[str]) -> None:
    import csv as csv_mod
    import io

    from vtatune.errors import UserError
    from vtatune.escaping import csv_cell, shown

    buf = io.StringIO()
    w = csv_mod.writer(buf, lineterminator="\n")
    w.writerow([*knobs, "status", "reason", "cycles", "seconds"])
    for r in rows:
        w.writerow([*(r["knobs"].get(k, "") for k in knobs), r["status"],
                    csv_cell(r["reason"]),  # a reason can quote user text: never a formula
                    "" if r["cycles"] is None else r["cycles"],
                    "" if r["seconds"] is None else repr(r["seconds"])])
    try:
        path.write_text(buf.getvalue(), encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write --csv {shown(str(path))}: {exc.strerror or exc}") from None


class _Keeper:
    """The results database of ``--db``: records stored as ``vtatune search --hw`` on the
    same board stores them (the schedule space's constraints), so each serves the other."""

    def __init__(self, db: str, constraints: dict[str, Any], board: str):
        from vtatune.store import Store
        from vtatune.store.identity import context

        self.store = Store(db)
        self.ctx = context(board, constraints)

    def served(self, cands: list[Any]) -> dict[str, Any]:
        """Stored records of ``cands`` measured in this context with a reusable outcome."""
        return self.store.lookup_many([c.key for c in cands], self.ctx.key)

    def save(self, rec: Any) -> None:
        from vtatune.search.runner import stamp

        self.store.save(stamp(rec, self.ctx))


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else 0.0


def _compile_one(args: tuple[Any, Any, dict[str, int], Any]) -> tuple[str, str, float]:
    from vtatune.compiler import compile_candidate

    wl, cfg, k, passes = args
    r = compile_candidate(wl, cfg, k, passes=passes)
    first = r.problems[0].what if r.problems else (r.reason.split(":")[0] if r.reason else "")
    return r.status, first, r.compile_ms


def _compile_all(wl: Any, cfg: Any, points: list[dict[str, int]], jobs: int, quiet: bool,
                 passes: Any = None) -> list[tuple[str, str, float]]:
    from rich.progress import Progress

    # a PassSet travels to the worker processes as its path and fingerprint (re-imported)
    work = [(wl, cfg, k, passes) for k in points]
    with Progress(console=console.err, transient=True, disable=quiet) as bar:
        task = bar.add_task("compiling", total=len(work))
        if jobs <= 1:
            out = []
            for w in work:
                out.append(_compile_one(w))
                bar.advance(task)
            return out
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            out = []
            for r in pool.map(_compile_one, work, chunksize=8):
                out.append(r)
                bar.advance(task)
            return out


def register(app: typer.Typer) -> None:
    app.command("space")(space_cmd)
