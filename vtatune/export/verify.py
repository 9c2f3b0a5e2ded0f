"""Verify a bundle: reload it, rebuild it from its own configs, and compare.

Checks, in order (a check whose inputs failed is skipped):

1. ``checksums``: every file's sha256 and size equal the manifest's;
2. ``vta_config``: ``vta_config.json`` validates (``hardware.config.load``);
3. ``schedule``: ``schedule.json`` names a workload and knobs legal on that hardware;
4. ``program.bin``: parses, and was built for the bundle's hardware;
5. ``rebuild``: compiling the workload with those knobs gives a byte-identical program.bin;
6. ``cycles``: the timing simulator gives exactly the exported cycles on the exported board
   (on another board it reports the cycles there, for information);
7. ``functional``: the bundled program run bit-exactly on random int8 inputs equals numpy;
8. ``autotvm``: ``autotvm.log`` holds exactly the AutoTVM record of schedule.json's workload,
   knobs and time in VTA's template (or none, and the manifest lists the layer, when stock
   VTA cannot run it so), for the manifest's ``bitstream``, the design's VTA name;
9. ``resources``: the area model gives the exported resources, area and board fit;
10. ``fit`` (only with another ``board``): the design fits that board.

A network bundle checks ``schedule`` against a network file's rules (names, counts) and then
``program``/``rebuild``/``cycles``/``functional`` per distinct layer shape and the network's
total. A bundle of several networks (one accelerator for all) applies the name rules to each
member network's name (the union is named ``A+B``) and adds ``networks``: each network's own
schedule (``networks/<name>.json``) has exactly the union's ``NAME.LAYER`` layers with their
counts, programs and cycles, and totals that add up.

A missing folder, manifest or listed file, or a manifest that is not a bundle's, is bad input
(``UserError``); everything else is a check that passes or fails.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vtatune.errors import UserError, VtatuneError
from vtatune.escaping import shown
from vtatune.export.autotvm import AUTOTVM_LOG
from vtatune.export.bundle import (
    BUNDLE_FILES,
    BUNDLE_FORMAT,
    MANIFEST,
    NETWORK_BUNDLE_FORMAT,
    NETWORKS,
    PROGRAM,
    RESOURCES,
    SCHEDULE,
    VTA_CONFIG,
    build,
    same_program,
    sha256,
    versions,
)
from vtatune.networks.network import MAX_LAYERS, count_problem, name_problem
from vtatune.workloads.base import DEFAULT_SHIFT

PASS, FAIL, SKIP, INFO = "pass", "FAIL", "skip", "info"
#: Bundle formats of earlier vtatune versions (before autotvm.log), refused with a hint.
EARLIER_FORMATS = ("vtatune-bundle/1", "vtatune-network-bundle/1")

#: Seed of the functional check's random inputs.
CHECK_SEED = 0


@dataclass(frozen=True)
class Check:
    """One verification step: ``status`` is pass, FAIL, skip (inputs failed) or info."""

    name: str
    status: str
    detail: str


@dataclass(frozen=True)
class VerifyReport:
    folder: Path
    board: str
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.status == FAIL)


#: Largest program.bin read (bytes): a fine-grained schedule's program is a few MiB.
MAX_PROGRAM_BYTES = 256 << 20


def read_manifest(folder: Path) -> dict[str, Any]:
    """The bundle's manifest; ``UserError`` when ``folder`` is not a complete bundle."""
    from vtatune.readers import read_json

    if not _is_dir(folder):
        raise UserError(f"{shown(str(folder))}: no such bundle folder")
    path = folder / MANIFEST
    if not _exists(path):
        raise UserError(f"{shown(str(folder))} is not a bundle: no {MANIFEST}")
    manifest = read_json(path, "bundle manifest")
    if isinstance(manifest, dict) and manifest.get("format") in EARLIER_FORMATS:
        raise UserError(f"{shown(str(path))}: a bundle of format {manifest['format']!r}, "
                        "made by an earlier vtatune without autotvm.log: export it again")
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        fmt = manifest.get("format") if isinstance(manifest, dict) else None
        raise UserError(f"{shown(str(path))}: not a vtatune bundle manifest (format "
                        f"{shown(fmt, 40)}, expected {BUNDLE_FORMAT!r})")
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != set(BUNDLE_FILES) or not all(
            isinstance(v, dict) and isinstance(v.get("sha256"), str) for v in files.values()):
        raise UserError(f"{shown(str(path))}: the manifest must list sha256 checksums of "
                        f"{', '.join(BUNDLE_FILES)}")
    board = manifest.get("board", "")
    if not isinstance(board, str):
        raise UserError(f"{shown(str(path))}: the manifest's board must be a name")
    missing = [n for n in BUNDLE_FILES if not _exists(folder / n)]
    if missing:
        raise UserError(f"bundle {shown(str(folder))} is incomplete: missing "
                        f"{', '.join(missing)}")
    return manifest


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _read_files(folder: Path, names: Iterable[str]
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


def verify_bundle(folder: Path, board: str | None = None, functional: bool = True,
                  on_check: Callable[[Check], None] | None = None) -> VerifyReport:
    """Run every check on the bundle in ``folder``. ``board`` verifies it for another board
    than the exported one: its cycles there are reported (only the exported board's cycles
    can match) and a ``fit`` check says whether the design fits it. ``on_check`` hears of
    each check as it finishes."""
    if bundle_kind(folder) == "network":
        return verify_network_bundle(folder, board, functional, on_check)
    manifest = read_manifest(folder)
    brd, exported = _boards_of(folder, manifest, board)
    checks = _Checks(on_check)
    state: dict[str, Any] = {}
    record = checks.record

    def run(name: str, needs: tuple[str, ...], step: Callable[[], str]) -> None:
        checks.run(name, needs, state, step)

    raw, unreadable = _read_files(folder, BUNDLE_FILES)
    state.update(raw)
    record("versions", INFO, _versions_line(manifest.get("versions", {})))
    run("checksums", (), lambda: _checksums(raw, unreadable, manifest))
    run("vta_config", (VTA_CONFIG,), lambda: _vta_config(folder, state))
    run("schedule", ("hw", SCHEDULE), lambda: _schedule(raw[SCHEDULE], state))
    run(PROGRAM, ("hw", PROGRAM), lambda: _program(raw[PROGRAM], state))
    run("rebuild", ("hw", "workload", "program"), lambda: _rebuild(raw[PROGRAM], brd, state))
    run("cycles", ("program", "workload"), lambda: _cycles(brd, exported, state))
    if functional:
        run("functional", ("program", "workload"), lambda: _functional(state))
    run("autotvm", ("hw", "workload", AUTOTVM_LOG), lambda: _autotvm(
        raw[AUTOTVM_LOG], state["hw"], [_layer((state["workload"].signature,), state)],
        manifest))
    run("resources", ("hw", RESOURCES), lambda: _resources(raw[RESOURCES], state))
    if brd.name != exported:
        run("fit", ("hw",), lambda: _fit(brd, state))
    return VerifyReport(folder=folder, board=brd.name, checks=tuple(checks.done))


def _boards_of(folder: Path, manifest: dict[str, Any], board: str | None) -> tuple[Any, str]:
    """The board to verify on (``board``, else the exported one) and the exported board's
    name; ``UserError`` for an unknown exported board or a board without timing."""
    from vtatune.hardware import boards

    exported = str(manifest.get("board", ""))
    if not boards.is_known(exported):  # a board (and timing profile) name, never a file
        from vtatune.escaping import shown

        raise UserError(f"{shown(str(folder / MANIFEST))}: unknown board {shown(exported, 40)}"
                        f" (known: {', '.join(boards.names())})")
    brd = boards.load(board if board is not None else exported)
    _timing_of(brd)
    return brd, exported


@dataclass
class _Checks:
    """The checks run so far; ``on_check`` hears of each as it finishes."""

    on_check: Callable[[Check], None] | None
    done: list[Check] = field(default_factory=list)

    def record(self, name: str, status: str, detail: str) -> None:
        c = Check(name, status, detail)
        self.done.append(c)
        if self.on_check is not None:
            self.on_check(c)

    def run(self, name: str, needs: Sequence[str], where: Mapping[str, Any],
            step: Callable[[], str]) -> None:
        """Run ``step`` unless an input it ``needs`` is missing from ``where`` (skipped)."""
        missing = [n for n in needs if n not in where]
        if missing:
            self.record(name, SKIP, f"needs {', '.join(missing)}")
            return
        try:
            self.record(name, PASS, step())
        except _Failed as exc:
            self.record(name, FAIL, str(exc))
        except _Note as exc:
            self.record(name, INFO, str(exc))
        except VtatuneError as exc:  # a rejected config, program or candidate: a failed check
            self.record(name, FAIL, f"{type(exc).__name__}: {exc}")


def _timing_of(board: Any) -> None:
    """``ConfigError`` (bad input, exit 2) when ``board`` has no timing parameters: every
    cycles check would fail on it, and the bundle is not to blame."""
    from vtatune.simulator.timing import load_params

    load_params(board)


class _Failed(Exception):
    """A check's verdict, with the reason."""


class _Note(Exception):
    """A check that has nothing to compare against: what it found, for information."""


def _versions_line(made: Any) -> str:
    here = versions()
    if not isinstance(made, dict):
        return "the manifest records no versions"
    diff = [f"{k} {made.get(k)} (here {v})" for k, v in here.items() if made.get(k) != v]
    if not diff:
        return "made with the versions used here (" + ", ".join(
            f"{k} {v}" for k, v in here.items()) + ")"
    return "made with " + ", ".join(diff)


def _checksums(raw: dict[str, bytes], unreadable: dict[str, str],
               manifest: dict[str, Any]) -> str:
    bad = []
    for name, data in raw.items():
        want = manifest["files"][name]
        if sha256(data) != want["sha256"] or want.get("bytes", len(data)) != len(data):
            bad.append(f"{name} (sha256 {sha256(data)[:12]}..., manifest "
                       f"{str(want['sha256'])[:12]}...)")
    if bad or unreadable:
        raise _Failed("; ".join(
            ([f"unreadable: {', '.join(f'{n} {why}' for n, why in unreadable.items())}"]
             if unreadable else []) + (["changed since export: " + ", ".join(bad)] if bad
                                       else [])))
    return f"{len(raw)} files match the manifest's sha256"


def _vta_config(folder: Path, state: dict[str, Any]) -> str:
    from vtatune.hardware import config

    hw = config.load(folder / VTA_CONFIG)
    state["hw"] = hw
    return (f"valid: {hw.shape_label}, inp/wgt/acc/uop {hw.inp_buff_bytes // 1024}/"
            f"{hw.wgt_buff_bytes // 1024}/{hw.acc_buff_bytes // 1024}/"
            f"{hw.uop_buff_bytes // 1024} KiB, TARGET {hw.target}")


def _schedule(raw: bytes, state: dict[str, Any]) -> str:
    from vtatune import schedules
    from vtatune.readers import decode_text, parse_json
    from vtatune.workloads import from_signature

    doc = parse_json(decode_text(raw, SCHEDULE), SCHEDULE)
    try:
        (sig, entry), = doc["workloads"].items()
        knobs = {str(k): int(v) for k, v in entry["knobs"].items()}
        cycles = int(entry["cycles"])
        shift = int(entry.get("epilogue", {}).get("shift", 8))
        latency_ms = _finite(entry["latency_ms"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _Failed(f"malformed {SCHEDULE} ({type(exc).__name__}: {exc}); expected one "
                      "workload with knobs and cycles") from None
    wl = from_signature(sig)
    problem = schedules.knob_space(wl, state["hw"]).problem(knobs)
    if problem:
        raise _Failed(f"knobs {knobs} are not legal for {sig} on this hardware: {problem}")
    state.update(workload=wl, knobs=knobs, cycles=cycles, shift=shift, latency_ms=latency_ms)
    return f"{sig}: " + ", ".join(f"{k}={v}" for k, v in knobs.items()) + f"; {cycles:,} cycles"


def _program(raw: bytes, part: dict[str, Any]) -> str:
    """A program file read and checked: the bundle's (``part`` its state) or one layer
    shape's of a network bundle (``part`` the shape's, with ``hw`` and ``file``)."""
    from vtatune.program.program import Program

    try:
        program = Program.from_bytes(part["hw"], raw)
    except (ValueError, IndexError, struct.error, UnicodeDecodeError) as exc:
        raise _Failed(f"corrupt {part.get('file', PROGRAM)} ({type(exc).__name__}: "
                      f"{exc})") from None
    problems = program.check()
    if problems:
        raise _Failed("; ".join(problems[:3]))
    part["program"] = program
    return (f"{len(program.insns):,} instructions, {program.uops.size:,} micro-ops, "
            f"{len(raw):,} bytes")


def _rebuild(raw: bytes, board: Any, part: dict[str, Any]) -> str:
    differs = same_program(raw, build(part["workload"], part["hw"], part["knobs"], board,
                                      part["shift"]))
    if differs:
        raise _Failed(f"the rebuilt program differs from {part.get('file', PROGRAM)} "
                      f"({differs})")
    return f"recompiled program is byte-identical ({len(raw):,} bytes)"


def _cycles(board: Any, exported: str, part: dict[str, Any]) -> str:
    from vtatune.simulator import simulate

    timing = simulate(part["program"], board)
    part["timed"] = timing.cycles
    layers = ", ".join(f"{n} x{c}" for n, c in part.get("layers", ()))
    at = f"{timing.cycles:,} cycles on {board.name} ({timing.seconds * 1e3:.4g} ms)"
    if board.name != exported:
        raise _Note(f"{at}; not compared with the {part['cycles']:,} exported for {exported}")
    if timing.cycles != part["cycles"]:
        raise _Failed(f"{timing.cycles:,} cycles on {board.name}, the bundle says "
                      f"{part['cycles']:,}")
    return f"{at}, as exported" + (f" ({layers})" if layers else "")


def _functional(part: dict[str, Any]) -> str:
    size = bit_exact(part["program"], part["workload"], part["shift"])
    return f"bit-exact vs numpy on random int8 inputs (seed {CHECK_SEED}, {size:,} outputs)"


def bit_exact(program: Any, wl: Any, shift: int) -> int:
    """The functional check of every bundle: ``program`` run on random int8 inputs (seed
    ``CHECK_SEED``) against ``wl``'s numpy reference; the number of outputs, or ``_Failed``
    saying how many differ."""
    from vtatune.runtime.execute import execute, random_inputs

    data, kernel = random_inputs(wl, CHECK_SEED)
    got = execute(program, wl, data, kernel).output
    want = wl.reference(data, kernel, shift)
    if got.shape != want.shape or not (got == want).all():
        wrong = int((got != want).sum()) if got.shape == want.shape else got.size
        raise _Failed(f"{wrong:,} of {want.size:,} outputs differ from numpy")
    return int(want.size)


def _finite(value: Any) -> float:
    """A JSON number that is finite (``ValueError`` otherwise)."""
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value):
        raise ValueError(f"{value!r} is not a finite number")
    return float(value)


def _layer(names: tuple[str, ...], unit: dict[str, Any]) -> Any:
    """A schedule entry (workload, knobs, ``latency_ms``) as an AutoTVM log layer."""
    from vtatune.export.autotvm import Layer

    return Layer(names, unit["workload"], unit["knobs"], unit["latency_ms"] / 1e3)


def _autotvm(raw: bytes, hw: Any, layers: list[Any], manifest: dict[str, Any]) -> str:
    """``autotvm.log`` against the records the schedule gives (``export.autotvm``)."""
    from vtatune.export import autotvm as at

    want = at.build_log(hw, layers, 0.0, "")
    name = at.model_name(hw)
    if manifest.get("bitstream") != name:
        raise _Failed(f"the manifest's bitstream {shown(manifest.get('bitstream'), 60)} is not "
                      f"this design's VTA name {name}")
    listed = manifest.get("autotvm", {})
    listed = listed.get("not_in_log") if isinstance(listed, dict) else None
    left = sorted(x["workload"] for x in want.left_out)
    if not isinstance(listed, list) or sorted(
            str(x.get("workload")) if isinstance(x, dict) else "" for x in listed) != left:
        raise _Failed("the manifest's autotvm.not_in_log does not list the layers VTA's "
                      f"templates cannot express ({', '.join(left) or 'none'})")
    try:
        records = at.parse_log(raw)
    except ValueError as exc:
        raise _Failed(f"malformed {AUTOTVM_LOG}: {exc}") from None
    problems = at.compare(records, want)
    if problems:
        raise _Failed("; ".join(problems[:3]) + (f" (+{len(problems) - 3} more)"
                                                 if len(problems) > 3 else ""))
    out = (f"{len(records)} record{'s' * (len(records) != 1)} for -model={name}, as "
           f"{SCHEDULE}" if name else f"no records: {at.non_square_reason(hw)}")
    if want.left_out and name:
        out += "; not in the log (stock VTA cannot run them): " + "; ".join(
            f"{', '.join(x['layers'])}: {x['reason']}" for x in want.left_out)
    return out


def _resources(raw: bytes, state: dict[str, Any]) -> str:
    from vtatune.area import estimate, fit
    from vtatune.hardware import boards
    from vtatune.readers import decode_text, parse_json

    doc = parse_json(decode_text(raw, RESOURCES), RESOURCES)
    try:
        board = boards.load(_board_name(doc["board"]))
        want = {"area_mm2": doc["area_mm2"], "totals": doc["totals"], "fits": doc["fits"]}
    except (ValueError, KeyError, TypeError) as exc:
        raise _Failed(f"malformed {RESOURCES} ({type(exc).__name__}: {exc})") from None
    area = estimate(state["hw"], board)
    fitted = fit(area, board)
    got = {"area_mm2": area.area_mm2, "totals": dict(area.totals), "fits": fitted.fits}
    if got != want:
        diff = [k for k in got if got[k] != want[k]]
        raise _Failed(f"the area model now gives other {', '.join(diff)} than {RESOURCES}")
    from vtatune import formats

    return (f"{formats.area(area.area_mm2)} mm², " + ", ".join(
        f"{k} {v:,.0f}" if v == int(v) else f"{k} {v:,.1f}" for k, v in area.totals.items())
        + f"; {fitted.summary()}")


def _board_name(value: Any) -> str:
    """A board named in a bundle file: a name, never a path to read."""
    from vtatune.errors import ConfigError
    from vtatune.hardware import boards

    if not isinstance(value, str) or not boards.is_known(value):
        raise ConfigError(RESOURCES, [f"board {shown(value, 40)} is not a known board name"])
    return value


def _fit(board: Any, state: dict[str, Any]) -> str:
    from vtatune.area import estimate, fit

    fitted = fit(estimate(state["hw"], board), board)
    if not fitted.fits:
        raise _Failed(fitted.summary())
    return fitted.summary()


# ---- network bundles: checksums, config, schedule (layer names and counts as a network file's
# rules allow), then per layer shape program, rebuild, cycles and functional; the network's
# total; autotvm.log; resources -------------------------------------------------------------

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
    manifest = read_network_manifest(folder)
    brd, exported = _boards_of(folder, manifest, board)
    checks = _Checks(on_check)
    state: dict[str, Any] = {}
    record, run = checks.record, checks.run

    raw, unreadable = _read_files(folder, manifest["files"])
    record("versions", INFO, _versions_line(manifest.get("versions", {})))
    run("checksums", (), state, lambda: _checksums(raw, unreadable, manifest))
    run("vta_config", (), state, lambda: _vta_config(folder, state))
    run("schedule", ("hw", SCHEDULE), {**state, **raw}, lambda: _network_schedule(raw, state))
    for path, unit in state.get("units", {}).items():  # the operator checks, per shape
        tag = Path(path).stem
        unit.update(hw=state["hw"], file=path)
        run(f"program {tag}", ("hw",), state, lambda u=unit, p=path: _program(
            raw.get(p, b""), u))
        run(f"rebuild {tag}", ("program",), unit, lambda u=unit, p=path: _rebuild(
            raw[p], brd, u))
        run(f"cycles {tag}", ("program",), unit, lambda u=unit: _cycles(brd, exported, u))
        if functional:
            run(f"functional {tag}", ("program",), unit, lambda u=unit: _functional(u))
    if "units" in state:
        units = state["units"]
        needs = [u for u in units.values() if "timed" not in u]
        if needs or brd.name != exported:
            record("network", SKIP if needs else INFO, "needs every layer's cycles" if needs
                   else f"{_network_cycles(state):,} cycles on {brd.name}")
        else:
            run("network", (), state, lambda: _network_total(state))
    if state.get("members") is not None:
        run("networks", ("units",), state, lambda: _members(raw, state))
    run("autotvm", ("hw", "units", AUTOTVM_LOG), {**state, **raw}, lambda: _autotvm(
        raw[AUTOTVM_LOG], state["hw"], [_layer(tuple(n for n, _ in u["layers"]), u)
                                        for u in state["units"].values()], manifest))
    run("resources", ("hw", RESOURCES), {**state, **raw},
        lambda: _resources(raw[RESOURCES], state))
    if brd.name != exported:
        run("fit", ("hw",), state, lambda: _fit(brd, state))
    return VerifyReport(folder=folder, board=brd.name, checks=tuple(checks.done))


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
    members = doc.get("networks")
    if members is None:
        bad = [f"network {why}" for why in (name_problem(net.get("name", "network")),) if why]
    else:  # several networks: the union is named A+B; each member's name follows the rules
        bad = _member_names(net.get("name"), members)
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
    state.update(units=units, total=total, members=members)
    return (f"network {net.get('name', '?')}: {len(layers)} layers "
            f"({sum(c for _, c, _, _ in layers)} runs), {len(units)} distinct shapes; "
            f"{total:,} cycles")


def _member_names(union: Any, members: Any) -> list[str]:
    """Why the union network ``union`` and its ``members`` (``schedule.json``'s
    ``networks``) break the rules: each member named as a network file may name it, with a
    finite positive weight and its schedule at ``networks/<name>.json``; the union named
    ``A+B...`` after them, in order."""
    if not isinstance(members, list) or not 2 <= len(members) <= MAX_LAYERS or not all(
            isinstance(m, dict) for m in members):
        return ["networks must list two or more networks ({name, weight, schedule})"]
    bad = []
    names = [m.get("network") for m in members]
    for i, m in enumerate(members, 1):
        why = name_problem(m.get("network"))
        if why:
            bad.append(f"network {i}: {why}")
            continue
        w = m.get("weight")
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) \
                or w <= 0:
            bad.append(f"network {m['network']}: weight {_val(w)} must be a "
                       "positive number")
        if m.get("schedule") != f"{NETWORKS}/{m['network']}.json":
            bad.append(f"network {m['network']}: schedule {_val(m.get('schedule'))}"
                       f" must be {NETWORKS}/{m['network']}.json")
    if not bad and len(set(names)) < len(names):
        bad.append("two networks have the same name")
    if not bad and union != "+".join(names):
        bad.append(f"network name {_val(union)} must be its networks' names joined "
                   f"by '+' ({'+'.join(names)})")
    return bad


def _val(value: Any, limit: int = 60) -> str:
    """A value read from a bundle, for a message: its repr (controls escaped), cut short."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _members(raw: dict[str, bytes], state: dict[str, Any]) -> str:
    """Each network's own schedule (``networks/<name>.json``) against the union's: its
    layers are the union's ``NAME.LAYER`` ones with the same counts, shapes and programs,
    its totals their count-weighted sums."""
    from vtatune.readers import decode_text, parse_json

    union = {name: (count, path) for path, u in state["units"].items()
             for name, count in u["layers"]}
    cycles = {path: u["cycles"] for path, u in state["units"].items()}
    out = []
    for m in state["members"]:
        name, path = m["network"], m["schedule"]
        if path not in raw:
            raise _Failed(f"{path} is not in the manifest")
        doc = parse_json(decode_text(raw[path], path), path)
        try:
            net = doc["network"]
            layers = [(la["name"], la["count"], str(la["program"]), int(la["cycles"]))
                      for la in net["layers"]]
            total = int(net["cycles"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise _Failed(f"malformed {path} ({type(exc).__name__}: {exc}); expected a network "
                          "with layers and cycles") from None
        bad = [f"{path}: network name {_val(net.get('name'))} is not {name}"] \
            if net.get("name") != name else []
        bad += [f"{path}: layer {i}: {why}" for i, (la, count, _, _) in enumerate(layers, 1)
                for why in (name_problem(la), count_problem(count)) if why]
        if bad:
            raise _Failed("; ".join(bad[:4]))
        mine = {f"{name}.{la}" for la, _, _, _ in layers}
        theirs = {n for n in union if n.startswith(f"{name}.")}
        if mine != theirs or len(mine) < len(layers):
            raise _Failed(f"{path}: its layers are not the union's {name}.* layers")
        for la, count, program, cyc in layers:
            if union[f"{name}.{la}"] != (count, program) or cycles[program] != cyc:
                raise _Failed(f"{path}: layer {la} (x{count}, {program}, {cyc:,} cycles) is "
                              f"not the union's {name}.{la}")
        if sum(c * cyc for _, c, _, cyc in layers) != total:
            raise _Failed(f"{path}: its layers add up to "
                          f"{sum(c * cyc for _, c, _, cyc in layers):,} cycles, it says "
                          f"{total:,}")
        out.append(f"{name} x{m['weight']:g}: {len(layers)} layers, {total:,} cycles")
    return "; ".join(out)


def _network_cycles(state: dict[str, Any]) -> int:
    return sum(c * u["timed"] for u in state["units"].values() for _, c in u["layers"])


def _network_total(state: dict[str, Any]) -> str:
    total = _network_cycles(state)
    if total != state["total"]:
        raise _Failed(f"the layers add up to {total:,} cycles, the bundle says "
                      f"{state['total']:,}")
    return f"{total:,} cycles = the layers' count-weighted sum, as exported"
