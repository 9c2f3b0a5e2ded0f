"""Several processes on one SQLite file, and a writer killed with SIGKILL mid-way.

The writers are real processes (``python -c``), as the search's workers are.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from conftest import WORKLOAD

from vtatune.store import CandidateRecord, Store

HERE = Path(__file__).parent

#: A writer: opens the store, waits for the go file, then saves a candidate and a trial per
#: step, printing each step number once it is committed.
WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {here!r})
from conftest import record, WORKLOAD
from vtatune.store import Store

url, study, first, count, go = sys.argv[1:]
first, count = int(first), int(count)
store = Store(url)
store.create_or_load_study(study, WORKLOAD, {{}}, "random", "area-latency", "pynq-z1", 0)
print("ready", flush=True)
while go and not Path(go).exists():
    time.sleep(0.005)
n = store.next_trial_number(study)
for i in range(first, first + count):
    rec = record(i)
    store.save(rec)
    store.add_trial(study, n, rec.key, "random", {{"i": i}}, False)
    print(n, flush=True)
    n += 1
"""


def _writer(url: str, study: str, first: int, count: int, go: Path | str = ""
            ) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(HERE.parents[1])}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER.format(here=str(HERE)), url, study, str(first), str(count),
         str(go)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", proc.stderr.read() if proc.stderr else line


def _integrity(url: str) -> str:
    path = url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def test_concurrent_writers_and_a_reader(sqlite_url: str, tmp_path: Path) -> None:
    Store(sqlite_url)
    go = tmp_path / "go"
    # both writers share candidates 60..119: dedupe must hold under concurrency too
    procs = [_writer(sqlite_url, "a", 0, 120, go), _writer(sqlite_url, "b", 60, 120, go)]
    for p in procs:
        _wait_ready(p)
    go.touch()
    reader = Store(sqlite_url)
    reads = 0
    while any(p.poll() is None for p in procs):
        reader.studies()
        reader.history(WORKLOAD)
        reads += 1
        time.sleep(0.05)
    for p in procs:
        out, err = p.communicate()
        assert p.returncode == 0, err
        assert err == ""
        assert len(out.split()) == 120
    assert reads > 0
    store = Store(sqlite_url)
    assert [t.number for t in store.trials("a")] == list(range(120))
    assert [t.number for t in store.trials("b")] == list(range(120))
    assert {t.params["i"] for t in store.trials("b")} == set(range(60, 180))
    assert len(store.history(WORKLOAD)) == 180
    assert _integrity(sqlite_url) == "ok"


def test_kill_9_mid_write_keeps_every_commit(sqlite_url: str) -> None:
    Store(sqlite_url)
    committed: list[int] = []
    for _ in range(2):  # kill, resume, kill again
        proc = _writer(sqlite_url, "s", len(committed), 100_000)
        _wait_ready(proc)
        assert proc.stdout is not None
        target = len(committed) + 40
        while len(committed) < target:
            committed.append(int(proc.stdout.readline()))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        # steps printed before the kill landed but not read yet were committed too
        committed += [int(line) for line in proc.stdout.read().split()]

        assert _integrity(sqlite_url) == "ok"
        store = Store(sqlite_url)
        numbers = [t.number for t in store.trials("s")]
        # every printed (committed) trial is there; at most the one in flight after the last
        # print also made it, never a partial or out-of-order trial
        assert numbers[:len(committed)] == committed == list(range(len(committed)))
        assert len(numbers) - len(committed) <= 1
        assert store.next_trial_number("s") == len(numbers)
        committed = numbers
    # a new store writes again
    store = Store(sqlite_url)
    n = store.next_trial_number("s")
    rec = _record(n)
    store.save(rec)
    store.add_trial("s", n, rec.key, "random", {}, False)
    assert store.trials("s")[-1].number == n and _integrity(sqlite_url) == "ok"


def _record(i: int) -> CandidateRecord:
    from conftest import record

    return record(i)


def _child_saves(store: Store, first: int) -> None:
    for i in range(first, first + 20):
        store.save(_record(i))


def test_forked_worker_uses_its_own_connections(sqlite_url: str,
                                                make_record: Callable[..., CandidateRecord]
                                                ) -> None:
    store = Store(sqlite_url)
    store.save(make_record(0))
    assert store.lookup(make_record(0).key) is not None  # the parent holds a pooled connection
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_child_saves, args=(store, 100 * k + 1)) for k in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    store.save(make_record(1000))  # the parent's connections still work
    assert len(store.history(WORKLOAD)) == 1 + 40 + 1
    assert _integrity(sqlite_url) == "ok"


def test_writers_wait_for_the_lock_instead_of_failing(sqlite_url: str,
                                                      make_record: Callable[..., CandidateRecord]
                                                      ) -> None:
    """A write lock held for a while by another process delays a save, never fails it."""
    store = Store(sqlite_url)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time\n"
         "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
         "c.execute('BEGIN IMMEDIATE'); print('locked', flush=True); time.sleep(0.5)\n"
         "released = time.time(); c.execute('COMMIT'); print(released, flush=True)",
         sqlite_url.removeprefix("sqlite:///")],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    store.save(make_record(0))
    saved = time.time()
    assert holder.wait() == 0
    released = float(holder.stdout.readline())
    # the save waited for the lock (it returned after the holder let go), and it succeeded;
    # an order of events, not a duration: it holds on a loaded machine too
    assert saved >= released and store.lookup(make_record(0).key) is not None
