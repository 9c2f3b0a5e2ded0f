"""A network study on two processes sharing one PostgreSQL study (part of ``make bench``;
alone: ``python -m vtatune.bench.scaleout [--quick]``).

Each process is ``vtatune search NETWORK --trials N --db URL --study S`` as a user runs it on
one machine each (here both on this one):

- **scale-out**: ``N`` designs by one process with 2 workers, then by two processes with 1
  worker each on one study of a fresh database (every process ``--seed 0``, the one process
  too); the figure is the wall-time ratio (two processes / one) and the study's design count,
  which must be exactly ``N``;
- **takeover**: two processes (1 worker each, ``--seed 0``) on one study; when the first has
  a design running with at least one layer result stored, the second is started and, once it
  runs a design of its own, the first is killed (``SIGKILL``, its workers too). The second
  must finish the study with exactly ``N`` designs, finish the killed design keeping the layer
  results it had stored, and evaluate no layer candidate of a design twice and no design
  twice.

Both need network studies that run on several processes (issue 24): where the second process
is refused (one process per network study), the rows say so instead of a figure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtatune.statuses import Status

#: Designs in the study (issue 24's figure); ``--quick``: fewer.
DESIGNS = 24
QUICK_DESIGNS = 6
NETWORK = "resnet18"
NEEDS = "needs multi-process network studies"
#: Longest a process of the takeover part may run (the second waits out the first's lease).
TIMEOUT_S = 3600.0
POLL_S = 0.5


@dataclass
class Proc:
    """A ``vtatune search`` process of the bench (its own process group: killed whole)."""

    popen: subprocess.Popen[str]
    out: Path
    err: Path

    def stderr(self) -> str:
        return self.err.read_text(errors="replace").strip()

    def result(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.out.read_text())
        except (OSError, ValueError):
            return None


def start(network: str, designs: int, url: str, study: str, workers: int, folder: Path,
          tag: str, seed: int = 0) -> Proc:
    out, err = folder / f"{tag}.json", folder / f"{tag}.err"
    with out.open("w") as fo, err.open("w") as fe:
        popen = subprocess.Popen(
            [sys.executable, "-m", "vtatune", "search", network, "--trials", str(designs),
             "--seed", str(seed), "--workers", str(workers), "--db", url, "--study", study,
             "--json"], stdout=fo, stderr=fe, text=True, start_new_session=True)
    return Proc(popen, out, err)


def refused(proc: Proc) -> str | None:
    """The refusal line if ``proc`` ended with exit 2 (one process per network study)."""
    if proc.popen.poll() == 2:
        return " ".join(proc.stderr().splitlines()[-1:]) or "exit 2"
    return None


def kill(proc: Proc) -> None:
    if proc.popen.poll() is None:
        try:
            os.killpg(proc.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.popen.wait()


_STORES: dict[str, Any] = {}


def study_state(url: str, study: str) -> tuple[list[Any], list[Any]]:
    """The study's network trials and layer evaluations (empty before it exists)."""
    from vtatune.errors import StoreError
    from vtatune.store import Store

    store = _STORES.get(url) or _STORES.setdefault(url, Store(url))
    try:
        return store.network_trials(study), store.network_evals(study)
    except StoreError:
        return [], []


def check_study(trials: list[Any], evals: list[Any], designs: int) -> dict[str, Any]:
    """What the takeover figure states about a finished study: design count, designs left
    running, designs (hardware keys) tuned twice, layer candidates evaluated (not served from
    the store) twice for one design."""
    running = [t.number for t in trials if t.status == Status.RUNNING]
    params = Counter(t.hw_key for t in trials)
    per_design = Counter((e.number, e.candidate.key) for e in evals if not e.cached)
    return {"designs": len(trials), "exact": len(trials) == designs, "running": running,
            "designs_twice": sum(n - 1 for n in params.values() if n > 1),
            "evals_twice": sum(n - 1 for n in per_design.values() if n > 1)}


def _wait(procs: list[Proc], timeout: float = TIMEOUT_S) -> None:
    end = time.monotonic() + timeout
    for p in procs:
        try:
            p.popen.wait(max(1.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill(p)


def _failed(procs: list[Proc]) -> str | None:
    for p in procs:
        if p.popen.returncode:
            return (f"exit {p.popen.returncode}: "
                    + " ".join(p.stderr().splitlines()[-1:]))
    return None


def bench_scale_out(url_for: Any, network: str, designs: int, folder: Path
                    ) -> list[tuple[str, str]]:
    """One process with 2 workers vs two with 1 worker each; ``url_for(name)`` gives a fresh
    database."""
    what = (f"network study of {designs} designs (`vtatune search {network}`, one PostgreSQL "
            "study, --seed 0): 1 process x 2 workers vs 2 processes x 1 worker")
    walls, counts = [], []
    for n_procs, workers in ((1, 2), (2, 1)):
        url = url_for(f"scale{n_procs}")
        t = time.perf_counter()
        procs = [start(network, designs, url, "scale", workers, folder, f"scale{n_procs}-{i}")
                 for i in range(n_procs)]
        _wait(procs)
        walls.append(time.perf_counter() - t)
        why = next((r for r in map(refused, procs) if r), None) if n_procs > 1 else None
        if why:
            return [(what, f"{NEEDS} (the second process was refused: {why})")]
        if (fail := _failed(procs)):
            return [(what, f"not measured ({fail})")]
        counts.append(len(study_state(url, "scale")[0]))
    return [(what + ": wall time, ratio (2 processes / 1), designs in the study",
             f"{walls[0]:.0f} s vs {walls[1]:.0f} s ({walls[1] / walls[0]:.2f}x); designs "
             f"{counts[0]} and {counts[1]} (exactly {designs}: "
             f"{'yes' if counts == [designs, designs] else 'NO'})")]


def bench_takeover(url: str, network: str, designs: int, folder: Path
                   ) -> list[tuple[str, str]]:
    """A process killed mid-design; the other finishes the study and that design."""
    what = (f"network study of {designs} designs on 2 processes (`vtatune search {network}`, "
            "PostgreSQL): the first killed mid-design")
    first = start(network, designs, url, "takeover", 1, folder, "takeover-0")
    second = None
    try:
        victim, stored = None, 0
        end = time.monotonic() + TIMEOUT_S
        while victim is None and first.popen.poll() is None and time.monotonic() < end:
            trials, evals = study_state(url, "takeover")
            for t in trials:
                n = sum(e.number == t.number for e in evals)
                if t.status == Status.RUNNING and n:
                    victim, stored = t.number, n
            time.sleep(POLL_S)
        if victim is None:
            kill(first)
            return [(what, "not measured (the first process "
                     + (f"ended ({_failed([first]) or 'its study done'})" if first.popen.poll()
                        is not None else "never stored a layer result") + ")")]
        second = start(network, designs, url, "takeover", 1, folder, "takeover-1")
        while second.popen.poll() is None and time.monotonic() < end:
            trials, _ = study_state(url, "takeover")
            if sum(t.status == Status.RUNNING for t in trials) >= 2:
                break
            time.sleep(POLL_S)
        if (why := refused(second)):
            return [(what, f"{NEEDS} (the second process was refused: {why})")]
        stored = sum(e.number == victim for e in study_state(url, "takeover")[1])
        if first.popen.poll() is not None:
            return [(what, "not measured (the first process ended before it could be killed: "
                     + (_failed([first]) or "the study was done") + "; take more designs)")]
        kill(first)
        t = time.perf_counter()
        _wait([second])
        wall = time.perf_counter() - t
        if (fail := _failed([second])):
            return [(what, f"not measured (the second process: {fail})")]
    finally:
        for p in (first, second):
            if p is not None:
                kill(p)
    trials, evals = study_state(url, "takeover")
    c = check_study(trials, evals, designs)
    done = next((t for t in trials if t.number == victim), None)
    kept = sum(e.number == victim for e in evals)
    return [(what + ": designs in the study; the killed design; designs or layer candidates "
             "evaluated twice",
             f"{c['designs']} designs (exactly {designs}: {'yes' if c['exact'] else 'NO'}; "
             f"{len(c['running'])} left running); design {victim}, killed with {stored} layer "
             f"results stored: {done.status if done else 'MISSING'} with {kept} layer results "
             f"by the second process ({wall:.0f} s after the kill); twice: "
             f"{c['designs_twice']} designs, {c['evals_twice']} layer candidates")]


def bench_scaleout(quick: bool = False, network: str = NETWORK,
                   designs: int | None = None) -> list[tuple[str, str]]:
    """Both parts on a throwaway PostgreSQL server (``quick``: ``QUICK_DESIGNS``)."""
    designs = designs or (QUICK_DESIGNS if quick else DESIGNS)
    try:
        from vtatune.store.pgserver import PgServer, PgServerError
    except ImportError as exc:  # pragma: no cover
        return [("network study on 2 processes", f"not measured ({exc})")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            with PgServer() as pg:
                rows = bench_scale_out(pg.create_database, network, designs, folder)
                if NEEDS in rows[0][1]:
                    return rows + [("network study on 2 processes, the first killed "
                                    "mid-design", NEEDS)]
                return rows + bench_takeover(pg.create_database("takeover"), network,
                                             designs, folder)
        except (PgServerError, ImportError) as exc:
            return [("network study on 2 processes", f"not measured ({exc})")]


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_DESIGNS} designs")
    ap.add_argument("--network", default=NETWORK, help="network name or file")
    ap.add_argument("--designs", type=int, default=None, help="designs in the study")
    args = ap.parse_args(argv)
    for a, b in bench_scaleout(args.quick, args.network, args.designs):
        print(f"| {a} | {b} |")


if __name__ == "__main__":
    main()
