"""``CompileResult``: what compiling one candidate produced, valid or not."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vtatune.passes.verify import Problem
from vtatune.statuses import Status

#: A compiled candidate that every verification pass accepts (simulating it gives ``ok``);
#: ``invalid`` and ``failed`` are the candidate statuses of the same names.
VALID = "valid"
INVALID, FAILED = Status.INVALID, Status.FAILED
#: Every status of a ``CompileResult``.
COMPILE_STATUSES = (VALID, INVALID, FAILED)


@dataclass(frozen=True)
class CompileResult:
    """One compiled candidate.

    ``status`` is ``valid``, ``invalid`` (a verification pass rejected it: ``problems`` says
    which buffer or field, what was needed and what is available) or ``failed`` (the compile
    path could not lower it; ``reason`` says where). Sizes are bytes, times milliseconds.
    ``module`` is the VTA-level TIR (None unless valid or invalid after lowering).
    """

    status: str
    reason: str
    workload: str
    hw_key: str
    knobs: dict[str, int]
    sram_bytes: dict[str, int] = field(default_factory=dict)
    sram_capacity: dict[str, int] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    stage_ms: dict[str, float] = field(default_factory=dict)
    module: Any = field(default=None, compare=False, repr=False)
    #: the lowered program was shared with an earlier candidate (``stage_ms`` then holds
    #: only this candidate's verification)
    reused: bool = field(default=False, compare=False)
    #: fingerprint of the user's passes and verifiers (``passes.user``), empty without
    passes: str = ""

    @property
    def ok(self) -> bool:
        return self.status == VALID

    @property
    def compile_ms(self) -> float:
        return sum(self.stage_ms.values())

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (without the module)."""
        return {
            "status": self.status,
            "reason": self.reason,
            "workload": self.workload,
            "hw": self.hw_key,
            "knobs": self.knobs,
            "sram_bytes": self.sram_bytes,
            "sram_capacity": self.sram_capacity,
            "problems": [p.as_dict() for p in self.problems],
            "counts": self.counts,
            "compile_ms": round(self.compile_ms, 3),
            "passes": self.passes or None,
            "stage_ms": {k: round(v, 3) for k, v in self.stage_ms.items()},
        }
