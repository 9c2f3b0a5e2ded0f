"""Fit a board's timing constants to latencies measured on that board.

Input: measured records, either a JSON list in the format of ``vta_pynq_measured.json`` (each
the operator's ``shape``, the schedule's ``knobs`` and the measured ``ms`` per call, end to
end) or an AutoTVM log as VTA's tuning writes it (TopHub's format: one JSON record a line, ``#``
lines naming the network of the section that follows; ``read_measured`` keeps the records of
the board's VTA designs and counts what it skips). Every record's schedule is compiled and its
program built with the real pipeline; the constants in ``FIT_KEYS`` (the accelerator's DMA,
per-instruction and pipeline-refill costs and the host's per-call and per-instruction costs)
are then fitted; the II and pad constants stay as VTA's source fixes them.

The fit: least squares on log(simulated / measured) over the log of the constants, inside
physical bounds (``BOUNDS``), regularized towards the board file's ``prior`` (source-derived
estimates), with a Cauchy loss (scipy's ``least_squares``, trust region reflective), then
reweighted least trimmed squares: the constants that best explain half the records (plus one)
are searched from the prior, from the board's current constants (as they are and scaled to
the records' median) and from fits to random halves, preferring the constants that leave the
fewest records unexplained; records far from them are left out of the final fit and listed
with the reason. A record the current constants explain within the noise (``NOISE_FLOOR``) is
never left out: constants that explain it exist. Simulated time is piecewise linear in the
accelerator constants; the Jacobian is exact (the cost rows summed along each program's
critical path), so a fit needs one simulation per record per step.

Reported, over every record given (left-out ones included): per-record error (simulated /
measured - 1), median and worst absolute error, leave-one-out median (each record predicted
by constants fitted without it), leave-one-network-out median (each network's records
predicted by constants fitted without that network: the records' ``network``, an AutoTVM
log's section) and the rank agreement of record pairs (fraction ordered as on the board),
also for pairs of schedules of the same layer when the file has them.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from vtatune.errors import UserError
from vtatune.hardware.boards import Board
from vtatune.hardware.config import HwConfig
from vtatune.simulator.timing import (
    ACCEL_KEYS,
    FIT_KEYS,
    MODEL_VERSION,
    CostRows,
    TimingParams,
    cost_rows,
    end_and_gradient,
    end_cycles,
)

#: Physical bounds of the fitted constants (see SOURCES.md#F1): a DMA row costs at least the
#: AXI round trip of a handful of cycles; a beat at least one cycle (the port's width); every
#: HLS module invocation and non-pipelined loop iteration at least one cycle; the ARM at
#: least a few microseconds per call (register writes, polling) and 50 ns per instruction.
BOUNDS: dict[str, tuple[float, float]] = {
    "dma_row_cycles": (4.0, 1000.0),
    "dma_beat_cycles": (1.0, 16.0),
    "insn_cycles": (1.0, 500.0),
    "gemm_refill_cycles": (1.0, 200.0),
    "alu_refill_cycles": (1.0, 200.0),
    "host_call_us": (2.0, 20000.0),
    "host_insn_us": (0.05, 100.0),
}
#: Scale of the Cauchy loss on log ratios: residuals beyond ~5% count less and less.
LOSS_SCALE = 0.05
#: Spread of the priors (a factor): a constant 3x away from its source-derived prior costs as
#: much as one record simulated LOSS_SCALE off. Keeps constants the records cannot pin down
#: (e.g. the DMA latency when every record is compute-bound) at their physical estimate.
PRIOR_FACTOR = 3.0
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


@dataclass(frozen=True)
class RecordFit:
    """A record's measured and simulated time (ms) and error (simulated / measured - 1);
    ``loo_error`` with constants fitted without it, ``lono_error`` without its network's
    records; ``trimmed``: left out of the final fit, ``reason`` says why; ``protected``: the
    current constants explain it within the noise, so it could not be left out."""

    index: int
    label: str
    measured_ms: float
    simulated_ms: float
    accelerator_ms: float
    host_ms: float
    error: float
    loo_error: float | None = None
    trimmed: bool = False
    session: str = ""
    network: str = ""
    lono_error: float | None = None
    reason: str = ""
    protected: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "label": self.label, "measured_ms": self.measured_ms,
                "simulated_ms": self.simulated_ms, "accelerator_ms": self.accelerator_ms,
                "host_ms": self.host_ms, "error": self.error, "loo_error": self.loo_error,
                "lono_error": self.lono_error, "trimmed": self.trimmed, "reason": self.reason,
                "protected": self.protected, "session": self.session,
                "network": self.network}  # fmt: skip


@dataclass(frozen=True)
class PairAgreement:
    """Rank agreement of record pairs: ``agree`` of ``pairs`` ordered as measured; ``worst``:
    the pair (i, j) whose simulated order is most wrong, with measured and simulated ratios."""

    pairs: int
    agree: int
    worst: tuple[int, int, float, float] | None

    @property
    def fraction(self) -> float | None:
        return self.agree / self.pairs if self.pairs else None

    def as_dict(self) -> dict[str, Any]:
        w = self.worst
        return {"pairs": self.pairs, "agree": self.agree, "fraction": self.fraction,
                "worst": None if w is None else {"records": [w[0], w[1]],
                                                 "measured_ratio": w[2],
                                                 "simulated_ratio": w[3]}}  # fmt: skip


@dataclass(frozen=True)
class Calibration:
    """The fitted constants and how well they explain the records (every figure over every
    record, the left-out ones included)."""

    board: str
    params: TimingParams
    records: tuple[RecordFit, ...]
    solver: str
    pairs_all: PairAgreement
    pairs_same_layer: PairAgreement
    source: str
    fit_keys: tuple[str, ...] = FIT_KEYS
    notes: tuple[str, ...] = field(default=())
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def median_error(self) -> float:
        return float(np.median([abs(r.error) for r in self.records]))

    @property
    def worst_error(self) -> float:
        return float(max(abs(r.error) for r in self.records))

    @property
    def loo_median_error(self) -> float | None:
        loo = [abs(r.loo_error) for r in self.records if r.loo_error is not None]
        return float(np.median(loo)) if loo else None

    @property
    def lono_median_error(self) -> float | None:
        lono = [abs(r.lono_error) for r in self.records if r.lono_error is not None]
        return float(np.median(lono)) if lono else None

    def by_network(self) -> dict[str, float]:
        """Median |error| of each network's records (networks in file order)."""
        nets: dict[str, list[float]] = {}
        for r in self.records:
            nets.setdefault(r.network or "(none)", []).append(abs(r.error))
        return {k: float(np.median(v)) for k, v in nets.items()}

    def as_dict(self) -> dict[str, Any]:
        return {"board": self.board, "source": self.source, "solver": self.solver,
                "model_version": MODEL_VERSION,
                "params": {k: getattr(self.params, k) for k in self.fit_keys},
                "median_error": self.median_error, "worst_error": self.worst_error,
                "loo_median_error": self.loo_median_error,
                "lono_median_error": self.lono_median_error,
                "by_network": self.by_network(),
                "left_out": [r.index for r in self.records if r.trimmed],
                "rank_agreement": self.pairs_all.as_dict(),
                "rank_agreement_same_layer": self.pairs_same_layer.as_dict(),
                "skipped": dict(self.skipped),
                "records": [r.as_dict() for r in self.records],
                "notes": list(self.notes)}  # fmt: skip


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


# ---- compiling ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Prepared:
    """A record's program as cost rows, ready to be timed with any constants."""

    record: MeasuredRecord
    rows: CostRows


def prepare(records: Sequence[MeasuredRecord], board: Board, prior: TimingParams,
            progress: Callable[[int, int], None] | None = None,
            skip_failing: bool = False) -> list[Prepared]:
    """Compile every record's schedule and build its program; ``UserError`` names the first
    record that does not compile (a calibration needs every record), unless
    ``skip_failing``: then such records are dropped (``prepare_counting`` counts them)."""
    return prepare_counting(records, board, prior, progress, skip_failing)[0]


def prepare_counting(records: Sequence[MeasuredRecord], board: Board, prior: TimingParams,
                     progress: Callable[[int, int], None] | None = None,
                     skip_failing: bool = False) -> tuple[list[Prepared], dict[str, int]]:
    """``prepare``, with the records it dropped counted by reason."""
    from vtatune import schedules
    from vtatune.compiler import compile_candidate
    from vtatune.errors import VtatuneError
    from vtatune.runtime import build_program

    out = []
    dropped: Counter[str] = Counter()
    for n, rec in enumerate(records):
        if progress:
            progress(n, len(records))
        try:
            space = schedules.knob_space(rec.workload, rec.hw)
            knobs = space.check({**schedules.suggest(rec.workload, rec.hw), **rec.knobs})
        except VtatuneError as exc:
            if skip_failing:
                dropped[f"whose schedule vtatune cannot express ({rec.workload.kind})"] += 1
                continue
            raise UserError(f"record {rec.index}: {exc}") from None
        res = compile_candidate(rec.workload, rec.hw, knobs)
        if not res.ok:
            if skip_failing:
                dropped[f"whose schedule is {res.status} in vtatune"] += 1
                continue
            raise UserError(f"record {rec.index} ({rec.label}): schedule is {res.status}: "
                            f"{res.reason}")
        program = build_program(res, rec.workload, rec.hw)
        out.append(Prepared(rec, cost_rows(program, board, prior)))
    if progress:
        progress(len(records), len(records))
    return out, dict(dropped)


def only_session(items: Sequence[Prepared], session: str) -> list[Prepared]:
    """The items measured in ``session`` (YYYY-MM: one build of the board); ``UserError``
    naming the sessions there are when none is."""
    out = [it for it in items if it.record.session == session]
    if not out:
        known = sorted({it.record.session or "(undated)" for it in items})
        raise UserError(f"--build {session}: no record was measured then (the records' "
                        f"months: {', '.join(known)})")
    return out


# ---- the fit ------------------------------------------------------------------------------

_LO = np.log([BOUNDS[k][0] for k in FIT_KEYS])
_HI = np.log([BOUNDS[k][1] for k in FIT_KEYS])


def _vector(p: TimingParams) -> np.ndarray:
    return np.array([getattr(p, k) for k in FIT_KEYS], dtype=float)


def _with(prior: TimingParams, theta: np.ndarray) -> TimingParams:
    return replace(prior, **{k: float(v) for k, v in zip(FIT_KEYS, theta, strict=True)})


def _predict(items: Sequence[Prepared], prior: TimingParams, theta: np.ndarray,
             clock_hz: float,
             jac: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Accelerator and host seconds of each item with constants ``theta`` (FIT_KEYS order);
    with ``jac``, d(total seconds)/d(theta)."""
    acc = np.empty(len(items))
    host = np.empty(len(items))
    J = np.zeros((len(items), len(FIT_KEYS))) if jac else None
    p = _with(prior, theta)
    for i, it in enumerate(items):
        if J is not None:
            end, g = end_and_gradient(it.rows, p)
            for j in range(len(ACCEL_KEYS)):
                J[i, j] = g[j] / clock_hz
            J[i, FIT_KEYS.index("host_call_us")] = 1e-6
            J[i, FIT_KEYS.index("host_insn_us")] = 1e-6 * it.rows.n
        else:
            end = end_cycles(it.rows, p)
        acc[i] = math.ceil(end) / clock_hz
        host[i] = (p.host_call_us + p.host_insn_us * it.rows.n) * 1e-6
    return acc, host, J


class _Problem:
    """log(simulated / measured) of a set of records, and the priors, as a function of
    log(constants)."""

    def __init__(self, items: Sequence[Prepared], prior: TimingParams,
                 clock_hz: float) -> None:
        self.items = list(items)
        self.prior = prior
        self.clock_hz = clock_hz
        self.meas = np.array([it.record.ms * 1e-3 for it in self.items])
        self.phi_prior = np.log(_vector(prior))
        self._w_prior = LOSS_SCALE / math.log(PRIOR_FACTOR)
        self._cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def _eval(self, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = phi.tobytes()
        hit = self._cache.get(key)
        if hit is None:
            theta = np.exp(phi)
            acc, host, J = _predict(self.items, self.prior, theta, self.clock_hz, True)
            total = acc + host
            assert J is not None
            # the data residuals, then one prior residual per constant; d log(total) / d phi_j
            # = (d total / d theta_j) * theta_j / total
            r = np.concatenate([np.log(total / self.meas),
                                self._w_prior * (phi - self.phi_prior)])
            jr = np.vstack([J * theta[None, :] / total[:, None],
                            self._w_prior * np.eye(len(phi))])
            hit = (r, jr)
            self._cache = {key: hit}
        return hit

    def record_residuals(self, phi: np.ndarray) -> np.ndarray:
        return self._eval(phi)[0][:len(self.items)]

    def residuals(self, phi: np.ndarray) -> np.ndarray:
        return self._eval(phi)[0]

    def jacobian(self, phi: np.ndarray) -> np.ndarray:
        return self._eval(phi)[1]


def _solve(problem: _Problem, phi0: np.ndarray) -> np.ndarray:
    from scipy.optimize import least_squares

    res = least_squares(problem.residuals, np.clip(phi0, _LO, _HI), jac=problem.jacobian,
                        bounds=(_LO, _HI), loss="cauchy", f_scale=LOSS_SCALE, x_scale=1.0,
                        max_nfev=200)
    return np.asarray(res.x)


SOLVER = "scipy.optimize.least_squares (trf, Cauchy loss) + trimmed refits"
#: Random half-sized subsets the trimmed fit starts from (besides the prior and the current
#: constants), and the seed.
STARTS = 8
SEED = 0
#: Records further than this many robust sigmas from the trimmed fit are left out; sigma is
#: at least NOISE_FLOOR: measured records are the best of noisy runs and drift between
#: sessions (the same C11 schedule: 7.35 and 8.35 ms a month apart), so only a record more
#: than ~30% off the model that explains the majority counts as inconsistent. A record the
#: current constants time within NOISE_FLOOR is never left out.
CUTOFF_SIGMAS = 3.0
NOISE_FLOOR = 0.1


@dataclass(frozen=True)
class _Trim:
    """The trimmed fit: log-constants, the positions left out, and what decided it: the
    residuals and robust sigma of the fit to the majority, the protected positions."""

    phi: np.ndarray
    out: list[int]
    residuals: np.ndarray
    sigma: float
    protected: frozenset[int]


def _fit(items: Sequence[Prepared], prior: TimingParams, clock_hz: float,
         starts_from: Sequence[np.ndarray], protected: frozenset[int] = frozenset(),
         starts: int = STARTS) -> _Trim:
    """Reweighted least trimmed squares: find the constants that explain the best
    h = max(floor(n / 2) + 1, len(FIT_KEYS) + 1) records, the ``protected`` ones always among
    them (concentration steps from each of ``starts_from`` and from fits to random half-sized
    subsets; of the results, the one leaving the fewest records beyond the cutoff, then the
    smallest trimmed cost), then refit on every record within CUTOFF_SIGMAS robust sigmas of
    them and every protected one."""
    n = len(items)
    full = _Problem(items, prior, clock_hz)

    def solve(subset: Sequence[int], start: np.ndarray) -> np.ndarray:
        return _solve(_Problem([items[i] for i in subset], prior, clock_hz), start)

    h = max(n // 2 + 1, len(FIT_KEYS) + 1)
    if n <= h + 1:  # too few records to trim any: a plain robust fit
        best = min((_solve(full, s) for s in starts_from),
                   key=lambda phi: _cauchy_cost(full.residuals(phi)))
        return _Trim(best, [], full.record_residuals(best), NOISE_FLOOR, protected)

    def chosen(r: np.ndarray) -> list[int]:
        rest = [int(i) for i in np.argsort(np.abs(r)) if int(i) not in protected]
        return sorted([*protected, *rest[:max(h - len(protected), 0)]])

    def cost(phi: np.ndarray) -> tuple[int, float]:
        r = full.record_residuals(phi)
        sub = chosen(r)
        sigma = _sigma(r[sub])
        beyond = sum(1 for i in range(n) if i not in protected
                     and abs(r[i]) > CUTOFF_SIGMAS * sigma)
        return beyond, float((r[sub] ** 2).sum())

    def csteps(phi: np.ndarray, rounds: int) -> tuple[tuple[int, float], np.ndarray]:
        best = math.inf
        for _ in range(rounds):
            r = full.record_residuals(phi)
            sub = chosen(r)
            new = float((r[sub] ** 2).sum())
            if new >= best - 1e-12:
                break
            best = new
            phi = solve(sub, phi)
        return cost(phi), phi

    rng = np.random.default_rng(SEED)
    candidates = [csteps(_solve(full, s), 2) for s in starts_from]
    for _ in range(starts):
        subset = sorted(rng.choice(n, size=h, replace=False).tolist())
        candidates.append(csteps(solve(subset, starts_from[0]), 2))
    _, phi = csteps(min(candidates, key=lambda c: c[0])[1], 10)
    r = full.record_residuals(phi)
    sigma = _sigma(r[chosen(r)])
    out = [i for i in range(n) if i not in protected and abs(r[i]) > CUTOFF_SIGMAS * sigma]
    keep = [i for i in range(n) if i not in out]
    return _Trim(solve(keep, phi), out, r, sigma, protected)


def _sigma(r: np.ndarray) -> float:
    """Robust sigma of residuals (1.4826 x the median absolute), at least NOISE_FLOOR."""
    return max(1.4826 * float(np.median(np.abs(r))), NOISE_FLOOR)


def _cauchy_cost(r: np.ndarray) -> float:
    return float(np.log1p((r / LOSS_SCALE) ** 2).sum())


def _starts(items: Sequence[Prepared], prior: TimingParams, current: TimingParams | None,
            clock_hz: float) -> list[np.ndarray]:
    """Where the fit starts: the prior; the current constants as they are and scaled (every
    time constant by one factor) to the records' median ratio, so a uniformly slower or
    faster board starts from the current explanation of its records."""
    out = [np.clip(np.log(_vector(prior)), _LO, _HI)]
    if current is not None:
        phi = np.clip(np.log(_vector(current)), _LO, _HI)
        r = _Problem(items, prior, clock_hz).record_residuals(phi)
        out += [phi, np.clip(phi - float(np.median(r)), _LO, _HI)]
    return out


def calibrate(records: Sequence[MeasuredRecord], board: Board, prior: TimingParams,
              source: str, loo: bool = True,
              progress: Callable[[str, int, int], None] | None = None,
              current: TimingParams | None = None, lono: bool = True) -> Calibration:
    """Fit ``FIT_KEYS`` of ``board`` to ``records``; see the module docstring."""
    items = prepare(records, board, prior,
                    (lambda d, t: progress("compile", d, t)) if progress else None)
    return calibrate_prepared(items, board, prior, source, loo, progress, current, lono)


def calibrate_prepared(items: Sequence[Prepared], board: Board, prior: TimingParams,
                       source: str, loo: bool = True,
                       progress: Callable[[str, int, int], None] | None = None,
                       current: TimingParams | None = None, lono: bool = True,
                       skipped: dict[str, int] | None = None) -> Calibration:
    """``calibrate`` on records already compiled (``prepare``). ``current``: the board's
    constants before this fit (the records they time within NOISE_FLOOR are never left out);
    ``lono``: also the leave-one-network-out errors (when the records are of two networks or
    more)."""
    items = list(items)
    if not items:
        raise UserError(f"{source}: no records to fit")
    clock = board.clock_hz
    protected = frozenset()
    if current is not None:
        cur = errors_with(items, board, current)
        protected = frozenset(i for i, e in enumerate(cur)
                              if abs(math.log1p(e)) <= NOISE_FLOOR)
    starts = _starts(items, prior, current, clock)
    trim = _fit(items, prior, clock, starts, protected)
    phi, out = trim.phi, trim.out
    theta = np.exp(phi)
    acc, host, _ = _predict(items, prior, theta, clock)
    n = len(items)
    loo_err: list[float | None] = [None] * n
    if loo and n > len(FIT_KEYS) + 1:
        # Each record predicted by the constants refitted without it on the records the final
        # fit used (the trimming is not redone); a left-out record is predicted as it is.
        kept = [i for i in range(n) if i not in out]
        for i in range(n):
            if i in out:
                phi_i = phi
            else:
                phi_i = _solve(_Problem([items[j] for j in kept if j != i], prior, clock), phi)
            a, h, _ = _predict([items[i]], prior, np.exp(phi_i), clock)
            loo_err[i] = float((a[0] + h[0]) / (items[i].record.ms * 1e-3) - 1)
            if progress:
                progress("leave-one-out", i + 1, n)
    lono_err = _leave_networks_out(items, prior, clock, starts, protected, progress) \
        if lono else [None] * n
    cur_err = errors_with(items, board, current) if current is not None else None
    reasons = {i: _reason(trim, i, None if cur_err is None else float(cur_err[i]))
               for i in out}
    fits = tuple(RecordFit(it.record.index, it.record.label, it.record.ms,
                           float((a + h) * 1e3), float(a * 1e3), float(h * 1e3),
                           float((a + h) / (it.record.ms * 1e-3) - 1), loo_err[i], i in out,
                           it.record.session, it.record.network, lono_err[i],
                           reasons.get(i, ""), bool(i in protected and abs(trim.residuals[i])
                                                    > CUTOFF_SIGMAS * trim.sigma))
                 for i, (it, a, h) in enumerate(zip(items, acc, host, strict=True)))
    sim = np.array([f.simulated_ms for f in fits])
    meas = np.array([f.measured_ms for f in fits])
    layers = [it.record.workload.signature + "|" + it.record.hw.key for it in items]
    notes = []
    if out:
        notes.append(f"{len(out)} of {n} records are inconsistent with the constants that "
                     "explain the others and were left out of the final fit (their errors "
                     "count in every figure): records "
                     + ", ".join(str(items[i].record.index) for i in out))
    kept_by_current = [f.index for f in fits if f.protected]
    if kept_by_current:
        notes.append("kept although far from the fit to the majority, because the current "
                     "constants time them within the noise "
                     f"({NOISE_FLOOR:.0%}): records " + ", ".join(map(str, kept_by_current)))
    params = _with(prior, theta)
    params = replace(params, calibration=_calibration_note(fits, source))
    return Calibration(board.name, params, fits, SOLVER, rank_agreement(meas, sim),
                       rank_agreement(meas, sim, layers), source, FIT_KEYS, tuple(notes),
                       dict(skipped or {}))


def _reason(trim: _Trim, i: int, current_error: float | None) -> str:
    """Why record ``i`` was left out, in numbers."""
    text = (f"{math.expm1(trim.residuals[i]):+.1%} with the constants that explain the "
            f"majority, beyond {CUTOFF_SIGMAS:g} robust sigmas (log ratio "
            f"{CUTOFF_SIGMAS * trim.sigma:.2f})")
    if current_error is not None:
        text += (f"; the current constants time it {current_error:+.1%}, outside the noise "
                 f"({NOISE_FLOOR:.0%})")
    return text


def _leave_networks_out(items: Sequence[Prepared], prior: TimingParams, clock: float,
                        starts: Sequence[np.ndarray], protected: frozenset[int],
                        progress: Callable[[str, int, int], None] | None
                        ) -> list[float | None]:
    """Each record's error when its network's records are left out of the whole fit (the
    trimmed fit redone on the other networks' records); None for records of no network or
    when there is one network only."""
    nets = list(dict.fromkeys(it.record.network for it in items if it.record.network))
    out: list[float | None] = [None] * len(items)
    if len(nets) < 2:
        return out
    for k, net in enumerate(nets):
        rest = [i for i, it in enumerate(items) if it.record.network != net]
        mine = [i for i, it in enumerate(items) if it.record.network == net]
        keep = frozenset(rest.index(i) for i in protected if i in rest)
        trim = _fit([items[i] for i in rest], prior, clock, starts, keep)
        a, h, _ = _predict([items[i] for i in mine], prior, np.exp(trim.phi), clock)
        for j, i in enumerate(mine):
            out[i] = float((a[j] + h[j]) / (items[i].record.ms * 1e-3) - 1)
        if progress:
            progress("leave-one-network-out", k + 1, len(nets))
    return out


def errors_with(items: Sequence[Prepared], board: Board, params: TimingParams) -> np.ndarray:
    """simulated / measured - 1 of each item with ``params`` (what ``vtatune simulate``
    gives with them)."""
    acc, host, _ = _predict(items, params, _vector(params), board.clock_hz)
    return (acc + host) / np.array([it.record.ms * 1e-3 for it in items]) - 1


def _calibration_note(fits: Sequence[RecordFit], source: str) -> dict[str, Any]:
    return {"records": _display_path(source), "n_records": len(fits),
            "fitted": [f.index for f in fits if not f.trimmed],
            "left_out": [f.index for f in fits if f.trimmed],
            "solver": SOLVER, "model_version": MODEL_VERSION}


def rank_agreement(measured: np.ndarray, simulated: np.ndarray,
                   groups: Sequence[str] | None = None) -> PairAgreement:
    """How many record pairs (of the same group, if given) the simulation orders as the
    board did; the worst pair is the one whose simulated ratio is furthest on the wrong side."""
    n = len(measured)
    pairs = agree = 0
    worst: tuple[int, int, float, float] | None = None
    worst_gap = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            if groups is not None and groups[i] != groups[j]:
                continue
            pairs += 1
            mr = measured[i] / measured[j]
            sr = simulated[i] / simulated[j]
            if (mr > 1) == (sr > 1) or mr == 1:
                agree += 1
            gap = abs(math.log(mr)) if (mr > 1) != (sr > 1) else 0.0
            gap += 0 if (mr > 1) == (sr > 1) else abs(math.log(sr))
            if worst is None or gap > worst_gap:
                worst, worst_gap = (i, j, float(mr), float(sr)), gap
    return PairAgreement(pairs, agree, worst)


def timing_profile(cal: Calibration, base: dict[str, Any], build: str | None = None,
                   description: str | None = None) -> dict[str, Any]:
    """A flat timing file (one profile) for ``cal``: ``base``'s structure and sources (the
    profile the fit started from), with the fitted constants and a ``calibration`` block
    holding the figures over every record, the records left out and why."""
    out = {k: v for k, v in base.items() if k not in ("profiles", "default_profile")}
    params = dict(out.get("params", {}))
    sources = dict(out.get("sources", {}))
    for k in cal.fit_keys:
        params[k] = round(float(getattr(cal.params, k)), 4)
        head = sources.get(k, "").split(" | fitted: ")[0]
        sources[k] = (f"{head} | fitted: vtatune calibrate on {_display_path(cal.source)}"
                      + (f" (build {build})" if build else "") + "; figures in 'calibration'")
    out["params"] = params
    out["sources"] = sources
    if description:
        out["description"] = description
    out["calibration"] = calibration_block(cal, build)
    return out


def calibration_block(cal: Calibration, build: str | None = None) -> dict[str, Any]:
    """What a timing profile records of its fit: the records, those left out and why, and
    the figures over every record."""
    def r4(v: float | None) -> float | None:
        return None if v is None else round(v, 4)

    block = dict(cal.params.calibration)
    if build:
        block["build"] = build
    block.update(
        left_out_reasons={str(r.index): r.reason for r in cal.records if r.trimmed},
        kept_by_current=[r.index for r in cal.records if r.protected],
        median_error=r4(cal.median_error), worst_error=r4(cal.worst_error),
        loo_median_error=r4(cal.loo_median_error),
        lono_median_error=r4(cal.lono_median_error),
        by_network={k: r4(v) for k, v in cal.by_network().items()},
    )
    if cal.skipped:
        block["skipped"] = dict(cal.skipped)
    return block


def put_profile(raw: dict[str, Any], name: str, profile: dict[str, Any]) -> dict[str, Any]:
    """A multi-profile timing file ``raw`` with its profile ``name`` set to the flat timing
    file ``profile`` (only what differs from the file's shared blocks is kept there)."""
    out = dict(raw)
    profs = dict(out.get("profiles", {}))
    shared_sources = out.get("sources", {})
    body: dict[str, Any] = {}
    if profile.get("description") and profile["description"] != out.get("description"):
        body["description"] = profile["description"]
    body["params"] = profile["params"]
    body["sources"] = {k: v for k, v in profile.get("sources", {}).items()
                       if shared_sources.get(k) != v}
    if profile.get("prior") not in (None, out.get("prior")):
        body["prior"] = profile["prior"]
    body["calibration"] = profile.get("calibration", {})
    profs[name] = body
    out["profiles"] = profs
    return out


def _display_path(path: str) -> str:
    """``path`` relative to the project when it lies inside it, else its file name (a
    committed timing file must not carry a path of the machine it was fitted on)."""
    from vtatune.paths import project_root

    try:
        return str(Path(path).resolve().relative_to(project_root().resolve()))
    except ValueError:
        return Path(path).name


def read_timing_file(path: str | Path) -> dict[str, Any]:
    """The raw JSON of a timing file (already validated by ``load_params``)."""
    return json.loads(Path(path).read_text())


def prior_params(base: TimingParams, raw: dict[str, Any]) -> TimingParams:
    """``base`` with the fitted constants set to the file's ``prior`` block (the physical
    estimates the fit starts from and is regularized towards); without one, ``base``."""
    prior = raw.get("prior") or {}
    return replace(base, **{k: float(prior[k]) for k in FIT_KEYS if k in prior})


def dump_timing_file(content: dict[str, Any]) -> str:
    """JSON with two-space indents and lists of numbers on one line."""
    text = json.dumps(content, indent=2)
    return re.sub(r"\[\s*([-\d.,\s]*?)\s*\]",
                  lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",") if v.strip())
                  + "]", text) + "\n"


#: Constants a derived board scales with its clock (latencies in time carry over) or with its
#: host (the ARM's per-call work); the rest (IIs, pad writes, cycles per beat) carry over.
_CLOCK_SCALED = ("dma_row_cycles", "insn_cycles", "gemm_refill_cycles", "alu_refill_cycles")
_HOST_SCALED = ("host_call_us", "host_insn_us")


def derive(reference: dict[str, Any], derived: dict[str, Any]) -> dict[str, Any]:
    """``derived`` (a timing file with a ``derivation`` block: ``from``, ``clock_scale``,
    ``host_scale``) with its parameters recomputed from the reference board's file: the
    constants of a board that has no measurements, from one that has (SOURCES.md#D1)."""
    rule = derived["derivation"]
    params = dict(reference["params"])
    for k in _CLOCK_SCALED:
        params[k] = round(float(params[k]) * float(rule["clock_scale"]), 4)
    for k in _HOST_SCALED:
        params[k] = round(float(params[k]) * float(rule["host_scale"]), 4)
    return {**derived, "params": params}
