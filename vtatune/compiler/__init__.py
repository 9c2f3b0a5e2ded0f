"""Compile one candidate (workload, hardware, knobs) to VTA-level TIR, verified."""

from __future__ import annotations

from vtatune.compiler.compile import compile_candidate
from vtatune.compiler.result import CompileResult

__all__ = ["CompileResult", "compile_candidate"]
