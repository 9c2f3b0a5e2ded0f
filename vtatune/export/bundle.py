"""A deployment bundle: one stored design, rebuilt and written as files a VTA flow can use.

Files (``BUNDLE_FILES``, then ``MANIFEST``):

- ``vta_config.json``: VTA's own keys (TARGET = the board's VTA target, HW_VER, the LOG_*
  parameters: ``LOG_BLOCK`` for square designs, as stock VTA's pkg_config.py reads it;
  LOG_BLOCK_IN/LOG_BLOCK_OUT for the others, which stock VTA cannot load);
- ``schedule.json``: per workload signature, the workload's shape, the schedule knobs, the
  epilogue shift, and the cycles measured by the timing simulator on the board;
- ``program.bin``: the VTA program (instructions and micro-op image, ``Program.to_bytes``);
- ``resources.json``: the area model's resources, fabric area (mm^2) and board fit;
- ``autotvm.log``: the schedule as an AutoTVM record of VTA's template, for
  ``autotvm.apply_history_best`` in VTA's own flow (``export.autotvm``; empty when stock VTA
  cannot run the layer so);
- ``manifest.json``: format, versions (vtatune, tvm, tvm-ffi, numpy, python), sha256 and size
  of every other file, the source (study, trial, pick, database, candidate key), the time per
  call and its split, ``stock_vta`` with the reasons stock VTA cannot build the design
  (``hardware.stock``), ``timing_profile`` (the board profile's timing constants the cycles
  were simulated with), ``bitstream`` (VTA's name of the design, ``env.MODEL``; null when it
  has none) and ``autotvm`` (the log's target, its record count and the layers left out of it,
  each with the reason).

The design is recompiled from the stored hardware and knobs (the store keeps no programs), so
the bundle is exactly what ``verify-export`` rebuilds from the bundle's own files.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from vtatune.errors import UserError
from vtatune.export.autotvm import AUTOTVM_LOG
from vtatune.hardware import timing_profiles
from vtatune.statuses import Status
from vtatune.store.records import NetworkTrialRecord, StudyInfo, TrialRecord
from vtatune.workloads.base import DEFAULT_SHIFT

if TYPE_CHECKING:
    from vtatune.export.autotvm import AutotvmLog
    from vtatune.hardware.boards import Board
    from vtatune.hardware.config import HwConfig
    from vtatune.program.program import Program
    from vtatune.simulator.timing import TimingResult
    from vtatune.workloads.base import Workload

#: A study's record (an operator trial or a network design), for ``pick_record``.
R = TypeVar("R")

BUNDLE_FORMAT = "vtatune-bundle/2"
SCHEDULE_FORMAT = "vtatune-schedule/1"
VTA_CONFIG, SCHEDULE, PROGRAM, RESOURCES, MANIFEST = (
    "vta_config.json", "schedule.json", "program.bin", "resources.json", "manifest.json")
#: Files whose checksums the manifest holds, in the order they are written.
BUNDLE_FILES = (VTA_CONFIG, SCHEDULE, PROGRAM, RESOURCES, AUTOTVM_LOG)
#: Named picks of ``--pick`` (otherwise a trial number).
PICKS = ("fastest", "smallest", "knee")
#: Distributions whose versions the manifest records.
VERSIONED = {"vtatune": "vtatune", "tvm": "apache-tvm", "tvm_ffi": "apache-tvm-ffi",
             "numpy": "numpy"}


@dataclass(frozen=True)
class Built:
    """One candidate compiled, assembled and timed."""

    workload: Workload
    hw: HwConfig
    knobs: dict[str, int]
    shift: int
    program: Program
    program_bytes: bytes
    timing: TimingResult
    #: Wall time of the compile and assembly (an AutoTVM record's compile time).
    compile_seconds: float = 0.0


@dataclass(frozen=True)
class BundleResult:
    """What ``write_bundle`` wrote: the folder, the trial, the files and the rebuilt cycles
    (``stored_cycles`` is what the study measured; they differ only if the compiler or the
    simulator changed since)."""

    folder: Path
    study: str
    trial: int
    pick: str
    hw_name: str
    knobs: dict[str, int]
    cycles: int
    stored_cycles: int
    seconds: float
    area_mm2: float
    files: dict[str, Path]
    stock_vta_problems: tuple[str, ...] = ()
    #: The manifest's entries for VTA's flow: ``bitstream`` and ``autotvm``.
    vta_flow: dict[str, Any] = field(default_factory=dict)
    #: a network bundle's network, its layers (``schedule.json``'s) and the split of
    #: ``seconds`` (end to end per network run)
    network: str | None = None
    layers: tuple[dict[str, Any], ...] = ()
    accelerator_seconds: float = 0.0
    host_seconds: float = 0.0
    #: a design of several networks: per network (``member_schedules``) its name, weight,
    #: schedule file and times per run (the manifest's ``networks``); empty otherwise
    networks: tuple[dict[str, Any], ...] = ()

    @property
    def stock_vta(self) -> bool:
        return not self.stock_vta_problems


def pick_trial(info: StudyInfo, trials: Sequence[TrialRecord], pick: str) -> TrialRecord:
    """The trial ``pick`` names: ``fastest`` (least latency as the study measures it: end to
    end per call, or the accelerator's time), ``smallest`` (least area, then least latency
    in the same measure), ``knee`` (of the front, see ``reports.data.knee``) or a trial number.
    ``UserError`` for an unknown or infeasible trial, an empty study or an empty front."""
    from vtatune.reports.data import front_points, objective_ms, require_feasible, study_latency

    passes = {t.candidate.key.partition("|passes=")[2] for t in trials} - {""}
    if passes:
        # the bundle is rebuilt from the stored knobs by the stock pipeline: it would not be
        # the program the study measured
        raise UserError(f"study '{info.name}' was compiled with user passes (fingerprint "
                        f"{', '.join(sorted(passes))}): export cannot rebuild its programs")
    require_feasible(info, trials)
    latency = study_latency(info)
    return pick_record(
        info, pick, {t.number: t for t in trials},
        status=lambda t: (t.candidate.status, t.candidate.reason),
        # in the study's latency, as the report's fastest
        fastest=lambda: min((t for t in trials
                             if t.candidate.feasible and t.candidate.cycles is not None),
                            key=lambda t: (objective_ms(t.candidate, latency) or math.inf,
                                           t.candidate.area_mm2 or 0.0, t.number)),
        front=lambda: front_points(info, trials), noun="trials")


def pick_record(info: StudyInfo, pick: str, by_number: dict[int, R], *,
                status: Callable[[R], tuple[str, str]], fastest: Callable[[], R],
                front: Callable[[], Sequence[Any]], noun: str) -> R:
    """The record ``pick`` names, for every kind of study: ``fastest`` (``fastest()``),
    ``smallest`` (the first point of ``front()``, by area), ``knee`` (``reports.data.knee``
    of the front) or a trial number whose record is feasible (``status``: its status and
    reason; ``noun``: what the study's trials are called). ``UserError`` otherwise."""
    from vtatune.reports.data import knee

    if pick in PICKS:
        if pick == "fastest":
            return fastest()
        points = list(front())
        chosen = points[0] if pick == "smallest" and points else knee(points)
        if chosen is None:
            raise UserError(f"study '{info.name}' has no front with areas to pick the {pick} "
                            "from")
        return by_number[chosen.trial]
    try:
        number = int(pick)
    except ValueError:
        raise UserError(f"--pick must be one of {', '.join(PICKS)} or a trial number, not "
                        f"{pick!r}") from None
    if number not in by_number:
        raise UserError(f"study '{info.name}' has no trial {number} (trials "
                        f"{min(by_number)}..{max(by_number)})")
    t = by_number[number]
    st, reason = status(t)
    if st != Status.OK:
        raise UserError(f"trial {number} of '{info.name}' is {st}"
                        + (f" ({reason})" if reason else "")
                        + f": only feasible {noun} can be exported")
    return t


def build(wl: Workload, hw: HwConfig, knobs: dict[str, int], board: Board,
          shift: int = DEFAULT_SHIFT) -> Built:
    """Compile, assemble and time one candidate. ``UserError`` if it no longer compiles."""
    import time

    from vtatune.compiler import compile_candidate
    from vtatune.runtime.build import build_program
    from vtatune.simulator import simulate

    t0 = time.perf_counter()
    res = compile_candidate(wl, hw, dict(knobs), shift=shift)
    if not res.ok:
        raise UserError(f"{wl.signature} with {knobs} on {hw.name or hw.shape_label} is "
                        f"{res.status}: {res.reason}")
    program = build_program(res, wl, hw)
    program_bytes = program.to_bytes()
    compile_seconds = time.perf_counter() - t0
    return Built(workload=wl, hw=hw, knobs=dict(knobs), shift=shift, program=program,
                 program_bytes=program_bytes, timing=simulate(program, board),
                 compile_seconds=compile_seconds)


def hw_of(record_hw: dict[str, int], board: Board, name: str = "") -> HwConfig:
    """The stored LOG_* parameters as a validated HwConfig targeting ``board``'s VTA target."""
    from vtatune.hardware.config import TARGETS, HwConfig, validate

    target = board.vta_target if board.vta_target in TARGETS else "sim"
    hw = HwConfig.from_params(record_hw, target=target, name=name)
    return validate(hw, f"hardware of {name or 'the trial'}")


def write_bundle(info: StudyInfo, trials: Sequence[TrialRecord], pick: str, out: Path,
                 db: str = "") -> BundleResult:
    """Rebuild the picked trial and write the bundle into ``out`` (created; the bundle's files
    are replaced, other files left alone)."""
    from vtatune.hardware import boards
    from vtatune.hardware.stock import stock_problems
    from vtatune.workloads import from_signature

    trial = pick_trial(info, trials, pick)
    rec = trial.candidate
    board = boards.load(info.board)
    wl = from_signature(rec.workload)
    hw = hw_of(rec.hw, board, rec.hw_name)
    built = build(wl, hw, rec.knobs, board)
    source = {"study": info.name, "trial": trial.number, "pick": pick, "db": db,
              "candidate_key": rec.key, "sampler": trial.sampler,
              "objective": info.objective, "stored_cycles": rec.cycles}
    files, area_mm2, manifest = _write_design(out, built, board, source, rec.hw_name)
    return BundleResult(folder=out, study=info.name, trial=trial.number, pick=pick,
                        hw_name=rec.hw_name, knobs=dict(rec.knobs),
                        cycles=built.timing.cycles, stored_cycles=int(rec.cycles or 0),
                        seconds=built.timing.seconds, area_mm2=area_mm2, files=files,
                        stock_vta_problems=tuple(stock_problems(hw, board)),
                        vta_flow={k: manifest[k] for k in ("bitstream", "autotvm")})


def write_design(out: Path, built: Built, board: Board, source: dict[str, Any],
                 hw_name: str) -> tuple[dict[str, Path], float]:
    """Write a built design's bundle (``BUNDLE_FILES`` and the manifest, whose ``source``
    says where the design came from) into ``out`` (created); returns the files and the
    design's area in mm². Used by ``export`` (a stored trial) and ``compile --emit``."""
    files, area_mm2, _ = _write_design(out, built, board, source, hw_name)
    return files, area_mm2


def _write_design(out: Path, built: Built, board: Board, source: dict[str, Any],
                  hw_name: str) -> tuple[dict[str, Path], float, dict[str, Any]]:
    from vtatune.hardware.stock import stock_problems

    area, resources = resources_of(built.hw, board)
    stock = stock_problems(built.hw, board)
    now, made_with = datetime.now(UTC), versions()
    log = autotvm_log(built.hw, [((built.workload.signature,), built)], now, made_with)
    contents: dict[str, bytes] = {
        VTA_CONFIG: _json(built.hw.to_vta_json()),
        SCHEDULE: _json(schedule_json(built, board)),
        PROGRAM: built.program_bytes,
        RESOURCES: _json(resources),
        AUTOTVM_LOG: log.text(),
    }
    manifest = {
        "format": BUNDLE_FORMAT,
        "stock_vta": not stock, "stock_vta_problems": stock,
        "created_at": now.isoformat(timespec="seconds"),
        "versions": made_with,
        "source": source,
        "workload": built.workload.signature, "board": board.name,
        "timing_profile": timing_profile(board), "hw_name": hw_name,
        "cycles": built.timing.cycles, "seconds": built.timing.seconds,
        "accelerator_seconds": built.timing.accelerator_seconds,
        "host_seconds": built.timing.host_seconds, "timing_model": built.timing.model_version,
        "timing_domain": timing_profiles.domain(board.name, built.hw,
                                                [built.workload.kind]).as_dict(),
        "energy": energy_of_built(built, board),
        **vta_flow(built.hw, log),
        "files": {name: {"sha256": sha256(data), "bytes": len(data)}
                  for name, data in contents.items()},
    }
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, data in [*contents.items(), (MANIFEST, _json(manifest))]:
        (out / name).write_bytes(data)
        files[name] = out / name
    return files, area.area_mm2, manifest


def timing_profile(board: Board) -> dict[str, Any]:
    """The timing profile ``board`` times programs with (a flat timing file's content: its
    constants, their sources and calibration), which a manifest carries so that a bundle
    made with a user profile (``pynq-z1@mylab``) verifies on a machine that lacks it."""
    from vtatune.hardware import timing_profiles

    if board.timing is not None:
        return board.timing
    return timing_profiles.resolve(board.base, board.profile).content


def resources_of(hw: HwConfig, board: Board) -> tuple[Any, dict[str, Any]]:
    """The area model's estimate of ``hw`` on ``board`` and ``resources.json``'s content
    (area, totals and the fit on the board), for every kind of bundle."""
    from vtatune.area import estimate, fit

    area = estimate(hw, board)
    return area, {**area.as_dict(), **fit(area, board).as_dict()}


def same_program(raw: bytes, built: Built) -> str | None:
    """None when ``built``'s program is ``raw`` byte for byte, else how they differ."""
    if built.program_bytes == raw:
        return None
    n = min(len(raw), len(built.program_bytes))
    first = next((i for i in range(n) if raw[i] != built.program_bytes[i]), n)
    return (f"sizes {len(raw):,} vs {len(built.program_bytes):,} bytes, first difference at "
            f"byte {first}")


def schedule_json(built: Built, board: Board) -> dict[str, Any]:
    """``schedule.json``: per workload signature its shape, knobs, epilogue and cycles."""
    wl = built.workload
    return {
        "format": SCHEDULE_FORMAT,
        "board": board.name,
        "clock_mhz": board.clock_mhz,
        "workloads": {wl.signature: {
            "workload": wl.describe(),
            "knobs": dict(sorted(built.knobs.items())),
            "epilogue": {"shift": built.shift, "clip": [0, 127]},
            "cycles": built.timing.cycles,
            "latency_ms": round(built.timing.seconds * 1e3, 9),
            "accelerator_ms": round(built.timing.accelerator_seconds * 1e3, 9),
            "host_ms": round(built.timing.host_seconds * 1e3, 9),
            "instructions": len(built.program.insns),
            "uops": int(built.program.uops.size),
        }},
    }


def autotvm_log(hw: HwConfig, units: Sequence[tuple[tuple[str, ...], Built]],
                when: datetime, made_with: dict[str, str], first: str | None = None
                ) -> AutotvmLog:
    """``autotvm.log`` of built layer shapes, each given with the names of the layers it
    stands for; a record's time is the simulated time per call, end to end, on the board.
    ``first``: a network's first layer (its stem; ``autotvm.cpu_reason``)."""
    from vtatune.export.autotvm import Layer, build_log, cpu_reason

    layers = [Layer(tuple(names), b.workload, dict(b.knobs), b.timing.seconds,
                    round(b.compile_seconds, 3), cpu_reason(b.workload, names, first))
              for names, b in units]
    return build_log(hw, layers, when.timestamp(), made_with.get("tvm", "unknown"))


def vta_flow(hw: HwConfig, log: AutotvmLog) -> dict[str, Any]:
    """The manifest's entries for VTA's own flow: ``bitstream`` and ``autotvm``."""
    from vtatune.export.autotvm import model_name

    return {"bitstream": model_name(hw), "autotvm": log.manifest(hw)}


def versions() -> dict[str, str]:
    """Versions of vtatune, TVM, TVM-FFI, numpy and Python (``unknown`` when not installed)."""
    import importlib.metadata as md

    out = {}
    for key, dist in VERSIONED.items():
        try:
            out[key] = md.version(dist)
        except md.PackageNotFoundError:
            out[key] = "unknown"
    out["python"] = platform.python_version()
    return out


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _json(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2) + "\n").encode()


# ---- network bundles: one design, every layer's schedule and program ---------------------
#
# A network bundle: one hardware design and every layer's schedule and program, rebuilt from
# a network study, and its verification.
#
# Files (``manifest.json`` lists the sha256 and size of every other one):
#
# - ``vta_config.json``: the one accelerator (VTA's own keys, TARGET = the board's target);
# - ``schedule.json``: the network (every layer: name, count, shape signature, program file) and,
#   per distinct shape, its workload, knobs, epilogue, cycles and latency on the board, plus the
#   network totals (count-weighted sums); ``latency_ms`` is end to end per call (every layer run
#   is one call), ``accelerator_ms`` + ``host_ms``, as ``simulate`` reports them;
# - ``programs/<layer>.bin``: the VTA program of each distinct shape, named after the first
#   layer of that shape (``Program.to_bytes``);
# - ``resources.json``: the area model's resources, area and board fit;
# - ``autotvm.log``: one AutoTVM record of VTA's template per distinct shape, for
#   ``autotvm.apply_history_best`` in VTA's own flow (``export.autotvm``);
# - ``manifest.json``: format ``vtatune-network-bundle/2``, versions, the source study/trial,
#   the network's time split, ``stock_vta`` with the reasons stock VTA cannot build the
#   design (``hardware.stock``), ``bitstream`` and ``autotvm`` as single-layer bundles (the
#   layers left out of the log listed by name).
#
# A design of a study of SEVERAL networks (one accelerator for all) is one bundle too: one
# ``vta_config.json``; ``schedule.json`` holds the union of the networks (layers named
# ``NETWORK.LAYER``, name ``A+B``) so every distinct shape has one program and one schedule
# (a shape two networks share is tuned once), and lists the networks under ``"networks"``;
# ``networks/<network>.json`` is each network's own schedule (the format of a single network's
# ``schedule.json``: its layers under its own names, their programs in ``programs/``, its
# totals); the manifest lists the networks with their weights, schedule files and times, and
# ``weighted`` the objective: the weighted sum of the networks' latencies.

NETWORK_BUNDLE_FORMAT = "vtatune-network-bundle/2"
NETWORK_SCHEDULE_FORMAT = "vtatune-network-schedule/1"
PROGRAMS = "programs"
NETWORKS = "networks"


def pick_design(info: StudyInfo, trials: Sequence[NetworkTrialRecord], pick: str
                ) -> NetworkTrialRecord:
    """The design ``pick`` names: ``fastest`` (least network latency), ``smallest`` (least
    area on the front), ``knee`` (of the front) or a trial number; ``UserError`` otherwise."""
    from vtatune.hardware import boards
    from vtatune.reports.data import front_of, network_point, require_feasible_design

    require_feasible_design(info, trials)
    done = [t for t in trials if t.status != Status.RUNNING]
    clock = boards.device(info.board).clock_mhz
    return pick_record(
        info, pick, {t.number: t for t in trials}, status=lambda t: (t.status, t.reason),
        fastest=lambda: min((t for t in done if t.feasible and t.seconds is not None),
                            key=lambda t: (t.seconds, t.area_mm2 or 0.0, t.number)),
        front=lambda: front_of([network_point(t, clock) for t in done]), noun="designs")


def write_network_bundle(info: StudyInfo, trials: Sequence[NetworkTrialRecord], pick: str,
                         out: Path, db: str = "") -> BundleResult:
    """Rebuild the picked design's every layer and write the bundle into ``out``."""
    from vtatune.hardware import boards
    from vtatune.hardware.stock import stock_problems
    from vtatune.workloads import from_signature

    t = pick_design(info, trials, pick)
    board = boards.load(info.board)
    hw = hw_of(t.hw, board, t.hw_name)
    units: dict[str, tuple[str, Built]] = {}  # signature -> (program file, built)
    for la in t.layers:
        if la.workload not in units:
            wl = from_signature(la.workload)
            units[la.workload] = (f"{PROGRAMS}/{la.name}.bin", build(wl, hw, la.knobs, board))
    area, resources = resources_of(hw, board)
    schedule = network_schedule_json(info, t, units, board)
    now, made_with = datetime.now(UTC), versions()
    log = autotvm_log(hw, [(tuple(la.name for la in t.layers if la.workload == sig), built)
                           for sig, (_, built) in units.items()], now, made_with,
                      first=t.layers[0].name if t.layers else None)
    contents: dict[str, bytes] = {
        VTA_CONFIG: _json(hw.to_vta_json()),
        SCHEDULE: _json(schedule),
        RESOURCES: _json(resources),
        AUTOTVM_LOG: log.text(),
    }
    for path, built in units.values():
        contents[path] = built.program_bytes
    members = member_schedules(info, t, units, board)
    for m in members:
        contents[m["schedule"]] = _json(m.pop("doc"))
    if members:
        schedule["networks"] = [{k: m[k] for k in ("network", "weight", "schedule")}
                                for m in members]
        contents[SCHEDULE] = _json(schedule)
    network = (info.space or {}).get("network", {}).get("name", info.workload)
    stock = stock_problems(hw, board)
    totals = schedule["network"]
    manifest = {
        "format": NETWORK_BUNDLE_FORMAT,
        "stock_vta": not stock, "stock_vta_problems": stock,
        "created_at": now.isoformat(timespec="seconds"),
        "versions": made_with,
        "source": {"study": info.name, "trial": t.number, "pick": pick, "db": db,
                   "sampler": t.sampler, "objective": info.objective,
                   "stored_cycles": t.cycles,
                   "candidate_keys": {la.name: la.key for la in t.layers}},
        "network": network, "board": board.name, "timing_profile": timing_profile(board),
        "hw_name": t.hw_name,
        "cycles": totals["cycles"], "latency_ms": totals["latency_ms"],
        "accelerator_ms": totals["accelerator_ms"], "host_ms": totals["host_ms"],
        "timing_domain": timing_profiles.domain(
            board.name, hw, sorted({timing_profiles.kind_of(la.workload)
                                    for la in (t.layers or ())} - {""})).as_dict(),
        "energy": network_energy(t, units, board),
        **({"networks": members, "weighted": weighted(members)} if members else {}),
        **vta_flow(hw, log),
        "files": {name: {"sha256": sha256(data), "bytes": len(data)}
                  for name, data in contents.items()},
    }
    (out / PROGRAMS).mkdir(parents=True, exist_ok=True)
    if members:
        (out / NETWORKS).mkdir(parents=True, exist_ok=True)
    files = {}
    for name, data in [*contents.items(), (MANIFEST, _json(manifest))]:
        (out / name).write_bytes(data)
        files[name] = out / name
    return BundleResult(
        folder=out, study=info.name, trial=t.number, pick=pick, hw_name=t.hw_name, knobs={},
        network=network, cycles=schedule["network"]["cycles"],
        stored_cycles=int(t.cycles or 0) if not t.networks else
        sum(int(n.cycles or 0) for n in t.networks), seconds=totals["latency_ms"] / 1e3,
        accelerator_seconds=totals["accelerator_ms"] / 1e3, host_seconds=totals["host_ms"] / 1e3,
        area_mm2=area.area_mm2, layers=tuple(schedule["network"]["layers"]), files=files,
        stock_vta_problems=tuple(stock), vta_flow=vta_flow(hw, log),
        networks=tuple(members))


def member_schedules(info: StudyInfo, t: NetworkTrialRecord,
                     units: dict[str, tuple[str, Built]], board: Any) -> list[dict[str, Any]]:
    """A design of several networks: per network its name, weight, schedule file
    (``networks/<network>.json``, with its document under ``doc``) and totals per run; empty
    for a single network's design."""
    if not t.networks:
        return []
    out = []
    for n in t.networks:
        mine = {la.workload: units[la.workload] for la in n.layers}
        doc = _schedule_doc(n.network, n.layers, mine, board)
        totals = doc["network"]
        out.append({"network": n.network, "weight": n.weight,
                    "schedule": f"{NETWORKS}/{n.network}.json",
                    **{k: totals[k] for k in ("cycles", "latency_ms", "accelerator_ms",
                                              "host_ms")}, "doc": doc})
    return out


def weighted(members: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The objective of a design of several networks: the weighted sums of their times."""
    return {"what": "weighted sum of the networks' latencies (the study's objective)",
            "cycles": int(sum(m["weight"] * m["cycles"] for m in members)),
            **{k: round(sum(m["weight"] * m[k] for m in members), 9)
               for k in ("latency_ms", "accelerator_ms", "host_ms")}}


def network_schedule_json(info: StudyInfo, t: NetworkTrialRecord,
                          units: dict[str, tuple[str, Built]], board: Any) -> dict[str, Any]:
    name = (info.space or {}).get("network", {}).get("name", info.workload)
    return _schedule_doc(name, t.layers, units, board)


def _schedule_doc(name: str, net_layers: Sequence[Any], units: dict[str, tuple[str, Built]],
                  board: Any) -> dict[str, Any]:
    """The schedule of network ``name`` (its layers ``net_layers``, shapes built as
    ``units``)."""
    workloads = {}
    for sig, (path, b) in units.items():
        workloads[sig] = {
            "workload": b.workload.describe(), "knobs": dict(sorted(b.knobs.items())),
            "epilogue": {"shift": b.shift, "clip": [0, 127]}, "program": path,
            "cycles": b.timing.cycles, **_times_ms(b.timing),
            "instructions": len(b.program.insns), "uops": int(b.program.uops.size)}
    layers = [{"name": la.name, "count": la.count, "workload": la.workload,
               "program": units[la.workload][0], "cycles": units[la.workload][1].timing.cycles,
               **_times_ms(units[la.workload][1].timing)}
              for la in net_layers]
    cycles = sum(la["count"] * la["cycles"] for la in layers)
    # every layer run is one call: the network's time per run, end to end and its two parts
    totals = {part: sum(la["count"] * getattr(units[la["workload"]][1].timing, part)
                        for la in layers)
              for part in ("seconds", "accelerator_seconds", "host_seconds")}
    return {"format": NETWORK_SCHEDULE_FORMAT, "board": board.name,
            "clock_mhz": board.clock_mhz,
            "network": {"name": name, "layers": layers, "cycles": int(cycles),
                        "latency_ms": round(totals["seconds"] * 1e3, 9),
                        "accelerator_ms": round(totals["accelerator_seconds"] * 1e3, 9),
                        "host_ms": round(totals["host_seconds"] * 1e3, 9)},
            "workloads": workloads}


def energy_of_built(built: Built, board: Board) -> dict[str, Any]:
    """The manifest's ``energy`` of one call of a rebuilt program (``energy.estimate``):
    the accelerator's and the board's joules with their range, and the model's note."""
    from vtatune.energy import estimate
    from vtatune.errors import ConfigError

    try:
        e = estimate(built.program, built.timing.cycles, built.timing.seconds, board)
    except ConfigError as exc:  # a board of your own without energy constants
        return {"accelerator_j": None, "board_j": None, "note": "; ".join(exc.problems)}
    return {"accelerator_j": e.accelerator_j.as_dict(), "board_j": e.board_j.as_dict(),
            "note": e.note}


def network_energy(t: NetworkTrialRecord, units: dict[str, tuple[str, Built]],
                   board: Any) -> dict[str, Any]:
    """A network bundle's ``energy``: per layer (one run of it, its rebuilt program's) and per
    inference (the count-weighted sums; each range end summed alike; several networks: each
    network's, and ``per_inference`` their weighted sum, the study's objective), and the
    model's note."""
    per_unit = {sig: energy_of_built(b, board) for sig, (_, b) in units.items()}
    parts = ("accelerator_j", "board_j")

    def layers_of(net_layers: Sequence[Any]) -> list[dict[str, Any]]:
        return [{"name": la.name, "count": la.count,
                 **{k: per_unit[la.workload][k] for k in parts}} for la in net_layers]

    def total(rows: list[tuple[float, dict[str, Any]]]) -> dict[str, Any]:
        """sum(weight x each figure) over ``rows`` (None if one is unknown)."""
        known = all(r[k] is not None for _, r in rows for k in parts)
        return {k: {end: sum(w * r[k][end] for w, r in rows)
                    for end in ("value", "low", "high")} if known else None for k in parts}

    notes = "; ".join(sorted({e["note"] for e in per_unit.values()}))
    if not t.networks:
        layers = layers_of(t.layers)
        return {"per_inference": total([(la["count"], la) for la in layers]),
                "layers": layers, "note": notes}
    nets = []
    for n in t.networks:
        layers = layers_of(n.layers)
        nets.append({"network": n.network, "weight": n.weight,
                     **total([(la["count"], la) for la in layers]), "layers": layers})
    return {"per_inference": total([(m["weight"], m) for m in nets]), "networks": nets,
            "note": notes}


def _times_ms(timing: Any) -> dict[str, float]:
    """One call's time in ms: end to end (``latency_ms``) and its two parts."""
    return {"latency_ms": round(timing.seconds * 1e3, 9),
            "accelerator_ms": round(timing.accelerator_seconds * 1e3, 9),
            "host_ms": round(timing.host_seconds * 1e3, 9)}
