"""Compile one candidate (workload, hardware, knobs) to VTA-level TIR, verified.

``COMPILER_VERSION`` (``vtatune.compiler.version``) names what the compile path emits; it is part
of every stored result's identity. The compile path itself (TVM) is imported on first use, so the
version can be read without it.
"""

from __future__ import annotations

from typing import Any

from vtatune.compiler.version import COMPILER_VERSION

__all__ = ["COMPILER_VERSION", "CompileResult", "compile_candidate"]


def __getattr__(name: str) -> Any:
    if name == "compile_candidate":
        from vtatune.compiler.compile import compile_candidate

        return compile_candidate
    if name == "CompileResult":
        from vtatune.compiler.result import CompileResult

        return CompileResult
    raise AttributeError(f"module 'vtatune.compiler' has no attribute {name!r}")
