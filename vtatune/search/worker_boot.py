"""What every evaluation worker needs before its first task, done once per search.

The worker pool starts its processes from a fork server (``multiprocessing``'s
``forkserver``) that imports this module first: the compiler, the runtime and the simulator
(TVM among them, ~1.3 s of CPU), then one lowering of a small conv2d, since TVM's first
lowering in a process costs ~1 s more than later ones. Each worker is forked from that
server, so it starts warm in a few milliseconds instead of paying both itself; a worker that
crashes or times out is replaced as quickly.

Nothing here reads the project's files (spaces, hardware configs, boards, calibration): a
worker reads those itself, under the environment of the search that started it.
"""

from __future__ import annotations

import sys

# TVM's FFI imports torch first thing when it is installed (the gp extra): ~2 s of CPU for a
# library no evaluation uses. Marking it absent makes that import fail fast, as without torch.
sys.modules.setdefault("torch", None)  # type: ignore[assignment]

import vtatune.area  # noqa: E402,F401
import vtatune.compiler.compile  # noqa: E402
import vtatune.runtime.build  # noqa: E402,F401
import vtatune.runtime.execute  # noqa: E402,F401
import vtatune.search.evaluate  # noqa: E402,F401
import vtatune.simulator  # noqa: E402,F401


def warm_up() -> None:
    """One lowering of a small conv2d on VTA's default design (its result is dropped; a
    failure only leaves TVM cold: the fork server must start whatever happens)."""
    try:
        _lower_one()
    except Exception:  # noqa: S110
        pass


def _lower_one() -> None:
    from vtatune import schedules
    from vtatune.compiler.compile import lower_program, program_key
    from vtatune.hardware.config import default
    from vtatune.workloads.conv2d import Conv2d

    wl = Conv2d(1, 32, 8, 8, 32, 3, 3, 1, 1)
    hw = default()
    lower_program(program_key(wl, hw, schedules.suggest(wl, hw)))


warm_up()
