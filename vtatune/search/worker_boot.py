"""What every evaluation worker needs before its first task, imported once per search.

The worker pool starts its processes from a fork server (``multiprocessing``'s
``forkserver``) that imports this module first: the compiler, the runtime and the simulator
(TVM among them, ~1 s of CPU). Each worker is forked from that server, so it starts in a few
milliseconds instead of importing them itself; a worker that crashes or times out is replaced
as quickly. (Each worker then evaluates a warm-up candidate of its own space; a lowering in
the server as well gained nothing: the first lowering in a process costs what later ones do.)

Nothing here reads the project's files (spaces, hardware configs, boards, calibration): a
worker reads those itself, under the environment of the search that started it.
"""

from __future__ import annotations

import sys

# TVM's FFI imports torch first thing when it is installed (the gp extra): ~2 s of CPU for a
# library no evaluation uses. Marking it absent makes that import fail fast, as without torch.
sys.modules.setdefault("torch", None)  # type: ignore[assignment]

import vtatune.area  # noqa: E402,F401
import vtatune.compiler.compile  # noqa: E402,F401
import vtatune.runtime.build  # noqa: E402,F401
import vtatune.runtime.execute  # noqa: E402,F401
import vtatune.search.evaluate  # noqa: E402,F401
import vtatune.simulator  # noqa: E402,F401

