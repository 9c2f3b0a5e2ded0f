"""Is the search process that owns a trial slot still alive?

Across machines only its heartbeat can tell (seconds on the database server's clock, so hosts'
clocks never matter): an owner whose heartbeat is older than the grace period is dead, as in
Optuna's ``heartbeat_interval``/``grace_period`` and ``fail_stale_trials``. On the owner's own
host the answer is exact and immediate: the process (pid and start time, so a reused pid is not
mistaken for it) exists or not. "Own host" means the same hostname, boot and PID namespace, so
two containers never check each other's pids.
"""

from __future__ import annotations

import os
import socket
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any


@lru_cache(maxsize=1)
def host_token() -> str:
    """hostname / boot id / PID namespace: equal only where pids mean the same processes."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = "?"
    try:
        pidns = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        pidns = "?"
    return f"{socket.gethostname()}/{boot}/{pidns}"[:255]


def proc_start(pid: int) -> int | None:
    """Start time of process ``pid`` (clock ticks since boot), None if unknown or gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):  # a zombie has exited: only its exit status is left
        return None
    return int(fields[19])


def new_owner_id() -> str:
    """A unique id for this search process."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def alive(owner: Any, now: float, grace_s: float) -> bool:
    """Is the owner (a ``vt_owners`` row mapping, or None when it has none) alive?"""
    if owner is None:
        return False
    if owner["host"] == host_token() and "?" not in owner["host"]:
        start = proc_start(int(owner["pid"]))
        return start is not None and (owner["proc_start"] is None
                                      or start == owner["proc_start"])
    return now - float(owner["heartbeat"]) <= grace_s
