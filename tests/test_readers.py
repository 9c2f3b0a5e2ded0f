"""Safe readers: every refusal is one InputError naming the file and the problem, and nothing
is read past its limit (a FIFO would hang, /dev/zero never ends, a zip bomb inflates)."""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import pytest

from vtatune import readers
from vtatune.errors import ConfigError, InputError


def test_input_errors_are_config_errors() -> None:
    assert issubclass(InputError, ConfigError)  # callers listing config problems catch them


@pytest.mark.parametrize(("path", "why"), [
    ("/dev/zero", "character device"), ("/dev/null", "character device"), ("/", "folder"),
    ("", "empty file name"), ("/nonexistent/x.json", "no such file"),
    ("x\0y", "cannot open"), ("n" * 5000, "cannot open"),
])
def test_only_regular_files_are_read(path: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        readers.read_bytes(path, "config")


def test_a_fifo_is_refused_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        readers.read_text(fifo)


def test_size_limits(tmp_path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(readers.MAX_CONFIG_BYTES + 1)  # sparse: no disk used
    with pytest.raises(InputError, match="more than the 1,048,576 allowed"):
        readers.read_bytes(big)
    assert len(readers.read_bytes(big, limit=readers.MAX_CONFIG_BYTES + 1)) == \
        readers.MAX_CONFIG_BYTES + 1
    # a file whose size is not known in advance is cut while reading
    with pytest.raises(InputError, match="more than the 10 bytes"):
        readers.read_bytes("/proc/self/status", limit=10)


def test_utf8_errors_name_line_and_column(tmp_path) -> None:
    p = tmp_path / "x.toml"
    p.write_bytes(b'a = 1\nb = "caf\xe9"\n')
    with pytest.raises(InputError, match=r"byte 0xe9 at line 2, column 9"):
        readers.read_text(p)
    p.write_bytes(b"\xef\xbb\xbfa = 1\n")
    assert readers.read_toml(p) == {"a": 1}  # a BOM is dropped


@pytest.mark.parametrize(("text", "why"), [
    ("[" * 100_000 + "]" * 100_000, "deeper than 32"),
    ('{"a":' * 40 + "1" + "}" * 40, "deeper than 32"),
    ("9" * 5000, "5,000 digits"),
    (str(2**64), "does not fit 64 bits"),
    ("NaN", "NaN is not a number JSON allows"),
    ("[1, Infinity]", "Infinity"),
    ("1e400", "out of range"),
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    ("{", "not valid JSON"),
])
def test_json_limits(text: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        readers.parse_json(text, "doc.json")


def test_json_within_limits() -> None:
    text = '{"a": [' + "[" * 30 + "1" + "]" * 30 + '], "b": -9223372036854775808, "s": "[[["}'
    doc = readers.parse_json(text, "doc.json")
    assert doc["b"] == -(2**63) and doc["s"] == "[[["


@pytest.mark.parametrize(("text", "why"), [
    ("x = " + "[" * 100_000 + "]" * 100_000, "deeper than 32"),
    ("x = " + "{a = " * 50 + "1" + "}" * 50, "deeper than 32"),
    ("[" + ".".join(["a"] * 100) + "]", "deeper than 32"),
    ("x = " + "9" * 5000, "not valid TOML"),
    ("x = nan", "nan is not allowed"),
    ("x = -inf", "-inf is not allowed"),
    (f"x = {2**63}", "not valid TOML|64 bits"),
    ("x = [", "not valid TOML"),
])
def test_toml_limits(text: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        readers.parse_toml(text, "space.toml")


def test_toml_strings_and_comments_do_not_count_as_nesting() -> None:
    text = 's = "' + "[" * 50 + '"\n# ' + "{" * 50 + "\nt = '''" + "[" * 50 + "'''\n"
    assert readers.parse_toml(text, "x.toml")["s"] == "[" * 50


def _npy(a: np.ndarray) -> bytes:
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def _npz(path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


EXPECT = {"data": ((2, 3), "int8"), "kernel": ((4, 3), "int8")}


def test_npz_reads_only_the_named_members(tmp_path) -> None:
    data = np.arange(6, dtype=np.int8).reshape(2, 3)
    kernel = np.asfortranarray(np.arange(12, dtype=np.int8).reshape(4, 3))
    p = tmp_path / "in.npz"
    # "junk" claims 10^12 elements; it must never be looked at
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "|i1", "fortran_order": False, "shape": (10**12,)})
    _npz(p, {"data.npy": _npy(data), "kernel.npy": _npy(kernel), "junk.npy": header.getvalue()})
    got = readers.read_npz(p, EXPECT)
    assert (got["data"] == data).all() and (got["kernel"] == kernel).all()
    assert got["kernel"].flags.c_contiguous


@pytest.mark.parametrize(("members", "why"), [
    ({"data.npy": _npy(np.zeros((3, 2), np.int8))}, r"shape \(3, 2\), expected \(2, 3\)"),
    ({"data.npy": _npy(np.zeros((2, 3), np.float64))}, "float64, expected int8"),
    ({"kernel.npy": _npy(np.zeros((4, 3), np.int8))}, "has no array 'data'"),
    ({"data.npy": _npy(np.zeros((2, 3), np.int8))[:-2]}, "holds 4 bytes, its header says 6"),
    ({"data.npy": _npy(np.zeros((2, 3), np.int8)) + b"xx"}, "data after its 6 bytes"),
    ({"data.npy": _npy(np.zeros((2, 3), np.int8)) + bytes(20_000)}, "unpacked"),
    ({"data.npy": b"not npy"}, "no valid npy header"),
])
def test_npz_members_are_checked_before_reading(tmp_path, members, why) -> None:
    p = tmp_path / "in.npz"
    _npz(p, {"kernel.npy": _npy(np.zeros((4, 3), np.int8)), **members})
    with pytest.raises(InputError, match=why):
        readers.read_npz(p, EXPECT)


def test_npz_that_is_not_one(tmp_path) -> None:
    p = tmp_path / "x.npz"
    p.write_bytes(_npy(np.zeros((2, 3), np.int8)))
    with pytest.raises(InputError, match="single .npy array"):
        readers.read_npz(p, EXPECT)
    p.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(InputError, match="not an .npz file"):
        readers.read_npz(p, EXPECT)
