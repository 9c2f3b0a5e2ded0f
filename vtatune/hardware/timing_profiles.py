"""Timing profiles: a board's builds, each with its own timing constants, by name.

A board name on the command line or in a space file may carry a profile: ``NAME@PROFILE``
(``pynq-z1@2019-08``). Without one the board's default profile is meant. Profiles come from
two places:

- **shipped**: ``hwconfigs/timing/<board>.json``. A file with a ``profiles`` object holds
  several (each ``{description, params, sources, calibration}``; ``prior``, ``sources`` and
  ``description`` at the top are shared) and names its ``default_profile``; a file without
  one is a single profile named by its ``profile`` key (``default`` when absent).
- **user**: ``<data>/timing/<board>/<profile>.json``, written by ``vtatune calibrate --save``
  in the single-profile format. ``<data>`` is ``$VTATUNE_DATA``, else
  ``$XDG_DATA_HOME/vtatune``, else ``~/.local/share/vtatune``. A user profile may not take a
  shipped profile's name.

``resolve`` turns a board and profile into the content of one flat timing file (what
``vtatune.simulator.timing.params_from_dict`` reads); for a single-profile file that is the
file's content as it is, so results stored before profiles existed keep their keys
(``vtatune.store.identity`` hashes this content).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtatune.errors import ConfigError, UserError
from vtatune.escaping import shown
from vtatune.paths import project_root
from vtatune.readers import read_json

#: Separates a board from its profile: ``pynq-z1@2019-08``.
SEPARATOR = "@"
#: A profile name: letters, digits, '.', '_' and '-', starting with a letter or digit (no
#: path characters, so a name is always one file in one folder).
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: The name of a single-profile file's profile when the file names none.
DEFAULT_NAME = "default"
#: Keys of one profile inside a multi-profile file.
PROFILE_KEYS = ("description", "params", "sources", "calibration", "prior")


@dataclass(frozen=True)
class Profile:
    """One build of a board: ``content`` is a flat timing file (board, params, sources, ...).

    ``origin``: ``shipped`` or ``user``; ``path``: the file it lives in; ``default``: the
    board's default profile."""

    board: str
    name: str
    content: dict[str, Any]
    origin: str
    path: Path
    default: bool = False

    @property
    def spec(self) -> str:
        """``board@profile``."""
        return f"{self.board}{SEPARATOR}{self.name}"


def split(spec: str) -> tuple[str, str | None]:
    """``("pynq-z1", "2019-08")`` for ``pynq-z1@2019-08``; ``(spec, None)`` without a profile.
    ``UserError`` for an empty or malformed profile name."""

    board, sep, profile = spec.partition(SEPARATOR)
    if not sep:
        return spec, None
    if not NAME.match(profile):
        raise ConfigError(f"board {shown(spec, 80)}", [_bad_name(profile)])
    return board, profile


def check_name(name: str, what: str = "profile") -> str:
    """``name`` if it is a valid profile name, else ``UserError`` saying why."""
    if not NAME.match(name):
        raise UserError(f"{what} {_bad_name(name)}")
    return name


def _bad_name(name: str) -> str:

    return (f"{shown(name, 80)} is not a profile name (1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit)")


def timing_dir() -> Path:
    """The shipped timing files."""
    return project_root() / "hwconfigs" / "timing"


def data_dir() -> Path:
    """The user's data folder: ``$VTATUNE_DATA``, else ``$XDG_DATA_HOME/vtatune``, else
    ``~/.local/share/vtatune``."""
    env = os.environ.get("VTATUNE_DATA")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg and Path(xdg).is_absolute():  # the XDG spec: a relative value is to be ignored
        return Path(xdg) / "vtatune"
    return Path.home() / ".local" / "share" / "vtatune"


def user_dir(board: str) -> Path:
    """Where the user's profiles of ``board`` live."""
    return data_dir() / "timing" / board


def shipped(board: str) -> list[Profile]:
    """The profiles of ``board``'s shipped timing file, the default first; ``ConfigError``
    when the board has no timing file or it is malformed."""

    path = timing_dir() / f"{board}.json"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in timing_dir().glob("*.json")))
        raise ConfigError(str(path), [f"no timing parameters for board {board!r} "
                                      f"(known: {known})"])
    raw = read_json(path, "timing parameters")
    return profiles_of(raw, board, path)


def profiles_of(raw: Any, board: str, path: Path, origin: str = "shipped") -> list[Profile]:
    """The profiles a timing file's content holds, the default first."""
    if not isinstance(raw, dict):
        raise ConfigError(str(path), ["expected a JSON object"])
    if "profiles" not in raw:
        name = raw.get("profile", DEFAULT_NAME)
        if not isinstance(name, str) or not NAME.match(name):
            raise ConfigError(str(path), [f"profile {name!r} is not a profile name"])
        return [Profile(board, name, raw, origin, path, default=True)]
    profs = raw["profiles"]
    default = raw.get("default_profile")
    problems = []
    if not isinstance(profs, dict) or not profs:
        raise ConfigError(str(path), ["'profiles' must be a non-empty object"])
    for name, body in profs.items():
        if not NAME.match(name):
            problems.append(f"profile {name!r} is not a profile name")
        elif not isinstance(body, dict):
            problems.append(f"profile {name!r} must be an object")
        else:
            problems += [f"profile {name!r}: unknown key {k!r}" for k in body
                         if k not in PROFILE_KEYS]
    if default not in profs:
        problems.append(f"default_profile {default!r} is not one of the profiles "
                        f"({', '.join(profs)})")
    if problems:
        raise ConfigError(str(path), problems)
    shared = {k: v for k, v in raw.items() if k not in ("profiles", "default_profile")}
    out = []
    for name, body in profs.items():
        content = {**shared, **body, "profile": name,
                   "sources": {**shared.get("sources", {}), **body.get("sources", {})}}
        out.append(Profile(board, name, content, origin, path, default=name == default))
    return sorted(out, key=lambda p: not p.default)


def user(board: str) -> list[Profile]:
    """The user's profiles of ``board`` (unreadable or malformed files are skipped: they are
    reported when named)."""
    folder = user_dir(board)
    out = []
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return []
    for path in paths:
        if NAME.match(path.stem):
            try:
                out.append(_user_profile(board, path.stem, path))
            except UserError:
                continue
    return out


def _user_profile(board: str, name: str, path: Path) -> Profile:

    raw = read_json(path, "timing profile")
    if not isinstance(raw, dict) or raw.get("board") != board:
        raise ConfigError(str(path), [f"not a timing profile of board {board!r}"])
    return Profile(board, name, {**raw, "profile": name}, "user", path)


def all_of(board: str) -> list[Profile]:
    """Every profile of ``board``: shipped (default first), then the user's."""
    ship = shipped(board)
    names = {p.name for p in ship}
    return ship + [p for p in user(board) if p.name not in names]


def resolve(board: str, profile: str | None = None) -> Profile:
    """``board``'s profile ``profile`` (its default when None); ``ConfigError`` naming the
    known profiles when there is no such profile."""
    ship = shipped(board)
    if profile is None:
        return ship[0]
    for p in ship:
        if p.name == profile:
            return p
    path = user_dir(board) / f"{profile}.json"
    if path.is_file():
        return _user_profile(board, profile, path)
    known = ", ".join(p.name for p in all_of(board))
    raise ConfigError(f"board {board}{SEPARATOR}{profile}",
                      [f"board {board!r} is known, but its timing profile {profile!r} is "
                       f"not here (its profiles: {known}; user profiles are read from "
                       f"{user_dir(board)})"])


def check_free(board: str, name: str) -> str:
    """``name`` if the user may save a profile of ``board`` under it: a valid name that no
    shipped profile has (a user profile would hide behind it)."""
    check_name(name, "--save")
    taken = {p.name for p in shipped(board)}
    if name in taken:
        raise UserError(f"--save {name}: {board} ships a profile of that name ("
                        f"{', '.join(sorted(taken))} are shipped); choose another name")
    return name


def save(board: str, name: str, content: dict[str, Any]) -> Path:
    """Write ``content`` (a flat timing file) as the user's profile ``name`` of ``board``;
    ``UserError`` for a bad name, one that is a shipped profile's, or a folder that cannot be
    written."""
    check_free(board, name)
    folder = user_dir(board)
    path = folder / f"{name}.json"
    body = {**content, "board": board, "profile": name}
    body.pop("profiles", None)
    body.pop("default_profile", None)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(body, indent=2) + "\n")
        tmp.replace(path)
    except OSError as exc:
        raise UserError(f"--save {name}: cannot write {path} ({exc.strerror or exc})") from None
    return path


# ---- the domain of a profile ---------------------------------------------------------------


@dataclass(frozen=True)
class Domain:
    """Whether an estimate lies inside what its timing profile was fitted on (the designs'
    GEMM shapes, the layer kinds and the boards of its records). ``reasons`` say what lies
    outside; ``expected_error`` is the profile's transfer error for that kind of step (its
    leave-one-design-out median for another design, leave-one-network-out for another layer
    kind, leave-one-build-out for another board or build), None when not known."""

    profile: str
    reasons: tuple[str, ...]
    expected_error: float | None
    #: constants of a user's profile that its records did not pin (held at their priors)
    unpinned: tuple[str, ...] = ()

    @property
    def extrapolated(self) -> bool:
        return bool(self.reasons)

    def as_dict(self) -> dict[str, Any]:
        return {"profile": self.profile, "extrapolated": self.extrapolated,
                "reasons": list(self.reasons), "expected_error": self.expected_error,
                "unpinned": list(self.unpinned)}

    def line(self) -> str:
        """One line for a report ('' inside the domain)."""
        return domain_line(self.as_dict())


def domain_line(d: dict[str, Any] | None) -> str:
    """The line every output prints for a ``Domain.as_dict()`` ('' inside the domain or for
    None: results stored before domains were recorded)."""
    if not d:
        return ""
    held = (f"profile {d['profile']}: not pinned by its records, held at their priors: "
            + ", ".join(d["unpinned"])) if d.get("unpinned") else ""
    if not d.get("reasons"):
        return held
    err = d.get("expected_error")
    return (f"timing extrapolated: {'; '.join(d['reasons'])} (profile {d['profile']}"
            + ("" if err is None else f"; expected error ~{err:.0%}, its transfer error")
            + ")" + (f"; {held}" if held else ""))


def design_name(hw: Any) -> str:
    """A design's GEMM shape as profiles record it: BATCH x BLOCK_IN x BLOCK_OUT (``hw`` a
    HwConfig or its log2 parameters as stored: ``LOG_BATCH``, ...)."""
    if isinstance(hw, dict):
        logs = {str(k).lower(): v for k, v in hw.items()}
        b, i, o = (1 << int(logs.get(k, d)) for k, d in (
            ("log_batch", 0), ("log_block_in", 4), ("log_block_out", 4)))
        return f"{b}x{i}x{o}"
    return f"{hw.batch}x{hw.block_in}x{hw.block_out}"


def kind_of(signature: str) -> str:
    """The operator kind of a workload signature (``conv2d_n1_c64...`` -> conv2d); '' for
    anything else (a network's name)."""
    m = re.match(r"^([a-z][a-z0-9_]*?)_[nm]\d", signature)
    return m.group(1) if m else ""


def domain(board: str, hw: Any, kinds: Any = ()) -> Domain:
    """The domain check of an estimate on ``board`` (``NAME[@PROFILE]``) for design ``hw``
    and layer ``kinds`` (operator names: conv2d, group_conv2d, dense, ...): the one place
    every output (simulate, search, show, reports, bundles) asks."""
    base, name = split(board)
    try:
        prof = resolve(base, name)
    except UserError:
        return Domain(board, (f"no timing profile {board}",), None)
    content = prof.content
    cal = content.get("calibration") or {}
    dom = cal.get("domain") or {}
    transfer = cal.get("transfer") or {}

    def med(key: str) -> float | None:
        v = (transfer.get(key) or {}).get("median")
        return float(v) if isinstance(v, int | float) else None

    reasons: list[str] = []
    errs: list[float | None] = []
    derivation = content.get("derivation")
    if not cal.get("records"):
        src = (derivation or {}).get("from", "")
        reasons.append(f"board {base} has no measurements"
                       + (f" (constants derived from {src})" if src else ""))
        exp = (derivation or {}).get("expected_error")
        errs.append(float(exp) if isinstance(exp, int | float) else None)
    else:
        design = design_name(hw)
        if dom.get("designs") and design not in dom["designs"]:
            reasons.append(f"design {design} not among the fitted ({', '.join(dom['designs'])})")
            errs.append(med("lodo"))
        other = sorted({k for k in kinds if dom.get("kinds") and k not in dom["kinds"]})
        if other:
            reasons.append(f"{', '.join(other)} not among the fitted layer kinds "
                           f"({', '.join(dom['kinds'])})")
            errs.append(med("lono"))
        if dom.get("boards") and base not in dom["boards"]:
            reasons.append(f"board {base} not among the fitted ({', '.join(dom['boards'])})")
            errs.append(med("lobo"))
    known = [e for e in errs if e is not None]
    unpinned = tuple(cal.get("unpinned") or ()) if prof.origin == "user" else ()
    return Domain(prof.spec, tuple(reasons), max(known) if known else None, unpinned)
