"""AutoTVM records of exported schedules, for VTA's own flow (TopHub's log format).

Stock VTA compiles a network with TVM's AutoTVM: for every packed layer it looks up a
configuration of VTA's schedule template (``apache/tvm-vta`` ``python/vta/top/vta_*.py``) in
the records ``autotvm.apply_history_best(log)`` loaded, keyed by the target's ``-model`` and
the task's workload (task name and argument shapes). A bundle's ``autotvm.log`` holds one such
record per exported layer shape, so that VTA uses vtatune's schedule instead of a fallback.

**The configuration's name.** VTA's ``config/pkg_config.py`` names a design
``{BATCH}x{BLOCK}_i{INP}w{WGT}a{ACC}_{LOG_UOP}_{LOG_INP}_{LOG_WGT}_{LOG_ACC}``
(``1x16_i8w8a32_15_15_18_17``; BATCH, BLOCK and the widths as numbers, the
``LOG_*_BUFF_SIZE`` as logs) and ``python/vta/environment.py`` prefixes TARGET:
``env.MODEL`` = ``pynq_1x16_...``, the ``-model=`` of the target string. A design with
BLOCK_IN != BLOCK_OUT has no such name (stock VTA reads one LOG_BLOCK): ``bitstream_name``
gives None and no record is written for it (vtatune does not invent a name VTA's tooling
would never produce or look up).

**One record** (``record``): ``input`` = [target string, task name, packed argument list as
VTA's TOPI receives it from Relay's strategy wrappers, {}]; ``config`` = {``index``,
``code_hash`` null, ``entity``: the template's knobs in their declared order, a split as
``[name, "sp", [outer, inner]]``, a choice as ``[name, "ot", value]``}; ``result`` =
[[simulated seconds per call], 0, compile seconds, unix time]; ``version`` 0.2. Relay hands
conv2d-like operators 4-way padding and VTA's packed tensors (``graph_pack``): data
``(N/BATCH, C/BLOCK_IN, H, W, BATCH, BLOCK_IN)``, kernel ``(O/BLOCK_OUT, I/BLOCK_IN, KH, KW,
BLOCK_OUT, BLOCK_IN)`` (``I`` a group's channels for group_conv2d). The index is
AutoTVM's ``ConfigSpace`` numbering: knobs in declaration order, the first varying fastest,
each split's entities ordered by its inner factor over the divisors of its extent (the
``factors`` policy of ``define_split``), each choice by its position in ``[1, 2]``.

**What stock VTA cannot run** (``NotInTemplate``, listed in the manifest instead): a
non-square GEMM; depthwise and other grouped layers whose groups do not fill whole BLOCK
tiles (VTA's ``group_conv2d_packed`` needs them; it runs depthwise layers on the CPU); a tile
that does not divide its axis (AutoTVM's splits are exact factors; vtatune's tail tiles are
not in VTA's space); a convolution padding columns but no rows (``_padding``); a schedule
whose copies VTA's compiler refuses
(``Workload.vta_copy_problem``, ``passes.vta_copy_rules``): the log holds only records VTA's
compiler builds.

**What VTA's deploy flow offloads** (network bundles): it quantizes the network with the
first convolution skipped (``skip_conv_layers=[0]``) and packs it for VTA from the first
max-pool to the global pool (``graph_pack(start_name="nn.max_pool2d",
stop_name="nn.global_avg_pool2d")``): the stem convolution and the classifier after the
global pool run on the CPU (``cpu_reason``). Their records would never be looked up, so they
are left out too, and the manifest's ``autotvm.layers`` says per layer whether VTA's flow
offloads it and whether the log holds its record.

The record's time is vtatune's simulation of vtatune's program for these knobs; VTA's own
lowering of the same knobs is a different program (the loop order of its templates, its
dilated-input transposed convolution), so the time ranks schedules rather than predicting
VTA's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vtatune.hardware.config import HwConfig
    from vtatune.workloads.base import Workload

#: File of a bundle holding the records.
AUTOTVM_LOG = "autotvm.log"
#: AutoTVM's record version (``tvm.autotvm.record.AUTOTVM_LOG_VERSION``).
LOG_VERSION = 0.2
#: The target string of VTA's records as AutoTVM wrote them (TopHub ``vta_v0.10.log``).
TARGET_FORMAT = "ext_dev -device=vta -keys=cpu -model={model}"
#: Choices of a thread knob in VTA's templates (``cfg.define_knob(..., [1, 2])``).
THREAD_CHOICES = (1, 2)


class NotInTemplate(Exception):
    """A layer whose shape or knobs VTA's AutoTVM template cannot express (the reason);
    ``cpu``: VTA's deploy flow runs such a layer on the CPU (it is not offloaded)."""

    def __init__(self, message: str, cpu: bool = False):
        self.cpu = cpu
        super().__init__(message)


#: Why VTA's deploy flow runs a network's first convolution on the CPU.
STEM = ("the stem: VTA's deploy flow does not quantize the first convolution "
        "(skip_conv_layers=[0]) and graph_pack starts after the first max-pool")
#: Why it runs a network's dense layers on the CPU.
CLASSIFIER = ("the classifier: VTA's deploy flow stops graph_pack at the global pool; the "
              "dense layer after it runs on the CPU")


def cpu_reason(wl: Workload, names: Sequence[str], first: str | None) -> str:
    """Why VTA's deploy flow runs a network's layer shape (standing for the layers ``names``;
    ``first``: the network's first layer) on the CPU; "" when it offloads it, and for an
    operator's bundle (``first`` None)."""
    if first is None:
        return ""
    if wl.kind == "dense":
        return CLASSIFIER
    if tuple(names) == (first,):
        return STEM
    return ""


@dataclass(frozen=True)
class Task:
    """One layer as AutoTVM sees it: task name, argument list, and the configuration."""

    name: str
    args: list[Any]
    entity: list[list[Any]]
    index: int


def bitstream_name(hw: HwConfig) -> str | None:
    """VTA's configuration name (``pkg_config.py``'s ``bitstream``), None when non-square."""
    if hw.block_in != hw.block_out:
        return None
    return (f"{hw.batch}x{hw.block_in}_i{hw.inp_bits}w{hw.wgt_bits}a{hw.acc_bits}_"
            f"{hw.log_uop_buff_size}_{hw.log_inp_buff_size}_{hw.log_wgt_buff_size}_"
            f"{hw.log_acc_buff_size}")


def model_name(hw: HwConfig) -> str | None:
    """``env.MODEL``: TARGET and the configuration name (``pynq_1x16_i8w8a32_15_15_18_17``)."""
    name = bitstream_name(hw)
    return None if name is None else f"{hw.target}_{name}"


def target_string(hw: HwConfig) -> str | None:
    model = model_name(hw)
    return None if model is None else TARGET_FORMAT.format(model=model)


def non_square_reason(hw: HwConfig) -> str:
    return (f"non-square GEMM (BLOCK_IN {hw.block_in} != BLOCK_OUT {hw.block_out}): stock "
            "VTA's pkg_config.py has no configuration name for it")


# ---- AutoTVM's knob spaces ------------------------------------------------------------------

@dataclass(frozen=True)
class _Split:
    name: str
    extent: int
    inner: int

    def entity(self) -> tuple[list[Any], int, int]:
        """(entity, its index in the knob's space, the space's size)."""
        if self.inner < 1 or self.extent % self.inner:
            raise NotInTemplate(f"{self.name} of {self.inner} does not divide its extent "
                                f"{self.extent}: VTA's template splits by exact factors")
        from vtatune.schedules.knobs import divisors  # AutoTVM's get_factors: increasing

        factors = divisors(self.extent)
        return ([self.name, "sp", [self.extent // self.inner, self.inner]],
                factors.index(self.inner), len(factors))


@dataclass(frozen=True)
class _Choice:
    name: str
    value: int

    def entity(self) -> tuple[list[Any], int, int]:
        if self.value not in THREAD_CHOICES:
            raise NotInTemplate(f"{self.name}={self.value} is not one of VTA's "
                                f"{list(THREAD_CHOICES)}")
        return [self.name, "ot", self.value], THREAD_CHOICES.index(self.value), \
            len(THREAD_CHOICES)


def config_of(knobs: Sequence[_Split | _Choice]) -> tuple[list[list[Any]], int]:
    """The entity list and ``ConfigSpace`` index of knobs given in the template's order."""
    entity, index, stride = [], 0, 1
    for knob in knobs:
        ent, at, size = knob.entity()
        entity.append(ent)
        index += at * stride
        stride *= size
    return entity, index


# ---- VTA's templates, one per operator -----------------------------------------------------

def _tensor(shape: Iterable[int], dtype: str) -> list[Any]:
    return ["TENSOR", [int(v) for v in shape], dtype]


def _expect(knobs: Mapping[str, int], names: Iterable[str]) -> None:
    want = set(names)
    if set(knobs) != want:
        extra = sorted(set(knobs) - want)
        raise NotInTemplate("knobs " + ", ".join(extra or sorted(want - set(knobs)))
                            + (" are not" if extra else " are missing") + " in VTA's template")


def _tiles(n: int, block: int) -> int:
    return -(-n // block)


def _padding(wl: Any, transpose: bool = False) -> list[int]:
    """Relay's 4-way padding (top, left, bottom, right) of a convolution padded per axis.

    ``conv2d_packed`` and ``group_conv2d_packed`` pad ``padding[0]`` rows and ``padding[1]``
    columns, but only ``if padding[0]`` (``vta_conv2d.py``, ``vta_group_conv2d.py``): with no
    rows of padding they pad no columns either and compute a narrower output than Relay's
    (its type says ``W + 2 * PAD_W - KW + 1`` columns), so such a layer is not in the
    template. ``conv2d_transpose_packed`` reads all four (``get_pad_tuple``)."""
    if not transpose and wl.pad == 0 and wl.pad_cols > 0:
        raise NotInTemplate(f"padding 0 rows x {wl.pad_cols} columns: VTA's template pads "
                            "columns only when it pads rows (vta_conv2d.py: `if padding[0]`)")
    return [wl.pad, wl.pad_cols, wl.pad, wl.pad_cols]


def _conv2d(wl: Any, hw: HwConfig, k: Mapping[str, int]) -> Task:
    """``conv2d_packed.vta`` (``vta_conv2d.py``): args data, kernel, strides, padding,
    dilation, layout, out_dtype; knobs tile_b, tile_h, tile_w, tile_ci, tile_co, oc_nthread,
    h_nthread over the output's batch, rows, columns, the input and output channel tiles."""
    _expect(k, ("tile_b", "tile_h", "tile_w", "tile_ci", "tile_co", "oc_nthread", "h_nthread"))
    b, ci, co = _tiles(wl.n, hw.batch), _tiles(wl.cin, hw.block_in), _tiles(wl.cout,
                                                                             hw.block_out)
    args = [_tensor((b, ci, wl.h, wl.w, hw.batch, hw.block_in), hw.inp_dtype),
            _tensor((co, ci, wl.kh, wl.kw, hw.block_out, hw.block_in), hw.wgt_dtype),
            [wl.stride, wl.stride], _padding(wl), [1, 1],
            f"NCHW{hw.batch}n{hw.block_in}c", hw.acc_dtype]
    entity, index = config_of(_conv_knobs(b, wl.oh, wl.ow, ci, co, k, k["tile_co"]))
    return Task("conv2d_packed.vta", args, entity, index)


def _conv_knobs(b: int, oh: int, ow: int, ci: int, co: int, k: Mapping[str, int],
                tile_co: int) -> list[_Split | _Choice]:
    return [_Split("tile_b", b, k["tile_b"]), _Split("tile_h", oh, k["tile_h"]),
            _Split("tile_w", ow, k["tile_w"]), _Split("tile_ci", ci, k["tile_ci"]),
            _Split("tile_co", co, tile_co), _Choice("oc_nthread", k["oc_nthread"]),
            _Choice("h_nthread", k["h_nthread"])]


def _group_conv2d(wl: Any, hw: HwConfig, k: Mapping[str, int]) -> Task:
    """``group_conv2d_packed.vta`` (``vta_group_conv2d.py``): args data, kernel, strides,
    padding, dilation, groups, out_dtype; conv2d's knobs, ``tile_ci`` over one group's input
    tiles and ``tile_co`` over the output channel tiles of all groups together (group-major).

    When groups fill whole tiles vtatune's knobs count as VTA's (``workloads.group_conv2d``:
    ``tile_co`` and ``oc_nthread`` over all groups' output tiles, ``tile_g`` 1); its output
    tile is part of one group (a divisor of the group's tiles) or whole groups, and VTA's split
    of the same ``tile_co`` gives the same tiles when it divides exactly."""
    if wl.cin_g % hw.block_in or wl.cout_g % hw.block_out:
        what = "depthwise" if wl.groups == wl.cin else "grouped"
        raise NotInTemplate(
            f"{what}: groups of {wl.cin_g} input / {wl.cout_g} output channels do not fill "
            f"whole {hw.block_in}/{hw.block_out}-channel tiles, as VTA's group_conv2d_packed "
            "needs (stock VTA runs such layers on the CPU)", cpu=True)
    _expect(k, ("tile_b", "tile_g", "tile_h", "tile_w", "tile_ci", "tile_co", "oc_nthread",
                "h_nthread"))
    b = _tiles(wl.n, hw.batch)
    ci_g, co_g, co = wl.cin_g // hw.block_in, wl.cout_g // hw.block_out, \
        wl.cout // hw.block_out
    axes = wl.tiles(hw)
    if (axes["ci"], axes["co"], axes["g"]) != (ci_g, co, wl.groups) or k["tile_g"] != 1:
        raise NotInTemplate("group_conv2d's knobs do not count as VTA's template does "
                            "(tile_co over all groups' output tiles, tile_g 1)")
    tile = k["tile_co"]
    if tile <= co_g and co_g % tile:
        raise NotInTemplate(f"tile_co of {tile} does not divide a group's {co_g} output "
                            "tiles: VTA's template splits by exact factors")
    if tile > co_g and tile % co_g:
        raise NotInTemplate(f"tile_co of {tile} straddles groups of {co_g} output tiles")
    args = [_tensor((b, wl.cin // hw.block_in, wl.h, wl.w, hw.batch, hw.block_in),
                    hw.inp_dtype),
            _tensor((co, ci_g, wl.kh, wl.kw, hw.block_out, hw.block_in), hw.wgt_dtype),
            [wl.stride, wl.stride], _padding(wl), [1, 1], wl.groups, hw.acc_dtype]
    entity, index = config_of(_conv_knobs(b, wl.oh, wl.ow, ci_g, co, k, tile))
    return Task("group_conv2d_packed.vta", args, entity, index)


def _conv2d_transpose(wl: Any, hw: HwConfig, k: Mapping[str, int]) -> Task:
    """``conv2d_transpose_packed.vta`` (``vta_conv2d_transpose.py``): args data, kernel
    (packed OIHW as VTA's graph_pack lays it), strides, padding, out_dtype, output_padding;
    conv2d's knobs over the transposed convolution's output."""
    _expect(k, ("tile_b", "tile_h", "tile_w", "tile_ci", "tile_co", "oc_nthread", "h_nthread"))
    b, ci, co = _tiles(wl.n, hw.batch), _tiles(wl.cin, hw.block_in), _tiles(wl.cout,
                                                                             hw.block_out)
    args = [_tensor((b, ci, wl.h, wl.w, hw.batch, hw.block_in), hw.inp_dtype),
            _tensor((co, ci, wl.kh, wl.kw, hw.block_out, hw.block_in), hw.wgt_dtype),
            [wl.stride, wl.stride], _padding(wl, transpose=True), hw.acc_dtype, [0, 0]]
    entity, index = config_of(_conv_knobs(b, wl.oh, wl.ow, ci, co, k, k["tile_co"]))
    return Task("conv2d_transpose_packed.vta", args, entity, index)


def _dense(wl: Any, hw: HwConfig, k: Mapping[str, int]) -> Task:
    """``dense_packed.vta`` (``vta_dense.py``): args data, weight, bias (None), out_dtype;
    knobs tile_b, tile_ci, tile_co, oc_nthread."""
    _expect(k, ("tile_b", "tile_ci", "tile_co", "oc_nthread"))
    b, ci, co = _tiles(wl.m, hw.batch), _tiles(wl.k, hw.block_in), _tiles(wl.n, hw.block_out)
    args = [_tensor((b, ci, hw.batch, hw.block_in), hw.inp_dtype),
            _tensor((co, ci, hw.block_out, hw.block_in), hw.wgt_dtype), None, hw.acc_dtype]
    entity, index = config_of([_Split("tile_b", b, k["tile_b"]),
                               _Split("tile_ci", ci, k["tile_ci"]),
                               _Split("tile_co", co, k["tile_co"]),
                               _Choice("oc_nthread", k["oc_nthread"])])
    return Task("dense_packed.vta", args, entity, index)


#: VTA's AutoTVM template of each operator kind vtatune exports.
TEMPLATES: dict[str, Callable[[Any, HwConfig, Mapping[str, int]], Task]] = {
    "conv2d": _conv2d, "group_conv2d": _group_conv2d, "conv2d_transpose": _conv2d_transpose,
    "dense": _dense}


def task_of(wl: Workload, hw: HwConfig, knobs: Mapping[str, int]) -> Task:
    """The layer as VTA's AutoTVM task and configuration; ``NotInTemplate`` with the reason
    when stock VTA cannot run it so."""
    if bitstream_name(hw) is None:
        raise NotInTemplate(non_square_reason(hw))
    template = TEMPLATES.get(wl.kind)
    if template is None:
        raise NotInTemplate(f"VTA has no AutoTVM template for {wl.kind}")
    task = template(wl, hw, knobs)
    why = wl.vta_copy_problem(hw, dict(knobs)) or acc_problem(wl, hw, knobs)
    if why:
        raise NotInTemplate(why)
    return task


#: Accumulator stages of a VTA operator: the GEMM and the epilogue's shift, max and min.
ACC_STAGES = 4


def acc_problem(wl: Workload, hw: HwConfig, knobs: Mapping[str, int]) -> str | None:
    """Why VTA's compiler refuses a schedule's accumulator, or None: with virtual threads on
    two axes (``h_nthread`` and ``oc_nthread`` both 2) its StorageRewrite no longer shares
    one accumulator tile among the GEMM and the epilogue stages, and allocates each its own
    (seen with VTA's compiler: tile_h 4, tile_w 56, tile_co 1 of ResNet-18's C2 needs
    1,835,008 bits, 16 per-thread tiles, and is refused on a 128 KiB accumulator; one thread
    axis builds a 100,352-byte tile set)."""
    from vtatune.schedules.knobs import THREAD

    threads = [k.name for k in wl.KNOBS if k.role == THREAD]
    if len(threads) < 2 or not all(knobs.get(t, 1) > 1 for t in threads):
        return None
    need = ACC_STAGES * wl.footprint(hw, dict(knobs))["acc"]
    if need <= hw.acc_buff_bytes:
        return None
    return (f"VTA's compiler refuses the accumulator: with two virtual-thread axes it keeps "
            f"the GEMM and its epilogue in {ACC_STAGES} accumulator tiles per thread, "
            f"{need:,} bytes, over the {hw.acc_buff_bytes:,}-byte buffer (Allocation exceed "
            "bound of memory tag local.acc_buffer)")


def record(task: Task, hw: HwConfig, seconds: float, compile_seconds: float,
           timestamp: float, tvm_version: str) -> dict[str, Any]:
    """One AutoTVM record (``tvm.autotvm.record.encode``'s JSON) of ``task``."""
    return {"input": [target_string(hw), task.name, task.args, {}],
            "config": {"index": task.index, "code_hash": None, "entity": task.entity},
            "result": [[seconds], 0, compile_seconds, timestamp],
            "version": LOG_VERSION, "tvm_version": tvm_version}


@dataclass(frozen=True)
class Layer:
    """A layer shape to record: the layers it stands for, its workload, knobs and time."""

    layers: tuple[str, ...]
    workload: Workload
    knobs: Mapping[str, int]
    seconds: float
    compile_seconds: float = 0.0
    #: why VTA's deploy flow runs these layers on the CPU ("" when it offloads them)
    cpu: str = ""


@dataclass(frozen=True)
class AutotvmLog:
    """``autotvm.log``'s records and the layers left out (each with the reason)."""

    records: tuple[dict[str, Any], ...]
    left_out: tuple[dict[str, Any], ...]
    #: per layer: name, workload, ``offloaded`` by VTA's deploy flow, ``in_log``, and why not
    layers: tuple[dict[str, Any], ...] = ()

    def text(self) -> bytes:
        return "".join(json.dumps(r) + "\n" for r in self.records).encode()

    def manifest(self, hw: HwConfig) -> dict[str, Any]:
        """The manifest's ``autotvm`` entry."""
        return {"file": AUTOTVM_LOG, "target": target_string(hw),
                "records": len(self.records), "not_in_log": list(self.left_out),
                "layers": list(self.layers)}


def build_log(hw: HwConfig, layers: Iterable[Layer], timestamp: float,
              tvm_version: str) -> AutotvmLog:
    """The records of ``layers`` (one per shape) and the layers VTA's templates cannot
    express."""
    records, left_out, per_layer = [], [], []
    for la in layers:
        on_cpu = bool(la.cpu)
        why = (non_square_reason(hw) if bitstream_name(hw) is None else
               f"not offloaded by VTA's deploy flow: {la.cpu}" if la.cpu else "")
        if not why:
            try:
                task = task_of(la.workload, hw, la.knobs)
            except NotInTemplate as exc:
                why, on_cpu = str(exc), exc.cpu
            else:
                records.append(record(task, hw, la.seconds, la.compile_seconds, timestamp,
                                      tvm_version))
        if why:
            left_out.append({"layers": list(la.layers), "workload": la.workload.signature,
                             "reason": why})
        per_layer += [{"layer": name, "workload": la.workload.signature,
                       "offloaded": not on_cpu, "in_log": not why,
                       **({"reason": why} if why else {})} for name in la.layers]
    return AutotvmLog(tuple(records), tuple(left_out), tuple(per_layer))


def stock_line(problems: Sequence[str], entries: Mapping[str, Any]) -> str:
    """Whether stock VTA builds a bundle's design and runs its layers with its schedules, in
    one line (``problems``: ``hardware.stock``'s; ``entries``: the manifest's ``autotvm``):
    what ``export`` and ``verify-export`` say first."""
    if problems:
        return "stock VTA: no, it cannot build this design as it is: " + "; ".join(problems)
    layers = (entries.get("autotvm") or {}).get("layers") or []
    offloaded = [x for x in layers if isinstance(x, dict) and x.get("offloaded", True)]
    missing = [x for x in offloaded if not x.get("in_log")]
    if missing:
        return (f"stock VTA: it builds the design, but {len(missing)} of {len(offloaded)} "
                f"layer{'s' * (len(offloaded) != 1)} its flow offloads have no record in "
                f"{AUTOTVM_LOG} (VTA would use a fallback schedule; why: below)")
    return (f"stock VTA: yes, it builds the design and {AUTOTVM_LOG} holds a record VTA's "
            "compiler builds for every layer its flow offloads")


def summary(entries: Mapping[str, Any]) -> str:
    """One line on a bundle's use in VTA's flow, from the manifest's ``bitstream`` and
    ``autotvm`` entries (``bundle.vta_flow``)."""
    log = entries.get("autotvm") or {}
    n, left = log.get("records", 0), log.get("not_in_log", [])
    if entries.get("bitstream") is None:
        reason = left[0]["reason"].partition(":")[0] if left else "no VTA name"
        return f"VTA flow: no configuration name ({reason}); {AUTOTVM_LOG} is empty"
    out = (f"VTA flow: bitstream {entries['bitstream']}; {AUTOTVM_LOG} holds {n} record"
           f"{'s' * (n != 1)} for autotvm.apply_history_best")
    if left:
        out += "; not in it: " + "; ".join(
            f"{', '.join(x['layers'])} ({x['reason']})" for x in left)
    return out


# ---- verification ------------------------------------------------------------------------------

#: Largest difference between a record's seconds and schedule.json's ``latency_ms`` / 1e3
#: (schedule.json rounds milliseconds to 9 decimals: 5e-13 s).
SECONDS_TOLERANCE = 1e-12


def parse_log(raw: bytes) -> list[dict[str, Any]]:
    """``autotvm.log``'s records; ``ValueError`` naming the first line that is not one."""
    from vtatune.readers import decode_text, parse_json

    out = []
    for n, line in enumerate(decode_text(raw, AUTOTVM_LOG).splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        doc = parse_json(line, f"{AUTOTVM_LOG} line {n}")
        if not (isinstance(doc, dict) and isinstance(doc.get("input"), list)
                and isinstance(doc.get("config"), dict)
                and isinstance(doc.get("result"), list) and doc["result"]
                and isinstance(doc["result"][0], list) and len(doc["result"][0]) == 1):
            raise ValueError(f"line {n} is not an AutoTVM record (input, config, result)")
        out.append(doc)
    return out


def compare(records: Sequence[Mapping[str, Any]], expected: AutotvmLog) -> list[str]:
    """Why ``records`` (read from a bundle) differ from ``expected`` (rebuilt from its
    schedule): a missing, extra or different record, another time or error code."""
    from vtatune.escaping import shown

    def key(r: Mapping[str, Any]) -> str:
        return json.dumps(r.get("input"), sort_keys=True)

    want = {key(r): r for r in expected.records}
    problems, seen = [], set()
    for n, r in enumerate(records, 1):
        k = key(r)
        if k not in want:
            problems.append(f"record {n} ({shown(k, 80)}) is not a layer of schedule.json "
                            "in VTA's template")
            continue
        if k in seen:
            problems.append(f"record {n} repeats the layer of an earlier one")
        seen.add(k)
        w = want[k]
        task = w["input"][1]
        if r.get("config", {}).get("entity") != w["config"]["entity"]:
            problems.append(f"record {n} ({task}): entity {shown(r['config'].get('entity'), 120)}"
                            f" is not schedule.json's knobs {w['config']['entity']}")
        elif r["config"].get("index") != w["config"]["index"]:
            problems.append(f"record {n} ({task}): index {shown(r['config'].get('index'))}, "
                            f"its entity's is {w['config']['index']}")
        got = r["result"][0][0]
        if not isinstance(got, (int, float)) or isinstance(got, bool) or not math.isfinite(
                got) or abs(got - w["result"][0][0]) > SECONDS_TOLERANCE:
            problems.append(f"record {n} ({task}): {shown(got)} s, schedule.json says "
                            f"{w['result'][0][0]:.9g} s")
        if len(r["result"]) < 2 or r["result"][1] != 0:
            problems.append(f"record {n} ({task}): error code is not 0")
        if r.get("version") != LOG_VERSION:
            problems.append(f"record {n} ({task}): version {shown(r.get('version'))}, not "
                            f"{LOG_VERSION}")
    problems += [f"no record for {w['input'][1]} {shown(json.dumps(w['input'][2]), 100)}"
                 for k, w in want.items() if k not in seen]
    return problems
