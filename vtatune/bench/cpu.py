"""Where a vtatune command's CPU time goes: its own process and its worker processes.

    python -m vtatune.bench.cpu OUT.json ARGS...

runs ``vtatune ARGS`` in this very process, exactly as ``python -m vtatune ARGS`` does, and
as the process's last act writes to OUT.json its own CPU seconds (``RUSAGE_SELF``: user +
system) and those of its descendants that were waited for (``RUSAGE_CHILDREN``: the workers'
fork server, which imports TVM, and every worker, which the server reaps). The handler that
writes them is registered with ``atexit`` before vtatune is imported, so it runs after every
handler vtatune and ``multiprocessing`` register (the fork server is stopped and waited for
by one of those): nothing of the search's runs after it but the interpreter's teardown.

``measure`` times such a run from outside (wall clock, and ``RUSAGE_CHILDREN`` of the
calling process, which covers the run's process and every descendant it waited for) and
splits it (``CpuSplit``): the search process's CPU, its worker processes' CPU, and the
cores' time the run did not use (wall x cores - both: idle cores, or on a shared machine
other processes' time).
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


@dataclass(frozen=True)
class CpuSplit:
    """One command's run: ``wall`` seconds on ``cores`` cores; ``main`` the CPU seconds of
    its own process, ``workers`` those of its descendants (fork server and workers). Every
    part is a CPU (or core) time, non-negative up to the clocks' resolution."""

    wall: float
    cores: int
    main: float
    workers: float
    stdout: str

    @property
    def cpu(self) -> float:
        return self.main + self.workers

    @property
    def capacity(self) -> float:
        """Core-seconds the machine had during the run (wall x cores)."""
        return self.wall * self.cores

    @property
    def unused(self) -> float:
        """Core-seconds the run did not use: idle, or other processes' (a shared machine)."""
        return self.capacity - self.cpu


def measure(args: list[str], cores: int | None = None, root: str | None = None,
            env: dict[str, str] | None = None) -> CpuSplit:
    """Run ``vtatune ARGS`` (a process of its own; a nonzero exit raises
    ``CalledProcessError``) and split its time (module docstring).

    ``root``: the folder whose ``vtatune`` package runs (another release's checkout; it need
    not have this module: a copy of this file runs it); ``env``: variables set for the run."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cpu.json")
        run_env = {**os.environ, **(env or {})}
        if root is None:
            cmd = [sys.executable, "-m", "vtatune.bench.cpu", out, *args]
        else:
            # this file alone in a folder of its own (the script's folder is sys.path[0]),
            # the release's package first on the path
            script = shutil.copy(__file__, os.path.join(tmp, "vtatune_cpu.py"))
            cmd = [sys.executable, script, out, *args]
            run_env["PYTHONPATH"] = os.pathsep.join(
                [str(root), *filter(None, [run_env.get("PYTHONPATH")])])
        before = _cpu(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True, check=True, env=run_env)
        wall = time.perf_counter() - t
        total = _cpu(resource.RUSAGE_CHILDREN) - before
        with open(out) as f:
            inner = json.load(f)
    # the run's process is everything of the total its descendants are not (its own time
    # after the handler, the interpreter's teardown, is its own too)
    workers = float(inner["children"])
    return CpuSplit(wall, cores or os.cpu_count() or 1, total - workers, workers, res.stdout)


def _report(path: str) -> None:
    with open(path, "w") as f:
        json.dump({"self": _cpu(resource.RUSAGE_SELF),
                   "children": _cpu(resource.RUSAGE_CHILDREN)}, f)


def main(argv: list[str]) -> None:
    import runpy

    if not argv:
        raise SystemExit("usage: python -m vtatune.bench.cpu OUT.json ARGS...")
    atexit.register(_report, argv[0])  # first registered: run last
    sys.argv = ["vtatune", *argv[1:]]
    runpy.run_module("vtatune", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
