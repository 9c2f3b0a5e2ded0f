"""Safe readers for every file a user hands to vtatune.

A file that is not what it should be ends as one ``InputError`` (a ``ConfigError``: one
line, exit 2) naming the file and the problem -- never a traceback, a hang or a memory blow-up:

- ``read_bytes``: only regular files (``/dev/zero``, a FIFO or a folder are refused before
  reading; FIFOs are opened non-blocking so they cannot hang), at most ``limit`` bytes
  (checked on the size and again while reading, for files whose size is not known);
- ``read_text``: UTF-8 (a leading BOM is dropped), an undecodable byte reported with its line
  and column;
- ``parse_json`` / ``parse_toml`` (and ``read_json`` / ``read_toml``): nesting at most
  ``MAX_DEPTH`` levels (checked before parsing: deep nesting would exhaust Python's
  recursion), integers within 64 bits (Python refuses to convert integers of more than 4,300
  digits, and no vtatune setting needs more than 64 bits), no NaN or infinity, no duplicate
  JSON keys;
- ``read_npz``: only the named members of an ``.npz``, each checked against the expected
  shape and dtype from its header and its declared size before a byte of data is read;
  other members (a zip bomb, pickles) are never touched.

The limits are constants here so that every command applies the same ones.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vtatune.errors import InputError
from vtatune.escaping import shown

if TYPE_CHECKING:  # numpy is imported where arrays are read
    import zipfile

    import numpy as np

#: Largest hand-written config file (hardware configs, boards, spaces, coefficients, timing
#: parameters, manifests): real ones are a few KiB.
MAX_CONFIG_BYTES = 1 << 20
#: Deepest nesting of lists/objects/tables in a config file (real ones use 3).
MAX_DEPTH = 32
#: Integers in config files fit 64 bits (TOML's own rule).
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
#: Most characters of an npy member header (numpy's own default).
MAX_NPY_HEADER = 10_000


def _label(path: str | Path, what: str) -> str:
    return f"{what} {shown(str(path))}" if what else shown(str(path))


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | Path, what: str = "") -> int:
    """A read-only descriptor of ``path``; ``InputError`` unless it is a regular file."""
    label = _label(path, what)
    if str(path) == "":
        raise InputError(label, ["empty file name"])
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(label, ["no such file"]) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(label, [f"cannot open ({reason})"]) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(label, [f"is {_kind(mode)}, not a regular file"])
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_regular(path: str | Path, what: str = "") -> None:
    """``InputError`` unless ``path`` is a regular file (for readers outside this module)."""
    os.close(open_regular(path, what))


def read_bytes(path: str | Path, what: str = "", limit: int = MAX_CONFIG_BYTES) -> bytes:
    """The content of the regular file ``path``, at most ``limit`` bytes."""
    label = _label(path, what)
    fd = open_regular(path, what)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise InputError(label, [f"is {size:,} bytes, more than the {limit:,} allowed"])
        chunks, total = [], 0
        while True:  # the size may be unknown (procfs) or change while reading
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise InputError(label, [f"is more than the {limit:,} bytes allowed"])
    except OSError as exc:
        raise InputError(label, [f"cannot read ({exc.strerror or exc})"]) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def decode_text(data: bytes, label: str) -> str:
    """UTF-8 text (a leading BOM dropped); ``InputError`` at the first undecodable byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(label, [f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at line "
                                 f"{line}, column {column})"]) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str | Path, what: str = "", limit: int = MAX_CONFIG_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (at most ``limit`` bytes)."""
    return decode_text(read_bytes(path, what, limit), _label(path, what))


# ---- structured text -------------------------------------------------------------------------

_JSON_SKIP = re.compile(r'"(?:[^"\\]|\\.)*"?')
_TOML_SKIP = re.compile(r'"""[\s\S]*?(?:"""|$)|\'\'\'[\s\S]*?(?:\'\'\'|$)|"(?:[^"\\\n]|\\.)*"?'
                        r"|'[^'\n]*'?|#[^\n]*")
_BRACKETS = re.compile(r"[\[\]{}]")


def _nesting(text: str, skip: re.Pattern[str]) -> int:
    """The deepest bracket nesting of ``text`` outside strings and comments."""
    depth = deepest = 0
    for m in _BRACKETS.finditer(skip.sub("", text)):
        if m.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(depth - 1, 0)
    return deepest


def _check_values(doc: Any, label: str) -> None:
    """Depth, integer range and finiteness of a parsed document (iterative: any depth)."""
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        at = f" at {shown(where, 60)}" if where else ""
        if depth > MAX_DEPTH:
            raise InputError(label, [f"nests deeper than {MAX_DEPTH} levels{at}"])
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
            raise InputError(label, [f"integer{at} does not fit 64 bits"])
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(label, [f"number{at} is {value} (only finite numbers)"])
        if isinstance(value, Mapping):
            stack.extend((v, f"{where}.{k}" if where else str(k), depth + 1)
                         for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > 19:
        raise _Refused(f"integer of {len(text):,} digits does not fit 64 bits")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"number {text[:40]} is out of range")
    return value


def _json_constant(name: str) -> float:
    raise _Refused(f"{name} is not a number JSON allows")


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f"duplicate key {shown(key, 60)}")
        out[key] = value
    return out


class _Refused(ValueError):
    """A value the JSON hooks refuse (becomes the InputError's message)."""


def parse_json(text: str, source: str) -> Any:
    """JSON text parsed under the limits (module docstring); ``source`` names it in errors."""
    import json

    if _nesting(text, _JSON_SKIP) > MAX_DEPTH:
        raise InputError(source, [f"nests deeper than {MAX_DEPTH} levels"])
    try:
        doc = json.loads(text, parse_int=_json_int, parse_float=_json_float,
                         parse_constant=_json_constant, object_pairs_hook=_json_object)
    except _Refused as exc:
        raise InputError(source, [str(exc)]) from None
    except json.JSONDecodeError as exc:
        raise InputError(source, [f"is not valid JSON ({exc.msg} at line {exc.lineno}, "
                                  f"column {exc.colno})"]) from None
    except (ValueError, RecursionError) as exc:
        raise InputError(source, [f"is not valid JSON ({type(exc).__name__})"]) from None
    _check_values(doc, source)
    return doc


def _toml_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"{text} is not allowed (only finite numbers)")
    return value


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """TOML text parsed under the limits (module docstring)."""
    import tomllib

    if _nesting(text, _TOML_SKIP) > MAX_DEPTH:
        raise InputError(source, [f"nests deeper than {MAX_DEPTH} levels"])
    try:
        doc = tomllib.loads(text, parse_float=_toml_float)
    except _Refused as exc:
        raise InputError(source, [str(exc)]) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(source, [f"is not valid TOML ({exc})"]) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise InputError(source, [f"is not valid TOML ({str(exc)[:100]})"]) from None
    except RecursionError:
        raise InputError(source, [f"nests deeper than {MAX_DEPTH} levels"]) from None
    _check_values(doc, source)
    return doc


def read_json(path: str | Path, what: str = "", limit: int = MAX_CONFIG_BYTES) -> Any:
    """``parse_json`` of the regular file ``path``."""
    return parse_json(read_text(path, what, limit), _label(path, what))


def read_toml(path: str | Path, what: str = "", limit: int = MAX_CONFIG_BYTES
              ) -> dict[str, Any]:
    """``parse_toml`` of the regular file ``path``."""
    return parse_toml(read_text(path, what, limit), _label(path, what))


# ---- npz ---------------------------------------------------------------------------------------

def read_npz(path: str | Path, expected: Mapping[str, tuple[tuple[int, ...], str]],
             what: str = "") -> dict[str, np.ndarray]:
    """The arrays ``expected`` names (``{name: (shape, dtype)}``) from the ``.npz`` at
    ``path``, each checked against its expected shape and dtype before it is read.

    Members are read only up to the size their header implies (a member that inflates to
    more, as a zip bomb does, is refused); other members are never decompressed. Fortran
    order is accepted (numpy writes it for transposed arrays)."""
    import zipfile
    import zlib

    label = _label(path, what)
    fd = open_regular(path, what)
    try:
        with os.fdopen(fd, "rb") as f:
            magic = f.read(6)
            if magic == b"\x93NUMPY":
                raise InputError(label, ["is a single .npy array; expected an .npz with "
                                         f"arrays {', '.join(map(repr, expected))} "
                                         "(numpy.savez)"])
            f.seek(0)
            try:
                zf = zipfile.ZipFile(f)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
                raise InputError(label, [f"is not an .npz file ({_short(exc)})"]) from None
            with zf:
                return {name: _read_member(zf, name, shape, dtype, label)
                        for name, (shape, dtype) in expected.items()}
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
        raise InputError(label, [f"is a damaged .npz ({_short(exc)})"]) from None


def _short(exc: BaseException) -> str:
    return shown(str(exc) or type(exc).__name__, 100)[1:-1]


def _read_member(zf: zipfile.ZipFile, name: str, shape: tuple[int, ...], dtype: str,
                 label: str) -> np.ndarray:
    import numpy as np
    from numpy.lib import format as npy

    names = zf.namelist()
    member = f"{name}.npy" if f"{name}.npy" in names else name if name in names else None
    if member is None:
        have = sorted(n.removesuffix(".npy") for n in names)
        listed = ", ".join(shown(n, 40) for n in have[:10]) + (
            f", ... ({len(have):,} in all)" if len(have) > 10 else "")
        raise InputError(label, [f"has no array {name!r} (has: {listed or 'nothing'})"])
    info = zf.getinfo(member)
    want = np.dtype(dtype)
    nbytes = math.prod(shape) * want.itemsize
    if info.file_size > nbytes + MAX_NPY_HEADER + 64:
        raise InputError(label, [f"array {name!r} is {info.file_size:,} bytes unpacked, more "
                                 f"than a {shape} {want} array needs ({nbytes:,})"])
    with zf.open(member) as f:
        try:
            version = npy.read_magic(f)
            if version == (1, 0):
                got_shape, fortran, got = npy.read_array_header_1_0(f, MAX_NPY_HEADER)
            elif version in ((2, 0), (3, 0)):
                got_shape, fortran, got = npy.read_array_header_2_0(f, MAX_NPY_HEADER)
            else:
                raise ValueError(f"npy format version {version}")
        except (ValueError, SyntaxError, TypeError, EOFError) as exc:
            raise InputError(label, [f"array {name!r} has no valid npy header "
                                     f"({_short(exc)})"]) from None
        if got != want:
            raise InputError(label, [f"array {name!r} is {got}, expected {want}"])
        if tuple(got_shape) != tuple(shape):
            raise InputError(label, [f"array {name!r} has shape {_shape(got_shape)}, expected "
                                     f"{tuple(shape)}"])
        data = f.read(nbytes + 1)  # one byte more: trailing data is refused
    if len(data) != nbytes:
        raise InputError(label, [f"array {name!r} holds {len(data):,} bytes, its header says "
                                 f"{nbytes:,}" if len(data) < nbytes else
                                 f"array {name!r} has data after its {nbytes:,} bytes"])
    order: Literal["C", "F"] = "F" if fortran else "C"
    return np.frombuffer(data, dtype=want).reshape(shape, order=order).copy(order="C")


def _shape(shape: Iterable[int]) -> str:
    return shown(tuple(shape), 60)[1:-1]
