"""Evaluate one candidate: area and board fit, compile and verify, build the program, time it.

The result is always a ``CandidateRecord`` (a failure is a record with a status and a
reason); ``violation`` turns an infeasible record into the constraint violation the samplers
learn from. Cheap checks run first: a design that does not fit the board is not compiled.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from vtatune.compiler import steps
from vtatune.hardware.boards import Board
from vtatune.hardware.config import HwConfig
from vtatune.search.space import Candidate, SearchSpace
from vtatune.statuses import Status
from vtatune.store.records import CandidateRecord
from vtatune.workloads.base import Workload


def hw_invalid_record(wl: Workload, hw: HwConfig, reason: str) -> CandidateRecord:
    """The record of a parameter set whose hardware cannot be built."""
    return CandidateRecord(key=f"{wl.signature}|{hw.key}|hardware", workload=wl.signature,
                           hw_key=hw.key, hw=hw.log_params(), hw_name=hw.name, knobs={},
                           status=Status.HW_INVALID, reason=reason)


def failure_record(cand: Candidate, status: str, reason: str) -> CandidateRecord:
    """A record for a candidate whose evaluation crashed or timed out."""
    return CandidateRecord(key=cand.key, workload=cand.workload.signature,
                           hw_key=cand.hw.key, hw=cand.hw.log_params(), hw_name=cand.hw.name,
                           knobs=dict(cand.knobs), status=status, reason=reason)


def evaluate(cand: Candidate, board: Board, fit_board: bool = True,
             max_area_mm2: float | None = None) -> CandidateRecord:
    """Measure ``cand`` on ``board``. Never raises for a bad candidate."""
    from vtatune.area import estimate, fit
    from vtatune.compiler.cache import default_cache
    from vtatune.errors import VtatuneError
    from vtatune.simulator import bounds

    wl, hw = cand.workload, cand.hw
    base: dict[str, Any] = {"key": cand.key, "workload": wl.signature, "hw_key": hw.key,
                            "hw": hw.log_params(), "hw_name": hw.name, "knobs": dict(cand.knobs)}
    area = estimate(hw, board)
    fitted = fit(area, board)
    base["area_mm2"] = area.area_mm2
    base["resources"] = {**{k: float(v) for k, v in area.totals.items()},
                         "logic_kind": area.logic_kind, "bram_kind": area.bram_kind,
                         "fits": fitted.fits, "over": list(fitted.over),
                         "utilization": {u.kind: u.utilization_pct for u in fitted.usage}}
    if fit_board and not fitted.fits:
        return CandidateRecord(status=Status.NO_FIT, reason=fitted.summary(), **base)
    if max_area_mm2 is not None and area.area_mm2 > max_area_mm2:
        return CandidateRecord(status=Status.NO_FIT, reason=f"area {area.area_mm2:.1f} mm² "
                               f"exceeds the {max_area_mm2:.1f} mm² budget", **base)

    # one lowered program per distinct (workload, GEMM shape, widths, knobs), verified here
    # against this candidate's buffers (see vtatune.compiler.cache)
    res, lowered = default_cache().compile(wl, hw, cand.knobs, passes=cand.passes)
    base["compile_ms"] = res.compile_ms
    if not res.ok:
        resources = dict(base["resources"])
        resources["problems"] = [p.as_dict() for p in res.problems]
        base["resources"] = resources
        status = Status.INVALID if res.status == Status.INVALID else Status.FAILED
        return CandidateRecord(status=status, reason=res.reason, **base)
    t = time.perf_counter()
    try:
        m = measure(lowered, wl, hw, res.knobs, board)
    except VtatuneError as exc:
        return CandidateRecord(status=Status.FAILED, reason=f"{type(exc).__name__}: {exc}",
                               sim_ms=(time.perf_counter() - t) * 1e3, **base)
    sim_ms = (time.perf_counter() - t) * 1e3
    b = bounds(wl.macs, wl.compulsory_bytes(hw), hw, board)
    timing = m.timing
    try:
        energy = energy_of(m, hw, board)
    except VtatuneError as exc:  # a board without energy constants: the candidate stands
        energy = None
        why = f"{type(exc).__name__}: {exc}"
    return CandidateRecord(
        status=Status.OK, cycles=int(timing.cycles), seconds=float(timing.seconds),
        accelerator_seconds=float(timing.accelerator_seconds),
        host_seconds=float(timing.host_seconds), counters=dict(m.counters),
        bounds={"compute_cycles": b.compute_cycles, "memory_cycles": b.memory_cycles},
        efficiency=b.efficiency(timing.cycles), sim_ms=sim_ms,
        accelerator_energy_j=None if energy is None else energy.accelerator_j.value,
        board_energy_j=None if energy is None else energy.board_j.value,
        energy={"error": why} if energy is None else energy_fields(energy), **base)


def energy_of(m: Measurement, hw: HwConfig, board: Board) -> Any:
    """The energy of one call of the measured program on ``hw`` (an ``energy.EnergyReport``):
    its events are the program's, shared by every design the measurement holds for; the
    design's memories, logic and DSP share price them (``vtatune.energy``)."""
    from vtatune.energy import estimate_activity

    t = m.timing
    return estimate_activity(m.activity, hw, int(t.cycles), float(t.seconds), board)


def energy_fields(report: Any) -> dict[str, Any]:
    """What a record keeps of an ``EnergyReport`` beside its two central figures: both
    ranges (joules), the components' central joules and the model's note."""
    return {"accelerator_j": report.accelerator_j.as_dict(),
            "board_j": report.board_j.as_dict(),
            "components_j": {k: f.value for k, f in report.components.items()},
            "note": report.note}


@dataclass(frozen=True)
class Measurement:
    """A lowered program built into instructions for one micro-op buffer and timed on a
    board: what a candidate's record takes from its program."""

    timing: Any  # simulator.TimingResult
    counters: dict[str, int]
    #: the micro-op buffer depth it was built for, the entries the build used, and whether
    #: kernels were evicted (then the instructions hold for that depth only)
    uop_depth: int
    uop_entries: int
    evicted: bool
    #: the program's events (``energy.activity``), priced per design by ``energy_of``
    activity: Any = None

    def holds_for(self, uop_depth: int) -> bool:
        """Whether building for a micro-op buffer of ``uop_depth`` entries gives the same
        instructions. The runtime places kernels one after another and starts again at 0
        only when one does not fit, evicting what it overwrites (``CommandQueue._resident``):
        a build without evictions never wrapped, so every buffer at least as deep as the
        entries it used places every kernel at the same address."""
        return uop_depth == self.uop_depth or (not self.evicted
                                               and uop_depth >= self.uop_entries)


def measure(lowered: Any, wl: Workload, hw: HwConfig, knobs: dict[str, int],
            board: Board) -> Measurement:
    """Build ``lowered``'s instructions for ``hw`` and time them on ``board``.

    Candidates that share a lowered program (they differ in buffer sizes) mostly share its
    instructions too: the micro-op buffer is the only size the build reads. A measurement is
    kept with the lowered program (``LoweredProgram.memo``) and reused for a candidate whose
    micro-op buffer gives the same instructions (``Measurement.holds_for``); timing depends on
    the instructions, the GEMM shape and widths (part of the program's key) and the board's
    constants only. Raises ``VtatuneError`` for a program that cannot be built or timed.
    """
    from vtatune.energy import activity
    from vtatune.runtime.build import run_host
    from vtatune.runtime.execute import program_counters
    from vtatune.simulator import load_params, simulate

    params = load_params(board)
    kept: list[Measurement] = lowered.memo.setdefault(("measured", board.name, params), [])
    for m in kept:
        if m.holds_for(hw.uop_depth):
            return m
    host = lowered.host()
    cpu = steps.Laps()
    program = run_host(host, wl, hw, knobs=knobs)
    cpu.lap("build")
    timing = simulate(program, board, params)
    cpu.lap("simulate")
    build = program.meta["build"]
    counters = asdict(program_counters(program))
    counters["instructions"] = len(program.insns)
    counters.update({f"{mod}_busy": mt.busy_cycles for mod, mt in timing.modules.items()})
    m = Measurement(timing, counters, hw.uop_depth, build["uop_entries"],
                    build["uop_evictions"] > 0, activity(program))
    kept.append(m)
    return m


def latency_of(rec: CandidateRecord, latency: str = "end-to-end") -> float | None:
    """The latency a search minimizes: ``end-to-end`` seconds per call (accelerator + host, what
    a board measures) or the ``accelerator``'s cycles; None when the record has none."""
    if latency == "accelerator":
        return None if rec.cycles is None else float(rec.cycles)
    return None if rec.seconds is None else float(rec.seconds)


def objective_values(space: SearchSpace, rec: CandidateRecord) -> tuple[float, ...] | None:
    """The objectives a feasible record scores in `space` (``search.objectives``; None when
    infeasible, or when the objective needs an energy the record lacks)."""
    from vtatune.search import objectives

    lat = latency_of(rec, space.latency) if rec.feasible else None
    if lat is None:
        return None
    return objectives.values(space.objective, float(rec.area_mm2 or 0.0), lat,
                             rec.accelerator_energy_j)


def violation(rec: CandidateRecord) -> float:
    """How far an infeasible record is from feasible (0 when feasible).

    Overflowing resources count by how much they overflow (needed / available - 1, the
    largest); infeasibility of unknown size (impossible hardware, failed compile) counts 1.
    """
    if rec.feasible:
        return 0.0
    if rec.status == Status.NO_FIT:
        over = [u for k, u in rec.resources.get("utilization", {}).items()
                if k in rec.resources.get("over", []) and u is not None]
        return max((u / 100.0 - 1.0 for u in over), default=1.0) or 1.0
    if rec.status == Status.INVALID:
        ratios = [p["needed"] / p["available"] - 1.0 for p in rec.resources.get("problems", [])
                  if p.get("available")]
        return max(max(ratios, default=1.0), 1e-3)
    return 1.0
