"""Measured records: the readers of a JSON list of measured latencies (the format of
``vta_pynq_measured.json``: each the operator's ``shape``, the schedule's ``knobs`` and the
measured ``ms`` per call, end to end) and of an AutoTVM log as VTA's tuning writes it (TopHub's
format: one JSON record a line, ``#`` lines naming the network of the section that follows;
``read_measured`` keeps the records of the board's VTA designs and counts what it skips)."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from vtatune.errors import UserError
from vtatune.hardware.boards import Board
from vtatune.hardware.config import HwConfig

#: Required keys of a measured record and their types.
RECORD_KEYS = {"shape": dict, "knobs": dict, "ms": (int, float)}
#: The shape keys of each operator a record may be of (the fields of vtatune's workload).
_CONV = ("n", "cin", "h", "w", "cout", "kh", "kw", "stride", "pad")
SHAPE_KEYS: dict[str, tuple[str, ...]] = {
    "conv2d": _CONV, "group_conv2d": (*_CONV, "groups"), "conv2d_transpose": _CONV,
    "dense": ("m", "k", "n")}
#: AutoTVM task names of VTA's templates (``vta/top``) and the operator each is.
TASKS = {"conv2d_packed.vta": "conv2d", "group_conv2d_packed.vta": "group_conv2d",
         "conv2d_transpose_packed.vta": "conv2d_transpose", "dense_packed.vta": "dense"}
#: Short knob names for record labels.
_SHORT = {"tile_b": "b", "tile_h": "h", "tile_w": "w", "tile_ci": "ci", "tile_co": "co",
          "h_nthread": "ht", "oc_nthread": "ot"}
#: VTA's bitstream names (TopHub ``model``): pynq_1x16_i8w8a32_15_15_18_17, the target
#: prefix optional.
_MODEL = re.compile(r"^(?:(\w+?)_)?(\d+)x(\d+)_i(\d+)w(\d+)a(\d+)_(\d+)_(\d+)_(\d+)_(\d+)$")
#: Most bytes of a measured-records file.
MAX_BYTES = 32 << 20
#: Largest value of a shape field of a measured record (a layer's channels, rows, batch; the
#: knob spaces enumerate divisors, so an absurd size would take forever, not fail).
MAX_SHAPE = 1 << 16

@dataclass(frozen=True)
class MeasuredRecord:
    """One measured call: record ``index`` of the file, the layer, its schedule, the design;
    ``session``: the month it was measured (YYYY-MM, one build of the board), ``network``:
    the network it is a layer of (empty when the file does not say)."""

    index: int
    workload: Any  # vtatune.workloads.Workload
    knobs: dict[str, int]
    hw: HwConfig
    ms: float
    label: str
    session: str = ""
    network: str = ""


@dataclass(frozen=True)
class Measured:
    """The records of a measured file and what was skipped: ``skipped`` counts records by
    reason (an AutoTVM log's records of other targets, boards or tasks, with an error code,
    or that vtatune cannot compile)."""

    records: tuple[MeasuredRecord, ...]
    skipped: dict[str, int]
    kind: str  # "json" or "autotvm log"

# ---- reading measured records -------------------------------------------------------------


def read_measured(path: str | Path, default_hw: HwConfig, board: Board,
                  max_bytes: int = MAX_BYTES) -> Measured:
    """The records of a measured file (read as every user file is: a regular file of at most
    ``max_bytes``, UTF-8, nesting and numbers bounded, see ``vtatune.readers``): a JSON list
    of records, or an AutoTVM log (anything else). Raises ``UserError`` listing the
    problems."""
    from vtatune.readers import parse_json, read_text

    text = read_text(path, "measured records", limit=max_bytes)
    if text.lstrip().startswith(("[", "{")) and not _looks_like_log(text):
        raw = parse_json(text, f"measured records {path}")
        return Measured(tuple(records_from_list(raw, str(path), default_hw, board.base)), {},
                        "json")
    return records_from_log(text, str(path), default_hw, board)


def read_records(path: str | Path, default_hw: HwConfig, board: str,
                 max_bytes: int = MAX_BYTES) -> list[MeasuredRecord]:
    """The records of a JSON list of measured records (``read_measured`` for any format)."""
    from vtatune.readers import read_json

    raw = read_json(path, "measured records", limit=max_bytes)
    return records_from_list(raw, str(path), default_hw, board.partition("@")[0])


def _looks_like_log(text: str) -> bool:
    """One JSON object a line with an AutoTVM ``input`` (a JSON list spans several lines or
    starts with '[')."""
    first = text.lstrip().split("\n", 1)[0]
    return first.startswith("{") and '"input"' in first


def records_from_list(raw: Any, source: str, default_hw: HwConfig,
                      board: str) -> list[MeasuredRecord]:
    from vtatune.errors import VtatuneError
    from vtatune.workloads import registry

    if not isinstance(raw, list):
        raise UserError(f"{source}: expected a JSON list of measured records, "
                        f"got {type(raw).__name__}")
    if not raw:
        raise UserError(f"{source}: no measured records")
    problems: list[str] = []
    out: list[MeasuredRecord] = []
    for i, rec in enumerate(raw):
        where = f"record {i}"
        if not isinstance(rec, dict):
            problems.append(f"{where}: expected an object")
            continue
        bad = [k for k, t in RECORD_KEYS.items()
               if not isinstance(rec.get(k), t) or isinstance(rec.get(k), bool)]
        if bad:
            problems.append(f"{where}: missing or wrong-typed {', '.join(bad)}")
            continue
        ms = float(rec["ms"])
        if not math.isfinite(ms) or ms <= 0:
            problems.append(f"{where}: ms must be a positive number, got {rec['ms']!r}")
        if rec.get("board") not in (None, board):
            problems.append(f"{where}: measured on board {rec['board']!r}, not {board!r}")
        shape = rec["shape"]
        op = shape.get("op", "conv2d")
        if op == "conv2d" and shape.get("groups", 1) != 1:
            op = "group_conv2d"
        if op not in SHAPE_KEYS:
            problems.append(f"{where}: operator {op!r} cannot be calibrated on (known: "
                            f"{', '.join(SHAPE_KEYS)})")
            continue
        if op != "group_conv2d" and shape.get("groups", 1) != 1:
            problems.append(f"{where}: {op} with groups {shape.get('groups')!r}")
            continue
        vals = {k: shape.get(k) for k in SHAPE_KEYS[op]}
        wrong = [k for k, v in vals.items() if isinstance(v, bool) or not isinstance(v, int)]
        if wrong:
            problems.append(f"{where}: shape needs integer {', '.join(wrong)}")
            continue
        huge = [k for k, v in vals.items() if v > MAX_SHAPE]
        if huge:
            problems.append(f"{where}: shape {', '.join(huge)} above {MAX_SHAPE:,}")
            continue
        knobs = rec["knobs"]
        if any(isinstance(v, bool) or not isinstance(v, int) for v in knobs.values()):
            problems.append(f"{where}: knobs must be integers")
            continue
        try:
            hw = _record_hw(rec, default_hw)
            wl = registry.get(op)(**vals)
        except VtatuneError as exc:
            problems.append(f"{where}: {exc}")
            continue
        label = (_shape_label(wl) + " | "
                 + " ".join(f"{_SHORT.get(k, k)}{v}" for k, v in sorted(knobs.items())))
        measured = rec.get("measured")
        session = measured[:7] if isinstance(measured, str) else ""  # YYYY-MM
        out.append(MeasuredRecord(i, wl, dict(knobs), hw, ms, label, session,
                                  _network(rec)))
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UserError(f"{source}: " + "; ".join(problems[:3]) + more)
    return out


def _shape_label(wl: Any) -> str:
    if wl.kind == "dense":
        return f"dense {wl.m}x{wl.k}->{wl.n}"
    text = f"{wl.cin}x{wl.h}x{wl.w}->{wl.cout} k{wl.kh}x{wl.kw} s{wl.stride}"
    if wl.kind == "group_conv2d":
        return f"{text} g{wl.groups}"
    return f"{text} transposed" if wl.kind == "conv2d_transpose" else text


def _network(rec: dict[str, Any]) -> str:
    """The network a record is a layer of: its ``network``, else the section named after '#'
    in its ``source`` (``tophub/vta_v0.10.log # Resnet-18 - pynq_1x16_...`` -> Resnet-18)."""
    if isinstance(rec.get("network"), str):
        return rec["network"].strip()
    source = rec.get("source")
    if isinstance(source, str) and "#" in source:
        return _section_network(source.rsplit("#", 1)[1])
    return ""


def _section_network(section: str) -> str:
    """``Resnet-18`` of a TopHub section line ``Resnet-18 - pynq_1x16_i8w8a32_15_15_18_17``."""
    return section.strip().split(" - ")[0].strip()


def _record_hw(rec: dict[str, Any], default_hw: HwConfig) -> HwConfig:
    """The design a record was measured on: a ``vta_config.json`` object under ``hw``, a
    VTA bitstream name under ``model`` (e.g. pynq_1x16_i8w8a32_15_15_18_17), else the
    default."""
    from vtatune.hardware import config

    if isinstance(rec.get("hw"), dict):
        return config.from_dict(rec["hw"], source="record hw")
    m = _MODEL.match(str(rec.get("model", "")))
    if m:
        b, blk, i, w, a, uop, inp, wgt, acc = (int(v) for v in m.groups()[1:])
        logs = [_log2(v) for v in (b, blk, i, w, a)]
        if None not in logs:
            return config.validate(replace(
                default_hw, log_batch=logs[0], log_block_in=logs[1], log_block_out=logs[1],
                log_inp_width=logs[2], log_wgt_width=logs[3], log_acc_width=logs[4],
                log_uop_buff_size=uop, log_inp_buff_size=inp, log_wgt_buff_size=wgt,
                log_acc_buff_size=acc, name=str(rec["model"])), f"model {rec['model']}")
    return default_hw


def _log2(v: int) -> int | None:
    return v.bit_length() - 1 if v > 0 and v & (v - 1) == 0 else None


# ---- AutoTVM logs -------------------------------------------------------------------------


class _Skip(Exception):
    """A log record that is not one of the board's VTA measurements (the reason counted)."""


def records_from_log(text: str, source: str, default_hw: HwConfig, board: Board) -> Measured:
    """The records of an AutoTVM log (TopHub's format) measured on ``board``'s VTA designs:
    target ``-device=vta`` with ``-model=<board's VTA target>_<configuration>``, one of
    ``TASKS``, error code 0. The others are skipped and counted by reason; a line that is not
    an AutoTVM record is an error naming it."""
    from vtatune.readers import parse_json

    skipped: Counter[str] = Counter()
    raw: list[dict[str, Any]] = []
    section = ""
    name = Path(source).name
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            section = s.lstrip("#").strip()
            continue
        obj = parse_json(s, f"{source}, line {lineno}")
        try:
            raw.append(_log_record(obj, board, f"line {lineno}", section, name))
        except _Skip as why:
            skipped[str(why)] += 1
    if not raw:
        what = "; ".join(f"{n} {k}" for k, n in skipped.items()) or "no records"
        raise UserError(f"{source}: no measurement of {board.base}'s VTA designs "
                        f"(target -device=vta -model={board.vta_target or board.base}_...) "
                        f"among its records ({what})")
    records = records_from_list(raw, source, default_hw, board.base)
    return Measured(tuple(records), dict(skipped), "autotvm log")


def _log_record(obj: Any, board: Board, where: str, section: str,
                name: str) -> dict[str, Any]:
    """A log line as a JSON record (``records_from_list``'s format); ``_Skip`` with the
    reason for a record of another target, board, task or with an error code."""
    try:
        target, task, args = obj["input"][0], obj["input"][1], obj["input"][2]
        result = obj["result"]
        costs, code = result[0], result[1]
        entity = obj["config"]["entity"]
        if not (isinstance(target, str) and isinstance(task, str) and isinstance(args, list)
                and isinstance(costs, list) and isinstance(entity, list)):
            raise TypeError
    except (KeyError, IndexError, TypeError):
        raise UserError(f"{where}: not an AutoTVM record (input [target, task, args, ...], "
                        "config.entity, result [costs, error code, ...])") from None
    opts = target.split()
    if "-device=vta" not in opts:
        raise _Skip("of other targets")
    model = next((o.partition("=")[2] for o in opts if o.startswith("-model=")), "")
    m = _MODEL.match(model)
    if m is None:
        raise _Skip("without a VTA configuration in -model")
    if (m.group(1) or "") != (board.vta_target or board.base):
        raise _Skip("of other boards")
    if task not in TASKS:
        raise _Skip("of other tasks")
    if code != 0:
        raise _Skip("with an error code")
    values = [c for c in costs if isinstance(c, int | float) and not isinstance(c, bool)]
    if not values or len(values) != len(costs):
        raise UserError(f"{where}: result costs must be numbers (seconds)")
    op = TASKS[task]
    try:
        shape = _task_shape(op, args)
    except (IndexError, TypeError, ValueError) as exc:
        raise _Skip(f"whose {op} arguments vtatune cannot express ({exc})") from None
    knobs = {}
    for ent in entity:
        if not (isinstance(ent, list) and len(ent) == 3 and isinstance(ent[0], str)):
            raise UserError(f"{where}: config entity {ent!r} is not [name, kind, value]")
        knob, kind, value = ent
        if kind == "sp" and isinstance(value, list) and value:
            knobs[knob] = value[-1]
        elif kind == "ot":
            knobs[knob] = value
        else:
            raise _Skip(f"with a knob of kind {kind!r}")
    stamp = result[3] if len(result) > 3 and isinstance(result[3], int | float) else None
    rec = {"shape": shape, "knobs": knobs, "ms": float(np.mean(values)) * 1e3, "model": model,
           "network": _section_network(section),
           "source": f"{name} # {section}" if section else name}
    if stamp is not None and 0 < stamp < 2**40:
        rec["measured"] = datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d")
    return rec


def _task_shape(op: str, args: list[Any]) -> dict[str, Any]:
    """The plain shape of a VTA task from its packed arguments (``vta/top``'s templates):
    data (N/B, C/BI, H, W, B, BI), kernel (CO/BO, CI/BI, KH, KW, BO, BI), strides, padding,
    dilation ...; dense: data (M/B, K/BI, B, BI), weight (N/BO, K/BI, BO, BI)."""
    data, kernel = args[0][1], args[1][1]
    if op == "dense":
        if len(data) != 4 or len(kernel) != 4:
            raise ValueError("dense data and weight must be packed 4-D")
        return {"op": "dense", "m": data[0] * data[2], "k": data[1] * data[3],
                "n": kernel[0] * kernel[2]}
    if len(data) != 6 or len(kernel) != 6:
        raise ValueError("data and kernel must be packed 6-D")
    strides, padding = args[2], args[3]
    if len(set(strides)) != 1:
        raise ValueError(f"strides {strides}")
    if len(set(padding)) != 1:
        raise ValueError(f"padding {padding}")
    if op in ("conv2d", "group_conv2d") and set(args[4]) != {1}:
        raise ValueError(f"dilation {args[4]}")
    shape = {"op": op, "n": data[0] * data[4], "cin": data[1] * data[5], "h": data[2],
             "w": data[3], "cout": kernel[0] * kernel[4], "kh": kernel[2], "kw": kernel[3],
             "stride": strides[0], "pad": padding[0]}
    if op == "group_conv2d":
        shape["groups"] = args[5]
    elif op == "conv2d_transpose" and len(args) > 5 and set(args[5] or [0]) != {0}:
        raise ValueError(f"output padding {args[5]}")
    return shape

def display_path(path: str) -> str:
    """``path`` relative to the project when it lies inside it, else its file name (a
    committed timing file must not carry a path of the machine it was fitted on)."""
    from vtatune.paths import project_root

    try:
        return str(Path(path).resolve().relative_to(project_root().resolve()))
    except ValueError:
        return Path(path).name
