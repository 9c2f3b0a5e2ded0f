"""Isolated evaluation: worker processes that can crash or hang without stopping the search.

Each worker is a separate process (``spawn``: no TVM state is inherited) that evaluates one
candidate at a time. A worker that exceeds the timeout is killed and replaced, and its
candidate becomes a ``timeout`` record; a worker that dies (a segfault inside TVM, say) is
replaced and its candidate becomes a ``failed`` record. Nothing else is lost.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from vtatune.search.space import Candidate
from vtatune.store.records import CandidateRecord


def _serve(conn: Connection, board_name: str, fit_board: bool, max_area: float | None) -> None:
    """Worker main loop: receive (task id, candidate), send back (task id, record)."""
    import signal

    from vtatune.hardware.boards import load
    from vtatune.search.evaluate import FAILED, evaluate, failure_record

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    board = load(board_name)
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        task, cand = msg
        try:
            rec = evaluate(cand, board, fit_board, max_area)
        except Exception as exc:  # a bug in a pass must not kill the search: record it
            rec = failure_record(cand, FAILED, f"{type(exc).__name__}: {exc}")
        conn.send((task, rec))


@dataclass
class _Worker:
    proc: Any
    conn: Connection
    task: int | None = None
    cand: Candidate | None = None
    started: float = 0.0


class WorkerPool:
    """``n`` worker processes evaluating candidates on one board."""

    def __init__(self, n: int, board: str, fit_board: bool = True,
                 max_area_mm2: float | None = None, timeout: float = 120.0):
        self._ctx = mp.get_context("spawn")
        self._args = (board, fit_board, max_area_mm2)
        self.timeout = timeout
        self.workers = [self._start() for _ in range(max(1, n))]

    def _start(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_serve, args=(child, *self._args), daemon=True)
        proc.start()
        child.close()
        return _Worker(proc, parent)

    @property
    def idle(self) -> int:
        return sum(w.task is None for w in self.workers)

    @property
    def busy(self) -> int:
        return len(self.workers) - self.idle

    def submit(self, task: int, cand: Candidate) -> None:
        w = next(w for w in self.workers if w.task is None)
        w.task, w.cand, w.started = task, cand, time.monotonic()
        w.conn.send((task, cand))

    def poll(self, wait_s: float = 0.1) -> list[tuple[int, CandidateRecord]]:
        """Finished evaluations (including timeouts and crashes) since the last poll."""
        from vtatune.search.evaluate import FAILED, TIMEOUT, failure_record

        out: list[tuple[int, CandidateRecord]] = []
        busy = [w for w in self.workers if w.task is not None]
        ready = wait([w.conn for w in busy], timeout=wait_s) if busy else []
        now = time.monotonic()
        for i, w in enumerate(self.workers):
            if w.task is None:
                continue
            if w.conn in ready:
                try:
                    task, rec = w.conn.recv()
                    out.append((task, rec))
                    w.task, w.cand = None, None
                    continue
                except (EOFError, OSError):
                    pass  # the worker died: handled below
            if not w.proc.is_alive() or w.conn in ready:
                code = w.proc.exitcode
                out.append((w.task, failure_record(
                    w.cand, FAILED, f"evaluation crashed the worker (exit code {code})")))
                self.workers[i] = self._start()
            elif now - w.started > self.timeout:
                w.proc.kill()
                w.proc.join(5)
                out.append((w.task, failure_record(
                    w.cand, TIMEOUT, f"evaluation took longer than {self.timeout:g} s")))
                self.workers[i] = self._start()
        return out

    def close(self) -> None:
        for w in self.workers:
            try:
                if w.task is None:
                    w.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 2.0
        for w in self.workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(1)
            w.conn.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
