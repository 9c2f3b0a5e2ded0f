"""This tree against the previous release, in one run (part of ``make bench``).

    python -m vtatune.bench.ab [--base REF] [--runs N] [--quick]

The previous release (``BASE``, or ``--base``/``VTATUNE_BENCH_BASE``: any git ref) is taken
out of the repository into a temporary folder (``git archive``) and run with this very
interpreter (its dependencies must be the ones installed: the bench says so when it fails).
Each command runs ``runs`` times on each side, the two sides alternating and each going first
every other time, so that whatever else the machine does falls on both alike; each run has a
fresh database, so the store serves nothing. Per side, the median run: wall time, CPU time
(the search process's and its workers', ``vtatune.bench.cpu``), CPU per evaluation (an
operator search's candidates, a network search's layer candidates) and the ratio of this tree
to the release. The workers of this tree's runs also write their CPU per compile step
(``vtatune.compiler.steps``): the share of the workers' CPU each step took (the rest is the
fork server's TVM import, the workers' start-up, area estimates and messages).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vtatune.bench.cpu import CpuSplit, measure
from vtatune.compiler import steps
from vtatune.paths import project_root

#: The release before issue 24 (issue 36's reference).
BASE = "b689de0"
#: The commands compared (their ``--trials``; quick runs take fewer).
COMMANDS = {"conv2d": ("search", "conv2d", "--trials", "500"),
            "resnet18": ("search", "resnet18", "--trials", "100")}
QUICK_TRIALS = {"conv2d": "100", "resnet18": "10"}
#: Runs per side of each command (a full run; quick: 1).
RUNS = 3


@dataclass(frozen=True)
class Run:
    """One run of a command: its time split, the evaluations it made and (this tree's runs)
    the workers' CPU per compile step."""

    split: CpuSplit
    evaluated: int
    steps: dict[str, float]

    @property
    def per_eval(self) -> float:
        """CPU seconds per evaluation."""
        return self.split.cpu / max(1, self.evaluated)


def export_tree(ref: str, dest: Path, root: Path | None = None) -> Path:
    """The files of ``ref`` (a commit of this repository) written to ``dest``."""
    root = root or project_root()
    tar = dest / "tree.tar"
    with open(tar, "wb") as f:
        subprocess.run(["git", "-C", str(root), "archive", "--format=tar", ref], stdout=f,
                       check=True, stderr=subprocess.PIPE)
    tree = dest / "tree"
    tree.mkdir()
    with tarfile.open(tar) as t:
        t.extractall(tree, filter="data")
    tar.unlink()
    return tree


def run_once(args: Sequence[str], root: Path, record_steps: bool) -> Run:
    """``vtatune ARGS --seed 0 --json`` from ``root`` in a fresh database."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {steps.ENV: tmp} if record_steps else {steps.ENV: ""}
        split = measure([*args, "--seed", "0", "--db", f"sqlite:///{tmp}/ab.sqlite", "--json"],
                        root=str(root), env=env)
        found = steps.collect(tmp) if record_steps else {}
    return Run(split, int(json.loads(split.stdout)["evaluated"]), found)


def compare(args: Sequence[str], base_root: Path, runs: int) -> tuple[list[Run], list[Run]]:
    """(this tree's runs, the release's runs), alternating, each side first every other
    time."""
    head, base = [], []
    for i in range(runs):
        for side in (("head", "base") if i % 2 == 0 else ("base", "head")):
            if side == "head":
                head.append(run_once(args, project_root(), record_steps=True))
            else:
                base.append(run_once(args, base_root, record_steps=False))
    return head, base


def median_run(runs: list[Run], by: str = "wall") -> Run:
    """The median run by wall time (``by`` "wall") or by CPU time ("cpu")."""
    return sorted(runs, key=lambda r: getattr(r.split, by))[len(runs) // 2]


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def rows_for(what: str, head: list[Run], base: list[Run], ref: str) -> list[tuple[str, str]]:
    """The A/B rows of one command (medians over each side's runs)."""
    h, b = median_run(head), median_run(base)
    ch, cb = median_run(head, "cpu"), median_run(base, "cpu")  # its parts add up to it
    cpu_h, cpu_b = ch.split.cpu, cb.split.cpu
    pe_h = statistics.median(r.per_eval for r in head)
    pe_b = statistics.median(r.per_eval for r in base)
    n = len(head)
    rows = [
        (f"`vtatune {what}` against {ref} in the same run ({n} runs each, alternating; "
         "medians): wall",
         f"{h.split.wall:.1f} s vs {b.split.wall:.1f} s ({_ratio(h.split.wall, b.split.wall)})"),
        ("  same runs: CPU (search process + workers, of the median run by CPU)",
         f"{cpu_h:.1f} s ({ch.split.main:.1f} + {ch.split.workers:.1f}) vs {cpu_b:.1f} s "
         f"({cb.split.main:.1f} + {cb.split.workers:.1f}) ({_ratio(cpu_h, cpu_b)})"),
        (f"  same runs: CPU per evaluation ({h.evaluated:,} vs {b.evaluated:,} evaluations in "
         "the median runs)",
         f"{1e3 * pe_h:.1f} ms vs {1e3 * pe_b:.1f} ms ({_ratio(pe_h, pe_b)})"),
    ]
    total = {s: sum(r.steps.get(s, 0.0) for r in head) for s in steps.STEPS}
    workers = sum(r.split.workers for r in head)
    if workers > 0 and any(total.values()):
        parts = ", ".join(f"{s} {100 * v / workers:.0f}%" for s, v in total.items())
        other = 100 * (workers - sum(total.values())) / workers
        rows.append((f"  this tree's workers' CPU by compile step ({what})",
                     f"{parts}; other (TVM import, start-up, area, messages) {other:.0f}%"))
    return rows


def bench_ab(quick: bool = False, ref: str | None = None, runs: int | None = None,
             commands: Sequence[str] = tuple(COMMANDS)) -> list[tuple[str, str]]:
    """The A/B rows of ``commands`` against ``ref`` (default ``VTATUNE_BENCH_BASE`` or
    ``BASE``)."""
    ref = ref or os.environ.get("VTATUNE_BENCH_BASE") or BASE
    runs = runs or (1 if quick else RUNS)
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            base_root = export_tree(ref, Path(tmp))
        except (subprocess.CalledProcessError, OSError) as exc:
            return [(f"speed against {ref}", f"not measured (no tree of {ref}: {exc})")]
        for name in commands:
            args = list(COMMANDS[name])
            if quick:
                args[-1] = QUICK_TRIALS[name]
            what = " ".join(args)
            try:
                head, base = compare(args, base_root, runs)
            except subprocess.CalledProcessError as exc:
                said = " ".join((exc.stderr or "").strip().splitlines()[-1:])
                rows.append((f"`vtatune {what}` against {ref}", f"not measured ({said})"))
                continue
            rows += rows_for(what, head, base, ref)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m vtatune.bench.ab",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=None, help=f"git ref of the release (default {BASE})")
    ap.add_argument("--runs", type=int, default=None, help=f"runs per side (default {RUNS})")
    ap.add_argument("--quick", action="store_true", help="fewer trials, one run per side")
    ap.add_argument("--only", default=",".join(COMMANDS),
                    help=f"commands to compare: {', '.join(COMMANDS)}")
    args = ap.parse_args(argv)
    only = [c for c in args.only.split(",") if c]
    bad = [c for c in only if c not in COMMANDS]
    if bad:
        ap.error(f"--only: unknown command {', '.join(bad)}")
    for a, b in bench_ab(args.quick, args.base, args.runs, only):
        print(f"| {a} | {b} |")


if __name__ == "__main__":
    main()
