"""Isolated evaluation: worker processes that can crash or hang without stopping the search.

Each worker is a separate process that evaluates one candidate at a time. Workers are forked
from a fork server that has imported the compiler, runtime and simulator (``worker_boot``:
TVM's import, ~1 s of CPU, paid once per search process instead of once per worker); the
server is a fresh interpreter, so no state of the search process (its database connections,
its threads) reaches a worker. A worker evaluates a
warm-up candidate of its space, then acknowledges each task when its evaluation starts:
``--timeout`` counts from that moment, so start-up never counts against a candidate.

A worker that exceeds the timeout is killed and replaced, and its candidate becomes a
``timeout`` record; a worker that dies (a segfault inside TVM, a kill) is replaced, and the
candidate it held, if any, becomes a ``failed`` record; tasks queued behind it (a worker that
holds a candidate's lowered program gets the candidate even when busy: ``MAX_BACKLOG``) go to
the workers again. A worker that died while idle is replaced before it is given work. Nothing
else is lost and the search goes on; only workers that keep dying before they ever evaluate
anything stop it (``WorkerError``: the installation is broken, not a candidate).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from vtatune.compiler import steps
from vtatune.compiler.cache import DEFAULT_SIZE as CACHE_SIZE
from vtatune.errors import UserError
from vtatune.search.space import Candidate
from vtatune.statuses import Status
from vtatune.store.records import CandidateRecord

#: Workers that may die in a row before evaluating anything, per pool slot, before the pool
#: gives up (a broken installation would otherwise restart workers forever).
MAX_STARTUP_DEATHS = 3

#: Message kinds a worker sends: ready after start-up, started a task, finished a task.
READY, STARTED, DONE = "ready", "started", "done"

#: Tasks a busy worker may have queued behind the one in hand (candidates of a program it
#: lowers or holds, which another worker would lower again). With a search's one queued
#: candidate per worker (``room``), a limit of 1 sent a third of the candidates of a program
#: in hand to another worker, which lowered it again (~57 repeated lowerings in a 500-trial
#: conv2d search; 12-16 with 3, 0-1 with 8). A queued candidate of a program in hand costs
#: its verification (~0.1 ms) and at most one build, so a long queue delays little.
MAX_BACKLOG = 8


class WorkerError(UserError):
    """Evaluation workers cannot run at all (they die before evaluating anything)."""


#: The preload of the fork server workers are started from.
BOOT_MODULE = "vtatune.search.worker_boot"


def _context() -> Any:
    """The multiprocessing context workers start from: the fork server (``worker_boot``
    preloaded) where the platform has one, else ``spawn``."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    # (not "__main__", the standard preload: a worker never needs the user's main module, and
    # importing it in the server would run a script without a main guard again, searches
    # included: ``_without_main``)
    ctx.set_forkserver_preload([BOOT_MODULE])
    return ctx


@contextlib.contextmanager
def _without_main() -> Iterator[None]:
    """Start processes, inside this block, that do not import this process's ``__main__``.

    ``multiprocessing`` tells a spawned or fork-server child to import the parent's main
    module (``init_main_from_path``/``init_main_from_name``, read from
    ``sys.modules["__main__"]`` when the process starts) so that functions defined there can be
    unpickled. A worker runs ``_serve`` of this module only, and importing a script such as
    README's API example saved without ``if __name__ == "__main__":`` runs its search again
    inside the starting worker, which dies ("start a new process before the current process
    has finished its bootstrapping phase"). So while a worker starts, ``__main__`` is a
    module with neither a file nor a spec: the child imports nothing of the user's."""
    import sys
    import types

    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def boot() -> None:
    """Start the fork server now (it imports TVM in the background) so that the
    first worker starts in milliseconds: ``vtatune search`` calls this once its input is read,
    a search with trials to run (``runner.run``) before it sets up its sampler, the pool
    before it starts a worker; the calls after the first do nothing.

    The server is stopped and waited for when this process exits, so that its CPU time and
    its workers' count among this process's children (``RUSAGE_CHILDREN``), as spawned
    workers' did."""
    import atexit
    from multiprocessing import forkserver

    global _owner
    if _context().get_start_method() != "forkserver":
        return
    try:
        with _without_main():
            forkserver.ensure_running()
    except ChildProcessError:
        # this process was forked (os.fork) from the one that started the server: the
        # standard library cannot wait for it from here, but can use it as it is
        return
    if _owner != os.getpid():
        _owner = os.getpid()
        atexit.register(_stop_server)


#: The process that started the fork server (the only one that stops it).
_owner: int | None = None


def _stop_server() -> None:
    """End the fork server and reap it. Its workers are gone by now (a pool's ``close`` waits
    for them, and the server reaps each), so it is killed: a server still importing TVM (a
    search served entirely from the store) would otherwise keep this process waiting."""
    import signal
    from multiprocessing import forkserver

    if _owner != os.getpid():  # a forked child inherits the handler, not the server
        return
    server = forkserver._forkserver  # the standard library's own handle on it
    pid, stop = getattr(server, "_forkserver_pid", None), getattr(server, "_stop", None)
    if pid is None or stop is None:
        return
    try:
        os.kill(pid, signal.SIGKILL)
        stop()  # closes its end of the pipes and waits for it
    except OSError:
        pass


def _serve(conn: Connection, env: dict[str, str], board_name: str, fit_board: bool,
           max_area: float | None, warmup: Candidate | None = None) -> None:
    """Worker main loop: receive (task id, candidate), acknowledge, send back the record.
    ``env``: the search's environment (the fork server's is the one of the first search of
    this process)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _exit_with_parent()
    os.environ.clear()
    os.environ.update(env)
    # Everything an evaluation needs (under the spawn method it is imported here, so no
    # task's clock includes it)
    import vtatune.search.worker_boot  # noqa: F401
    from vtatune.hardware.boards import load
    from vtatune.search.evaluate import evaluate, failure_record

    board = load(board_name)
    if warmup is not None:
        try:
            evaluate(warmup, board, False, None)
        except Exception:  # noqa: S110 - a warm-up that fails is a candidate's business
            pass
    try:
        conn.send((READY, None, None))
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg is None:
                # nothing is left to flush (every result went out with its send): skip the
                # interpreter's teardown of TVM, which takes seconds the search would wait for
                steps.dump()  # the CPU per compile step, when the bench asks for it
                os._exit(0)
            task, cand = msg
            t0 = time.monotonic()  # CLOCK_MONOTONIC is one clock for every process
            conn.send((STARTED, task, t0))
            try:
                rec = evaluate(cand, board, fit_board, max_area)
            except Exception as exc:  # a bug in a pass must not kill the search: record it
                rec = failure_record(cand, Status.FAILED, f"{type(exc).__name__}: {exc}")
            conn.send((DONE, task, (rec, time.monotonic() - t0)))
    except (BrokenPipeError, ConnectionResetError):
        return  # the search is gone


def _program_of(cand: Candidate) -> Hashable:
    """The compile cache's key of ``cand`` (``compiler.compile.program_key``)."""
    from vtatune.compiler.compile import program_key

    return program_key(cand.workload, cand.hw, cand.knobs, passes=cand.passes)


def _exit_with_parent() -> None:
    """End this worker the moment the search process is gone (killed with SIGKILL, say). A
    worker busy compiling or simulating would otherwise only notice at its next message, and
    an orphan would go on using a core."""
    import threading

    parent = mp.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])  # readable once the parent process has ended
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


@dataclass
class _Worker:
    proc: Any  # None: not started yet (a lazy pool)
    conn: Connection | None
    task: int | None = None
    cand: Candidate | None = None
    started: float | None = None  # when the worker acknowledged the task (monotonic)
    ready: bool = False
    #: programs this worker has lowered, most recent last (its compile cache, as far as the
    #: pool can tell: the same size and order)
    programs: OrderedDict[Hashable, None] = field(default_factory=OrderedDict)
    last_used: int = 0  # the pool's count of submissions when this worker last got one
    #: tasks sent to this worker after ``task``, in order (it starts each when it is done)
    backlog: list[tuple[int, Candidate]] = field(default_factory=list)

    def remember(self, key: Hashable) -> None:
        self.programs[key] = None
        self.programs.move_to_end(key)
        if len(self.programs) > CACHE_SIZE:
            self.programs.popitem(last=False)


class WorkerPool:
    """``n`` worker processes evaluating candidates on one board.

    ``timeout`` (seconds) bounds one evaluation, counted from the worker's acknowledgement;
    ``warmup``: a candidate each worker evaluates at start-up (its result is dropped);
    ``lazy``: a worker process starts with the first task it is given (a search whose
    candidates are all served from the store starts none).
    """

    def __init__(self, n: int, board: str, fit_board: bool = True,
                 max_area_mm2: float | None = None, timeout: float = 120.0,
                 warmup: Candidate | None = None, lazy: bool = False):
        self._ctx = _context()
        self._args = (board, fit_board, max_area_mm2, warmup)
        self.timeout = timeout
        self._deaths_in_a_row = 0
        self.restarts = 0
        self.workers = [_Worker(None, None) if lazy else self._start()
                        for _ in range(max(1, n))]
        self._uses = 0

    def _start(self) -> _Worker:
        boot()  # (once per process) the fork server, stopped and reaped at exit
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_serve, args=(child, dict(os.environ), *self._args),
                                 daemon=True)
        with _without_main():
            proc.start()
        child.close()
        return _Worker(proc, parent)

    def _replace(self, i: int) -> None:
        w = self.workers[i]
        assert w.proc is not None and w.conn is not None
        if not w.ready:
            self._deaths_in_a_row += 1
            if self._deaths_in_a_row > MAX_STARTUP_DEATHS * len(self.workers):
                raise WorkerError(
                    f"evaluation workers keep dying before they start (last exit code "
                    f"{w.proc.exitcode}): check that `python -c 'import tvm'` works")
        if w.proc.is_alive():
            w.proc.kill()
        w.proc.join(5)
        w.conn.close()
        self.restarts += 1
        self.workers[i] = self._start()

    @property
    def idle(self) -> int:
        return sum(w.task is None for w in self.workers)

    @property
    def busy(self) -> int:
        return len(self.workers) - self.idle

    @property
    def room(self) -> int:
        """Tasks the pool takes now so that no worker waits: one for each worker with nothing
        queued, idle or busy. A task queued behind a busy worker is already in its pipe, so
        the worker starts it the moment the one in hand is done instead of after the search
        process has stored that result and asked its sampler for the next candidate (~20% of
        a worker's time on 2 cores in a 500-trial conv2d search). A pool of one worker has
        room only when it is idle: its search keeps the serial ask-evaluate-tell order, so it
        is reproducible."""
        if len(self.workers) == 1:
            return self.idle
        return sum(not w.backlog for w in self.workers)

    def submit(self, task: int, cand: Candidate) -> None:
        """Give ``task`` to a worker (replacing one found dead). Programs decide: an idle
        worker that has lowered the candidate's program (its compile cache serves it), else
        a busy one that has, behind its task in hand (``MAX_BACKLOG``; a second lowering of
        the program elsewhere would cost more CPU than the wait), else the idle worker whose
        cache has been used least recently."""
        key = _program_of(cand)
        idle = [i for i, w in enumerate(self.workers) if w.task is None]
        home = [i for i in idle if key in self.workers[i].programs]
        if not home:
            home = [i for i, w in enumerate(self.workers) if w.task is not None
                    and w.ready and len(w.backlog) < MAX_BACKLOG and key in w.programs]
        if home:
            i = home[0]
        elif idle:
            i = min(idle, key=lambda i: self.workers[i].last_used)
        else:  # every worker busy (a task handed back after a crash): the shortest queue
            i = min(range(len(self.workers)), key=lambda i: len(self.workers[i].backlog))
        if self.workers[i].proc is None:
            self.workers[i] = self._start()
        w = self.workers[i]
        if w.task is not None:
            # a worker that died meanwhile is found by poll, which hands its tasks back
            w.backlog.append((task, cand))
            assert w.conn is not None
            try:
                w.conn.send((task, cand))
            except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
                pass
        else:
            for _ in range(MAX_STARTUP_DEATHS * len(self.workers) + 2):
                w = self.workers[i]
                assert w.conn is not None
                try:
                    w.conn.send((task, cand))
                    break
                except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
                    self._replace(i)  # died while idle: a new worker takes the task
            w = self.workers[i]
            w.task, w.cand, w.started = task, cand, None
        self._uses += 1
        w.last_used = self._uses
        w.remember(key)

    def poll(self, wait_s: float = 0.1) -> list[tuple[int, CandidateRecord]]:
        """Finished evaluations (including timeouts and crashes) since the last poll."""
        from vtatune.search.evaluate import failure_record

        out: list[tuple[int, CandidateRecord]] = []
        conns = [w.conn for w in self.workers if w.conn is not None]
        ready = wait(conns, timeout=wait_s) if conns else []
        now = time.monotonic()
        for i, w in enumerate(self.workers):
            if w.proc is None or w.conn is None:
                continue  # not started (lazy)
            dead = False
            if w.conn in ready:
                try:
                    while w.conn.poll():
                        kind, task, rec = w.conn.recv()
                        if kind == READY:
                            w.ready = True
                            self._deaths_in_a_row = 0
                        elif kind == STARTED and task == w.task:
                            w.started = rec  # the worker's own clock reading
                        elif kind == DONE and task == w.task:
                            # The worker's own measure decides: a result that arrives in the
                            # same poll as its start is still late if it took too long.
                            rec, took = rec
                            if took > self.timeout:
                                assert w.cand is not None
                                rec = failure_record(
                                    w.cand, Status.TIMEOUT,
                                    f"evaluation took longer than {self.timeout:g} s")
                            out.append((task, rec))
                            w.task, w.cand = w.backlog.pop(0) if w.backlog else (None, None)
                            w.started = None
                except (EOFError, OSError):
                    dead = True
            if dead or not w.proc.is_alive():
                if w.task is not None:
                    assert w.cand is not None
                    out.append((w.task, failure_record(
                        w.cand, Status.FAILED, f"evaluation crashed the worker (exit code "
                        f"{w.proc.exitcode})")))
                self._replace(i)
                self._hand_back(w.backlog)
            elif w.started is not None and now - w.started > self.timeout:
                assert w.task is not None and w.cand is not None
                out.append((w.task, failure_record(
                    w.cand, Status.TIMEOUT, f"evaluation took longer than {self.timeout:g} s")))
                w.ready = True  # it did start: a timeout is not a start-up death
                self._replace(i)
                self._hand_back(w.backlog)
        return out

    def _hand_back(self, backlog: list[tuple[int, Candidate]]) -> None:
        """Tasks queued behind one that crashed or timed out go to the workers again (none
        of them ran: the worker takes one task at a time)."""
        for task, cand in backlog:
            self.submit(task, cand)

    def close(self) -> None:
        started = [w for w in self.workers if w.proc is not None and w.conn is not None]
        for w in started:
            try:
                if w.task is None:
                    w.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 2.0
        for w in started:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(1)
            w.conn.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
