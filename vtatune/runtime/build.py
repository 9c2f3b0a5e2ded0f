"""``build_program``: a compiled candidate's VTA-level TIR -> a VTA ``Program``."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from vtatune.errors import ProgramError
from vtatune.hardware.config import HwConfig
from vtatune.program.program import Program
from vtatune.runtime.codegen import HostProgram, compile_host
from vtatune.runtime.command_queue import CommandQueue
from vtatune.workloads.base import Workload


def region_bytes(wl: Workload, hw: HwConfig) -> dict[str, int]:
    """Bytes of the DRAM regions ``data``, ``kernel`` and ``res`` (packed layouts)."""
    shapes = wl.packed_shapes(hw)
    bits = {"data": hw.inp_bits, "kernel": hw.wgt_bits, "res": hw.out_bits}
    out = {}
    for name, shape in shapes.items():
        n = 1
        for d in shape:
            n *= d
        out[name] = n * bits[name] // 8
    return out


def primfunc_of(compiled: Any) -> Any:
    """The VTA-level PrimFunc of a ``CompileResult``, an IRModule or a PrimFunc."""
    from tvm import tirx

    module = getattr(compiled, "module", compiled)
    if module is None:
        status = getattr(compiled, "status", "?")
        reason = getattr(compiled, "reason", "")
        raise ProgramError(f"candidate has no VTA-level module (status {status}: {reason})")
    if isinstance(module, tirx.PrimFunc):
        return module
    return module["main"]


def build_program(compiled: Any, wl: Workload, hw: HwConfig, name: str = "") -> Program:
    """Run the candidate's host code on a ``CommandQueue`` and assemble the ``Program``.

    ``compiled`` is a ``CompileResult`` (it must have a module: valid, or invalid after
    lowering - an invalid one may not run), an IRModule or a PrimFunc. DRAM regions ``data``,
    ``kernel`` and ``res`` hold ``wl``'s packed tensors. ``program.meta["build"]`` gives the
    ``BuildStats`` and the build time in milliseconds (``build_ms``, host compile included).
    """
    t0 = time.perf_counter()
    host = compile_host(primfunc_of(compiled))
    return run_host(host, wl, hw, name=name, t0=t0, knobs=getattr(compiled, "knobs", None))


def run_host(host: HostProgram, wl: Workload, hw: HwConfig, name: str = "",
             t0: float | None = None, knobs: dict[str, int] | None = None) -> Program:
    """Execute a compiled host program on a fresh ``CommandQueue``; see ``build_program``."""
    t0 = time.perf_counter() if t0 is None else t0
    cq = CommandQueue(hw, host, region_bytes(wl, hw), name=name or wl.signature)
    host.run(cq)
    meta: dict[str, Any] = {"workload": wl.signature, "hw": hw.key}
    if knobs is not None:
        meta["knobs"] = dict(knobs)
    program, stats = cq.finish(meta)
    build = {**asdict(stats), "build_ms": (time.perf_counter() - t0) * 1e3}
    return Program(program.hw, program.insns, program.uops, program.regions,
                   program.dram_bytes, name=program.name, meta={**meta, "build": build})
