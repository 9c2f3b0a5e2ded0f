"""Every status a candidate, a network design or a network layer can have, once.

``Status`` is a ``str`` enum: a member equals its value (``Status.OK == "ok"``), formats as it
(``f"{Status.NO_FIT}"`` is ``no_fit``) and is written to JSON and to the database as it, so
stored studies, bundles and ``--json`` output read the same words as before the enum. A leaf
module: it imports nothing of vtatune.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Why a candidate or a design is (not) feasible; only ``OK`` is."""

    #: Compiled, fits, simulated: cycles and seconds are known.
    OK = "ok"
    #: The compile path's verification rejected it (e.g. SRAM or micro-op overflow).
    INVALID = "invalid"
    #: Does not fit the board (or exceeds the area limit).
    NO_FIT = "no_fit"
    #: Compile or simulation crashed.
    FAILED = "failed"
    #: Evaluation exceeded ``--timeout``.
    TIMEOUT = "timeout"
    #: The hardware cannot be built.
    HW_INVALID = "hw_invalid"
    #: A network design whose lower bound cannot reach the study's front (layers not tuned).
    DOMINATED = "dominated"
    #: A network design with a layer that got no feasible schedule within its budget.
    NO_SCHEDULE = "no_schedule"
    #: A network design being tuned (or interrupted; a rerun continues it).
    RUNNING = "running"
    #: A network layer for which no candidate was evaluated.
    NO_CANDIDATE = "no_candidate"


#: Every candidate status (``vtatune.store.records.STATUSES``).
CANDIDATE_STATUSES = (Status.OK, Status.INVALID, Status.NO_FIT, Status.FAILED, Status.TIMEOUT,
                      Status.HW_INVALID)
#: Outcomes that evaluating the same candidate in the same context always gives again.
DETERMINISTIC = (Status.OK, Status.INVALID, Status.NO_FIT, Status.HW_INVALID)
#: Outcomes that may be transient (a crashed worker, a loaded machine).
TRANSIENT = (Status.FAILED, Status.TIMEOUT)
#: Every network-design status.
NETWORK_STATUSES = (Status.OK, Status.HW_INVALID, Status.NO_FIT, Status.DOMINATED,
                    Status.NO_SCHEDULE, Status.RUNNING)
