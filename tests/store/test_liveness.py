"""Owner liveness: exact on the owner's host, by heartbeat elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys

from vtatune.store import liveness


def _row(**kw):
    return {"host": liveness.host_token(), "pid": os.getpid(),
            "proc_start": liveness.proc_start(os.getpid()), "heartbeat": 100.0, **kw}


def test_a_live_process_on_this_host_is_alive_whatever_its_heartbeat() -> None:
    assert liveness.alive(_row(heartbeat=0.0), now=1e9, grace_s=1.0)


def test_a_dead_process_on_this_host_is_dead_at_once() -> None:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    start = liveness.proc_start(p.pid)
    p.wait()
    assert not liveness.alive(_row(pid=p.pid, proc_start=start), now=100.0, grace_s=1e9)
    # a pid reused by another process is not the owner
    assert not liveness.alive(_row(proc_start=-5), now=100.0, grace_s=1e9)


def test_another_host_is_judged_by_its_heartbeat() -> None:
    other = _row(host="elsewhere/boot/1", pid=1)
    assert liveness.alive(other, now=120.0, grace_s=30.0)
    assert not liveness.alive(other, now=131.0, grace_s=30.0)
    assert not liveness.alive(None, now=0.0, grace_s=30.0)
