"""``make bench``: vtatune's speed figures, measured in one process on this machine.

    python -m vtatune.bench [--write-readme] [--quick]

Compile: compile+verify milliseconds per candidate over ResNet-18 C2's whole knob space at the
default config (median, p90; one process, after a warm-up that builds the PrimFunc).
Runtime/simulator, timing accuracy (the timing model refitted on the measured Pynq-Z1
records: per-record, median, worst and leave-one-out error, rank agreement), area, store,
search, network, scale-out, ONNX import and code-size figures come from the other modules of
``vtatune.bench``, one per topic (the search quality part runs the real search loop; the full
run takes over an hour, ``--quick`` a few minutes). The full run also times the test suite
and ``make setup`` in a fresh clone with an empty pip cache (the .venv's size too). With
``--write-readme`` the Markdown table replaces the block between the bench markers in
README.md.
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
    from vtatune.compiler.result import FAILED, INVALID, VALID  # a compile's outcomes
    from vtatune.hardware import config
    from vtatune.workloads import RESNET18

    hw, wl = config.default(), RESNET18["C2"]
    points = list(schedules.knob_space(wl, hw))
    if quick:
        points = points[::10]
    compile_candidate(wl, hw, schedules.suggest(wl, hw))  # warm-up: prim_func cache
    times, status = [], {VALID: 0, INVALID: 0, FAILED: 0}
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
         f"{len(points)} candidates: {status[VALID]} valid, {status[INVALID]} invalid, "
         f"{status[FAILED]} failed"),
        ("compile+verify per candidate, median", f"{statistics.median(times):.1f} ms"),
        ("compile+verify per candidate, p90", f"{p90:.1f} ms"),
        ("candidates per second, one process", f"{len(points) / wall:.1f}"),
    ]


def _disk_mib(folder: Path) -> float:
    """Disk use of ``folder`` in MiB (as ``du``: allocated blocks, hard links once)."""
    seen, total = set(), 0
    for dirpath, _, files in os.walk(folder):
        for f in files:
            st = os.lstat(os.path.join(dirpath, f))
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total / 2**20


def bench_setup() -> list[tuple[str, str]]:
    """``make setup`` in a fresh clone with an empty pip cache: wall time and .venv size.

    Downloads every dependency from the package index (so it needs the network and depends
    on it); the clone is of the committed tree, as a new user gets it.
    """
    import shutil
    import subprocess
    import tempfile

    root = project_root()
    if not (root / ".git").exists() or shutil.which("make") is None:
        return [("`make setup` in a fresh clone", "not measured (needs a git checkout and make)")]
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "vtatune"
        subprocess.run(["git", "clone", "--quiet", str(root), str(clone)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PIP_NO_CACHE_DIR"] = "1"  # cold: every wheel downloaded, as on a new machine
        t = time.perf_counter()
        res = subprocess.run(["make", "setup"], cwd=clone, env=env, capture_output=True,
                             text=True)
        wall = time.perf_counter() - t
        if res.returncode != 0:
            tail = (res.stderr or res.stdout).strip().splitlines()[-1:]
            return [("`make setup` in a fresh clone", f"failed: {' '.join(tail)}")]
        size = _disk_mib(clone / ".venv")
    return [("`make setup` in a fresh clone (empty pip cache; default install: no torch, "
             "xgboost-cpu)", f"{wall:.0f} s, .venv {size:,.0f} MiB")]


def bench_tests() -> list[tuple[str, str]]:
    """The whole test suite as ``make test`` runs it (``pytest -n 2``): wall time and counts."""
    import re
    import subprocess
    import sys

    root = project_root()
    if not (root / "tests").is_dir():
        return []
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-p",
                          "no:cacheprovider"], cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - t
    summary = next((ln for ln in reversed(res.stdout.splitlines()) if " in " in ln), "")
    counts = ", ".join(re.findall(r"\d+ (?:passed|failed|skipped|errors?)", summary))
    return [(f"test suite (`make test`: pytest -n 2, {os.cpu_count()} cores)",
             f"{wall:.0f} s ({counts or 'no summary'})")]


def bench_reports(quick: bool = False) -> list[tuple[str, str]]:
    """Wall time of ``report``, ``export --pick knee`` and ``verify-export`` on a conv2d
    study of 500 trials (100 quick), each its own process as a user runs it."""
    import json
    import subprocess
    import sys
    import tempfile

    n = 100 if quick else 500
    cli = [sys.executable, "-m", "vtatune"]
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/reports.sqlite"
        out = subprocess.run([*cli, "search", "conv2d", "--trials", str(n), "--seed", "0",
                              "--db", db, "--json"], capture_output=True, text=True, check=True)
        study = json.loads(out.stdout)["study"]
        walls = []
        for args in (["report", study, "--out", f"{tmp}/report"],
                     ["export", study, "--pick", "knee", "--out", f"{tmp}/bundle"],
                     ["verify-export", f"{tmp}/bundle"]):
            t = time.perf_counter()
            subprocess.run([*cli, *args, "--db", db] if args[0] != "verify-export"
                           else [*cli, *args], capture_output=True, check=True)
            walls.append(time.perf_counter() - t)
    return [(f"`report` / `export --pick knee` / `verify-export` of a {n}-trial conv2d study "
             "(wall, one process each)", " / ".join(f"{w:.1f} s" for w in walls))]


#: Parts of the full run a ``--quick`` run can take in full (``--also``): each is minutes.
ALSO = ("timing", "heldout", "network-speed", "network-quality", "scaleout", "ab", "import",
        "tests", "setup")
#: Parts that run only when named in ``--also`` (full or quick run): issue 25's zoo searches
#: (``vtatune search resnet50``/``mobilenet_v1 --trials 100``), the two-network search
#: (``vtatune search resnet18 mobilenet_v1 --trials 100``) and the zoo's quality against an
#: exhaustive reference of each network (built on the first run: hours in a full run, minutes
#: in a quick one, which measures fewer layers on the quick hardware space).
OPTIONAL = ("zoo-speed", "multi-speed", "zoo-quality")


def run(quick: bool = False, also: tuple[str, ...] = ()) -> str:
    """The table; ``quick`` cuts every part short except those named in ``also``."""
    t0 = time.perf_counter()
    from vtatune.bench.code import bench_code, bench_kinds

    rows = bench_code() + bench_kinds() + bench_compile(quick)
    from vtatune.bench.area import bench_area
    from vtatune.bench.networks import bench_network_quality, bench_network_speed
    from vtatune.bench.runtime import bench_simulator
    from vtatune.bench.search import bench_search
    from vtatune.bench.store import bench_store
    from vtatune.bench.timing_model import bench_timing

    def short(part: str) -> bool:
        return quick and part not in also

    from vtatune.bench.energy import bench_energy

    rows += (bench_simulator() + bench_timing(short("timing")) + bench_area() + bench_energy()
             + bench_store(quick) + bench_search(quick, heldout_quick=short("heldout")))
    rows += (bench_reports(quick) + bench_network_speed(short("network-speed"))
             + bench_network_quality(short("network-quality")))
    from vtatune.bench.scaleout import bench_scaleout

    rows += bench_scaleout(short("scaleout"))  # 24 designs on two processes (PostgreSQL)
    from vtatune.bench.ab import bench_ab

    rows += bench_ab(short("ab"))  # the main job and a network search against b689de0, A/B
    from vtatune.bench.networks import bench_multi_speed, bench_zoo_quality, bench_zoo_speed

    if "zoo-speed" in also:  # 100 designs each in any run: the figure
        rows += bench_zoo_speed()
    if "multi-speed" in also:
        rows += bench_multi_speed()
    if "zoo-quality" in also:
        rows += bench_zoo_quality(quick=quick)
    from vtatune.bench.models import bench_import

    rows += bench_import(short("import"))  # ONNX import of resnet50 and vgg16 at full size
    if not short("tests"):  # minutes
        rows += bench_tests()
    if not short("setup"):  # minutes, and it needs the package index
        rows += bench_setup()
    full = [a for a in also if a in ALSO]
    extra = [a for a in also if a in OPTIONAL]
    mode = ("full" if not quick else "quick" + (f", in full: {', '.join(full)}" if full else "")
            ) + (f", with: {', '.join(extra)}" if extra else "")
    cmd = ("make bench" if not quick and not also
           else "python -m vtatune.bench" + (" --quick" if quick else "")
           + (f" --also {','.join(also)}" if also else ""))
    rows.append((f"this run (`{cmd}`), wall time", f"{(time.perf_counter() - t0) / 60:.0f} min"))
    lines = [f"Measured by `{cmd}` ({mode}) on {machine()}, {time.strftime('%Y-%m-%d')}.",
             "", "| figure | value |", "|---|---|"]
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m vtatune.bench",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--write-readme", action="store_true", help="update README.md's table")
    ap.add_argument("--quick", action="store_true",
                    help="every part cut short (a tenth of the knob space, one seed, ...)")
    ap.add_argument("--also", default="",
                    help=f"with --quick, parts run in full anyway: {', '.join(ALSO)}; in any "
                    f"run, parts run only when named: {', '.join(OPTIONAL)} (zoo-quality "
                    "on fewer layers in a quick run)")
    args = ap.parse_args(argv)
    also = tuple(a for a in args.also.split(",") if a)
    bad = [a for a in also if a not in ALSO + OPTIONAL]
    if bad:
        ap.error(f"--also: unknown part {', '.join(bad)} (parts: {', '.join(ALSO + OPTIONAL)})")
    table = run(args.quick, also)
    print(table)
    if args.write_readme:
        write_readme(table)


if __name__ == "__main__":
    main()
