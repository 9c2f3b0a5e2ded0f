"""A network bundle: one hardware design and every layer's schedule and program, rebuilt from
a network study, and its verification.

Files (``manifest.json`` lists the sha256 and size of every other one):

- ``vta_config.json``: the one accelerator (VTA's own keys, TARGET = the board's target);
- ``schedule.json``: the network (every layer: name, count, shape signature, program file) and,
  per distinct shape, its workload, knobs, epilogue, cycles and latency on the board, plus the
  network totals (count-weighted sums); ``latency_ms`` is end to end per call (every layer run
  is one call), ``accelerator_ms`` + ``host_ms``, as ``simulate`` reports them;
- ``programs/<layer>.bin``: the VTA program of each distinct shape, named after the first
  layer of that shape (``Program.to_bytes``);
- ``resources.json``: the area model's resources, area and board fit;
- ``autotvm.log``: one AutoTVM record of VTA's template per distinct shape, for
  ``autotvm.apply_history_best`` in VTA's own flow (``export.autotvm``);
- ``manifest.json``: format ``vtatune-network-bundle/2``, versions, the source study/trial,
  the network's time split, ``stock_vta`` with the reasons stock VTA cannot build the
  design (``hardware.stock``), ``bitstream`` and ``autotvm`` as single-layer bundles (the
  layers left out of the log listed by name).

``verify_network_bundle`` rebuilds it from its own files, layer by layer: checksums, config,
schedule (layer names and counts as a network file's rules allow), every program parses,
recompiles byte-identically, gives exactly the exported cycles, runs bit-exactly against
numpy; the network totals add up; ``autotvm.log`` holds the schedule's records; resources
match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vtatune.errors import UserError, VtatuneError
from vtatune.export.autotvm import AUTOTVM_LOG
from vtatune.export.bundle import (
    MANIFEST,
    RESOURCES,
    SCHEDULE,
    VTA_CONFIG,
    Built,
    _json,
    autotvm_log,
    build,
    hw_of,
    pick_record,
    resources_of,
    same_program,
    sha256,
    versions,
    vta_flow,
)
from vtatune.export.verify import (
    FAIL,
    INFO,
    MAX_PROGRAM_BYTES,
    PASS,
    SKIP,
    Check,
    VerifyReport,
    _autotvm,
    _checksums,
    _Failed,
    _finite,
    _fit,
    _layer,
    _Note,
    _resources,
    _timing_of,
    _versions_line,
    _vta_config,
    bit_exact,
)
from vtatune.networks.network import MAX_LAYERS, count_problem, name_problem
from vtatune.store.records import NetworkTrialRecord, StudyInfo
from vtatune.workloads.base import DEFAULT_SHIFT

NETWORK_BUNDLE_FORMAT = "vtatune-network-bundle/2"
NETWORK_SCHEDULE_FORMAT = "vtatune-network-schedule/1"
PROGRAMS = "programs"
#: Seed of the functional check's random inputs (as for single-layer bundles).
CHECK_SEED = 0


@dataclass(frozen=True)
class NetworkBundleResult:
    """What ``write_network_bundle`` wrote; ``stored_cycles`` is the network latency the study
    measured (it differs from ``cycles`` only if the compiler or simulator changed since)."""

    folder: Path
    study: str
    trial: int
    pick: str
    hw_name: str
    network: str
    cycles: int
    stored_cycles: int
    seconds: float
    area_mm2: float
    layers: tuple[dict[str, Any], ...]
    files: dict[str, Path]
    accelerator_seconds: float = 0.0
    host_seconds: float = 0.0
    stock_vta_problems: tuple[str, ...] = ()
    #: The manifest's entries for VTA's flow: ``bitstream`` and ``autotvm``.
    vta_flow: dict[str, Any] = field(default_factory=dict)

    @property
    def stock_vta(self) -> bool:
        return not self.stock_vta_problems


def pick_design(info: StudyInfo, trials: Sequence[NetworkTrialRecord], pick: str
                ) -> NetworkTrialRecord:
    """The design ``pick`` names: ``fastest`` (least network latency), ``smallest`` (least
    area on the front), ``knee`` (of the front) or a trial number; ``UserError`` otherwise."""
    from vtatune.hardware import boards
    from vtatune.reports.data import front_of, network_point, require_feasible_design

    require_feasible_design(info, trials)
    done = [t for t in trials if t.status != "running"]
    clock = boards.load(info.board).clock_mhz
    return pick_record(
        info, pick, {t.number: t for t in trials}, status=lambda t: (t.status, t.reason),
        fastest=lambda: min((t for t in done if t.feasible and t.seconds is not None),
                            key=lambda t: (t.seconds, t.area_mm2 or 0.0, t.number)),
        front=lambda: front_of([network_point(t, clock) for t in done]), noun="designs")


def write_network_bundle(info: StudyInfo, trials: Sequence[NetworkTrialRecord], pick: str,
                         out: Path, db: str = "") -> NetworkBundleResult:
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
                           for sig, (_, built) in units.items()], now, made_with)
    contents: dict[str, bytes] = {
        VTA_CONFIG: _json(hw.to_vta_json()),
        SCHEDULE: _json(schedule),
        RESOURCES: _json(resources),
        AUTOTVM_LOG: log.text(),
    }
    for path, built in units.values():
        contents[path] = built.program_bytes
    network = (info.space or {}).get("network", {}).get("name", info.workload)
    stock = stock_problems(hw, board)
    totals = schedule["network"]
    manifest = {
        "format": NETWORK_BUNDLE_FORMAT,
        "created_at": now.isoformat(timespec="seconds"),
        "versions": made_with,
        "source": {"study": info.name, "trial": t.number, "pick": pick, "db": db,
                   "sampler": t.sampler, "objective": info.objective,
                   "stored_cycles": t.cycles,
                   "candidate_keys": {la.name: la.key for la in t.layers}},
        "network": network, "board": board.name, "hw_name": t.hw_name,
        "cycles": totals["cycles"], "latency_ms": totals["latency_ms"],
        "accelerator_ms": totals["accelerator_ms"], "host_ms": totals["host_ms"],
        "stock_vta": not stock, "stock_vta_problems": stock,
        **vta_flow(hw, log),
        "files": {name: {"sha256": sha256(data), "bytes": len(data)}
                  for name, data in contents.items()},
    }
    (out / PROGRAMS).mkdir(parents=True, exist_ok=True)
    files = {}
    for name, data in [*contents.items(), (MANIFEST, _json(manifest))]:
        (out / name).write_bytes(data)
        files[name] = out / name
    return NetworkBundleResult(
        folder=out, study=info.name, trial=t.number, pick=pick, hw_name=t.hw_name,
        network=network, cycles=schedule["network"]["cycles"],
        stored_cycles=int(t.cycles or 0), seconds=totals["latency_ms"] / 1e3,
        accelerator_seconds=totals["accelerator_ms"] / 1e3, host_seconds=totals["host_ms"] / 1e3,
        area_mm2=area.area_mm2, layers=tuple(schedule["network"]["layers"]), files=files,
        stock_vta_problems=tuple(stock), vta_flow=vta_flow(hw, log))


def network_schedule_json(info: StudyInfo, t: NetworkTrialRecord,
                          units: dict[str, tuple[str, Built]], board: Any) -> dict[str, Any]:
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
              for la in t.layers]
    cycles = sum(la["count"] * la["cycles"] for la in layers)
    # every layer run is one call: the network's time per run, end to end and its two parts
    totals = {part: sum(la["count"] * getattr(units[la["workload"]][1].timing, part)
                        for la in layers)
              for part in ("seconds", "accelerator_seconds", "host_seconds")}
    name = (info.space or {}).get("network", {}).get("name", info.workload)
    return {"format": NETWORK_SCHEDULE_FORMAT, "board": board.name,
            "clock_mhz": board.clock_mhz,
            "network": {"name": name, "layers": layers, "cycles": int(cycles),
                        "latency_ms": round(totals["seconds"] * 1e3, 9),
                        "accelerator_ms": round(totals["accelerator_seconds"] * 1e3, 9),
                        "host_ms": round(totals["host_seconds"] * 1e3, 9)},
            "workloads": workloads}


def _times_ms(timing: Any) -> dict[str, float]:
    """One call's time in ms: end to end (``latency_ms``) and its two parts."""
    return {"latency_ms": round(timing.seconds * 1e3, 9),
            "accelerator_ms": round(timing.accelerator_seconds * 1e3, 9),
            "host_ms": round(timing.host_seconds * 1e3, 9)}


# ---- verification ------------------------------------------------------------------------------

def is_network_bundle(folder: Path) -> bool:
    """True when ``folder``'s manifest says it is a network bundle (False if unreadable)."""
    from vtatune.readers import read_json

    try:
        doc = read_json(folder / MANIFEST, "bundle manifest")
    except (VtatuneError, OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("format") == NETWORK_BUNDLE_FORMAT


def bundle_kind(folder: Path) -> str:
    """The kind of study ``folder``'s bundle was exported from: ``network`` when its
    manifest says so, ``operator`` otherwise (also for a folder that is not a bundle: the
    operator checks say what is missing)."""
    try:  # a name too long or with a NUL: not a folder (read_manifest says so, exit 2)
        return "network" if folder.is_dir() and is_network_bundle(folder) else "operator"
    except (OSError, ValueError):
        return "operator"


def read_network_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of a network bundle; ``UserError`` when the bundle is incomplete."""
    from vtatune.escaping import shown
    from vtatune.readers import read_json

    path = folder / MANIFEST
    manifest = read_json(path, "bundle manifest")
    files = manifest.get("files") if isinstance(manifest, dict) else None
    required = (VTA_CONFIG, SCHEDULE, RESOURCES, AUTOTVM_LOG)
    if not isinstance(files, dict) or not all(n in files for n in required) or not all(
            isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("sha256"), str)
            for k, v in files.items()):
        raise UserError(f"{shown(str(path))}: the manifest must list sha256 checksums of "
                        f"{', '.join(required)} and every program")
    if not isinstance(manifest.get("board", ""), str):
        raise UserError(f"{shown(str(path))}: the manifest's board must be a name")
    root = folder.resolve()
    for name in files:
        try:
            inside = "\0" not in name and (folder / name).resolve().is_relative_to(root)
        except (OSError, ValueError):
            inside = False
        if not inside:
            raise UserError(f"{shown(str(path))}: file {shown(name, 80)} lies outside the "
                            "bundle")
    missing = [n for n in files if not (folder / n).is_file()]
    if missing:
        raise UserError(f"bundle {shown(str(folder))} is incomplete: missing "
                        f"{', '.join(shown(n, 80) for n in missing)}")
    return manifest


def verify_network_bundle(folder: Path, board: str | None = None, functional: bool = True,
                          on_check: Callable[[Check], None] | None = None) -> VerifyReport:
    """Every check of a network bundle (see the module docstring); per layer shape, one
    ``program``, ``rebuild``, ``cycles`` and ``functional`` check named after its file."""
    from vtatune.hardware import boards

    manifest = read_network_manifest(folder)
    exported = str(manifest.get("board", ""))
    if not boards.is_known(exported):  # a board (and timing profile) name, never a file
        from vtatune.escaping import shown

        raise UserError(f"{shown(str(folder / MANIFEST))}: unknown board {shown(exported, 40)}"
                        f" (known: {', '.join(boards.names())})")
    brd = boards.load(board or exported)
    _timing_of(brd)
    checks: list[Check] = []
    state: dict[str, Any] = {}

    def record(name: str, status: str, detail: str) -> None:
        c = Check(name, status, detail)
        checks.append(c)
        if on_check is not None:
            on_check(c)

    def run(name: str, needs: Sequence[str], where: dict[str, Any],
            step: Callable[[], str]) -> None:
        missing = [n for n in needs if n not in where]
        if missing:
            record(name, SKIP, f"needs {', '.join(missing)}")
            return
        try:
            record(name, PASS, step())
        except _Failed as exc:
            record(name, FAIL, str(exc))
        except _Note as exc:
            record(name, INFO, str(exc))
        except VtatuneError as exc:
            record(name, FAIL, f"{type(exc).__name__}: {exc}")

    raw, unreadable = _read_network_files(folder, manifest["files"])
    record("versions", INFO, _versions_line(manifest.get("versions", {})))
    run("checksums", (), state, lambda: _checksums(raw, unreadable, manifest))
    run("vta_config", (), state, lambda: _vta_config(folder, state))
    run("schedule", ("hw", SCHEDULE), {**state, **raw}, lambda: _network_schedule(raw, state))
    for path, unit in state.get("units", {}).items():
        tag = Path(path).stem
        run(f"program {tag}", ("hw",), state, lambda u=unit, p=path: _unit_program(
            raw.get(p, b""), state["hw"], u))
        run(f"rebuild {tag}", ("program",), unit, lambda u=unit, p=path: _unit_rebuild(
            raw[p], state["hw"], brd, u))
        run(f"cycles {tag}", ("program",), unit, lambda u=unit: _unit_cycles(brd, exported, u))
        if functional:
            run(f"functional {tag}", ("program",), unit, lambda u=unit: _unit_functional(u))
    if "units" in state:
        units = state["units"]
        needs = [u for u in units.values() if "timed" not in u]
        if needs or brd.name != exported:
            record("network", SKIP if needs else INFO, "needs every layer's cycles" if needs
                   else f"{_network_cycles(state):,} cycles on {brd.name}")
        else:
            run("network", (), state, lambda: _network_total(state))
    run("autotvm", ("hw", "units", AUTOTVM_LOG), {**state, **raw}, lambda: _autotvm(
        raw[AUTOTVM_LOG], state["hw"], [_layer(tuple(n for n, _ in u["layers"]), u)
                                        for u in state["units"].values()], manifest))
    run("resources", ("hw", RESOURCES), {**state, **raw},
        lambda: _resources(raw[RESOURCES], state))
    if brd.name != exported:
        run("fit", ("hw",), state, lambda: _fit(brd, state))
    return VerifyReport(folder=folder, board=brd.name, checks=tuple(checks))


def _read_network_files(folder: Path, names: Iterable[str]
                        ) -> tuple[dict[str, bytes], dict[str, str]]:
    """The bundle's files that are regular files of bounded size, and why the others are
    not (the checksums check fails on them; checks that need them are skipped)."""
    from vtatune.errors import InputError
    from vtatune.readers import MAX_CONFIG_BYTES, read_bytes

    raw, unreadable = {}, {}
    for n in names:
        try:
            raw[n] = read_bytes(folder / n, "", MAX_PROGRAM_BYTES if n.endswith(".bin")
                                else MAX_CONFIG_BYTES)
        except InputError as exc:
            unreadable[n] = "; ".join(exc.problems)
    return raw, unreadable


def _network_schedule(raw: dict[str, bytes], state: dict[str, Any]) -> str:
    from vtatune import schedules
    from vtatune.readers import decode_text, parse_json
    from vtatune.workloads import from_signature

    doc = parse_json(decode_text(raw[SCHEDULE], SCHEDULE), SCHEDULE)
    try:
        net = doc["network"]
        layers = [(la["name"], la["count"], str(la["workload"]), str(la["program"]))
                  for la in net["layers"]]
        total = int(net["cycles"])
        entries = {str(sig): ({str(k): int(v) for k, v in e["knobs"].items()},
                              int(e["cycles"]), int(e.get("epilogue", {}).get("shift",
                                                                              DEFAULT_SHIFT)),
                              str(e["program"]), _finite(e["latency_ms"]))
                   for sig, e in doc["workloads"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _Failed(f"malformed {SCHEDULE} ({type(exc).__name__}: {exc}); expected a network "
                      "with layers and per-workload knobs, cycles and programs") from None
    if not layers:
        raise _Failed(f"{SCHEDULE} lists no layers")
    if len(layers) > MAX_LAYERS:
        raise _Failed(f"{SCHEDULE} lists {len(layers):,} layers; a network has at most "
                      f"{MAX_LAYERS:,}")
    # the rules of a network file: a name is used in messages and file names, a count weighs
    # the network's total
    bad = [f"network {why}" for why in (name_problem(net.get("name", "network")),) if why]
    bad += [f"layer {i}: {why}" for i, (name, count, _, _) in enumerate(layers, 1)
            for why in (name_problem(name), count_problem(count)) if why]
    names = [name for name, _, _, _ in layers]
    if not bad and len(set(names)) < len(names):
        bad.append("two layers have the same name")
    if bad:
        raise _Failed("; ".join(bad[:4]) + (f" (+{len(bad) - 4} more)" if len(bad) > 4
                                            else ""))
    problems = []
    units: dict[str, dict[str, Any]] = {}
    for name, count, sig, path in layers:
        if sig not in entries:
            problems.append(f"layer {name}: no schedule for {sig}")
            continue
        knobs, cycles, shift, program, latency_ms = entries[sig]
        if program != path:
            problems.append(f"layer {name}: program {path} is not its shape's {program}")
        if path not in raw:
            problems.append(f"layer {name}: program {path} is not in the manifest")
            continue
        unit = units.setdefault(path, {"sig": sig, "knobs": knobs, "cycles": cycles,
                                       "shift": shift, "latency_ms": latency_ms, "layers": []})
        unit["layers"].append((name, count))
    for path, unit in units.items():
        wl = from_signature(unit["sig"])
        why = schedules.knob_space(wl, state["hw"]).problem(unit["knobs"])
        if why:
            problems.append(f"{path}: knobs {unit['knobs']} are not legal for {unit['sig']} "
                            f"on this hardware: {why}")
        unit["workload"] = wl
    if problems:
        raise _Failed("; ".join(problems[:4]) + (f" (+{len(problems) - 4} more)"
                                                   if len(problems) > 4 else ""))
    state.update(units=units, total=total)
    return (f"network {net.get('name', '?')}: {len(layers)} layers "
            f"({sum(c for _, c, _, _ in layers)} runs), {len(units)} distinct shapes; "
            f"{total:,} cycles")


def _unit_program(raw: bytes, hw: Any, unit: dict[str, Any]) -> str:
    import struct

    from vtatune.program.program import Program

    try:
        program = Program.from_bytes(hw, raw)
    except (ValueError, IndexError, struct.error, UnicodeDecodeError) as exc:
        raise _Failed(f"corrupt program ({type(exc).__name__}: {exc})") from None
    problems = program.check()
    if problems:
        raise _Failed("; ".join(problems[:3]))
    unit["program"] = program
    return f"{len(program.insns):,} instructions, {program.uops.size:,} micro-ops"


def _unit_rebuild(raw: bytes, hw: Any, board: Any, unit: dict[str, Any]) -> str:
    differs = same_program(raw, build(unit["workload"], hw, unit["knobs"], board,
                                      unit["shift"]))
    if differs:
        raise _Failed(f"the rebuilt program differs ({differs})")
    return f"recompiled {unit['sig']}: byte-identical ({len(raw):,} bytes)"


def _unit_cycles(board: Any, exported: str, unit: dict[str, Any]) -> str:
    from vtatune.simulator import simulate

    timing = simulate(unit["program"], board)
    unit["timed"] = timing.cycles
    if board.name != exported:
        raise _Note(f"{timing.cycles:,} cycles on {board.name}; not compared with the "
                    f"{unit['cycles']:,} exported for {exported}")
    if timing.cycles != unit["cycles"]:
        raise _Failed(f"{timing.cycles:,} cycles on {board.name}, the bundle says "
                      f"{unit['cycles']:,}")
    layers = ", ".join(f"{n} x{c}" for n, c in unit["layers"])
    return f"{timing.cycles:,} cycles on {board.name}, as exported ({layers})"


def _unit_functional(unit: dict[str, Any]) -> str:
    size = bit_exact(unit["program"], unit["workload"], unit["shift"])
    return f"bit-exact vs numpy ({size:,} outputs, seed {CHECK_SEED})"


def _network_cycles(state: dict[str, Any]) -> int:
    return sum(c * u["timed"] for u in state["units"].values() for _, c in u["layers"])


def _network_total(state: dict[str, Any]) -> str:
    total = _network_cycles(state)
    if total != state["total"]:
        raise _Failed(f"the layers add up to {total:,} cycles, the bundle says "
                      f"{state['total']:,}")
    return f"{total:,} cycles = the layers' count-weighted sum, as exported"
