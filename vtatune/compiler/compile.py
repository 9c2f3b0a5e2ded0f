"""``compile_candidate``: schedule, lower and verify one (workload, hardware, knobs) point.

Compiling is two steps, so that a search can share the expensive one:

1. ``lower_program`` schedules and lowers the candidate to VTA-level TIR and measures what the
   program needs (SRAM bytes per scope, the largest micro-op kernel, the operations it issues).
   The program depends on the workload, the epilogue shift, the GEMM shape and data widths and
   the knobs — its ``ProgramKey`` — and *not* on the buffer sizes: lowering runs on the
   ``program_hw`` view of the hardware, whose buffer sizes are ``UNKNOWN_BUFFER_SIZE``, a value
   that refuses to take part in any arithmetic or comparison. A pass that starts depending on
   a buffer size therefore fails loudly (``BufferSizeDependence``) instead of silently making
   one compiled program wrong for the other buffer sizes that share it.
2. ``verify_program`` checks that program against one hardware config: SRAM bytes against
   each buffer, the largest kernel against the micro-op buffer, every ISA field against the
   widths the SRAM depths give (``verify_isa_fields``; its bound analysis is kept with the
   lowered program, so verifying another buffer configuration only compares numbers).

``compile_candidate`` runs both; ``vtatune.compiler.cache`` keeps lowered programs by key.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from vtatune.compiler import steps
from vtatune.compiler.result import FAILED, INVALID, VALID, CompileResult
from vtatune.errors import CompileError
from vtatune.hardware.config import (  # noqa: F401 - the compiler's view, named here too
    BUFFER_FIELDS,
    UNKNOWN_BUFFER_SIZE,
    BufferSizeDependence,
    HwConfig,
    program_hw,
)
from vtatune.passes.verify import Problem
from vtatune.schedules.knobs import Knobs
from vtatune.workloads.base import DEFAULT_SHIFT, Workload

if TYPE_CHECKING:
    from vtatune.passes.user import PassSet

#: Stage of a lowered program that failed to lower (its ``reason`` says where).
LOWERED = "lowered"


@dataclass(frozen=True)
class ProgramKey:
    """Everything a lowered program depends on (and nothing it does not: no buffer sizes).

    ``passes``: the user's passes and verifiers (``passes.user.PassSet``, equal by
    fingerprint), or None."""

    workload: Workload
    hw: HwConfig  # a ``program_hw`` view
    knobs: tuple[tuple[str, int], ...]
    shift: int
    passes: PassSet | None = None


def program_key(wl: Workload, hw: HwConfig, knobs: Knobs, shift: int = DEFAULT_SHIFT,
                passes: PassSet | None = None) -> ProgramKey:
    return ProgramKey(wl, program_hw(hw), tuple(sorted((k, int(v)) for k, v in knobs.items())),
                      int(shift), passes)


@dataclass(frozen=True)
class LoweredProgram:
    """A candidate lowered to VTA-level TIR, before any check against buffer sizes.

    ``status`` is ``lowered``, ``invalid`` (VTA's compiler refuses a copy of the schedule:
    ``reason`` gives its rule) or ``failed`` (``reason`` says where). ``sram_bytes`` holds the
    bytes allocated per SRAM scope (inp, wgt, acc; all virtual threads) and ``uop`` (the
    largest micro-op kernel, 4 bytes per micro-op); ``largest_kernel`` is in micro-ops.
    """

    key: ProgramKey
    status: str
    reason: str = ""
    sram_bytes: dict[str, int] = field(default_factory=dict)
    largest_kernel: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    stage_ms: dict[str, float] = field(default_factory=dict)
    module: Any = field(default=None, compare=False, repr=False)
    # memo of derived, hardware-independent artefacts (the host program); not identity
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == LOWERED

    def host(self) -> Any:
        """The runtime's host program of this module (compiled once, then shared)."""
        if "host" not in self.memo:
            from vtatune.runtime.build import primfunc_of
            from vtatune.runtime.codegen import compile_host

            laps = steps.Laps()
            self.memo["host"] = compile_host(primfunc_of(self.module))
            laps.lap("codegen")
        return self.memo["host"]


@lru_cache(maxsize=64)
def prim_func(wl: Workload, hw: HwConfig, shift: int = DEFAULT_SHIFT) -> Any:
    """The unscheduled PrimFunc of ``wl`` on ``hw`` (cached: it costs a few ms to build)."""
    from tvm import te

    return te.create_prim_func(wl.te(hw, shift))


def lower_program(key: ProgramKey) -> LoweredProgram:
    """Schedule and lower the program ``key`` names. Never raises for a bad candidate."""
    from tvm import s_tir

    from vtatune import schedules
    from vtatune.compiler.stats import count_ops
    from vtatune.passes import pipeline
    from vtatune.passes.inject_dma import VtaCopyRefused
    from vtatune.passes.verify_sram import sram_bytes
    from vtatune.passes.verify_uop import kernel_sizes

    wl, hw, knobs = key.workload, key.hw, dict(key.knobs)
    stage: dict[str, float] = {}
    t = time.perf_counter()
    cpu = steps.Laps()  # each step's CPU time, added to the process's totals (``steps``)

    def lap(name: str) -> None:
        nonlocal t
        now = time.perf_counter()
        stage[name] = (now - t) * 1e3
        t = now
        cpu.lap(name)  # the stages are steps of the same names

    try:
        sch = s_tir.Schedule(prim_func(wl, hw, key.shift))
        schedules.apply(sch, wl, hw, knobs)
        lap("schedule")
        threaded = pipeline.lower_threaded(sch.mod, hw, key.passes)
        # measured after virtual threads and StorageRewrite (see verify_sram)
        sram = sram_bytes(threaded["main"])
        lap("lower")
        final = pipeline.lower_hardware(threaded, hw, key.passes)
        lap("lower_hw")
        func = final["main"]
        largest = max(kernel_sizes(func), default=0)
        counts = count_ops(func)
        lap("measure")
    except BufferSizeDependence:
        raise
    except VtaCopyRefused as exc:  # VTA's compiler refuses it: a deterministic outcome
        return LoweredProgram(key, INVALID, str(exc.refused.reason), stage_ms=stage)
    except CompileError as exc:
        return LoweredProgram(key, FAILED, str(exc), stage_ms=stage)
    except Exception as exc:  # TVM raises its own error types from schedule primitives
        return LoweredProgram(key, FAILED, _one_line(exc), stage_ms=stage)
    sram["uop"] = largest * 4
    return LoweredProgram(key, LOWERED, sram_bytes=sram, largest_kernel=largest, counts=counts,
                          stage_ms=stage, module=final)


def verify_program(low: LoweredProgram, hw: HwConfig, reused: bool = False) -> CompileResult:
    """Check a lowered program against ``hw``'s buffers and ISA field widths."""
    from vtatune.passes.verify_isa_fields import FieldChecks
    from vtatune.passes.verify_sram import capacity, sram_problems
    from vtatune.passes.verify_uop import uop_problems

    passes = low.key.passes
    base = {"workload": low.key.workload.signature, "hw_key": hw.key,
            "knobs": dict(low.key.knobs), "sram_capacity": capacity(hw), "reused": reused,
            "passes": passes.fingerprint if passes is not None else ""}
    stage = {} if reused else dict(low.stage_ms)
    if not low.ok:  # refused by VTA's rules (invalid) or failed to lower
        return CompileResult(INVALID if low.status == INVALID else FAILED, low.reason,
                             stage_ms=stage, **base)
    t = time.perf_counter()
    cpu = steps.Laps()
    try:
        # the field checks' bound analysis is the program's: done once, compared per hw
        fields = low.memo.get("field_checks")
        if fields is None:
            fields = low.memo["field_checks"] = FieldChecks(low.module["main"])
        problems: list[Problem] = (sram_problems(low.sram_bytes, hw)
                                   + uop_problems(low.largest_kernel, hw)
                                   + fields.problems(hw))
        if passes is not None:
            problems += user_problems(passes, low.module["main"], hw)
    except CompileError as exc:
        return CompileResult(FAILED, str(exc), stage_ms=stage, **base)
    except Exception as exc:
        return CompileResult(FAILED, _one_line(exc), stage_ms=stage, **base)
    stage["verify"] = (time.perf_counter() - t) * 1e3
    cpu.lap("verify")
    status = INVALID if problems else VALID
    return CompileResult(status, "; ".join(str(p) for p in problems),
                         sram_bytes=dict(low.sram_bytes), problems=tuple(problems),
                         counts=dict(low.counts), stage_ms=stage, module=low.module, **base)


def compile_candidate(wl: Workload, hw: HwConfig, knobs: Knobs, shift: int = DEFAULT_SHIFT,
                      passes: Any = None) -> CompileResult:
    """Compile one candidate. Never raises for a bad candidate: failures are results.

    ``passes``: the user's passes and verifiers — a pass file's path, a ``PassSet``
    (``passes.user.load``) or a list of ``(phase, pass)`` pairs (``UserError`` when they
    cannot be used)."""
    from vtatune.passes.user import resolve

    return verify_program(lower_program(program_key(wl, hw, knobs, shift, resolve(passes))),
                          hw)


def user_problems(passes: PassSet, func: Any, hw: HwConfig) -> list[Problem]:
    """What the user's verifiers find in the VTA-level ``func`` on ``hw``: each problem is a
    ``Problem`` or a string (``kind`` "user", named after the verifier). A verifier that
    raises fails the candidate (``UserPassError``)."""
    from vtatune.passes.errors import UserPassError

    out: list[Problem] = []
    for name, verifier in passes.verifiers:
        try:
            found = list(verifier(func, hw) or ())
        except Exception as exc:
            raise UserPassError(f"user verifier {name} raised {type(exc).__name__}: "
                                f"{_one_line(exc).split(': ', 1)[-1]}") from exc
        for p in found:
            out.append(p if isinstance(p, Problem) else
                       Problem("user", name, 0, 0, "", message=f"{name}: {p}"))
    return out


def _one_line(exc: Exception) -> str:
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[-1] if msg else ''}"
