"""Timing model: per-board constants, exact costs, physical bounds, overlap, monotonicity."""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import replace

import numpy as np
import pytest

from vtatune.errors import ConfigError, SimulationError
from vtatune.hardware import boards
from vtatune.hardware.config import default, load
from vtatune.program import (
    NO_DEPS,
    AluInsn,
    AluOp,
    DepFlags,
    FinishInsn,
    GemmInsn,
    Insn,
    MemId,
    MemInsn,
    Opcode,
    Program,
    deps,
)
from vtatune.program.examples import DenseShape, dense_program
from vtatune.simulator.timing import (
    ACCEL_KEYS,
    MODEL_VERSION,
    TimingParams,
    bounds,
    cost_rows,
    end_and_gradient,
    host_seconds,
    load_params,
    params_from_dict,
    simulate,
    timing_dir,
)

BOARDS = boards.names()


def _prog(insns: list[Insn], hw=None) -> Program:
    return Program(hw or default(), tuple(insns), np.zeros(0, np.uint32), {}, 1 << 20)


def _load(mem=MemId.INP, y=1, x=1, pads=(0, 0, 0, 0), d=NO_DEPS) -> MemInsn:
    return MemInsn(Opcode.LOAD, d, mem, 0, 0, y, x, x, *pads)


def _store(y=1, x=1, d=NO_DEPS) -> MemInsn:
    return MemInsn(Opcode.STORE, d, MemId.OUT, 0, 0, y, x, x)


def _gemm(ops: int, d=NO_DEPS) -> GemmInsn:
    return GemmInsn(d, False, 0, 1, ops, 1)


@pytest.mark.parametrize("board", BOARDS)
def test_every_board_has_sourced_params(board: str) -> None:
    p = load_params(board)
    assert p.board == board
    for key in TimingParams.keys():
        assert p.sources[key].strip(), key
    assert load_params(boards.load(board)) == p


def test_malformed_params_list_every_problem() -> None:
    from vtatune.hardware import timing_profiles

    raw = json.loads(json.dumps(timing_profiles.resolve("pynq-z1").content))
    raw["params"]["gemm_ii_cycles"] = -1
    raw["params"]["warp_speed"] = 9
    del raw["params"]["alu_ii_cycles"]
    del raw["sources"]["pad_tile_cycles"]
    raw["prior"] = {"insn_cycles": 0, "gemm_ii_cycles": 1}
    with pytest.raises(ConfigError) as exc:
        params_from_dict(raw, "t.json")
    msg = str(exc.value)
    for part in ("gemm_ii_cycles must be", "unknown parameter 'warp_speed'",
                 "missing parameter 'alu_ii_cycles'", "'pad_tile_cycles' has no entry",
                 "prior of insn_cycles must be a positive number",
                 "prior of 'gemm_ii_cycles': not a fitted parameter"):  # fmt: skip
        assert part in msg
    with pytest.raises(ConfigError, match="no timing parameters"):
        load_params("no-such-board")


def test_profiles_of_a_board() -> None:
    # pynq-z1 ships its builds and the population profile; the default is the one named
    # without a profile
    from vtatune.hardware import timing_profiles

    raw = json.loads((timing_dir() / "pynq-z1.json").read_text())
    default = raw["default_profile"]
    assert set(raw["profiles"]) >= {"2019-07", "2019-08", "physical"}
    p7, p8 = load_params("pynq-z1@2019-07"), load_params("pynq-z1@2019-08")
    assert p7 != p8 and (p7.profile, p8.profile) == ("2019-07", "2019-08")
    assert load_params("pynq-z1") == load_params(f"pynq-z1@{default}")
    assert load_params(boards.load("pynq-z1@2019-07")) == p7
    assert p7.values()["alu_refill_cycles"] == raw["profiles"]["2019-07"]["params"][
        "alu_refill_cycles"]
    # shared sources reach every profile; the fitted ones name their own fit
    assert "(1x16x16 2019-07)" in p7.sources["alu_refill_cycles"]
    assert p7.sources["gemm_ii_cycles"] == raw["sources"]["gemm_ii_cycles"]
    with pytest.raises(ConfigError, match="timing profile '2019-09' is not here.*2019-07"):
        load_params("pynq-z1@2019-09")
    with pytest.raises(ConfigError, match="default_profile 'x'"):
        timing_profiles.profiles_of({**raw, "default_profile": "x"}, "pynq-z1", timing_dir())


def test_model_version_is_an_int() -> None:
    assert isinstance(MODEL_VERSION, int) and MODEL_VERSION >= 2


def _fetch(board: str, k: int = 0) -> float:
    """When fetch hands over instruction k: one instruction per 128 / axi_bits cycles."""
    return (k + 1) * -(-128 // boards.load(board).axi_bits)


def test_single_instruction_costs() -> None:
    p = load_params("pynq-z1")  # 64-bit AXI: 8 bytes per beat; inp tile 16 B
    f = _fetch("pynq-z1")
    r = simulate(_prog([_load(y=2, x=3, pads=(1, 1, 1, 1))]), "pynq-z1")
    # 2 rows of ceil(48 / 8) = 6 beats + 14 pad tiles, one round trip per row
    assert r.cycles == math.ceil(f + p.insn_cycles + 2 * p.dma_row_cycles
                                 + 12 * p.dma_beat_cycles + 14 * p.pad_tile_cycles)
    assert r.axi_busy_cycles == math.ceil(12 * p.dma_beat_cycles) and r.dram_read_bytes == 96
    # GEMM: 3 x 2 inner iterations of 4 micro-ops, each iteration refills the pipeline
    g = GemmInsn(NO_DEPS, False, 0, 4, 3, 2)
    r = simulate(_prog([g]), "pynq-z1")
    assert r.cycles == math.ceil(f + p.insn_cycles + 24 * p.gemm_ii_cycles
                                 + 6 * p.gemm_refill_cycles)
    alu = AluInsn(DepFlags(), False, 0, 2, 3, 4, alu_opcode=AluOp.MAX, use_imm=True)
    r = simulate(_prog([alu]), "pynq-z1")
    assert r.cycles == math.ceil(f + p.insn_cycles + 24 * p.alu_ii_cycles
                                 + 12 * p.alu_refill_cycles) and r.alu_ops == 24
    q = load_params("ultra96")
    r = simulate(_prog([_store(y=4, x=2)]), "ultra96")  # 128-bit AXI: one 16 B out tile a beat
    assert r.cycles == math.ceil(_fetch("ultra96") + q.insn_cycles + 4 * q.dma_row_cycles
                                 + 8 * q.dma_beat_cycles)
    assert r.accelerator_seconds == pytest.approx(r.cycles / 333e6)
    # a zero-size LOAD only moves tokens: no round trip, no beats
    r = simulate(_prog([_load(y=0, x=0)]), "pynq-z1")
    assert r.cycles == math.ceil(f + p.insn_cycles) and r.axi_busy_cycles == 0


def test_seconds_split_into_accelerator_and_host() -> None:
    p = load_params("pynq-z1")
    prog = dense_program(default(), DenseShape(m=4, k=64, n=64, tm=2, tk=2, tn=2, threads=2))
    r = simulate(prog, "pynq-z1")
    assert r.accelerator_seconds == pytest.approx(r.cycles / 100e6)
    assert r.host_seconds == pytest.approx((p.host_call_us + p.host_insn_us * len(prog.insns))
                                           * 1e-6)
    assert r.seconds == pytest.approx(r.accelerator_seconds + r.host_seconds)
    assert r.host_seconds == pytest.approx(host_seconds(len(prog.insns), p))
    assert r.model_version == MODEL_VERSION


def test_instructions_wait_to_be_fetched() -> None:
    # Two independent GEMMs: the second cannot start before fetch delivered it, and each
    # costs at least its II work; 64-bit fetch hands over one 128-bit instruction per 2 cycles.
    p = load_params("pynq-z1")
    one = simulate(_prog([GemmInsn(NO_DEPS, False, 0, 1, 1, 1)]), "pynq-z1")
    assert one.cycles == math.ceil(2 + p.insn_cycles + p.gemm_ii_cycles + p.gemm_refill_cycles)


@pytest.mark.parametrize("seed", range(6))
def test_critical_path_gradient_matches_finite_differences(seed: int) -> None:
    # The end time is piecewise linear in the accelerator constants; the calibration's exact
    # Jacobian (cost rows summed along the critical path) must equal a finite difference.
    rng = np.random.default_rng(seed)
    board = boards.load("pynq-z1")
    base = load_params(board)
    p = replace(base, **{k: float(rng.uniform(1.5, 40)) for k in ACCEL_KEYS})
    prog = _random_program(rng, default())
    rows = cost_rows(prog, board, p)
    end, grad = end_and_gradient(rows, p)
    assert end == pytest.approx(simulate(prog, board, p).cycles, abs=1)
    for j, key in enumerate(ACCEL_KEYS):
        h = 1e-4
        up, _ = end_and_gradient(rows, replace(p, **{key: getattr(p, key) + h}))
        assert (up - end) / h == pytest.approx(grad[j], rel=1e-3, abs=1e-3), key


def _random_program(rng: np.random.Generator, hw) -> Program:
    """Load -> compute -> store steps with RAW and WAR tokens, random sizes and kinds."""
    insns: list[Insn] = []
    steps = int(rng.integers(1, 12))
    for s in range(steps):
        for i in range(int(rng.integers(1, 4))):
            mem = MemId.INP if rng.random() < 0.5 else MemId.WGT
            y, x = int(rng.integers(1, 9)), int(rng.integers(1, 17))
            pads = tuple(int(v) for v in rng.integers(0, 3, 4)) if mem == MemId.INP else (0,) * 4
            first = i == 0
            insns.append(_load(mem, y, x, pads, DepFlags(pop_next=first and s > 0)))
        insns[-1] = _with_deps(insns[-1], push_next=True)
        if rng.random() < 0.3:
            insns.append(_load(MemId.ACC, 1, int(rng.integers(1, 8))))
        ops = int(rng.integers(1, 2000))
        last = s + 1 == steps
        insns.append(GemmInsn(DepFlags(pop_prev=True, push_prev=not last), rng.random() < 0.2,
                              0, int(rng.integers(1, 20)), max(1, ops // 20), 1))  # fmt: skip
        if rng.random() < 0.5:
            insns.append(AluInsn(DepFlags(), False, 0, 1, int(rng.integers(1, 64)), 1,
                                 alu_opcode=AluOp.SHR, use_imm=True, imm=8))  # fmt: skip
        if rng.random() < 0.6 or last:
            insns.append(_store(int(rng.integers(1, 5)), int(rng.integers(1, 9))))
            insns[-2] = _with_deps(insns[-2], push_next=True)
            insns[-1] = _with_deps(insns[-1], pop_prev=True)
    insns.append(FinishInsn())
    return _prog(insns, hw)


def _with_deps(insn, **flags):
    d = insn.deps
    merged = {k: getattr(d, k) or flags.get(k, False) for k in d.__slots__}
    return replace(insn, deps=DepFlags(**merged))


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("hwname", ["default", "1x8x8", "2x16x16", "1x32x32"])
def test_cycles_never_beat_the_physical_bounds(board: str, hwname: str) -> None:
    hw = load(hwname)
    # zlib.crc32, not hash(): str hashes differ per process (PYTHONHASHSEED), and a failure
    # must reproduce on the next run
    rng = np.random.default_rng(zlib.crc32(f"{board}/{hwname}".encode()))
    for _ in range(25):
        prog = _random_program(rng, hw)
        r = simulate(prog, board)
        bd = bounds(r.gemm_ops * hw.macs_per_cycle, r.dram_bytes, hw, board)
        assert r.cycles >= bd.compute_cycles and r.cycles >= bd.memory_cycles
        assert 0 < bd.efficiency(r.cycles) <= 1
        for m in r.modules.values():
            assert m.busy_cycles + m.token_stall_cycles + m.dram_stall_cycles <= r.cycles + 1e-9


def _stream(n: int, overlap: bool) -> Program:
    """n x (LOAD INP of 64 tiles, GEMM of 2000 ops). With overlap, two buffers: the load of
    step i waits for the GEMM of step i-2; without, for the GEMM of step i-1."""
    lag = 2 if overlap else 1
    insns: list[Insn] = []
    for i in range(n):
        insns.append(_load(MemId.INP, 8, 8, d=DepFlags(pop_next=i >= lag, push_next=True)))
        insns.append(_gemm(2000, DepFlags(pop_prev=True, push_prev=i + lag < n)))
    return _prog(insns)


@pytest.mark.parametrize("board", BOARDS)
def test_overlapped_streams_beat_serialized(board: str) -> None:
    serial = simulate(_stream(8, overlap=False), board)
    overlap = simulate(_stream(8, overlap=True), board)
    busy = serial.modules["load"].busy_cycles + serial.modules["compute"].busy_cycles
    assert serial.cycles == pytest.approx(busy + _fetch(board), abs=1)  # nothing overlaps
    assert overlap.cycles < serial.cycles
    assert overlap.cycles >= max(overlap.modules["compute"].busy_cycles,
                                 overlap.modules["load"].busy_cycles)  # fmt: skip
    stall = {k: r.modules["compute"].token_stall_cycles for k, r in (("s", serial), ("o", overlap))}
    assert stall["s"] > stall["o"]


@pytest.mark.parametrize("board", BOARDS)
def test_dense_double_buffering_is_faster(board: str) -> None:
    hw = default()
    s = dict(m=8, k=16 * 16, n=16 * 8, tm=4, tk=4, tn=4)
    p1 = dense_program(hw, DenseShape(**s, threads=1))
    p2 = dense_program(hw, DenseShape(**s, threads=2))
    one, two = simulate(p1, board), simulate(p2, board)
    assert two.cycles < one.cycles
    assert two.gemm_ops == one.gemm_ops
    # Same data moved; the second thread only adds its own GEMM micro-op kernel.
    assert two.dram_bytes - p2.uop_buffer_bytes == one.dram_bytes - p1.uop_buffer_bytes


@pytest.mark.parametrize("board", BOARDS)
def test_monotonic_in_bytes(board: str) -> None:
    for mem in (MemId.INP, MemId.WGT, MemId.ACC, MemId.UOP):
        cycles = [simulate(_prog([_load(mem, 4, x)]), board).cycles for x in range(1, 40, 3)]
        assert cycles == sorted(cycles) and cycles[-1] > cycles[0]
    stores = [simulate(_prog([_store(y, 4)]), board).cycles for y in range(1, 20, 2)]
    assert stores == sorted(stores) and stores[-1] > stores[0]
    # More DMA next to a fixed GEMM never makes the program faster.
    prev = 0
    for x in (1, 8, 64, 256):
        r = simulate(_prog([_load(MemId.WGT, 2, x, d=deps("push_next")),
                            _gemm(500, deps("pop_prev"))]), board)  # fmt: skip
        assert r.cycles >= prev
        prev = r.cycles


def test_shared_axi_port_serializes_concurrent_dma() -> None:
    p = load_params("pynq-z1")
    # A load and a store with no dependence overlap their latencies but not their beats.
    prog = _prog([_load(MemId.WGT, 1, 64), _store(1, 512)])
    r = simulate(prog, "pynq-z1")
    beats = 64 * 256 // 8 + 512 * 16 // 8
    assert r.axi_busy_cycles == math.ceil(beats * p.dma_beat_cycles)
    assert r.cycles >= p.insn_cycles + p.dma_row_cycles + beats * p.dma_beat_cycles
    assert r.modules["store"].dram_stall_cycles > 0


def test_deadlock_raises() -> None:
    prog = _prog([_load(d=deps("pop_next", "push_next")), _gemm(4, deps("pop_prev"))])
    with pytest.raises(SimulationError, match="load module blocked at #0 LOAD_INP popping c2l"):
        simulate(prog, "pynq-z1")


def test_result_fields() -> None:
    hw = default()
    prog = dense_program(hw, DenseShape(m=4, k=64, n=64, tm=2, tk=2, tn=2, threads=2))
    r = simulate(prog, boards.load("zcu104"))
    assert r.board == "zcu104" and r.counts == prog.counts()
    assert sum(m.insns for m in r.modules.values()) == len(prog.insns)
    assert r.dram_read_bytes == 4 * 64 * 2 + 64 * 64 * 2 + prog.uop_buffer_bytes
    assert r.dram_write_bytes == 4 * 64


@pytest.mark.parametrize("board", ["pynq-z1", "ultra96"])
def test_cost_rows_follow_each_instructions_equation(board: str) -> None:
    # Every kind of instruction of a mixed stream, costed one record at a time by the
    # module docstring's equations; the cost rows (computed on columns) must agree.
    hw, p, b = default(), load_params(board), boards.load(board)
    rng = np.random.default_rng(3)
    insns: list[Insn] = []
    for _ in range(60):
        kind = rng.integers(5)
        y, x = (int(v) for v in rng.integers(0, 5, 2))
        if kind == 0:
            pads = tuple(int(v) for v in rng.integers(0, 3, 4))
            insns.append(_load(MemId(rng.choice([MemId.INP, MemId.WGT, MemId.ACC])), y, x, pads))
        elif kind == 1:
            insns.append(_store(y, x))
        elif kind == 2:
            insns.append(_load(MemId.UOP, min(y, 1), x))
        elif kind == 3:
            insns.append(GemmInsn(NO_DEPS, bool(y % 2), 2, 2 + x, y + 1, x + 1))
        else:
            insns.append(AluInsn(NO_DEPS, False, 1, 1 + y, x + 1, 2, alu_opcode=AluOp.ADD))
    insns.append(FinishInsn())
    rows = cost_rows(_prog(insns), b, p)
    pre, beats, post = rows.costs(p)
    tile = {MemId.INP: hw.inp_tile_bytes, MemId.WGT: hw.wgt_tile_bytes, MemId.UOP: 4,
            MemId.ACC: hw.acc_tile_bytes, MemId.OUT: hw.out_tile_bytes}
    for k, i in enumerate(insns):
        want_pre, want_beats, want_post = p.insn_cycles, 0.0, 0.0
        if isinstance(i, MemInsn) and i.y_size and i.x_size:
            n = i.y_size * -(-i.x_size * tile[i.memory_type] // b.axi_bytes_per_cycle)
            want_beats = n * p.dma_beat_cycles
            want_post = (i.y_size * p.dma_row_cycles + want_beats
                         + (i.padded_tiles - i.y_size * i.x_size) * p.pad_tile_cycles)
        elif isinstance(i, GemmInsn):
            want_pre += i.iter_out * i.iter_in * ((i.uop_end - i.uop_bgn) * p.gemm_ii_cycles
                                                  + p.gemm_refill_cycles)
        elif isinstance(i, AluInsn):
            want_pre += i.iter_out * i.iter_in * ((i.uop_end - i.uop_bgn) * p.alu_ii_cycles
                                                  + p.alu_refill_cycles)
        assert (pre[k], beats[k], post[k]) == pytest.approx((want_pre, want_beats, want_post)), k
        assert rows.dma[k] == (isinstance(i, MemInsn) and i.y_size * i.x_size > 0)
    assert rows.gemm_ops == sum(i.ops for i in insns if isinstance(i, GemmInsn))
    assert rows.alu_ops == sum(i.ops for i in insns if isinstance(i, AluInsn))
    loads = [i for i in insns if isinstance(i, MemInsn) and i.opcode == Opcode.LOAD]
    assert rows.read_bytes == sum(i.y_size * i.x_size * tile[i.memory_type] for i in loads)
    assert rows.write_bytes == sum(i.y_size * i.x_size * hw.out_tile_bytes for i in insns
                                   if isinstance(i, MemInsn) and i.opcode == Opcode.STORE)
