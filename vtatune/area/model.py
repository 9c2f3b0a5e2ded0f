"""Component area model of one VTA instance on one FPGA family.

``estimate(cfg, board)`` builds the design from its parts and returns an ``AreaReport``:

- **gemm**: BATCH*BLOCK_IN*BLOCK_OUT multipliers of INP x WGT bits, mapped to DSPs (packed by the
  family's ``dsp_modes``) or to logic, plus one BLOCK_IN-input adder tree and an ACC-bit
  accumulator per output lane, and their pipeline registers;
- **alu**: BATCH*BLOCK_OUT lanes of ACC bits (min/max, add, shift) with operand registers;
- **sram.inp/wgt/acc/out/uop** and **queues**: one-tile-wide memories mapped onto block RAM
  (see ``vtatune.area.sram``), the command and dependence FIFOs with their control logic;
- **fetch/load/compute_ctrl/store/axi**: the fixed part (decoders, DMA engines, AXI ports,
  interconnect), whose AXI cost scales with the board's AXI width.

Logic is counted in the vendor's unit (Xilinx LUT, Intel ALM). ``area_mm2`` is silicon area at
the coefficient file's named node (a 40 nm FPGA fabric): logic tiles (LUTs and FFs packed as in
one tile) plus DSP tiles plus the bits the memories store times block-RAM area per bit. Memories
are charged by the bits they hold, not by the blocks they occupy, so the scalar grows with every
size parameter (block occupancy depends on aspect ratios and is what the fit check uses). Every
number comes from ``hwconfigs/area/coefficients.toml``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from vtatune.area import coefficients as coeffs
from vtatune.area.coefficients import Coefficients, FamilyCoefficients
from vtatune.area.sram import Memory, MemoryMapping, map_memory
from vtatune.hardware.boards import Board
from vtatune.hardware.config import HwConfig

SRAMS = ("inp", "wgt", "acc", "out", "uop")


@dataclass(frozen=True)
class ComponentArea:
    """Resources of one part of the design. ``resources`` maps resource kind -> count
    (logic and FF whole units, block RAM in blocks with RAMB18 halves as 0.5, DSP blocks);
    ``area_mm2`` is its fabric area at the report's node."""

    name: str
    group: str  # "compute" | "memory" | "fixed"
    resources: dict[str, float]
    area_mm2: float
    detail: str = ""
    memory_bits: int = 0  # bits the component's memories store

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group, "resources": dict(self.resources),
                "memory_bits": self.memory_bits, "area_mm2": self.area_mm2,
                "detail": self.detail}


@dataclass(frozen=True)
class _Part:
    name: str
    group: str
    res: dict[str, float]
    detail: str
    memory_bits: int = 0
    dsp_multipliers: int = 0  # gemm: multipliers mapped to DSP blocks (the rest are in logic)


@dataclass(frozen=True)
class AreaReport:
    """Resources of a VTA instance on one board's family, per component and in total."""

    config_key: str
    config_name: str
    shape: str  # BATCH x BLOCK_IN x BLOCK_OUT
    board: str
    family: str
    kinds: tuple[str, ...]  # resource kinds reported, e.g. ("lut", "ff", "bram36", "dsp")
    logic_kind: str  # "lut" or "alm"
    bram_kind: str  # "bram36" or "m10k"
    components: tuple[ComponentArea, ...]
    totals: dict[str, float]
    area_mm2: float
    node: str
    notes: tuple[str, ...] = field(default=())
    gemm_dsp_multipliers: int = 0  # GEMM multipliers in DSP blocks (of ``macs_per_cycle``)

    def component(self, name: str) -> ComponentArea:
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def logic(self) -> float:
        return self.totals[self.logic_kind]

    @property
    def bram(self) -> float:
        return self.totals[self.bram_kind]

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": self.config_name or self.config_key,
            "config_key": self.config_key,
            "shape": self.shape,
            "board": self.board,
            "family": self.family,
            "logic_kind": self.logic_kind,
            "bram_kind": self.bram_kind,
            "totals": dict(self.totals),
            "area_mm2": self.area_mm2,
            "area_node": self.node,
            "components": [c.as_dict() for c in self.components],
            "notes": list(self.notes),
        }


def estimate(cfg: HwConfig, board: Board, coefficients: Coefficients | None = None) -> AreaReport:
    """FPGA resources and fabric area (mm^2) of ``cfg`` built for ``board``'s family."""
    co = coefficients or coeffs.load()
    fam = co.family(board.family)
    ven = fam.vendor
    kinds = (ven.logic_kind, "ff", fam.bram_kind) + (("uram",) if fam.uram_shape else ()) + ("dsp",)
    notes: list[str] = []
    parts: list[_Part] = []

    fixed = _fixed(fam, co, board.axi_bits)
    alu = _alu(cfg, fam, co)
    other_dsp = sum(p.res.get("dsp", 0) for p in fixed) + alu.res.get("dsp", 0)
    dsp_budget = board.resources.get("dsp", 0) - other_dsp
    gemm = _gemm(cfg, fam, co, dsp_budget, notes)
    parts.append(gemm)
    parts.append(alu)
    parts.extend(_memories(cfg, fam, co, uram_allowed=board.resources.get("uram", 0) > 0))
    parts.extend(fixed)

    components = []
    for p in parts:
        res = _rounded(p.res, kinds)
        components.append(ComponentArea(p.name, p.group, res,
                                        _area_mm2(res, p.memory_bits, fam, co), p.detail,
                                        p.memory_bits))
    totals = {k: sum(c.resources.get(k, 0) for c in components) for k in kinds}
    return AreaReport(
        config_key=cfg.key,
        config_name=cfg.name,
        shape=cfg.shape_label,
        board=board.name,
        family=board.family,
        kinds=kinds,
        logic_kind=ven.logic_kind,
        bram_kind=fam.bram_kind,
        components=tuple(components),
        totals=totals,
        area_mm2=sum(c.area_mm2 for c in components),
        node=co.area.node,
        notes=tuple(notes),
        gemm_dsp_multipliers=gemm.dsp_multipliers,
    )


# ---- components ------------------------------------------------------------------------------


def _dsp_packing(a: int, b: int, modes: tuple[tuple[int, int, int], ...]) -> tuple[int, int]:
    """(multipliers per DSP, DSPs per multiplier) for an a x b product."""
    for max_a, max_b, per in modes:
        if (a <= max_a and b <= max_b) or (b <= max_a and a <= max_b):
            return per, 1
    max_a, max_b, _ = max(modes, key=lambda m: m[0] * m[1])  # tile with the widest mode
    each = min(math.ceil(a / max_a) * math.ceil(b / max_b),
               math.ceil(b / max_a) * math.ceil(a / max_b))
    return 1, each


def _gemm(cfg: HwConfig, fam: FamilyCoefficients, co: Coefficients, dsp_budget: float,
          notes: list[str]) -> _Part:
    ven, g = fam.vendor, co.gemm
    a, b, acc = cfg.inp_bits, cfg.wgt_bits, cfg.acc_bits
    product = a + b
    n_mult = cfg.macs_per_cycle
    lanes = cfg.batch * cfg.block_out

    # Multipliers: DSP-mapped where the family prefers it, the rest (or all) in logic.
    in_dsp, dsp = 0, 0
    if fam.gemm_prefer == "dsp":
        per_dsp, dsp_each = _dsp_packing(a, b, fam.dsp_modes)
        in_dsp = n_mult
        if fam.spill_to_logic:
            usable = max(0, int(dsp_budget)) // dsp_each
            in_dsp = min(n_mult, usable * per_dsp)
            if in_dsp < n_mult:
                notes.append(f"gemm: {n_mult - in_dsp} of {n_mult} multipliers spill from DSP to "
                             f"logic ({int(dsp_budget)} DSP available)")
        dsp = math.ceil(in_dsp / per_dsp) * dsp_each
    soft = n_mult - in_dsp
    logic = soft * a * b * ven.mult_bit2

    # One BLOCK_IN-input adder tree per lane: level k has BLOCK_IN/2^k adders of product+k bits.
    levels = cfg.log_block_in
    level_bits = [(cfg.block_in >> k) * (product + k) for k in range(1, levels + 1)]
    logic += lanes * sum(level_bits) * ven.adder_bit
    logic += lanes * acc * (ven.adder_bit + ven.mux2_bit)  # accumulate, reset_reg select

    tile_bits = (cfg.inp_tile_bytes + cfg.wgt_tile_bytes + cfg.acc_tile_bytes) * 8
    ff = g.register_operands * tile_bits + g.register_products * soft * product
    ff += lanes * sum(bits for k, bits in enumerate(level_bits, start=1)
                      if k % g.tree_levels_per_register == 0 or k == levels)
    ff += lanes * acc  # accumulator result register
    detail = (f"{n_mult} mult {a}x{b}b: {in_dsp} in {dsp} DSP, {soft} in logic; "
              f"{lanes} lanes x {cfg.block_in}-input tree")
    return _Part("gemm", "compute", {ven.logic_kind: logic, "ff": ff, "dsp": dsp}, detail,
                 dsp_multipliers=in_dsp)


def _alu(cfg: HwConfig, fam: FamilyCoefficients, co: Coefficients) -> _Part:
    ven, ops = fam.vendor, co.alu.ops
    w = cfg.acc_bits
    lanes = cfg.batch * cfg.block_out
    per_lane = 0.0
    if "min_max" in ops:
        per_lane += w * (ven.compare_bit + ven.mux2_bit)
    if "add" in ops:
        per_lane += w * ven.adder_bit
    if "shr" in ops:
        stages = cfg.log_acc_width + co.alu.shift_extra_stages
        per_lane += w * stages * ven.shift_stage_bit
    if "mul" in ops:
        per_lane += w * co.alu.mul_arg_bits * ven.mult_bit2
    if len(ops) > 1:  # result select among the operations
        per_lane += w * (ven.mux2_bit if len(ops) == 2 else ven.mux4_bit * math.ceil(len(ops) / 4))
    per_lane += w * ven.mux2_bit  # immediate vs. register operand
    acc_tile_bits = lanes * w
    ff = 3 * acc_tile_bits + cfg.out_tile_bytes * 8  # src, dst, result; int8 output copy
    detail = f"{lanes} lanes x {w}b: {', '.join(ops)}"
    return _Part("alu", "compute", {ven.logic_kind: lanes * per_lane, "ff": ff}, detail)


def sram_memories(cfg: HwConfig, co: Coefficients) -> dict[str, Memory]:
    """The scratchpads of ``cfg`` as memories to map: one tile (or micro-op) wide."""
    vta = co.vta
    rows = {
        "inp": (cfg.inp_tile_bytes * 8, cfg.inp_depth),
        "wgt": (cfg.wgt_tile_bytes * 8, cfg.wgt_depth),
        "acc": (cfg.acc_tile_bytes * 8, cfg.acc_depth),
        "out": (cfg.out_tile_bytes * 8, cfg.out_depth),
        "uop": (vta.uop_bits, cfg.uop_depth),
    }
    return {name: Memory(name, *rows[name], vta.port_modes[name]) for name in SRAMS}


def sram_mappings(cfg: HwConfig, board: Board, coefficients: Coefficients | None = None
                  ) -> dict[str, MemoryMapping]:
    """How each scratchpad of ``cfg`` is built on ``board``'s family (as ``estimate`` maps
    it): what the energy model needs to know how many primitives one access enables."""
    co = coefficients or coeffs.load()
    fam = co.family(board.family)
    uram = board.resources.get("uram", 0) > 0
    return {name: map_memory(mem, fam, co.vta.max_port_bits, uram)
            for name, mem in sram_memories(cfg, co).items()}


def _memories(cfg: HwConfig, fam: FamilyCoefficients, co: Coefficients, uram_allowed: bool
              ) -> list[_Part]:
    vta = co.vta
    out = []
    for name, mem in sram_memories(cfg, co).items():
        width, depth = mem.width_bits, mem.depth
        m = map_memory(mem, fam, vta.max_port_bits, uram_allowed)
        detail = f"{width}b x {depth} ({width * depth // 8192} KiB): {m.describe()}"
        out.append(_Part(f"sram.{name}", "memory", {m.primitive: m.blocks}, detail, mem.bits))

    # Instruction and dependence queues: block-RAM FIFOs plus their control logic.
    ven = fam.vendor
    mode = vta.port_modes["queue"]
    cmd = map_memory(Memory("cmd", vta.cmd_queue_bits, vta.cmd_queue_depth, mode, vta.cmd_queues),
                     fam, vta.max_port_bits, False)
    dep = map_memory(Memory("dep", vta.dep_queue_bits, vta.dep_queue_depth, mode, vta.dep_queues),
                     fam, vta.max_port_bits, False)
    n = vta.cmd_queues + vta.dep_queues
    res = {fam.bram_kind: cmd.blocks + dep.blocks, ven.logic_kind: n * ven.fixed.fifo_logic,
           "ff": n * ven.fixed.fifo_ff}
    detail = (f"{vta.cmd_queues} x {vta.cmd_queue_bits}b x {vta.cmd_queue_depth} "
              f"({cmd.describe(vta.cmd_queues)}); {vta.dep_queues} x {vta.dep_queue_bits}b x "
              f"{vta.dep_queue_depth} ({dep.describe(vta.dep_queues)})")
    bits = (vta.cmd_queues * vta.cmd_queue_bits * vta.cmd_queue_depth
            + vta.dep_queues * vta.dep_queue_bits * vta.dep_queue_depth)
    out.append(_Part("queues", "memory", res, detail, bits))
    return out


def _fixed(fam: FamilyCoefficients, co: Coefficients, axi_bits: int) -> list[_Part]:
    f, kind = fam.vendor.fixed, fam.vendor.logic_kind
    axi_logic = (f.axi_masters * (f.axi_master_logic_base + f.axi_master_logic_per_bit * axi_bits)
                 + f.axi_lite_slaves * f.axi_lite_logic
                 + f.interconnect_logic_base + f.interconnect_logic_per_bit * axi_bits)
    axi_ff = (f.axi_masters * (f.axi_master_ff_base + f.axi_master_ff_per_bit * axi_bits)
              + f.axi_lite_slaves * f.axi_lite_ff
              + f.interconnect_ff_base + f.interconnect_ff_per_bit * axi_bits)
    return [
        _Part("fetch", "fixed", {kind: f.fetch_logic, "ff": f.fetch_ff},
              "instruction fetch/decode"),
        _Part("load", "fixed", {kind: f.load_logic, "ff": f.load_ff}, "2-D DMA with padding"),
        _Part("compute_ctrl", "fixed", {kind: f.compute_logic, "ff": f.compute_ff},
              "uop/acc DMA, decode, loops"),
        _Part("store", "fixed", {kind: f.store_logic, "ff": f.store_ff}, "2-D DMA"),
        _Part("axi", "fixed", {kind: axi_logic, "ff": axi_ff, "dsp": f.dsp},
              f"{f.axi_masters} masters x {axi_bits}b, {f.axi_lite_slaves} control slaves, "
              "interconnect"),
    ]


# ---- rounding and area -----------------------------------------------------------------------


def _rounded(res: dict[str, float], kinds: tuple[str, ...]) -> dict[str, float]:
    """Whole logic cells, FFs and DSPs; block RAM keeps its halves. Every kind present."""
    out: dict[str, float] = {}
    for k in kinds:
        v = res.get(k, 0.0)
        out[k] = float(v) if k in ("bram36", "m10k", "uram") else float(math.ceil(v - 1e-9))
    return out


def _area_mm2(res: dict[str, float], memory_bits: int, fam: FamilyCoefficients,
              co: Coefficients) -> float:
    """Logic tiles (LUT and FF packed together) + DSP tiles + stored memory bits, in mm^2."""
    ven, a = fam.vendor, co.area
    tiles = max(res.get(ven.logic_kind, 0.0) / ven.logic_per_tile,
                res.get("ff", 0.0) / ven.ff_per_tile)
    tiles += res.get("dsp", 0.0) * fam.dsp_area_tiles
    return (tiles * a.logic_tile_um2 + memory_bits * a.memory_um2_per_bit) * 1e-6
