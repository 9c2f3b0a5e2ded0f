"""``make bench``: vtatune's speed figures, measured in one process on this machine.

    python -m vtatune.bench [--write-readme] [--quick]

Compile: compile+verify milliseconds per candidate over ResNet-18 C2's whole knob space at the
default config (median, p90; one process, after a warm-up that registers the intrinsics).
Runtime/simulator, area, store and search figures come from each package's ``bench`` module
(the search quality part runs the real search loop; the full run takes ~20 minutes, ``--quick``
a few). With ``--write-readme`` the Markdown table replaces the block between the bench markers
in README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

from vtatune.paths import project_root

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def bench_compile(quick: bool = False) -> list[tuple[str, str]]:
    """Compile+verify time per candidate over C2's knob space (or a tenth of it, quick)."""
    from vtatune import schedules
    from vtatune.compiler import compile_candidate
    from vtatune.hardware import config
    from vtatune.workloads import RESNET18

    hw, wl = config.default(), RESNET18["C2"]
    points = list(schedules.knob_space(wl, hw))
    if quick:
        points = points[::10]
    compile_candidate(wl, hw, schedules.suggest(wl, hw))  # warm-up: intrinsics, prim_func
    times, status = [], {"valid": 0, "invalid": 0, "failed": 0}
    t0 = time.perf_counter()
    for k in points:
        t = time.perf_counter()
        r = compile_candidate(wl, hw, k)
        times.append((time.perf_counter() - t) * 1e3)
        status[r.status] += 1
    wall = time.perf_counter() - t0
    times.sort()
    p90 = times[int(0.9 * (len(times) - 1))]
    return [
        ("C2 knob space compiled (default 1x16x16)",
         f"{len(points)} candidates: {status['valid']} valid, {status['invalid']} invalid, "
         f"{status['failed']} failed"),
        ("compile+verify per candidate, median", f"{statistics.median(times):.1f} ms"),
        ("compile+verify per candidate, p90", f"{p90:.1f} ms"),
        ("candidates per second, one process", f"{len(points) / wall:.1f}"),
    ]


def run(quick: bool = False) -> str:
    rows = bench_compile(quick)
    from vtatune.area.bench import bench_area
    from vtatune.runtime.bench import bench_simulator
    from vtatune.search.bench import bench_search
    from vtatune.store.bench import bench_store

    rows += bench_simulator() + bench_area() + bench_store() + bench_search(quick)
    lines = [f"Measured by `make bench` ({'quick' if quick else 'full'}) on {machine()}, "
             f"{time.strftime('%Y-%m-%d')}.", "", "| figure | value |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines)


def write_readme(table: str, readme: Path | None = None) -> None:
    path = readme or project_root() / "README.md"
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-readme", action="store_true", help="update README.md's table")
    ap.add_argument("--quick", action="store_true", help="a tenth of the knob space")
    args = ap.parse_args()
    table = run(args.quick)
    print(table)
    if args.write_readme:
        write_readme(table)


if __name__ == "__main__":
    main()
