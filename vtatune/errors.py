"""The one exception hierarchy of vtatune.

``UserError`` and its subclasses are mistakes in what the user gave us (a file, a flag, a
config); the CLI prints them as one line and exits with code 2. Anything else is a bug and
keeps its traceback.
"""

from __future__ import annotations


class VtatuneError(Exception):
    """Base of every error vtatune raises on purpose."""


class UserError(VtatuneError):
    """A problem with the user's input: reported as one line, exit code 2."""


class ConfigError(UserError):
    """A hardware config, board or space file that is missing, malformed or impossible.

    ``problems`` lists every problem found, so the user can fix them all at once.
    """

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = list(problems)
        super().__init__(f"{source}: " + "; ".join(self.problems))


class WorkloadError(UserError):
    """An unknown layer name or a malformed/impossible workload shape."""


class KnobError(UserError):
    """A schedule knob that is unknown or whose value is not in the knob space."""


class StoreError(UserError):
    """The results database cannot be opened or used (one line, naming the database)."""


class CompileError(VtatuneError):
    """A candidate that failed inside the compile path (stored as status ``failed``)."""


class ProgramError(VtatuneError):
    """A VTA program that is malformed: a misrouted instruction, a bad region, a bad header."""


class EncodingError(ProgramError):
    """A value that does not fit its ISA field (the field, value and width are in the message)."""


class SimulationError(VtatuneError):
    """A program that cannot run: a deadlock on dependence tokens or an out-of-range access."""
