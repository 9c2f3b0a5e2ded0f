"""Worker processes that die, idle or busy, never stop a search."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vtatune.search import space as spaces
from vtatune.search.workers import MAX_BACKLOG, WorkerPool

ROOT = Path(__file__).parents[2]


def _candidate(layer_space: str = "dense", **kw):
    sp = spaces.load(layer_space, **kw)
    cand, why = sp.realize({})
    assert cand is not None, why
    return cand


def _wait(pool: WorkerPool, until, limit_s: float = 120.0) -> list:
    out: list = []
    deadline = time.monotonic() + limit_s
    while not until(out) and time.monotonic() < deadline:
        out += pool.poll(0.05)
    assert until(out), "the pool did not answer in time"
    return out


def test_the_timeout_starts_when_the_worker_starts_the_evaluation() -> None:
    # start-up (TVM import, warm-up compile) takes S seconds and an evaluation of this layer a
    # hundredth of it, whatever the machine's load: with a timeout of S/2 a task submitted at
    # once times out only if start-up counts against it
    slow = _candidate("conv2d", layer="C2")
    quick = _candidate(shape="16,64,64", hw="default", objective="latency")
    t = time.monotonic()
    with WorkerPool(1, "pynq-z1", warmup=slow) as pool:
        _wait(pool, lambda _: pool.workers[0].ready)
    startup = time.monotonic() - t
    with WorkerPool(1, "pynq-z1", timeout=startup / 2, warmup=slow) as pool:
        pool.submit(0, quick)
        (task, rec), = _wait(pool, lambda out: out)
        assert rec.status == "ok", (startup, rec.reason)


def test_a_worker_that_died_idle_is_replaced_before_it_gets_work() -> None:
    cand = _candidate(shape="16,64,64")
    with WorkerPool(1, "pynq-z1") as pool:
        _wait(pool, lambda _: pool.workers[0].ready)
        pool.workers[0].proc.kill()
        pool.workers[0].proc.join(5)
        pool.submit(0, cand)  # would raise BrokenPipeError on the dead worker's pipe
        (task, rec), = _wait(pool, lambda out: out)
        assert task == 0 and rec.status == "ok"
        assert pool.restarts == 1


def test_a_worker_that_dies_busy_gives_a_failed_record_and_a_replacement() -> None:
    slow = _candidate("conv2d", layer="C2")  # ~0.5 s: long enough to be killed mid-way
    quick = _candidate(shape="16,64,64")
    with WorkerPool(1, "pynq-z1") as pool:
        pool.submit(7, slow)
        _wait(pool, lambda _: pool.workers[0].started is not None)
        pool.workers[0].proc.kill()
        (task, rec), = _wait(pool, lambda out: out)
        assert task == 7 and rec.status == "failed" and "crashed the worker" in rec.reason
        assert rec.key == slow.key
        pool.submit(8, quick)
        (task, rec), = _wait(pool, lambda out: out)
        assert task == 8 and rec.status == "ok"


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _workers_of(pid: int) -> list[int]:
    """The evaluation workers of search process ``pid``: the children of its fork server (or
    its spawned children where there is no fork server)."""
    out = []
    for c in _children(pid):
        try:
            cmd = Path(f"/proc/{c}/cmdline").read_bytes()
        except OSError:
            continue
        if b"forkserver" in cmd:
            out += _children(c)
        elif b"spawn_main" in cmd:
            out.append(c)
    return out


def test_killing_workers_during_a_real_search_loses_nothing(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'k.sqlite'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vtatune", "search", "dense", "--shape", "16,64,64",
         "--trials", "120", "--sampler", "random", "--seed", "9", "--workers", "2",
         "--db", db, "--study", "k", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    killed = 0
    deadline = time.monotonic() + 120
    while proc.poll() is None and killed < 3 and time.monotonic() < deadline:
        time.sleep(0.3)
        workers = _workers_of(proc.pid)
        if workers:  # idle or busy, whichever it is at that moment
            os.kill(workers[killed % len(workers)], signal.SIGKILL)
            killed += 1
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err[-2000:]
    assert killed >= 1
    data = json.loads(out)
    assert data["trials"] == 120
    statuses = data["statuses"]
    assert set(statuses) <= {"ok", "no_fit", "invalid", "hw_invalid", "failed"}


def test_a_worker_runs_under_the_environment_of_the_search_that_starts_it(
        tmp_path: Path, monkeypatch) -> None:
    """Workers are forked from a server started earlier (by the first pool of the process):
    still, each one sees the environment of the search at the time it starts (where the
    project's files are, VTATUNE_HOME), as a freshly spawned process would."""
    from dataclasses import replace

    from vtatune.passes import user
    from vtatune.search.workers import boot

    boot()  # the fork server starts (if no test started it) before the variable is set
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nPASSES = []\n"
                     "def mark(func, hw):\n"
                     "    return [] if os.environ.get('VTATUNE_TEST_MARK') == 'on' "
                     "else ['no mark']\n"
                     "VERIFIERS = [mark]\n")
    cand = replace(_candidate(shape="16,64,64"), passes=user.load(probe))
    statuses = []
    for mark in ("on", None):
        if mark:
            monkeypatch.setenv("VTATUNE_TEST_MARK", mark)
        else:
            monkeypatch.delenv("VTATUNE_TEST_MARK")
        with WorkerPool(1, "pynq-z1") as pool:
            pool.submit(0, cand)
            (_, rec), = _wait(pool, lambda out: out)
        statuses.append((rec.status, rec.reason))
    assert statuses[0][0] == "ok", statuses
    assert statuses[1] == ("invalid", "mark: no mark"), statuses


def test_a_process_forked_after_the_server_started_uses_it_and_leaves_it_running() -> None:
    """A child of the process that started the fork server (os.fork) cannot wait for the
    server, which is not its child: ``boot`` there reuses it, and the child's exit handler
    does not stop its parent's server."""
    from multiprocessing import forkserver

    from vtatune.search import workers

    workers.boot()
    server = forkserver._forkserver._forkserver_pid
    if server is None:
        pytest.skip("no fork server on this platform")
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only if both calls are harmless
        code = 1
        try:
            workers.boot()
            workers._stop_server()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert os.waitpid(server, os.WNOHANG) == (0, 0)  # still running, still this process's


class _Sink:
    """Stands in for a worker's end of the pipe: records what it was sent."""

    def __init__(self) -> None:
        self.sent: list = []

    def send(self, msg) -> None:
        self.sent.append(msg)


def test_a_candidate_goes_to_the_idle_worker_that_lowered_its_program() -> None:
    """Workers keep their own compile caches, so an idle worker that lowered a candidate's
    program gets it (a buffer-size variant shares the program); other candidates go to the
    worker used least recently."""
    from dataclasses import replace

    a = _candidate()
    a_small_wgt = replace(a, hw=replace(a.hw, log_wgt_buff_size=a.hw.log_wgt_buff_size - 1))
    other = replace(a, knobs={**a.knobs, "oc_nthread": 3 - a.knobs["oc_nthread"]})

    pool = WorkerPool(2, "pynq-z1", lazy=True)
    for w in pool.workers:
        w.proc, w.conn = object(), _Sink()

    def run(task, cand) -> int:
        pool.submit(task, cand)
        (i,) = [i for i, w in enumerate(pool.workers) if w.task == task]
        pool.workers[i].task = None  # done
        return i

    first = run(0, a)
    assert run(1, other) != first  # a new program: the worker used least recently
    assert run(2, a_small_wgt) == first  # the same program on other buffers
    assert run(3, a) == first
    assert [len(w.conn.sent) for w in pool.workers] == [3, 1] if first == 0 else [1, 3]


def test_a_candidate_of_a_busy_workers_program_queues_behind_it() -> None:
    """A worker that is lowering (or holds) a candidate's program gets it even when busy,
    queued behind its task (up to MAX_BACKLOG): another worker would lower the program again."""
    from dataclasses import replace

    a = _candidate()
    variants = [replace(a, hw=replace(a.hw, log_wgt_buff_size=a.hw.log_wgt_buff_size - k,
                                      log_uop_buff_size=a.hw.log_uop_buff_size - k % 2))
                for k in range(1, MAX_BACKLOG + 2)]

    pool = WorkerPool(2, "pynq-z1", lazy=True)
    for w in pool.workers:
        w.proc, w.conn, w.ready = object(), _Sink(), True
    pool.submit(0, a)
    (home,) = [i for i, w in enumerate(pool.workers) if w.task == 0]
    for k, v in enumerate(variants[:MAX_BACKLOG], 1):  # the same program: queued behind 0
        pool.submit(k, v)
    assert pool.workers[home].backlog == list(enumerate(variants[:MAX_BACKLOG], 1))
    assert [m[0] for m in pool.workers[home].conn.sent] == list(range(MAX_BACKLOG + 1))
    assert pool.idle == 1
    pool.submit(9, variants[-1])  # the queue is full: the idle worker lowers it too
    assert pool.workers[1 - home].task == 9 and pool.idle == 0


def test_tasks_queued_behind_a_crash_are_evaluated_elsewhere() -> None:
    from dataclasses import replace

    slow = _candidate("conv2d", layer="C2")  # ~0.5 s: long enough to be killed mid-way
    variant = replace(slow, hw=replace(slow.hw, log_wgt_buff_size=slow.hw.log_wgt_buff_size + 1))
    with WorkerPool(2, "pynq-z1") as pool:
        _wait(pool, lambda _: all(w.ready for w in pool.workers))
        pool.submit(7, slow)
        (home,) = [i for i, w in enumerate(pool.workers) if w.task == 7]
        pool.submit(8, variant)
        assert pool.workers[home].backlog == [(8, variant)]
        _wait(pool, lambda _: pool.workers[home].started is not None)
        pool.workers[home].proc.kill()
        out = dict(_wait(pool, lambda out: len(out) == 2))
        assert out[7].status == "failed" and "crashed the worker" in out[7].reason
        assert out[8].status == "ok" and out[8].key == variant.key


def test_room_is_one_queued_task_per_worker_idle_or_busy() -> None:
    """``room``: what a search hands the pool so no worker waits between two evaluations —
    each worker, idle or busy, can take one task; a busy worker's goes into its pipe."""
    from dataclasses import replace

    a = _candidate()
    others = [replace(a, knobs={**a.knobs, "tile_co": v}) for v in (1, 2, 4)]
    pool = WorkerPool(2, "pynq-z1", lazy=True)
    for w in pool.workers:
        w.proc, w.conn, w.ready = object(), _Sink(), True
    assert pool.room == 2 and pool.idle == 2
    pool.submit(0, a)
    pool.submit(1, others[0])
    assert pool.idle == 0 and pool.room == 2  # both busy, nothing queued
    pool.submit(2, others[1])
    pool.submit(3, others[2])
    assert pool.room == 0
    assert sorted(len(w.backlog) for w in pool.workers) == [1, 1]
    assert sorted(len(w.conn.sent) for w in pool.workers) == [2, 2]  # sent at once
    one = WorkerPool(1, "pynq-z1", lazy=True)  # one worker: the serial order, no queue
    one.workers[0].proc, one.workers[0].conn, one.workers[0].ready = object(), _Sink(), True
    one.submit(0, a)
    assert one.room == 0


def test_a_script_without_a_main_guard_searches_once(tmp_path: Path) -> None:
    # README's API example saved as a script, without ``if __name__ == "__main__":``: the
    # workers must not import the script again (they would run its search in a starting
    # worker, which dies), and the script's own lines run once
    db = tmp_path / "s.sqlite"
    script = tmp_path / "script.py"
    script.write_text(
        "import vtatune.api as vt\n"
        "print('script body ran')\n"
        f"run = vt.search('dense', trials=2, workers=2, db={str(db)!r})\n"
        "print('trials', run.trials)\n")
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600,
                         cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["script body ran", "trials 2"]
