"""``vtatune space``: size of a knob space and how many of its candidates pass verification."""

from __future__ import annotations

import os
from collections import Counter
from typing import Annotated, Any

import typer

from vtatune.cli import console
from vtatune.cli.options import (
    WORKERS_MAX,
    HwOption,
    JsonOption,
    LayerOption,
    ShapeOption,
    WorkloadArg,
    int_in,
)


def space_cmd(
    workload: WorkloadArg = "conv2d",
    layer: LayerOption = None,
    shape: ShapeOption = None,
    hw: HwOption = "default",
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Worker processes (0: one per core).",
                                      callback=int_in(0, WORKERS_MAX))] = 0,
    json_: JsonOption = False,
) -> None:
    """Enumerate WORKLOAD's knob space on a config and compile every point."""
    from vtatune import schedules
    from vtatune.hardware import config
    from vtatune.workloads import parse

    wl = parse(workload, layer, shape)
    cfg = config.load(hw)
    space = schedules.knob_space(wl, cfg)
    points = list(space)
    results = _compile_all(wl, cfg, points, jobs or os.cpu_count() or 1, quiet=json_)
    status = Counter(r[0] for r in results)
    reasons = Counter(r[1] for r in results if r[1])
    summary = {
        "workload": wl.signature, "hw": cfg.name, "knobs": space.names,
        "axes": {k: list(v) for k, v in space.axes.items()},
        "product_size": space.product_size, "size": len(points),
        "valid": status.get("valid", 0), "invalid": status.get("invalid", 0),
        "failed": status.get("failed", 0),
        "rejections": dict(reasons.most_common()),
        "median_compile_ms": _median([r[2] for r in results]),
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


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else 0.0


def _compile_one(args: tuple[Any, Any, dict[str, int]]) -> tuple[str, str, float]:
    from vtatune.compiler import compile_candidate

    wl, cfg, k = args
    r = compile_candidate(wl, cfg, k)
    first = r.problems[0].what if r.problems else (r.reason.split(":")[0] if r.reason else "")
    return r.status, first, r.compile_ms


def _compile_all(wl: Any, cfg: Any, points: list[dict[str, int]], jobs: int, quiet: bool
                 ) -> list[tuple[str, str, float]]:
    from rich.progress import Progress

    work = [(wl, cfg, k) for k in points]
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
