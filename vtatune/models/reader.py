"""Read an ONNX file without its weights: the graph, every tensor's type and shape, nothing more.

An ONNX file is one protobuf ``ModelProto``. ``onnx.load`` reads all of it, weights included
(a 550 MB VGG-16 is 550 MB in memory, twice while it parses). vtatune needs only the graph and
the initializers' shapes, so ``read`` walks the protobuf wire format itself, streaming from the
file: it descends into the messages that can hold tensors (model, graph, node, attribute,
function, sparse tensor) and copies every other field as it is, except that the payload of a
tensor larger than ``KEEP_BYTES`` (``raw_data``, ``float_data``, ...) and every ``doc_string``
are skipped with a seek, never read. The result is a small ``ModelProto`` whose large tensors
carry their ``dims`` and ``data_type`` (all ONNX shape inference reads of a weight) and no
data; small tensors (a Reshape's target shape, quantization scales) keep their values, which
shape inference may need. Weights in external data files are not read either; see
``check_external``.

The fingerprint of a model is the sha256 of this stripped model: any change to the graph, an
attribute, a shape or a small constant changes it; retrained weights of the same shapes do not
(they do not change what VTA runs).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from vtatune.errors import ModelError
from vtatune.escaping import shown
from vtatune.readers import open_regular

#: A tensor message of at most this many bytes is kept whole (its values too); a larger one
#: keeps its type and shape only. Shape inference reads values only of small integer tensors
#: (target shapes, axes, pads), all far below this.
KEEP_BYTES = 4096
#: Protobuf cannot parse a message of 2 GiB or more, so no valid ONNX file is that large (a
#: model that big keeps its weights in external data files).
MAX_PROTOBUF_BYTES = (1 << 31) - 1
#: Deepest nesting of messages followed (a subgraph inside a node inside a graph ... counts
#: each level); protobuf's own parser stops at 100.
MAX_DEPTH = 64
#: Most nodes in a graph (the largest published CNNs have a few thousand).
MAX_NODES = 1_000_000
#: Largest field kept in memory (a name, a shape, an attribute's list): tensor payloads, the
#: only large fields of a model, are skipped, so a larger field is not a model's.
MAX_FIELD_BYTES = 64 << 20

# Wire types.
VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5

# Message kinds and, for each, the fields that hold submessages to descend into and the
# fields dropped (doc strings; a tensor's payload is dropped by ``_tensor``).
MODEL, GRAPH, NODE, ATTRIBUTE, TENSOR, SPARSE, FUNCTION = (
    "model", "graph", "node", "attribute", "tensor", "sparse", "function")
_DESCEND: dict[str, dict[int, str]] = {
    MODEL: {7: GRAPH, 25: FUNCTION},
    GRAPH: {1: NODE, 5: TENSOR, 15: SPARSE},
    NODE: {5: ATTRIBUTE},
    ATTRIBUTE: {5: TENSOR, 6: GRAPH, 10: TENSOR, 11: GRAPH, 22: SPARSE},
    FUNCTION: {7: NODE},
    SPARSE: {1: TENSOR, 2: TENSOR},
}
_DROP: dict[str, frozenset[int]] = {
    MODEL: frozenset({6, 20}),  # doc_string, training_info (training graphs)
    GRAPH: frozenset({10}),
    NODE: frozenset({6}),
    ATTRIBUTE: frozenset({13}),
    FUNCTION: frozenset({8}),
    SPARSE: frozenset(),
    # float_data, int32_data, string_data, int64_data, raw_data, double_data, uint64_data,
    # doc_string
    TENSOR: frozenset({4, 5, 6, 7, 9, 10, 11, 12}),
}
_GRAPH_NODE = 1


@dataclass
class Stripped:
    """What ``read`` found: the stripped model's bytes and what was left out."""

    data: bytes
    file_bytes: int
    skipped_bytes: int = 0
    stripped_tensors: int = 0
    nodes: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


class _Truncated(Exception):
    pass


class _Malformed(Exception):
    pass


class _Wire:
    """Protobuf wire reading from a file, with the current message's end as a bound."""

    def __init__(self, f: IO[bytes], size: int):
        self.f, self.size = f, size
        self.pos = 0

    def read(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise _Truncated(f"the file ends at byte {self.size:,} inside a field")
        self.pos += n
        return data

    def skip(self, n: int) -> None:
        self.f.seek(n, os.SEEK_CUR)
        self.pos += n

    def varint(self, end: int) -> tuple[int, bytes]:
        raw = bytearray()
        value = shift = 0
        while True:
            if self.pos >= end:
                raise _Truncated(f"a number runs past the end of its message at byte {end:,}")
            b = self.read(1)[0]
            raw.append(b)
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value, bytes(raw)
            shift += 7
            if shift >= 70:
                raise _Malformed(f"a number longer than 10 bytes at byte {self.pos:,}")


def read(path: Path) -> Stripped:
    """The model at ``path`` without its weights (see the module docstring); ``ModelError``
    (one line) for a file that is not a readable ONNX model."""

    fd = open_regular(path, "model")
    with os.fdopen(fd, "rb", buffering=1 << 16) as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_PROTOBUF_BYTES:
            raise ModelError(
                f"{shown(str(path))} is {size / 1e9:.1f} GB, more than protobuf's 2 GB limit: "
                "not a valid ONNX file (a model this large keeps its weights in external data "
                "files: onnx.save_model(..., save_as_external_data=True))")
        if size == 0:
            raise ModelError(f"{shown(str(path))} is empty: not an ONNX model")
        out = Stripped(data=b"", file_bytes=size)
        wire = _Wire(f, size)
        try:
            out.data = _message(wire, MODEL, size, 0, out)
        except _Truncated as exc:
            raise ModelError(f"{shown(str(path))} is truncated or not an ONNX model: {exc}"
                             ) from None
        except _Malformed as exc:
            raise ModelError(f"{shown(str(path))} is not an ONNX model (not a protobuf "
                             f"ModelProto: {exc})") from None
    return out


def _varint_bytes(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _message(w: _Wire, kind: str, end: int, depth: int, out: Stripped) -> bytes:
    """The message from ``w.pos`` to ``end``, stripped: its kept fields re-encoded."""
    if depth > MAX_DEPTH:
        raise _Malformed(f"messages nested more than {MAX_DEPTH} deep")
    descend, drop = _DESCEND.get(kind, {}), _DROP[kind]
    parts: list[bytes] = []
    while w.pos < end:
        start = w.pos
        tag, tag_raw = w.varint(end)
        field_no, wire_type = tag >> 3, tag & 7
        if field_no == 0:
            raise _Malformed(f"field number 0 at byte {start:,}")
        if wire_type == VARINT:
            _, raw = w.varint(end)
            if field_no not in drop:
                parts.append(tag_raw + raw)
            continue
        if wire_type in (FIXED64, FIXED32):
            n = 8 if wire_type == FIXED64 else 4
            if w.pos + n > end:
                raise _Truncated(f"a field at byte {start:,} runs past the end of its message")
            raw = w.read(n)
            if field_no not in drop:
                parts.append(tag_raw + raw)
            continue
        if wire_type != LEN:
            raise _Malformed(f"wire type {wire_type} at byte {start:,}")
        length, _ = w.varint(end)
        if w.pos + length > end:
            raise _Truncated(f"a field at byte {start:,} claims {length:,} bytes, past the end "
                             f"of its message at byte {end:,}")
        if field_no in drop:
            w.skip(length)
            out.skipped_bytes += length
            continue
        sub = descend.get(field_no)
        if sub is None and length > MAX_FIELD_BYTES:
            raise _Malformed(f"a field of {length:,} bytes at byte {start:,}, more than any "
                             f"graph field ({MAX_FIELD_BYTES >> 20} MiB; weights are skipped)")
        if sub is None:
            parts.append(tag_raw + _varint_bytes(length) + w.read(length))
            continue
        if kind == GRAPH and field_no == _GRAPH_NODE:
            out.nodes += 1
            if out.nodes > MAX_NODES:
                raise _Malformed(f"more than {MAX_NODES:,} nodes")
        if sub == TENSOR and length <= KEEP_BYTES:
            parts.append(tag_raw + _varint_bytes(length) + w.read(length))
            continue
        if sub == TENSOR:
            out.stripped_tensors += 1
        body = _message(w, sub, w.pos + length, depth + 1, out)
        parts.append(tag_raw + _varint_bytes(len(body)) + body)
    if w.pos != end:
        raise _Malformed(f"a field runs past the end of its message at byte {end:,}")
    return b"".join(parts)


def parse(stripped: Stripped, path: Path) -> Any:
    """The stripped bytes as an ``onnx.ModelProto``; ``ModelError`` if protobuf refuses
    them."""
    import onnx
    from google.protobuf.message import DecodeError

    model = onnx.ModelProto()
    try:
        model.ParseFromString(stripped.data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise ModelError(f"{shown(str(path))} is not an ONNX model ({shown(str(exc), 200)})"
                         ) from None
    return model
