"""A worker whose search process is killed (SIGKILL: no cleanup runs) ends by itself, even
while it is busy: orphaned workers must not go on using the machine. (Started as the worker
pool starts them: from its fork server, whose own end does not end them.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = """
import multiprocessing as mp
import time


def busy():
    from vtatune.search.workers import _exit_with_parent

    _exit_with_parent()
    print("watching", flush=True)
    time.sleep(600)  # stands for a long evaluation: no message is read meanwhile


if __name__ == "__main__":
    from vtatune.search.workers import _context

    mp.set_start_method(_context().get_start_method())  # as the worker pool starts workers
    p = mp.Process(target=busy, daemon=True)
    p.start()
    print(p.pid, flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_busy_worker_exits_when_the_search_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "search_stand_in.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                              env=env, start_new_session=True)
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        assert parent.stdout.readline().strip() == "watching"
        parent.send_signal(signal.SIGKILL)  # the search only; the worker is left behind
        parent.wait(30)
        deadline = time.monotonic() + 60  # a hang guard for a loaded machine
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(worker), "the worker outlived its search"
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
