"""The VTA runtime: turns a compiled candidate's VTA-level code into a ``Program``.

``compile_host`` (``codegen``) turns the host loop nest into Python once; running it on a
``CommandQueue`` (VTA's runtime semantics: dependence tokens, no-ops, micro-op cache) issues
the instructions; ``build_program`` does both. ``execute`` runs a program on plain-layout
inputs through the functional simulator.
"""

from __future__ import annotations

from vtatune.runtime.build import build_program, region_bytes, run_host
from vtatune.runtime.codegen import HostProgram, KernelSpec, compile_host
from vtatune.runtime.command_queue import BuildStats, CommandQueue
from vtatune.runtime.execute import Execution, execute, program_counters, random_inputs

__all__ = [
    "BuildStats",
    "CommandQueue",
    "Execution",
    "HostProgram",
    "KernelSpec",
    "build_program",
    "compile_host",
    "execute",
    "program_counters",
    "random_inputs",
    "region_bytes",
    "run_host",
]
