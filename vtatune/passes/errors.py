"""Errors raised by the VTA passes."""

from __future__ import annotations

from vtatune.errors import CompileError


class LoweringError(CompileError):
    """A pass met a pattern it cannot map onto VTA (the candidate is stored as ``failed``)."""

    def __init__(self, pass_name: str, message: str):
        self.pass_name = pass_name
        super().__init__(f"{pass_name}: {message}")


class UserPassError(CompileError):
    """A user pass raised, or its file could not be loaded again (stored as ``failed``)."""
