"""The hostile-input corpus: malformed files and command lines for every command.

A ``Case`` is one command line; ``{ws}`` in it is the scratch folder where ``FILES`` were
written, ``{db}`` the database with the test studies (tests/conftest.py's plus studies with
hostile names), ``{bundle}`` a real exported bundle, and ``{study}`` a study with a feasible
front. Cases are generated from tables so a new command or a new input file kind is one
entry: ``READERS`` maps each kind of input file to the command lines that read it, and every
file of that kind in ``FILES`` is fed to each of them; ``OPTIONS`` lists each command's
options with the hostile values tried on them.

``expect`` is the set of allowed exit codes (bad input: 2; a verify-export check that fails:
1); ``check`` adds a case's own assertion (CSV cells that are not formulas, a shell-quoted
suggestion). The generic assertions (no traceback, one error line, no raw control
characters, bounded memory and time) are in ``fuzz_harness.problems``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fuzz_harness import Outcome

BAD = frozenset({2})
FAILED_CHECK = frozenset({1})
ANY = frozenset({0, 1, 2})
OK = frozenset({0})

#: Digits of an integer past Python's int-str conversion limit (4300).
HUGE_DIGITS = "9" * 5000
BIG_LIST_LEN = 200_000
#: A value longer than any error line may echo.
MEGABYTE = 1 << 20


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    expect: frozenset[int] = BAD
    check: Callable[[Outcome, Path], list[str]] | None = field(default=None, compare=False)
    deep: bool = False  # only in `make fuzz`

    def resolve(self, where: dict[str, str]) -> list[str]:
        """The command line with ``{key}`` placeholders replaced by ``where[key]``."""
        out = []
        for arg in self.argv:
            for key, value in where.items():
                arg = arg.replace("{" + key + "}", value)
            out.append(arg)
        return out


# ---- files ----------

VALID_HW = {"TARGET": "sim", "HW_VER": "0.0.2", "LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3,
            "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK": 4, "LOG_UOP_BUFF_SIZE": 15,
            "LOG_INP_BUFF_SIZE": 15, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}
HW_KEYS = ("LOG_INP_WIDTH", "LOG_WGT_WIDTH", "LOG_ACC_WIDTH", "LOG_BATCH", "LOG_BLOCK",
           "LOG_BLOCK_IN", "LOG_BLOCK_OUT", "LOG_UOP_BUFF_SIZE", "LOG_INP_BUFF_SIZE",
           "LOG_WGT_BUFF_SIZE", "LOG_ACC_BUFF_SIZE")
# JSON text of hostile values (json.dumps cannot write some of them).
HOSTILE_JSON_VALUES = {
    "neg": "-5", "big": "20000", "i64": str(2**63 - 1), "u64": str(2**64), "huge": HUGE_DIGITS,
    "list": "[" + ",".join(["4"] * BIG_LIST_LEN) + "]", "str": '"x"', "null": "null",
    "float": "1.5", "bool": "true", "nan": "NaN", "inf": "Infinity", "exp": "1e400",
    "obj": '{"a": 1}',
}

VALID_BOARD = {
    "name": "fuzz-board", "part": "xc7z020clg400-1", "family": "xilinx-7series",
    "vta_target": "pynq", "description": "a board file for the fuzz suite", "clock_mhz": 100,
    "axi_bits": 64, "resources": {"lut": 53200, "ff": 106400, "bram36": 140, "dsp": 220},
    "sources": {"resources": "copy of pynq-z1"},
}

SPACE = """\
[study]
board = "pynq-z1"

[workload]
kind = "dense"
shape = "16,64,64"

[hardware]
base = "default"
LOG_BLOCK_IN = [3, 4]

[schedule]
knobs = "all"

[objective]
kind = "area-latency"

[constraints]
fit_board = true
"""

ESC = "\x1b[2J\x1b[31mRED\x1b]0;pwned\x07"


def _json_with(obj: dict, key: str, raw_value: str) -> bytes:
    """``obj`` as JSON with ``key`` set to the raw JSON text ``raw_value``."""
    text = json.dumps({**obj, key: "__SLOT__"})
    return text.replace('"__SLOT__"', raw_value).encode()


def _space_with(section: str, body: str) -> bytes:
    """SPACE with ``[section]`` replaced by ``body`` (TOML text, may be a bare key line)."""
    out, skip = [], False
    for line in SPACE.splitlines():
        if line.startswith("["):
            skip = line == f"[{section}]"
            if skip:
                out.append(body)
                continue
        if not skip:
            out.append(line)
    return ("\n".join(out) + "\n").encode()


def _space_set(section: str, key: str, value: str) -> bytes:
    """SPACE with ``key = value`` (TOML text) in ``[section]`` (replacing or adding it)."""
    out, inside, done = [], False, False
    for line in SPACE.splitlines():
        if line.startswith("["):
            if inside and not done:
                out.insert(len(out) - 1 if out and not out[-1] else len(out), f"{key} = {value}")
                done = True
            inside = line == f"[{section}]"
        elif inside and line.split("=")[0].strip() == key:
            out.append(f"{key} = {value}")
            done = True
            continue
        out.append(line)
    if inside and not done:
        out.append(f"{key} = {value}")
    return ("\n".join(out) + "\n").encode()


def _deep(open_: str, close: str, depth: int = 100_000) -> str:
    return open_ * depth + close * depth


def _npy(shape: tuple[int, ...], dtype: str = "|i1", payload: bytes = b"",
         fortran: bool = False) -> bytes:
    """An .npy file whose header says ``shape``/``dtype`` followed by ``payload``."""
    import numpy as np

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": dtype, "fortran_order": fortran, "shape": shape})
    return buf.getvalue() + payload


def _npz(members: dict[str, bytes], compress: bool = False) -> bytes:
    buf = io.BytesIO()
    mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", compression=mode) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _zip_bomb(good: dict[str, bytes], bomb_name: str, header: bytes, zeros: int) -> bytes:
    """A zip holding ``good`` members and ``bomb_name``: ``header`` + ``zeros`` zero bytes,
    deflated. The deflate stream is one fully flushed block of 16 MiB zeros repeated, so it
    is built in a fraction of a second, not by compressing gigabytes."""
    chunk = 1 << 24
    assert zeros % chunk == 0
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = co.compress(header) + co.flush(zlib.Z_FULL_FLUSH)
    block = co.compress(bytes(chunk)) + co.flush(zlib.Z_FULL_FLUSH)
    again = co.compress(bytes(chunk)) + co.flush(zlib.Z_FULL_FLUSH)
    assert again == block  # after a full flush the compressor's state repeats
    stream = head + block * (zeros // chunk) + co.flush()  # co.flush(): the final block
    crc = zlib.crc32(header)
    zero_chunk = bytes(chunk)
    for _ in range(zeros // chunk):
        crc = zlib.crc32(zero_chunk, crc)
    size = len(header) + zeros
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in good.items():
            zf.writestr(name, data)
    entries = buf.getvalue()
    # Append the bomb member by hand (zipfile would compress the gigabytes itself): local
    # header + stream, then rewrite the central directory with one more entry.
    zf = zipfile.ZipFile(io.BytesIO(entries))
    infos = zf.infolist()
    # local records of the good members are everything before the central directory
    eocd = entries.rfind(b"PK\x05\x06")
    (cd_size, cd_offset) = struct.unpack_from("<II", entries, eocd + 12)
    local = entries[:cd_offset]
    central = entries[cd_offset:cd_offset + cd_size]
    name = bomb_name.encode()
    bomb_offset = len(local)
    local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(stream), size,
                         len(name), 0) + name + stream
    central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc,
                           len(stream), size, len(name), 0, 0, 0, 0, 0, bomb_offset) + name
    n = len(infos) + 1
    eocd_rec = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(central), len(local), 0)
    return local + central + eocd_rec


def _hw_files() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for key in HW_KEYS:
        base = dict(VALID_HW)
        if key in ("LOG_BLOCK_IN", "LOG_BLOCK_OUT"):
            base.pop("LOG_BLOCK")
            base.update(LOG_BLOCK_IN=4, LOG_BLOCK_OUT=4)
        for tag, raw in HOSTILE_JSON_VALUES.items():
            files[f"hw/{key.lower()}_{tag}.json"] = _json_with(base, key, raw)
    files.update({
        "hw/target_mb.json": _json_with(VALID_HW, "TARGET", json.dumps("x" * MEGABYTE)),
        "hw/target_esc.json": _json_with(VALID_HW, "TARGET", json.dumps(ESC)),
        "hw/target_num.json": _json_with(VALID_HW, "TARGET", "5"),
        "hw/hw_ver_list.json": _json_with(VALID_HW, "HW_VER", "[1, 2]"),
        "hw/name_esc.json": _json_with(VALID_HW, "NAME", json.dumps(ESC)),
        "hw/name_obj.json": _json_with(VALID_HW, "NAME", '{"a": [1]}'),
        "hw/key_esc.json": json.dumps({**VALID_HW, ESC: 1}).encode(),
        "hw/key_mb.json": json.dumps({**VALID_HW, "K" * MEGABYTE: 1}).encode(),
        "hw/many_keys.json": json.dumps({f"X{i}": i for i in range(100_000)}).encode(),
        "hw/top_list.json": b"[1, 2, 3]",
        "hw/top_str.json": b'"default"',
        "hw/top_num.json": b"42",
        "hw/top_null.json": b"null",
        "hw/empty.json": b"",
        "hw/spaces.json": b"   \n\t ",
        "hw/deep_list.json": _deep("[", "]").encode(),
        "hw/deep_obj.json": ('{"a":' * 100_000 + "1" + "}" * 100_000).encode(),
        "hw/deep_in_key.json": _json_with(VALID_HW, "LOG_BATCH", _deep("[", "]")),
        "hw/not_utf8.json": b'{"TARGET": "\xff\xfe sim"}',
        "hw/latin1.json": '{"TARGET": "s\u00efm"}'.encode("latin-1"),
        "hw/utf16.json": json.dumps(VALID_HW).encode("utf-16"),
        "hw/utf8_bom.json": b"\xef\xbb\xbf" + json.dumps(VALID_HW).encode(),
        "hw/binary.json": bytes(range(256)) * 4,
        "hw/nul.json": b'{"TARGET": "sim\x00"}',
        "hw/truncated.json": json.dumps(VALID_HW).encode()[:40],
        "hw/dup_keys.json": b'{"LOG_BATCH": 0, "LOG_BATCH": "x"}',
        "hw/lone_surrogate.json": b'{"TARGET": "\\ud800"}',
        "hw/trailing.json": json.dumps(VALID_HW).encode() + b" garbage",
    })
    return files


def _board_files() -> dict[str, bytes]:
    files = {}
    for key, raws in {
        "clock_mhz": ["NaN", "Infinity", "-Infinity", "0", "-100", "1e400", HUGE_DIGITS,
                      '"100"', "null"],
        "axi_bits": ["0", "-64", "65", str(2**63), HUGE_DIGITS, "64.0", "true"],
        "resources": ['{"lut": -1}', '{"lut": 1e400}', '{"lut": NaN}', '{"bogus": 1}', "[]",
                      '"many"', '{"lut": ' + HUGE_DIGITS + "}"],
        "name": ["5", json.dumps(ESC), json.dumps("n" * MEGABYTE), "null"],
        "family": ['"asic"', "5"],
        "sources": ["5", "[1]"],
        "vta_target": ["5", json.dumps(ESC)],
    }.items():
        for i, raw in enumerate(raws):
            files[f"board/{key}_{i}.json"] = _json_with(VALID_BOARD, key, raw)
    files.update({
        "board/top_list.json": b"[]",
        "board/deep.json": _deep("[", "]").encode(),
        "board/not_utf8.json": b'{"name": "\xff"}',
        "board/empty.json": b"",
        "board/missing_keys.json": b'{"name": "x"}',
    })
    return files


def _space_files() -> dict[str, bytes]:
    files = {}
    for section in ("study", "workload", "hardware", "schedule", "objective", "constraints"):
        for tag, value in {"str": '"x"', "int": "5", "list": "[1, 2]", "bool": "true",
                           "float": "nan", "table_list": None}.items():
            if value is None:  # an array of tables where a table belongs
                body = f"[[{section}]]\nkind = 1\n[[{section}]]\nkind = 2"
                files[f"space/{section}_{tag}.toml"] = _space_with(section, body)
                continue
            text = _space_with(section, "").decode()
            files[f"space/{section}_{tag}.toml"] = (f"{section} = {value}\n" + text).encode()
    sets = {
        ("study", "board"): ["5", '""', '"nope"', json.dumps(ESC), json.dumps("b" * MEGABYTE),
                             "[1]", '"../../etc/passwd"', '"/dev/zero"'],
        ("study", "name"): ["5", json.dumps(ESC), "[1]", '{ a = 1 }'],
        ("workload", "kind"): ["5", '"conv3d"', json.dumps(ESC), "[1]"],
        ("workload", "layer"): ["5", '"C99"', json.dumps("C" * MEGABYTE), "[1]"],
        ("workload", "shape"): ["5", "[16, 64, 64]", '"16,64"', '"0,64,64"', '"-16,64,64"',
                                f'"{HUGE_DIGITS},64,64"', '"100000000,100000000,100000000"',
                                '"1e3,64,64"', '"nan,64,64"', '"16,64,64,"'],
        ("hardware", "base"): ["5", '"nope"', '"/dev/zero"', '""', "[1]", json.dumps(ESC)],
        ("hardware", "LOG_BLOCK_IN"): ["-5", "20000", str(2**63 - 1), "[-5]", "[20000]",
                                       f"[{2**63 - 1}]", "[]", '["a"]', "[true]", "[1.5]",
                                       "[" + ", ".join(["4"] * BIG_LIST_LEN) + "]",
                                       "[" + ", ".join(map(str, range(10_000))) + "]",
                                       "nan", "inf", "[[4]]", "{ a = 4 }", HUGE_DIGITS],
        ("hardware", "LOG_BATCH"): ["-5", "20000", str(2**63 - 1), "-9223372036854775808"],
        ("hardware", "LOG_WGT_BUFF_SIZE"): ["-5", "20000", "[30, 40]", "[0]"],
        ("hardware", "LOG_INP_WIDTH"): ["[3, 4]", "0"],
        ("hardware", "NOT_A_KEY"): ["4"],
        ("hardware", "LOG_BLOCK"): ["-5", "20000", "[4, 4]", '"4"', "[]", "nan", "[[4]]",
                                    "[3, 5]"],  # with the file's LOG_BLOCK_IN: refused
        ("schedule", "knobs"): ["5", '"some"', '["tile_h", 5]', '["nope"]', "[]",
                                json.dumps([ESC])],
        ("schedule", "extra"): ["1"],
        ("objective", "kind"): ["5", '"fast"', json.dumps(ESC), "[1]"],
        ("constraints", "fit_board"): ['"yes"', "1", "nan"],
        ("constraints", "max_area_mm2"): ["nan", "inf", "-inf", "0", "-1", '"10"', "true",
                                          "1e-320", HUGE_DIGITS, "[1]"],
    }
    for (section, key), values in sets.items():
        for i, value in enumerate(values):
            files[f"space/{section}.{key}_{i}.toml"] = _space_set(section, key, value)
    files.update({
        "space/not_utf8.toml": SPACE.encode().replace(b'"dense"', b'"d\xffnse"'),
        "space/utf16.toml": SPACE.encode("utf-16"),
        "space/latin1_comment.toml": SPACE.encode() + "# caf\u00e9\n".encode("latin-1"),
        "space/deep_array.toml": ("x = " + _deep("[", "]") + "\n").encode() + SPACE.encode(),
        "space/deep_inline.toml": ("x = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n"
                                   ).encode() + SPACE.encode(),
        "space/deep_dotted.toml": ("[" + ".".join(["a"] * 50_000) + "]\n").encode(),
        "space/huge_int.toml": f"x = {HUGE_DIGITS}\n".encode() + SPACE.encode(),
        "space/huge_float.toml": f"x = {HUGE_DIGITS}.5e99999\n".encode() + SPACE.encode(),
        "space/empty.toml": b"",
        "space/binary.toml": bytes(range(256)) * 8,
        "space/nul.toml": SPACE.encode().replace(b"pynq-z1", b"pynq\x00z1"),
        "space/unknown_section.toml": SPACE.encode() + b"\n[bogus]\na = 1\n",
        "space/many_sections.toml": "".join(f"[s{i}]\n" for i in range(50_000)).encode(),
        "space/dup_table.toml": SPACE.encode() + b"\n[study]\nboard = \"x\"\n",
        "space/big_string.toml": f'x = "{"y" * (4 * MEGABYTE)}"\n'.encode() + SPACE.encode(),
    })
    return files


NETWORK = """\
[study]
board = "pynq-z1"

[network]
name = "tiny"

[[network.layers]]
name = "fc1"
kind = "dense"
shape = "16,64,64"
count = 2

[[network.layers]]
name = "fc2"
kind = "dense"
shape = [16, 64, 32]

[hardware]
base = "default"
LOG_BLOCK_IN = [3, 4]
"""


def _network_files() -> dict[str, bytes]:
    """Network space files: the layer table's every field and the table itself made hostile."""
    layer = 'name = "fc1"\nkind = "dense"\nshape = "16,64,64"\ncount = 2\n'

    def with_layer(text: str) -> bytes:
        return NETWORK.replace(layer, text).encode()

    files = {
        "network/ok.toml": NETWORK.encode(),
        "network/no_layers.toml": NETWORK.split("[[network.layers]]")[0].encode()
        + b"[hardware]\nbase = \"default\"\n",
        "network/layers_empty.toml": b"[network]\nlayers = []\n",
        "network/layers_str.toml": b"[network]\nlayers = \"C1\"\n",
        "network/layers_ints.toml": b"[network]\nlayers = [1, 2]\n",
        "network/network_str.toml": b"network = \"resnet18\"\n",
        "network/network_list.toml": b"[[network]]\nname = \"a\"\n",
        "network/too_many.toml": b"[network]\n" + b"[[network.layers]]\nname = \"x\"\n"
        b"kind = \"dense\"\nshape = \"16,64,64\"\n" * 5000,
        "network/dup_names.toml": NETWORK.replace('name = "fc2"', 'name = "fc1"').encode(),
        "network/both_net_and_workload.toml": NETWORK.encode()
        + b"[workload]\nkind = \"dense\"\nshape = \"16,64,64\"\n",
        "network/name_esc.toml": NETWORK.replace('name = "tiny"',
                                                 f"name = {json.dumps(ESC)}").encode(),
        "network/unknown_key.toml": NETWORK.replace('name = "tiny"',
                                                    'name = "tiny"\nbogus = 1').encode(),
    }
    fields = {
        "count": ["0", "-1", "1.5", '"2"', "true", str(2**63), HUGE_DIGITS, "nan", "[2]"],
        "kind": ['"conv3d"', "5", '""', json.dumps(ESC), '"dense\\u0000"'],
        "shape": ['"16,64"', '"0,64,64"', '"-16,64,64"', '"16,64,64,"', "[]", "[16, 64, true]",
                  f'"{HUGE_DIGITS},64,64"', '"100000000,100000000,100000000"', "5",
                  "[16, 64, 64.5]", '"16;64;64"'],
        "name": ["5", '""', json.dumps(ESC), json.dumps("n" * 100), '"../x"', '"$x^2$"'],
    }
    for key, values in fields.items():
        for i, value in enumerate(values):
            lines = [ln if not ln.startswith(f"{key} =") else f"{key} = {value}"
                     for ln in layer.splitlines()]
            files[f"network/layer.{key}_{i}.toml"] = with_layer("\n".join(lines) + "\n")
    files["network/layer.shape_and_layer.toml"] = with_layer(layer + 'layer = "C1"\n')
    files["network/layer.no_shape.toml"] = with_layer('name = "fc1"\nkind = "dense"\n')
    files["network/layer.no_kind.toml"] = with_layer('name = "fc1"\nshape = "16,64,64"\n')
    files["network/layer.no_name.toml"] = with_layer('kind = "dense"\nshape = "16,64,64"\n')
    files["network/layer.unknown_named.toml"] = with_layer(
        'name = "c"\nkind = "conv2d"\nlayer = "C99"\n')
    return files


def _netset_files() -> dict[str, bytes]:
    """Network-set files (``networks.members``): the members list, each member's fields and
    the optional sections made hostile."""
    ok = ('[networks]\nmembers = [{network = "resnet18", weight = 3}, '
          '{network = "mobilenet_v1"}]\n')

    def member(text: str) -> bytes:
        return f'[networks]\nmembers = [{{network = "resnet18"}}, {text}]\n'.encode()

    files = {
        "netset/ok.toml": ok.encode(),
        "netset/members_empty.toml": b"[networks]\nmembers = []\n",
        "netset/members_str.toml": b'[networks]\nmembers = "resnet18"\n',
        "netset/members_missing.toml": b"[networks]\n",
        "netset/networks_str.toml": b'networks = "resnet18,mobilenet_v1"\n',
        "netset/unknown_key.toml": ok.replace("[networks]\n", "[networks]\nbogus = 1\n").encode(),
        "netset/unknown_section.toml": ok.encode() + b"[cooling]\nfans = 2\n",
        "netset/too_many.toml": b"[networks]\nmembers = ["
        + b", ".join(b'{network = "resnet18"}' for _ in range(17)) + b"]\n",
        "netset/dup.toml": member('{network = "resnet18"}'),
        "netset/hardware_str.toml": ok.encode() + b'hardware = "big"\n',
        "netset/hardware_bad.toml": ok.encode() + b"[hardware]\nLOG_BLOCK_IN = [99]\n",
        "netset/inner_bad.toml": ok.encode() + b"[inner]\ntrials = 0\nmin_per_layer = -1\n",
        "netset/study_name_esc.toml": ok.encode() + f"[study]\nname = {json.dumps(ESC)}\n"
        .encode(),
        "netset/board_path.toml": ok.encode() + b'[study]\nboard = "../../../../etc/passwd"\n',
        "netset/operator_member.toml": member('{network = "conv2d"}'),
        "netset/missing_member.toml": member('{network = "nope/missing.toml"}'),
        "netset/self_member.toml": member('{network = "self_member.toml"}'),
    }
    values = {"weight": ["0", "-1", "nan", "inf", "-inf", "true", '"3"', "[1]", "1e400",
                        HUGE_DIGITS, "1e7"],
              "network": ["5", '""', json.dumps(ESC), json.dumps("n" * 5000), '"a\\u0000b"',
                          "[\"resnet18\"]"]}
    for key, vals in values.items():
        for i, v in enumerate(vals):
            text = (f"{{network = \"mobilenet_v1\", weight = {v}}}" if key == "weight"
                    else f"{{network = {v}}}")
            files[f"netset/member.{key}_{i}.toml"] = member(text)
    files["netset/member.no_network.toml"] = member("{weight = 2}")
    files["netset/member.unknown_key.toml"] = member('{network = "mobilenet_v1", x = 1}')
    files["netset/member.not_table.toml"] = b'[networks]\nmembers = ["resnet18", 3]\n'
    return files


PASS_OK = """\
from tvm import tirx

def _same(func, mod, ctx):
    return func

PASSES = [("vta", tirx.transform.prim_func_pass(_same, opt_level=0, name="Same"))]
"""


def _passes_files() -> dict[str, bytes]:
    """--passes files: user Python that cannot be used must be one line, not a traceback."""
    head = "from tvm import tirx\n"
    files = {
        "passes/ok.py": PASS_OK.encode(),
        "passes/empty.py": b"",
        "passes/binary.py": bytes(range(256)) * 4,
        "passes/nul.py": b"PASSES = []\x00\n",
        "passes/not_utf8.py": b"PASSES = ['caf\xe9']\n",
        "passes/syntax.py": b"PASSES = [(\n",
        "passes/raises.py": b"raise RuntimeError('boom')\n",
        "passes/exits.py": b"import sys\nsys.exit(3)\n",
        "passes/exits_text.py": b"raise SystemExit('bye')\n",
        "passes/keyboard.py": b"raise KeyboardInterrupt\n",
        "passes/recursion.py": b"def f():\n    return f()\nf()\n",
        "passes/no_passes.py": b"X = 1\n",
        "passes/passes_int.py": b"PASSES = 5\n",
        "passes/passes_triples.py": b"PASSES = [(1, 2, 3)]\n",
        "passes/unknown_phase.py": (head + "PASSES = [('nope', tirx.transform.Simplify())]\n"
                                    ).encode(),
        "passes/not_a_pass.py": b"PASSES = [('vta', print)]\n",
        "passes/huge_repr.py": b"PASSES = [list(range(100000))]\n",
        "passes/esc_repr.py": f"PASSES = [{json.dumps(ESC)}]\n".encode(),
        "passes/verifiers_int.py": PASS_OK.encode() + b"VERIFIERS = 5\n",
        "passes/verifier_raises.py": PASS_OK.encode()
        + b"def v(func, hw):\n    raise ValueError('no')\nVERIFIERS = [v]\n",
        "passes/verifier_returns_int.py": PASS_OK.encode()
        + b"def v(func, hw):\n    return 5\nVERIFIERS = [v]\n",
        "passes/pass_raises.py": (head + "def _bad(func, mod, ctx):\n    raise ValueError("
                                  "'pass failed')\nPASSES = [('vta', tirx.transform."
                                  "prim_func_pass(_bad, opt_level=0, name='Bad'))]\n").encode(),
        "passes/pass_returns_none.py": (head + "def _none(func, mod, ctx):\n    return None\n"
                                        "PASSES = [('vta', tirx.transform.prim_func_pass("
                                        "_none, opt_level=0, name='None'))]\n").encode(),
        "passes/too_big.py": b"#" * (2 * MEGABYTE),
    }
    return files


def _npz_files(m: int = 16, k: int = 64, n: int = 64) -> dict[str, bytes]:
    """--inputs files for dense M,K,N (data (M,K) int8, kernel (N,K) int8)."""
    import numpy as np

    def arr(shape: tuple[int, ...], dtype: str = "|i1") -> bytes:
        b = io.BytesIO()
        np.save(b, np.zeros(shape, dtype=np.dtype(dtype)))
        return b.getvalue()

    good = {"data.npy": arr((m, k)), "kernel.npy": arr((n, k))}
    files = {
        "npz/plain.npy": arr((m, k)),
        "npz/claims_1e12.npz": _npz({"data.npy": _npy((10**6, 10**6), payload=bytes(64)),
                                     "kernel.npy": good["kernel.npy"]}),
        "npz/claims_1e12_other.npz": _npz({**good, "extra.npy": _npy((10**6, 10**6))}),
        "npz/claims_1e12_kernel.npz": _npz({"data.npy": good["data.npy"],
                                            "kernel.npy": _npy((10**6, 10**6))}),
        "npz/right_shape_short.npz": _npz({"data.npy": _npy((m, k), payload=bytes(3)),
                                           "kernel.npy": good["kernel.npy"]}),
        "npz/wrong_dtype.npz": _npz({"data.npy": arr((m, k), "<f8"),
                                     "kernel.npy": good["kernel.npy"]}),
        "npz/object.npz": _npz({"data.npy": _npy((m, k), "|O", b"\x80\x04N."),
                                "kernel.npy": good["kernel.npy"]}),
        "npz/wrong_shape.npz": _npz({"data.npy": arr((k, m)), "kernel.npy": good["kernel.npy"]}),
        "npz/zero_d.npz": _npz({"data.npy": arr(()), "kernel.npy": good["kernel.npy"]}),
        "npz/missing_kernel.npz": _npz({"data.npy": good["data.npy"]}),
        "npz/empty_zip.npz": _npz({}),
        "npz/not_zip.npz": b"PK\x03\x04 this is not really a zip",
        "npz/empty.npz": b"",
        "npz/truncated.npz": _npz(good)[:100],
        "npz/garbage_member.npz": _npz({"data.npy": b"not an npy", **{
            "kernel.npy": good["kernel.npy"]}}),
        "npz/bad_header.npz": _npz({"data.npy": b"\x93NUMPY\x01\x00\xff\xff{'descr': ",
                                    "kernel.npy": good["kernel.npy"]}),
        "npz/fortran.npz": _npz({"data.npy": _npy((m, k), fortran=True, payload=bytes(m * k)),
                                 "kernel.npy": good["kernel.npy"]}),
        "npz/esc_member.npz": _npz({ESC + ".npy": good["data.npy"]}),
        "npz/many_members.npz": _npz({f"m{i}.npy": b"" for i in range(20_000)}),
        "npz/big_declared.npz": _npz({"data.npy": _npy((m, k), payload=bytes(m * k) + bytes(
            4 * MEGABYTE)), "kernel.npy": good["kernel.npy"]}, compress=True),
        "npz/ok.npz": _npz(good),
    }
    return files


def _bomb_files(m: int = 16, k: int = 64, n: int = 64) -> dict[str, Callable[[Path], None]]:
    import numpy as np

    def arr(shape: tuple[int, ...]) -> bytes:
        b = io.BytesIO()
        np.save(b, np.zeros(shape, dtype=np.int8))
        return b.getvalue()

    def bomb(extra: bool) -> Callable[[Path], None]:
        def write(path: Path) -> None:
            zeros = 2048 * MEGABYTE
            if extra:  # data and kernel are fine; a third member inflates to 2 GiB
                blob = _zip_bomb({"data.npy": arr((m, k)), "kernel.npy": arr((n, k))},
                                 "junk.npy", _npy((zeros,)), zeros)
            else:  # data claims its right shape but inflates to 2 GiB
                blob = _zip_bomb({"kernel.npy": arr((n, k))}, "data.npy", _npy((m, k)), zeros)
            path.write_bytes(blob)
        return write

    return {"npz/bomb_extra.npz": bomb(True), "npz/bomb_data.npz": bomb(False)}


def _measured_files() -> dict[str, bytes]:
    """Measured-record files for ``calibrate``: the format's every field made hostile."""
    good = {"shape": {"op": "conv2d", "n": 1, "cin": 16, "h": 8, "w": 8, "cout": 16, "kh": 3,
                      "kw": 3, "stride": 1, "pad": 1, "groups": 1},
            "knobs": {"tile_h": 8, "tile_w": 8}, "ms": 1.0, "measured": "2019-07-11"}

    def one(**edit: object) -> bytes:
        return json.dumps([{**good, **edit}]).encode()

    return {
        "measured/deep.json": _deep("[", "]").encode(),
        "measured/not_utf8.json": b'[{"source": "\xff\xfe"}]',
        "measured/object.json": b'{"records": []}',
        "measured/empty.json": b"[]",
        "measured/huge_int.json": b'[{"ms": ' + HUGE_DIGITS.encode() + b"}]",
        "measured/nan_ms.json": b'[{"shape": {}, "knobs": {}, "ms": NaN}]',
        "measured/negative_ms.json": one(ms=-1.0),
        "measured/bool_knob.json": one(knobs={"tile_h": True}),
        "measured/str_shape.json": one(shape="1,16,8,8"),
        "measured/zero_channels.json": one(shape={**good["shape"], "cin": 0}),
        "measured/groups.json": one(shape={**good["shape"], "groups": 2}),
        "measured/other_board.json": one(board="zcu104"),
        "measured/bad_model.json": one(model="pynq_1x16_i8w8a32_99_15_18_17"),
        "measured/bad_hw.json": one(hw={"LOG_BLOCK": -5}),
        "measured/knob_range.json": one(knobs={"tile_h": 10**30}),
        "measured/long_list.json": json.dumps([5] * 200_000).encode(),
        **_measured_logs(),
    }


def _measured_logs() -> dict[str, bytes]:
    """AutoTVM logs for ``calibrate``: TopHub's format with its fields made hostile."""
    vta = "ext_dev -device=vta -keys=cpu -model=pynq_1x16_i8w8a32_15_15_18_17"
    args = [["TENSOR", [1, 1, 8, 8, 1, 16], "int8"], ["TENSOR", [1, 1, 3, 3, 16, 16], "int8"],
            [1, 1], [1, 1, 1, 1], [1, 1], "NCHW1n16c", "int32"]
    good = {"input": [vta, "conv2d_packed.vta", args, {}],
            "config": {"index": 0, "entity": [["tile_h", "sp", [1, 8]]]},
            "result": [[1e-3], 0, 1.0, 1565395200.0], "version": 0.2}

    def log(*records: object, head: str = "# Net - x") -> bytes:
        return (head + "\n" + "\n".join(r if isinstance(r, str) else json.dumps(r)
                                         for r in records) + "\n").encode()

    def edit(key: str, value: object) -> dict[str, object]:
        return {**good, key: value}

    return {
        "measured/log_not_json.log": log(good, "{not json"),
        "measured/log_no_input.log": log({"config": {}, "result": [[1.0], 0]}),
        "measured/log_input_str.log": log(edit("input", "conv2d")),
        "measured/log_only_errors.log": log(edit("result", [[1e9], 7, 0, 0])),
        "measured/log_only_arm.log": log(edit("input", ["llvm -device=arm_cpu",
                                                         "conv2d_packed.vta", args, {}])),
        "measured/log_cost_str.log": log(edit("result", [["fast"], 0, 1.0, 0])),
        "measured/log_cost_nan.log": log('{"input": ' + json.dumps(good["input"])
                                          + ', "config": {"entity": []}, '
                                          '"result": [[NaN], 0, 1.0, 0]}'),
        "measured/log_cost_zero.log": log(edit("result", [[0.0], 0, 1.0, 0])),
        "measured/log_huge_stamp.log": log(edit("result", [[1e-3], 0, 1.0, 1e300])),
        "measured/log_entity_bad.log": log(edit("config", {"entity": [["tile_h", "sp"]]})),
        "measured/log_entity_kind.log": log(edit("config", {"entity": [["t", "re", [1]]]})),
        "measured/log_shape_short.log": log(edit("input", [vta, "conv2d_packed.vta",
                                                           [["TENSOR", [1], "int8"]], {}])),
        "measured/log_shape_huge.log": log(edit("input", [
            vta, "conv2d_packed.vta", [["TENSOR", [2**40, 1, 8, 8, 1, 16], "int8"], *args[1:]],
            {}])),
        "measured/log_model_esc.log": log(edit("input", [vta + "\x1b[31m", "conv2d_packed.vta",
                                                         args, {}])),
        "measured/log_empty.log": b"# just a section\n",
    }


def _onnx_files() -> dict[str, bytes | Callable[[Path], None]]:
    """ONNX models for ``import`` and ``search MODEL.onnx``: not ONNX, truncated, no VTA
    layer, an opset or IR version onnx cannot read, external data missing, 2 GB+, a cycle,
    nesting past protobuf's limit, hostile node names."""
    import onnx
    from onnx import TensorProto, helper

    def conv_model(x: list, name: str = "c", dilations: list | None = None,
                   extra: list | None = None) -> onnx.ModelProto:
        w = helper.make_tensor("w", TensorProto.FLOAT, [16, 16, 3, 3], [0.0] * 2304)
        attrs = {"pads": [1] * 4, **({"dilations": dilations} if dilations else {})}
        nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name=name, **attrs),
                 *(extra or [])]
        out = nodes[-1].output[0]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, x)],
                              [helper.make_tensor_value_info(out, 1, None)], [w])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m

    ok = conv_model([1, 16, 8, 8])
    okb = ok.SerializeToString()
    files: dict[str, bytes | Callable[[Path], None]] = {
        "onnx/ok.onnx": okb,
        "onnx/name_esc.onnx": conv_model(["N", 16, 8, 8], name=ESC + "\n\nline2\u202e"
                                         ).SerializeToString(),
        "onnx/text.onnx": b"this is not a model\n",
        "onnx/json.onnx": b'{"graph": {"node": [{"op_type": "Conv"}]}}',
        "onnx/empty.onnx": b"",
        "onnx/random.onnx": bytes((i * 131 + 7) % 256 for i in range(4096)),
        "onnx/truncated.onnx": okb[:len(okb) // 2],
        "onnx/length_huge.onnx": b"\x08\x08\x3a\xff\xff\xff\xff\x0f",
        "onnx/varint_long.onnx": b"\x08" + b"\xff" * 20,
        "onnx/no_vta_layer.onnx": conv_model([1, 16, 8, 8], dilations=[2, 2]
                                             ).SerializeToString(),
        "onnx/symbolic_h.onnx": conv_model([1, 16, "H", 8]).SerializeToString(),
    }
    bad = onnx.ModelProto()
    bad.CopyFrom(ok)
    bad.opset_import[0].version = 999
    files["onnx/opset_999.onnx"] = bad.SerializeToString()
    bad.opset_import[0].version = 17
    bad.ir_version = 99
    files["onnx/ir_99.onnx"] = bad.SerializeToString()
    ext = onnx.ModelProto()
    ext.CopyFrom(ok)
    w = ext.graph.initializer[0]
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="missing_weights.bin")
    files["onnx/external_missing.onnx"] = ext.SerializeToString()
    w.external_data[0].value = "../../etc/passwd"
    files["onnx/external_escape.onnx"] = ext.SerializeToString()
    cyc = conv_model([1, 16, 8, 8], extra=[helper.make_node("Relu", ["y"], ["x2"])])
    cyc.graph.node[0].input[0] = "x2"  # conv reads the relu that reads the conv
    files["onnx/cycle.onnx"] = cyc.SerializeToString()

    def field(no: int, body: bytes) -> bytes:
        n, length = bytearray(), len(body)
        while True:
            n.append((length & 0x7F) | (0x80 if length >> 7 else 0))
            length >>= 7
            if not length:
                return bytes([no << 3 | 2]) + bytes(n) + body

    deep = b""
    for _ in range(200):
        deep = field(1, field(5, field(6, deep)))
    files["onnx/deep.onnx"] = b"\x08\x08" + field(7, deep)
    files["onnx/huge_2gb.onnx"] = lambda p: _sparse(p, 1 << 31)
    return files


FILES: dict[str, bytes | Callable[[Path], None]] = {
    **_hw_files(), **_board_files(), **_space_files(), **_npz_files(), **_bomb_files(),
    **_network_files(), **_passes_files(), **_measured_files(), **_onnx_files(),
    **_netset_files(),
    "special/dir.json/.keep": b"",
    "special/sparse.json": lambda p: _sparse(p, 512 * MEGABYTE),
}


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


def write_files(ws: Path) -> None:
    for name, content in FILES.items():
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        else:
            path.write_bytes(content)
    fifo = ws / "special" / "fifo.json"
    if not fifo.exists():
        import os

        os.mkfifo(fifo)


# ---- which commands read which kind of file ----------

#: Command lines reading one file of each kind; ``{f}`` is the file. ``deep`` lines run
#: every file of the kind only in ``make fuzz`` (the default suite feeds them a sample).
# A database that fails only after the space and options are read: a search that accepts its
# input stops there (exit 2 naming the database, which ``_not_brake`` flags) instead of
# running; a search that refuses its input never reaches it.
BRAKE_DB = "nonsense://brake"
SEARCH_TAIL = ("--db", BRAKE_DB, "--trials", "1", "--workers", "1", "--json")
READERS: dict[str, list[tuple[tuple[str, ...], bool]]] = {
    "hw": [(("hw", "--hw", "{f}"), False),
           (("area", "--hw", "{f}"), True),
           (("compile", "dense", "--shape", "16,64,64", "--hw", "{f}"), True),
           (("simulate", "dense", "--shape", "16,64,64", "--hw", "{f}"), True),
           (("space", "dense", "--shape", "16,64,64", "--jobs", "1", "--hw", "{f}"), True),
           (("search", "dense", "--shape", "16,64,64", "--hw", "{f}", *SEARCH_TAIL), True)],
    "board": [(("area", "--board", "{f}"), False),
              (("simulate", "dense", "--shape", "16,64,64", "--board", "{f}"), True),
              (("search", "dense", "--shape", "16,64,64", "--board", "{f}", *SEARCH_TAIL),
               True),
              (("verify-export", "{bundle}", "--board", "{f}"), True)],
    "space": [(("search", "--space", "{f}", *SEARCH_TAIL), False)],
    "npz": [(("simulate", "dense", "--shape", "16,64,64", "--inputs", "{f}", "--json"), False)],
    "network": [(("search", "--space", "{f}", *SEARCH_TAIL), False)],
    "netset": [(("search", "{f}", *SEARCH_TAIL), False)],
    "measured": [(("calibrate", "{f}", "--no-loo"), False)],
    "onnx": [(("import", "{f}", "--json"), False),
             (("search", "{f}", *SEARCH_TAIL), False)],
    "passes": [(("compile", "dense", "--shape", "16,64,64", "--passes", "{f}"), False),
               (("simulate", "dense", "--shape", "16,64,64", "--passes", "{f}"), True),
               (("search", "dense", "--shape", "16,64,64", "--passes", "{f}", *SEARCH_TAIL),
                True)],
}
SPECIAL_FILES = ["/dev/zero", "/dev/null", "/dev/urandom", "{ws}/special/dir.json",
                 "{ws}/special/fifo.json", "{ws}/special/sparse.json", "{ws}/nonexistent.json",
                 "/proc/self/mem", "/", "", "x" * 5000, "~nouser/x.json"]
#: Files of a kind that are valid (the case then only must not crash).
#: Files that are valid (their case must end cleanly, with exit 0; a valid space reaches the
#: search's database, the brake). The npz files hold good arrays beside a member that claims
#: 10^12 elements or inflates to 2 GiB: only ``data`` and ``kernel`` are read.
VALID_FILES = {"npz/ok.npz", "npz/fortran.npz", "npz/bomb_extra.npz", "npz/claims_1e12_other.npz",
               "hw/utf8_bom.json", "hw/name_esc.json",
               "space/constraints.max_area_mm2_7.toml",  # 1e-320 mm2: tiny, but a number
               "space/schedule.knobs_4.toml",  # knobs = []: a hardware-only search
               "network/ok.toml", "passes/ok.py", "onnx/ok.onnx", "onnx/name_esc.onnx",
               "netset/ok.toml",
               # grouped conv2d records calibrate; a timestamp out of range is no date
               "measured/groups.json", "measured/log_huge_stamp.log"}
#: Pass files that load but whose passes or verifiers fail on a program: the candidate fails
#: with a reason (any exit code, no traceback); a search accepts the file.
LOADS_BUT_FAILS = {"passes/verifier_raises.py", "passes/verifier_returns_int.py",
                   "passes/pass_raises.py", "passes/pass_returns_none.py"}
#: Deep-only samples of each kind in the default suite (first N files per kind, by name).
SAMPLE = 6


def _not_brake(o: Outcome, out: Path) -> list[str]:
    if "nonsense" in o.stderr:
        return ["the input was accepted (the search went on to open its database)"]
    return []


def _reaches_brake(o: Outcome, out: Path) -> list[str]:
    if "nonsense" not in o.stderr:
        return ["a valid input was refused"]
    return []


def file_cases() -> list[Case]:
    cases = []
    by_kind: dict[str, list[str]] = {}
    for name in FILES:
        kind = name.split("/")[0]
        if kind in READERS:
            by_kind.setdefault(kind, []).append(name)
    for kind, names in by_kind.items():
        for argv, deep in READERS[kind]:
            sample = set(sorted(names)[::max(1, len(names) // SAMPLE)])
            for name in names:
                valid, loads = name in VALID_FILES, name in LOADS_BUT_FAILS
                braked = BRAKE_DB in argv
                expect = BAD if braked else OK if valid else ANY if loads else BAD
                check = (_reaches_brake if valid or loads else _not_brake) if braked else None
                cases.append(Case(
                    id=f"{argv[0]}:{kind}:{Path(name).stem}",
                    argv=tuple(a.replace("{f}", "{ws}/" + name) for a in argv),
                    expect=expect, check=check, deep=deep and name not in sample))
            for i, special in enumerate(SPECIAL_FILES):
                cases.append(Case(id=f"{argv[0]}:{kind}:special{i}",
                                  argv=tuple(a.replace("{f}", special) for a in argv),
                                  check=_not_brake if BRAKE_DB in argv else None,
                                  deep=deep and i % 3 != 0))
    return cases


# ---- options ----------

INT_VALUES = ["-1", "0", "10" + "0" * 19, HUGE_DIGITS, "nan", "inf", "", "1e3", "0x10",
              "\u0661\u0662", " 5", "5 ", "1_000", "+5", "-0", "9" * 20]
FLOAT_VALUES = ["nan", "NaN", "inf", "-inf", "1e400", "-1", "0", "", "1e-400", HUGE_DIGITS,
                "0x1p3", "1_0", "\u0661"]
TEXT_VALUES = [ESC, "x" * MEGABYTE, "\udcff\udcfe", "", "\u202eevil", "a\nb", "$x^2$",
               "=HYPERLINK(\"http://evil\")", "'; rm -rf ~ #", "[/bold]", "a\x00b"]

DENSE = ("dense", "--shape", "16,64,64")
MISSING_HW = ("--hw", "{ws}/nonexistent.json")
# Each command: the argv head, a "brake" given before the option under test that makes an
# otherwise valid run stop early with exit 2 (a missing file) so fuzzing stays cheap (an
# option given twice takes its last value), and its options with a kind (int, float, text)
# or the exact values to try.
OPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...], dict[str, str | list[str]]]] = {
    "search": (("search", *DENSE), ("--db", BRAKE_DB),
               {"--trials": "int", "--seed": "int", "--timeout": "float", "--workers": "int",
                "--sampler": "text", "--objective": "text", "--study": "text",
                "--board": "text", "--hw": "text", "--layer": "text", "--shape": "text"}),
    "search-run": (("search", *DENSE), ("--db", BRAKE_DB, "--workers", "1", "--trials", "1"),
                   {"--seed": ["-1", "10" + "0" * 19, str(2**32), str(2**63)],
                    "--timeout": ["nan", "inf", "-inf", "1e400", "NaN", "0", "-1e-9"],
                    "--workers": ["100000", str(2**63)],
                    "--trials": [str(2**63), "10" + "0" * 19],
                    "--board": ["", " "],
                    "--db": ["sqlite:///:memory:", "sqlite://", ":memory:",
                             "sqlite:///file::memory:?cache=shared&uri=true"]}),
    "search-network": (("search", "resnet18"), ("--db", BRAKE_DB),
                       {"--layer-trials": "int", "--inner-sampler": "text", "--trials": "int",
                        "--workers": "int", "--study": "text"}),
    # several networks: every bad --weights is refused before the database (the brake)
    "search-weights": (("search", "resnet18", "mobilenet_v1"), ("--db", BRAKE_DB),
                       {"--weights": ["3", "1,2,3", "-1,1", "0,1", "nan,1", "1,inf",
                                      "1e400,1", ",", "1,,1", f"{HUGE_DIGITS},1", "1,0x10",
                                      "1;2", " , ", ESC, "x" * MEGABYTE, "1," * 100_000]}),
    "compile-passes": (("compile", *DENSE), (), {"--passes": "text"}),
    "compile": (("compile", *DENSE), (),
                {"--knobs": "text", "--print": "text", "--hw": "text", "--shape": "text",
                 "--layer": "text", "--emit": "text"}),
    "compile-emit": (("compile", *DENSE, "--emit", "{ws}/out/emit"), (), {"--board": "text"}),
    "simulate": (("simulate", *DENSE), (),
                 {"--shift": "int", "--seed": "int", "--knobs": "text", "--board": "text",
                  "--output": "text", "--inputs": "text"}),
    "space": (("space", *DENSE), MISSING_HW, {"--jobs": "int"}),
    # its --board and --csv are checked after the config is read: the database brakes it
    "space-simulate": (("space", *DENSE, "--simulate", "--jobs", "1"), ("--db", BRAKE_DB),
                       {"--timeout": "float", "--board": "text", "--csv": "text",
                        "--db": ["sqlite:///:memory:", ":memory:", "sqlite://", "",
                                 "x" * MEGABYTE, "sqlite:////nonexistent/" + ESC + ".sqlite",
                                 "postgresql+nodriver://x/y"]}),
    "hw": (("hw",), (), {"--hw": "text"}),
    "area": (("area",), (), {"--hw": "text", "--board": "text"}),
    "boards": (("boards",), (), {"--json": ["x"]}),
    "operators": (("operators",), (), {"--json": ["x"]}),
    "version": (("--version",), (), {"--help": ["x"]}),
    "studies": (("studies",), (), {"--db": "text"}),
    "show": (("show", "{study}"), (), {"--db": "text"}),
    "report": (("report", "{study}", "--db", "{db}"), (), {"--out": "text"}),
    "compare": (("compare", "{study}", "{study}", "--db", "{db}"), (), {"--out": "text"}),
    "export": (("export", "{study}", "--db", "{db}"), (), {"--pick": "int", "--out": "text"}),
    "verify-export": (("verify-export", "{bundle}"), (), {"--board": "text"}),
    # --board and --save are checked before the design (the missing --hw brakes it)
    "calibrate": (("calibrate", "{ws}/nonexistent.json"), MISSING_HW,
                  {"--save": ["2019-07", "../x", "a/b", "x@y", ".hidden", "x" * 65, ESC, ""],
                   "--board": ["pynq-z1@", "pynq-z1@../../etc/passwd", "pynq-z1@nope",
                               "pynq-z1@" + "x" * 5000, "nope@2019-07", "pynq-z1@a@b"],
                   "--build": "text"}),
    "import": (("import", "{ws}/onnx/ok.onnx"), (),
               {"--batch": "int", "--name": "text", "--out": "text"}),
}


def option_cases() -> list[Case]:
    values = {"int": INT_VALUES, "float": FLOAT_VALUES, "text": TEXT_VALUES}
    cases = []
    for cmd, (head, tail, options) in OPTIONS.items():
        for opt, kind in options.items():
            vals = kind if isinstance(kind, list) else values[kind]
            for i, v in enumerate(vals):
                # a real report or bundle: seconds each
                writes = opt in ("--out", "--emit") and i != 1
                refused = cmd in ("search-run", "search-weights")
                cases.append(Case(id=f"{cmd}:{opt}:{i}", argv=(*head, *tail, opt, v),
                                  expect=BAD if refused else ANY,
                                  check=_not_brake if refused else None,
                                  deep=writes or (cmd != "search-run" and kind == "text"
                                                  and i > 3)))
    # positional words of every command
    seen = set()
    for head, _, _ in OPTIONS.values():
        if head[0] in seen:  # search-run, compile-emit: the same command again
            continue
        seen.add(head[0])
        for i, v in enumerate(TEXT_VALUES):
            cases.append(Case(id=f"{head[0]}:arg:{i}", argv=(head[0], v), expect=ANY,
                              deep=i % 3 != 0))
    return cases


# ---- the study-name sinks ----------

#: Study names that must come out escaped (terminal, HTML, SVG/matplotlib, CSV, shell).
HOSTILE_NAMES = {
    "mathtext": "$x^{2}$ and $\\frac{1}{0}$",
    "mathtext_bad": "$\\undefinedcommand{$",
    "escape": "st\x1b[2J\x1b[31mudy\x07",
    "formula": '=HYPERLINK("http://evil.example","click")',
    "formula_plus": "+cmd|' /C calc'!A0",
    "shell": "a b; rm -rf ~ #'\"$(id)`id`",
    "html": "<script>alert(1)</script>&amp;",
    "bidi": "abc\u202eevil\u202c.exe",
    "newline": "line1\nline2\r\n\tend",
    "long": "L" * 5000,
}


def _csv_safe(o: Outcome, out: Path) -> list[str]:
    import csv

    bad = []
    for path in sorted(out.glob("*.csv")):
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            for row in csv.reader(f):
                for cell in row:
                    if cell[:1] in ("=", "+", "-", "@", "\t", "\r") and not _number(cell):
                        bad.append(f"{path.name}: formula cell {cell[:40]!r}")
    return bad


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _html_safe(o: Outcome, out: Path) -> list[str]:
    bad = []
    for path in sorted(out.glob("*.html")) + sorted(out.glob("*.svg")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "<script>alert(1)" in text:
            bad.append(f"{path.name}: name written unescaped")
    return bad


def _suggestion_quoted(o: Outcome, out: Path) -> list[str]:
    """Every ``vtatune ...`` command the output suggests parses (shlex) into real words."""
    import shlex

    bad = []
    for line in o.stdout.splitlines() + o.stderr.splitlines():
        at = line.find("vtatune ")
        if at < 0 or "vtatune: error" in line:
            continue
        cmd = line[at:].rstrip(")")
        try:
            words = shlex.split(cmd)
        except ValueError as exc:
            bad.append(f"suggested command does not parse ({exc}): {cmd[:80]!r}")
            continue
        if any(w in ("rm", "-rf") for w in words):
            bad.append(f"suggested command is not quoted: {cmd[:80]!r}")
    return bad


def _all(*checks: Callable[[Outcome, Path], list[str]]) -> Callable[[Outcome, Path], list[str]]:
    def run(o: Outcome, out: Path) -> list[str]:
        return [p for c in checks for p in c(o, out)]
    return run


def name_cases() -> list[Case]:
    # report and compare draw real figures (seconds each): make test runs the ones in
    # ISSUE_EXAMPLES, make fuzz all of them
    cases = []
    for tag in HOSTILE_NAMES:
        ref = "{name_" + tag + "}"
        out = "{ws}/out/" + tag
        cases += [
            Case(f"studies:name:{tag}", ("studies", "--db", "{db}"), OK, deep=True),
            Case(f"show:name:{tag}", ("show", ref, "--db", "{db}"), OK, deep=True),
            Case(f"report:name:{tag}", ("report", ref, "--db", "{db}", "--out", out + "/r"), OK,
                 check=_all(_csv_safe, _html_safe), deep=True),
            Case(f"compare:name:{tag}", ("compare", ref, "{study}", "--db", "{db}", "--out",
                                         out + "/c"), OK, check=_all(_csv_safe, _html_safe),
                 deep=True),
            Case(f"export:name:{tag}", ("export", ref, "--db", "{db}", "--out", out + "/e",
                                        "--pick", "fastest"), OK, check=_suggestion_quoted,
                 deep=True),
            Case(f"show-unknown:name:{tag}", ("show", ref + "-missing", "--db", "{db}"), BAD,
                 deep=True),
        ]
    return cases


# ---- databases ----------

DB_VALUES = ["{ws}/special/dir.json", "/dev/zero", "{ws}/hw/binary.json",
             "sqlite:////nonexistent/dir/x.sqlite", "nonsense://x", "postgresql+nodriver://x/y",
             "x" * MEGABYTE, ESC, "sqlite:///{ws}/hw/binary.json", "", "\udcff.sqlite"]


def db_cases() -> list[Case]:
    cases = []
    for i, url in enumerate(DB_VALUES):
        for argv in (("studies", "--db", url), ("show", "x", "--db", url),
                     ("report", "x", "--db", url), ("export", "x", "--db", url),
                     ("compare", "x", "y", "--db", url)):
            # studies lists what is there: a database that does not exist yet has no studies
            cases.append(Case(f"{argv[0]}:db:{i}", argv,
                              ANY if url == "" or argv[0] == "studies" else BAD,
                              deep=argv[0] in ("report", "compare") and i % 2 == 1))
    return cases


# ---- bundles (verify-export) ---------------------------------------------------------------------

#: How a copy of the good bundle is damaged; ``resign`` updates the manifest's checksums so
#: later checks are reached. Value: (file, new bytes or a function of the old, resign, expect).
def _bundle_edits() -> dict[str, tuple[str, Callable[[bytes], bytes], bool, frozenset[int]]]:
    def prog(**f: int) -> Callable[[bytes], bytes]:
        def edit(old: bytes) -> bytes:
            head = bytearray(old[:64])
            for name, (off, fmt) in {"n_insns": (32, "<I"), "n_uops": (36, "<I"),
                                     "n_regions": (40, "<I"), "dram_bytes": (48, "<Q"),
                                     "version": (8, "<I"), "header": (12, "<I")}.items():
                if name in f:
                    struct.pack_into(fmt, head, off, f[name])
            return bytes(head) + old[64:]
        return edit

    def region(index: int, offset: int | None = None, nbytes: int | None = None,
               name: bytes | None = None) -> Callable[[bytes], bytes]:
        def edit(old: bytes) -> bytes:
            b = bytearray(old)
            at = 64 + 48 * index
            if name is not None:
                b[at:at + 32] = name.ljust(32, b"\0")[:32]
            if offset is not None:
                struct.pack_into("<Q", b, at + 32, offset)
            if nbytes is not None:
                struct.pack_into("<Q", b, at + 40, nbytes)
            return bytes(b)
        return edit

    def const(data: bytes) -> Callable[[bytes], bytes]:
        return lambda old: data

    def _parses(data: bytes) -> bool:
        try:
            json.loads(data)
        except ValueError:
            return False
        return True

    def json_edit(fn: Callable[[dict], object]) -> Callable[[bytes], bytes]:
        def edit(old: bytes) -> bytes:
            doc = json.loads(old)
            res = fn(doc)
            new = res if isinstance(res, bytes) else json.dumps(doc).encode()
            # an edit that misses (the exported design changed) would test a valid bundle
            assert json.loads(new) != json.loads(old) if _parses(new) else True, \
                "the hostile edit changed nothing"
            return new
        return edit

    return {
        "dram_2_62": ("program.bin", prog(dram_bytes=2**62), True, FAILED_CHECK),
        "dram_2_40": ("program.bin", prog(dram_bytes=2**40), True, FAILED_CHECK),
        "dram_u64max": ("program.bin", prog(dram_bytes=2**64 - 1), True, FAILED_CHECK),
        "dram_0": ("program.bin", prog(dram_bytes=0), True, FAILED_CHECK),
        "region_huge": ("program.bin", region(0, nbytes=2**62), True, FAILED_CHECK),
        "region_offset_huge": ("program.bin", region(0, offset=2**63), True, FAILED_CHECK),
        "region_bad_name": ("program.bin", region(0, name=b"\xff\xfe"), True, FAILED_CHECK),
        "region_esc_name": ("program.bin", region(0, name=ESC.encode()), True, FAILED_CHECK),
        "n_insns_huge": ("program.bin", prog(n_insns=2**32 - 1), True, FAILED_CHECK),
        "n_regions_huge": ("program.bin", prog(n_regions=2**32 - 1), True, FAILED_CHECK),
        "n_uops_huge": ("program.bin", prog(n_uops=2**32 - 1), True, FAILED_CHECK),
        "version": ("program.bin", prog(version=7), True, FAILED_CHECK),
        "header_size": ("program.bin", prog(header=2**32 - 1), True, FAILED_CHECK),
        "truncated_program": ("program.bin", lambda old: old[:70], True, FAILED_CHECK),
        "empty_program": ("program.bin", const(b""), True, FAILED_CHECK),
        "program_garbage": ("program.bin", const(bytes(range(256)) * 64), True, FAILED_CHECK),
        "config_not_json": ("vta_config.json", const(b"{"), True, FAILED_CHECK),
        "config_deep": ("vta_config.json", const(_deep("[", "]").encode()), True,
                        FAILED_CHECK),
        "config_huge_int": ("vta_config.json", json_edit(
            lambda d: re.sub(r'"LOG_BATCH": \d+', f'"LOG_BATCH": {HUGE_DIGITS}', json.dumps(d))
            .encode()), True, FAILED_CHECK),
        "config_target_mb": ("vta_config.json", json_edit(
            lambda d: d.update(TARGET="t" * MEGABYTE)), True, FAILED_CHECK),
        "config_not_utf8": ("vta_config.json", const(b'{"TARGET": "\xff"}'), True,
                            FAILED_CHECK),
        "schedule_deep": ("schedule.json", const(_deep("[", "]").encode()), True, FAILED_CHECK),
        "schedule_huge_int": ("schedule.json", json_edit(
            lambda d: json.dumps(d).replace('"cycles": ', f'"cycles": {HUGE_DIGITS}0')
            .encode()), True, FAILED_CHECK),
        "schedule_big_workload": ("schedule.json", json_edit(
            lambda d: json.dumps(d).replace("dense_m16_k64_n64",
                                            "dense_m1000000_k1000000_n1000000").encode()),
            True, FAILED_CHECK),
        "schedule_huge_knob": ("schedule.json", json_edit(
            lambda d: json.dumps(d).replace('"tile_ci": ', f'"tile_ci": {HUGE_DIGITS}')
            .encode()), True, FAILED_CHECK),
        "schedule_esc": ("schedule.json", json_edit(
            lambda d: json.dumps(d).replace("dense_m16", ESC).encode()), True, FAILED_CHECK),
        "schedule_not_utf8": ("schedule.json", const(b'{"workloads": "\xff"}'), True,
                              FAILED_CHECK),
        "resources_deep": ("resources.json", const(_deep("{\"a\":", "}")[:-1].encode()), True,
                           FAILED_CHECK),
        "resources_board_esc": ("resources.json", json_edit(lambda d: d.update(board=ESC)),
                                True, FAILED_CHECK),
        "resources_board_path": ("resources.json", json_edit(
            lambda d: d.update(board="/dev/zero")), True, FAILED_CHECK),
        "autotvm_not_json": ("autotvm.log", const(b"{\n"), True, FAILED_CHECK),
        "autotvm_deep": ("autotvm.log", const(_deep("[", "]").encode() + b"\n"), True,
                         FAILED_CHECK),
        "autotvm_esc": ("autotvm.log", const(json.dumps({
            "input": ["ext_dev -model=" + ESC, ESC, [], {}], "config": {"entity": ESC},
            "result": [[1.0], 0, 0, 0], "version": 0.2}).encode() + b"\n"), True,
            FAILED_CHECK),
        "autotvm_huge_int": ("autotvm.log", const(
            b'{"input": [], "config": {"index": ' + HUGE_DIGITS.encode() + b'}, "result": '
            b'[[1.0]]}\n'), True, FAILED_CHECK),
        "unsigned_change": ("program.bin", prog(dram_bytes=2**62), False, FAILED_CHECK),
        "manifest_deep": ("manifest.json", const(_deep("[", "]").encode()), False, BAD),
        "manifest_not_utf8": ("manifest.json", const(b'{"format": "\xff"}'), False, BAD),
        "manifest_list": ("manifest.json", const(b"[]"), False, BAD),
        "manifest_huge": ("manifest.json", const(b'{"x": "' + b"y" * (64 * MEGABYTE) + b'"}'),
                          False, BAD),
        "manifest_huge_int": ("manifest.json", json_edit(
            lambda d: json.dumps(d).replace('"bytes": ', f'"bytes": {HUGE_DIGITS}').encode()),
            False, ANY),
        "manifest_format_esc": ("manifest.json", json_edit(lambda d: d.update(format=ESC)),
                                False, BAD),
        "manifest_board_esc": ("manifest.json", json_edit(lambda d: d.update(board=ESC)),
                               False, BAD),
        "manifest_board_num": ("manifest.json", json_edit(lambda d: d.update(board=5)),
                               False, BAD),
        "manifest_versions_deep": ("manifest.json", json_edit(
            lambda d: d.update(versions={"tvm": ESC * 3})), False, ANY),
    }


BUNDLE_EDITS = _bundle_edits()
BUNDLE_SPECIAL = {  # file -> what replaces it (a symlink target or a folder)
    "program_is_dev_zero": ("program.bin", "/dev/zero"),
    "program_is_fifo": ("program.bin", "fifo"),
    "manifest_is_dev_zero": ("manifest.json", "/dev/zero"),
    "manifest_is_dir": ("manifest.json", "dir"),
    "config_is_dir": ("vta_config.json", "dir"),
}


def bundle_cases() -> list[Case]:
    cases = [Case(f"verify-export:bundle:{tag}", ("verify-export", "{ws}/bundles/" + tag),
                  expect)
             for tag, (_, _, _, expect) in BUNDLE_EDITS.items()]
    cases += [Case(f"verify-export:bundle:{tag}", ("verify-export", "{ws}/bundles/" + tag),
                   ANY - OK) for tag in BUNDLE_SPECIAL]
    cases += [Case("verify-export:bundle:missing", ("verify-export", "{ws}/nope")),
              Case("verify-export:bundle:file", ("verify-export", "{ws}/npz/ok.npz")),
              Case("verify-export:bundle:dev_zero", ("verify-export", "/dev/zero")),
              Case("verify-export:bundle:empty_dir", ("verify-export", "{ws}/special"))]
    return cases


def write_bundles(ws: Path, bundle: Path) -> None:
    import hashlib
    import os
    import shutil

    for tag, (name, edit, resign, _) in BUNDLE_EDITS.items():
        folder = ws / "bundles" / tag
        if folder.exists():
            continue
        shutil.copytree(bundle, folder)
        path = folder / name
        path.write_bytes(edit(path.read_bytes()))
        if resign and name != "manifest.json":
            manifest = json.loads((folder / "manifest.json").read_text())
            data = path.read_bytes()
            manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(),
                                       "bytes": len(data)}
            (folder / "manifest.json").write_text(json.dumps(manifest))
    for tag, (name, what) in BUNDLE_SPECIAL.items():
        folder = ws / "bundles" / tag
        if folder.exists():
            continue
        shutil.copytree(bundle, folder)
        path = folder / name
        path.unlink()
        if what == "dir":
            path.mkdir()
        elif what == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to(what)


# ---- bundles of several networks (one accelerator for all; verify-export) -------------------

def _multi_edits() -> dict[str, tuple[str, Callable[[dict], object], bool, frozenset[int]]]:
    """How a copy of a good bundle of two networks (tiny, other) is damaged: (file, an edit of
    its JSON, resign, expect). Member names, weights and schedules of ``schedule.json``'s
    ``networks``, each network's own ``networks/<name>.json``, and the manifest."""
    def member(i: int, key: str, value: object) -> Callable[[dict], object]:
        return lambda d: d["networks"][i].update({key: value})

    def layer(i: int, key: str, value: object) -> Callable[[dict], object]:
        return lambda d: d["network"]["layers"][i].update({key: value})

    return {
        "member_path": ("schedule.json", member(1, "network", "../../../../etc/passwd"), True,
                        FAILED_CHECK),
        "member_esc": ("schedule.json", member(0, "network", ESC), True, FAILED_CHECK),
        "member_mb": ("schedule.json", member(0, "network", "n" * MEGABYTE), True,
                      FAILED_CHECK),
        "member_plus": ("schedule.json", member(0, "network", "a+b"), True, FAILED_CHECK),
        "member_list": ("schedule.json", member(0, "network", ["tiny"]), True, FAILED_CHECK),
        "weight_str": ("schedule.json", member(0, "weight", "3"), True, FAILED_CHECK),
        "weight_neg": ("schedule.json", member(0, "weight", -1), True, FAILED_CHECK),
        "weight_huge": ("schedule.json", lambda d: json.dumps(d).replace(
            '"weight": 3.0', f'"weight": 1{HUGE_DIGITS}.0').encode(), True, FAILED_CHECK),
        "weight_bool": ("schedule.json", member(1, "weight", True), True, FAILED_CHECK),
        "schedule_escape": ("schedule.json", member(1, "schedule", "../../../../etc/passwd"),
                            True, FAILED_CHECK),
        "schedule_esc": ("schedule.json", member(1, "schedule", ESC), True, FAILED_CHECK),
        "networks_deep": ("schedule.json", lambda d: json.dumps(d).replace(
            '"networks": [', '"networks": ' + _deep("[", "]") + ', "x": [', 1)
            .encode(), True, FAILED_CHECK),
        "networks_many": ("schedule.json", lambda d: d.update(
            networks=d["networks"] * 100_000), True, FAILED_CHECK),
        "union_esc": ("schedule.json", lambda d: d["network"].update(name=ESC), True,
                      FAILED_CHECK),
        "layer_path": ("networks/tiny.json", layer(0, "name", "../../../../etc/passwd"), True,
                       FAILED_CHECK),
        "layer_esc": ("networks/other.json", layer(1, "name", ESC), True, FAILED_CHECK),
        "layer_count_frac": ("networks/tiny.json", layer(1, "count", 1.9), True, FAILED_CHECK),
        "layer_count_huge": ("networks/tiny.json", lambda d: json.dumps(d).replace(
            '"count": 2', f'"count": {HUGE_DIGITS}', 1).encode(), True, FAILED_CHECK),
        "layer_count_str": ("networks/other.json", layer(0, "count", "3"), True, FAILED_CHECK),
        "layer_program_escape": ("networks/tiny.json", layer(0, "program", "../../etc/passwd"),
                                 True, FAILED_CHECK),
        "member_not_json": ("networks/other.json", lambda d: b"{", True, FAILED_CHECK),
        "member_deep": ("networks/other.json", lambda d: _deep("[", "]").encode(), True,
                        FAILED_CHECK),
        "member_unsigned": ("networks/tiny.json", layer(0, "count", 7), False, FAILED_CHECK),
        "manifest_member_escape": ("manifest.json", lambda d: d["files"].update(
            {"networks/../../../x.json": {"sha256": "0" * 64, "bytes": 1}}), False, BAD),
        "manifest_member_missing": ("manifest.json", lambda d: d["files"].update(
            {"networks/gone.json": {"sha256": "0" * 64, "bytes": 1}}), False, BAD),
    }


MULTI_EDITS = _multi_edits()


def multi_bundle_cases() -> list[Case]:
    return [Case(f"verify-export:multi-bundle:{tag}",
                 ("verify-export", "{ws}/multi_bundles/" + tag), expect)
            for tag, (_, _, _, expect) in MULTI_EDITS.items()] + [
        Case("verify-export:multi-bundle:good", ("verify-export", "{multi_bundle}"), OK)]


def write_multi_bundles(ws: Path, bundle: Path) -> None:
    """The damaged copies of ``bundle`` (a bundle of two networks) ``MULTI_EDITS`` names."""
    import hashlib
    import shutil

    for tag, (name, edit, resign, _) in MULTI_EDITS.items():
        folder = ws / "multi_bundles" / tag
        if folder.exists():
            continue
        shutil.copytree(bundle, folder)
        path = folder / name
        doc = json.loads(path.read_bytes())
        res = edit(doc)
        path.write_bytes(res if isinstance(res, bytes) else json.dumps(doc).encode())
        if resign and name != "manifest.json":
            manifest = json.loads((folder / "manifest.json").read_text())
            data = path.read_bytes()
            manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(),
                                       "bytes": len(data)}
            (folder / "manifest.json").write_text(json.dumps(manifest))


#: Cases ``make test`` always runs: the issue's examples (ids containing one of these; one
#: ending in ``$`` is the whole id). Cases that really compile, simulate or draw cost seconds
#: each, so only the issue's own values of those run by default.
ISSUE_EXAMPLES = (
    "space:workload_str", "space:study_int", "space:study.board_0", "space:hardware_str",
    "hw:hw:log_block_in_neg", "hw:hw:log_block_in_big", "hw:hw:log_block_in_i64",
    "hw:hw:log_block_in_list", "space:hardware.LOG_BLOCK_IN_", "hw:hw:not_utf8",
    "space:not_utf8", "hw:hw:deep_list", "hw:hw:deep_obj", "space:deep_", "hw:hw:log_batch_huge",
    "space:huge_int", "simulate:npz:", "bundle:dram_2_62", "bundle:manifest_deep",
    "bundle:program_is_dev_zero", "bundle:config_huge_int", "bundle:manifest_not_utf8",
    "search-run:--seed", "search-run:--timeout", "search-run:--board", "search-run:--db",
    "search-run:--workers", "simulate:--seed:0$", "simulate:--seed:2$", "simulate:--seed:3$",
    "report:name:mathtext$", "report:name:html$",
    "compare:name:formula", "export:name:shell", "studies:name:escape", "show:name:escape",
    "show:name:bidi", "show-unknown:name:long", "space:constraints.max_area_mm2",
    "hw:hw:special", "hw:hw:target_mb", "hw:hw:target_esc", "studies:db:",
    "search:--trials:", "search:--timeout:", "search:--seed:", "space:--jobs:",
    "space-simulate:--timeout:",
    "export:--pick:0", "export:--pick:2", "export:--pick:3",
    "import:onnx:", "search:onnx:", "import:--batch:", "import:--name:0",
    "multi-bundle:member_path", "multi-bundle:member_esc", "multi-bundle:layer_count_frac",
    "multi-bundle:layer_path", "multi-bundle:manifest_member_escape", "multi-bundle:good",
)
#: Of the other cases, ``make test`` runs one in ``SAMPLE_EVERY`` (a stable choice by id);
#: ``make fuzz`` runs them all.
SAMPLE_EVERY = 4


def all_cases() -> list[Case]:
    cases = file_cases() + option_cases() + name_cases() + db_cases() + bundle_cases() \
        + multi_bundle_cases()
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate case ids: {sorted(dup)[:5]}"
    out = []
    for c in cases:
        keep = any(c.id == k[:-1] if k.endswith("$") else k in c.id
                   for k in ISSUE_EXAMPLES) or (
            not c.deep and zlib.crc32(c.id.encode()) % SAMPLE_EVERY == 0)
        out.append(dataclasses.replace(c, deep=not keep))
    return out
