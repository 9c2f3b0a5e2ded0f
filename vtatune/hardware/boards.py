"""FPGA boards: clock, AXI width and device resources, loaded from ``hwconfigs/boards/``.

A board is named ``NAME`` or ``NAME@PROFILE``: the profile picks one build's timing constants
(``vtatune.hardware.timing_profiles``); ``Board.name`` keeps what was asked for, so every
string path (space files, stored studies, worker processes) carries the profile along.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vtatune.errors import ConfigError, UserError
from vtatune.escaping import shown
from vtatune.hardware import timing_profiles
from vtatune.hardware.config import TARGETS
from vtatune.paths import project_root
from vtatune.readers import read_json

#: Board of the shipped spaces and the commands' default; default study names mention any
#: other.
DEFAULT_BOARD = "pynq-z1"

#: Resource kinds a board may list. Xilinx: lut, ff, bram36, uram, dsp. Intel: alm, ff, m10k, dsp.
RESOURCE_KINDS = ("lut", "ff", "bram36", "uram", "dsp", "alm", "m10k")
FAMILIES = ("xilinx-7series", "xilinx-ultrascale+", "intel-cyclonev")


@dataclass(frozen=True)
class Board:
    """A board VTA can be built for. Units: MHz, bits, resource counts.

    ``name`` is the board as named (``pynq-z1`` or ``pynq-z1@2019-08``); ``base`` the board
    file's name; ``profile`` the timing profile asked for (None: the board's default)."""

    name: str
    part: str
    family: str
    clock_mhz: float
    axi_bits: int
    resources: dict[str, int]
    vta_target: str = ""
    description: str = ""
    sources: dict[str, str] = field(default_factory=dict)
    profile: str | None = None
    #: The timing profile's content when it travels with the board (a bundle carries the
    #: profile it was exported with, a user profile of another machine included); None: read
    #: from the board's profiles (``timing_profiles.resolve``).
    timing: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def base(self) -> str:
        """The board without its profile (the name of its board and timing files)."""
        return self.name.partition("@")[0]

    @property
    def clock_hz(self) -> float:
        return self.clock_mhz * 1e6

    @property
    def axi_bytes_per_cycle(self) -> int:
        return self.axi_bits // 8


def boards_dir() -> Path:
    return project_root() / "hwconfigs" / "boards"


def names() -> list[str]:
    """Names of the known boards."""
    return sorted(p.stem for p in boards_dir().glob("*.json"))


def from_dict(raw: Any, source: str) -> Board:
    """Build a ``Board`` from a board file's content, listing every problem at once."""
    if not isinstance(raw, dict):
        raise ConfigError(source, ["expected a JSON object"])
    problems: list[str] = []
    for key, typ in (("name", str), ("part", str), ("family", str), ("clock_mhz", (int, float)),
                     ("axi_bits", int), ("resources", dict)):
        if key not in raw:
            problems.append(f"missing key {key!r}")
        elif isinstance(raw[key], bool) or not isinstance(raw[key], typ):
            problems.append(f"{key} has the wrong type ({raw[key]!r})")
    for key in ("vta_target", "description"):
        if key in raw and not isinstance(raw[key], str):
            problems.append(f"{key} must be a string, got {raw[key]!r}")

    target = raw.get("vta_target", "")
    if isinstance(target, str) and target not in ("", *TARGETS):
        problems.append(f"vta_target {target!r} is not one of VTA's targets "
                        f"({', '.join(TARGETS)})")
    sources = raw.get("sources", {})
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        problems.append("sources must map names to strings")
    if problems:
        raise ConfigError(source, problems)
    if raw["family"] not in FAMILIES:
        problems.append(f"family {raw['family']!r} is not one of {', '.join(FAMILIES)}")
    if raw["clock_mhz"] <= 0:
        problems.append("clock_mhz must be positive")
    if raw["axi_bits"] not in (32, 64, 128, 256, 512):
        problems.append(f"axi_bits={raw['axi_bits']} is not a power of two in [32, 512]")
    for kind, count in raw["resources"].items():
        if kind not in RESOURCE_KINDS:
            problems.append(f"unknown resource {kind!r} (known: {', '.join(RESOURCE_KINDS)})")
        elif isinstance(count, bool) or not isinstance(count, int) or count < 0:
            problems.append(f"resource {kind} must be a non-negative integer, got {count!r}")
    if problems:
        raise ConfigError(source, problems)
    return Board(
        name=raw["name"],
        part=raw["part"],
        family=raw["family"],
        clock_mhz=float(raw["clock_mhz"]),
        axi_bits=raw["axi_bits"],
        resources=dict(raw["resources"]),
        vta_target=raw.get("vta_target", ""),
        description=raw.get("description", ""),
        sources=dict(raw.get("sources", {})),
    )


def load(name_or_path: str | Path) -> Board:
    """A board by name (``pynq-z1``, or ``pynq-z1@2019-08`` with a timing profile, which must
    exist) or by the path of a board JSON file."""

    text = str(name_or_path)
    if text.strip() == "":
        raise ConfigError("board", [f"no board name given (known: {', '.join(names())})"])
    if _with_profile(text):
        board = device(text)
        timing_profiles.resolve(board.base, board.profile)  # an unknown profile: one line, now
        return board
    p = Path(name_or_path)
    if not _exists(p):
        p = boards_dir() / f"{text}.json"
        if "/" in text or "\0" in text or not _exists(p):
            raise ConfigError(
                "board", [f"unknown board {shown(text)} (known: {', '.join(names())})"]
            )
    raw = read_json(p, "board")
    return from_dict(raw, f"board {shown(str(p))}")


def _with_profile(text: str) -> bool:
    """Whether ``text`` names a board with a profile (``pynq-z1@2019-07``, and
    ``pynq-z1@../x``, whose profile name is then refused), not a board file's path."""
    base = text.partition("@")[0]
    return "@" in text and ("/" not in text or base in names()) and not _exists(Path(text))


def device(name: str) -> Board:
    """The board ``name`` (``NAME`` or ``NAME@PROFILE``) for what its timing profile does not
    change (clock, AXI width, resources, area): a profile name is checked, never looked up,
    so a stored study or a bundle made with another machine's user profile still has its
    board here. ``ConfigError`` for an unknown board or a malformed profile name."""
    if not _with_profile(name):
        return load(name)
    base, profile = timing_profiles.split(name)
    board = load(base)
    return replace(board, name=f"{board.name}@{profile}", profile=profile)


def _exists(p: Path) -> bool:
    try:
        return p.exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def is_known(spec: str) -> bool:
    """Whether ``spec`` names a known board, with a timing profile it has when it gives one
    (``pynq-z1``, ``pynq-z1@2019-07``); a path never is (what a bundle's manifest may name)."""

    base = spec.partition("@")[0]
    if base not in names():
        return False
    try:
        load(spec)
    except UserError:
        return False
    return True


def all_boards() -> list[Board]:
    return [load(n) for n in names()]
