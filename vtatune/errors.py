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

    #: Problems and characters per problem the message shows (``problems`` keeps them all):
    #: a file with 10,000 bad values must not make a 10,000-part line.
    SHOWN_PROBLEMS, PROBLEM_CHARS = 10, 300

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = list(problems)
        shown = [p if len(p) <= self.PROBLEM_CHARS else p[:self.PROBLEM_CHARS] + "..."
                 for p in self.problems[:self.SHOWN_PROBLEMS]]
        more = len(self.problems) - len(shown)
        super().__init__(f"{source}: " + "; ".join(shown)
                         + (f"; and {more:,} more problems" if more > 0 else ""))


class InputError(ConfigError):
    """A file that cannot be read safely: not a regular file, too large, not UTF-8, nested
    too deeply, a number out of range, an npz member of the wrong shape (see ``readers``)."""


class WorkloadError(UserError):
    """An unknown layer name or a malformed/impossible workload shape."""


class ModelError(UserError):
    """A model file (ONNX) that cannot be imported: not ONNX, truncated, an opset or IR version
    this onnx cannot read, a graph with a cycle, a missing external data file, no VTA layer."""


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
