"""Run one ``vtatune`` command line the way a user would, under a memory and a time limit.

Each run is a fork of the test process (TVM, numpy and vtatune are already imported, so a
case costs milliseconds, not an interpreter start): the child limits its address space
(``RLIMIT_AS``: current size + a budget), points stdout/stderr at files with the encodings a
real UTF-8 process has (stdout strict, stderr backslashreplace), calls
``vtatune.cli.main.main(argv)`` and exits with its code. An exception escaping ``main`` is
printed as a traceback and exits 70, so a bug cannot pass for a clean exit. The parent kills
a child that runs past the time limit (a hang guard, generous for a loaded 2-core machine;
not a speed assertion).

``VTATUNE_HOME`` points at a scratch project (the repository's hwconfigs/ and spaces/, empty
db/ and reports/), so no case can write into the repository.
"""

from __future__ import annotations

import faulthandler
import os
import re
import resource
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

#: Address space a case may add to what the test process has mapped (bytes).
MEMORY_BUDGET = 1 << 30
#: Seconds before a case counts as hung.
TIMEOUT_S = 120.0
#: Seconds between the child's own stack dump at ``TIMEOUT_S`` and the parent's SIGKILL.
GRACE_S = 10.0
#: What faulthandler prints for a hung child.
HANG_DUMP = "(most recent call first)"
#: Exit code of a child whose ``main`` raised (a traceback was printed).
CRASHED = 70
#: Longest acceptable error line (characters): echoed values must be truncated.
MAX_ERROR_CHARS = 2000

REPO = Path(__file__).resolve().parents[2]
#: ``make fuzz`` sets this: every case of every file kind, and more hypothesis examples.
DEEP = os.environ.get("VTATUNE_FUZZ_DEEP", "") not in ("", "0")

# C0 controls but newline and tab, DEL, C1 controls, and the bidi overrides/isolates that let
# a name reorder the text around it on a terminal.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Outcome:
    """What one run printed and how it ended (``rc`` None: killed after ``TIMEOUT_S``)."""

    argv: tuple[str, ...]
    rc: int | None
    stdout: str
    stderr: str
    seconds: float
    leftover: int = 0  # processes the command left running after it ended (then killed)

    @property
    def error_lines(self) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.strip()]


def scratch_home(folder: Path) -> Path:
    """A project root for the CLI: shipped data linked in, its own db/ and reports/."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("hwconfigs", "spaces"):
        link = folder / name
        if not link.exists():
            link.symlink_to(REPO / name)
    for name in ("db", "reports"):
        (folder / name).mkdir(exist_ok=True)
    return folder


def warm_up() -> None:
    """Import, once in the test process, what commands import lazily, so forked cases do not
    each pay for it (matplotlib, TVM, the command modules)."""
    import importlib

    from vtatune.cli import main

    main._register()
    for name in ("vtatune.readers", "vtatune.escaping", "vtatune.area", "vtatune.compiler",
                 "vtatune.export", "vtatune.export.verify", "vtatune.reports",
                 "vtatune.runtime", "vtatune.schedules", "vtatune.search.runner",
                 "vtatune.search.space", "vtatune.simulator", "vtatune.store",
                 "matplotlib.figure", "matplotlib.backends.backend_agg",
                 "matplotlib.backends.backend_svg", "numpy.lib.format", "sqlalchemy"):
        importlib.import_module(name)


def run_cli(argv: list[str] | tuple[str, ...], home: Path, *, cwd: Path | None = None,
            timeout_s: float = TIMEOUT_S, memory_budget: int = MEMORY_BUDGET) -> Outcome:
    """Run ``vtatune ARGV`` in a forked child under the limits; see the module docstring."""
    argv = tuple(argv)
    with tempfile.TemporaryDirectory(prefix="vtatune-fuzz-") as tmp:
        out_path, err_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the child never returns
            _child(list(argv), home, cwd, out_path, err_path, memory_budget, timeout_s)
        try:
            rc = _wait(pid, timeout_s + GRACE_S)
        finally:
            leftover = _end_group(pid)
        seconds = time.monotonic() - t0
        return Outcome(argv=argv, rc=rc, seconds=seconds, leftover=leftover,
                       stdout=out_path.read_bytes().decode("utf-8", "backslashreplace"),
                       stderr=err_path.read_bytes().decode("utf-8", "backslashreplace"))


def _child(argv: list[str], home: Path, cwd: Path | None, out_path: Path, err_path: Path,
           memory_budget: int, timeout_s: float) -> None:
    rc = CRASHED
    try:
        # a session of its own: every process the command starts (search workers, a space's
        # process pool) is in this group, and the parent ends the group after the case
        os.setsid()
        # the test process's multiprocessing children are not this child's to stop at exit
        import multiprocessing.process

        multiprocessing.process._children.clear()
        os.environ["VTATUNE_HOME"] = str(home)
        os.environ["COLUMNS"] = "200"
        if cwd is not None:
            os.chdir(cwd)
        fd_in = os.open(os.devnull, os.O_RDONLY)
        fd_out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        fd_err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        for fd, target in ((fd_in, 0), (fd_out, 1), (fd_err, 2)):
            os.dup2(fd, target)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - lives as long as the child
        sys.stdout = open(1, "w", encoding="utf-8", errors="strict", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace",  # noqa: SIM115
                          closefd=False)
        # a hung child prints where it hangs, then exits; the parent kills it GRACE_S later
        faulthandler.dump_traceback_later(timeout_s, exit=True, file=sys.stderr)
        soft = _mapped_bytes() + memory_budget
        resource.setrlimit(resource.RLIMIT_AS, (soft, resource.RLIM_INFINITY))
        from vtatune.cli.main import main

        rc = main(argv)
    except BaseException:  # noqa: BLE001 - the point is to show what escaped main()
        traceback.print_exc()
        rc = CRASHED
    finally:
        try:
            # what a normal interpreter exit does for multiprocessing (os._exit skips it, and
            # the test process's own atexit handlers must not run in this child): stop daemon
            # workers, join the others
            import multiprocessing.util

            multiprocessing.util._exit_function()
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        os._exit(rc if isinstance(rc, int) and 0 <= rc < 256 else CRASHED)


def _group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry))
    return found


def _end_group(pgid: int) -> int:
    """Kill what is left of the case's process group; the number of processes that were
    still running. Waits (briefly) until none is."""
    left = _group_members(pgid)
    if left:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10
        while _group_members(pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
    return len(left)


def _mapped_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _wait(pid: int, timeout_s: float) -> int | None:
    deadline = time.monotonic() + timeout_s
    delay = 0.002
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else \
                -os.WTERMSIG(status)
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)  # the child and everything it started
            except ProcessLookupError:
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def problems(o: Outcome, expect: frozenset[int]) -> list[str]:
    """Why ``o`` is not the clean end of a command (empty: it is)."""
    found = []
    if o.rc is None or HANG_DUMP in o.stderr:
        found.append(f"hung: stopped after {o.seconds:.0f} s")
    elif o.rc not in expect:
        found.append(f"exit code {o.rc}, expected {' or '.join(map(str, sorted(expect)))}")
    if o.leftover:
        found.append(f"left {o.leftover} process(es) running after it ended")
    if "Traceback (most recent call last)" in o.stderr + o.stdout:
        found.append("traceback")
    if o.rc == 2:
        lines = o.error_lines
        if len(lines) != 1 or not lines[0].startswith("vtatune: error: "):
            found.append(f"exit 2 needs one 'vtatune: error:' line, got {len(lines)} lines")
        elif len(lines[0]) > MAX_ERROR_CHARS:
            found.append(f"error line of {len(lines[0]):,} characters (echoed value not "
                         "truncated)")
    for name, text in (("stdout", o.stdout), ("stderr", o.stderr)):
        m = _CONTROL.search(text)
        if m:
            found.append(f"raw control character {m.group()!r} on {name}")
    return found
