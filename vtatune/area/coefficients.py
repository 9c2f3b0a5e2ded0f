"""The area model's coefficients: loaded from ``hwconfigs/area/coefficients.toml``, validated once.

Every coefficient in the file is ``{ value, unit, source }``. Validation walks the whole file and
lists every problem (missing, unknown, wrong type, out of range, no unit or source) in one
``ConfigError``. The result is a tree of frozen records the model reads; loading is cached per
path, so the model pays for it once per process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from vtatune.errors import ConfigError
from vtatune.hardware.boards import FAMILIES
from vtatune.paths import project_root
from vtatune.readers import parse_toml, read_text

SCHEMA = 1
VENDORS = ("xilinx", "intel")
ALU_OPS = ("min_max", "add", "shr", "mul")
#: The memories and queues whose block-RAM port mode (``tdp`` or ``sdp``) the file states.
PORTS = ("inp", "wgt", "out", "acc", "uop", "queue")

Shape = tuple[int, int]


@dataclass(frozen=True)
class Coefficient:
    """One number (or list, or name) from the file, with its unit and where it comes from."""

    value: Any
    unit: str
    source: str


@dataclass(frozen=True)
class AreaCoefficients:
    """Scalar-area weights: FPGA fabric area in um^2 at the named node."""

    node: str
    logic_tile_um2: float
    memory_um2_per_bit: float


@dataclass(frozen=True)
class VtaCoefficients:
    """Facts of the VTA design: memory banking, port modes, queues."""

    max_port_bits: int
    uop_bits: int
    port_modes: dict[str, str]  # PORTS -> "tdp" | "sdp"
    cmd_queues: int
    cmd_queue_bits: int
    cmd_queue_depth: int
    dep_queues: int
    dep_queue_bits: int
    dep_queue_depth: int


@dataclass(frozen=True)
class GemmCoefficients:
    tree_levels_per_register: int
    register_operands: float
    register_products: float


@dataclass(frozen=True)
class AluCoefficients:
    ops: tuple[str, ...]
    shift_extra_stages: int
    mul_arg_bits: int


@dataclass(frozen=True)
class FixedCoefficients:
    """Fixed part of the design, in the vendor's logic unit, FF and DSP."""

    fetch_logic: float
    fetch_ff: float
    load_logic: float
    load_ff: float
    compute_logic: float
    compute_ff: float
    store_logic: float
    store_ff: float
    axi_masters: int
    axi_master_logic_base: float
    axi_master_logic_per_bit: float
    axi_master_ff_base: float
    axi_master_ff_per_bit: float
    axi_lite_slaves: int
    axi_lite_logic: float
    axi_lite_ff: float
    interconnect_logic_base: float
    interconnect_logic_per_bit: float
    interconnect_ff_base: float
    interconnect_ff_per_bit: float
    fifo_logic: float
    fifo_ff: float
    dsp: float


@dataclass(frozen=True, eq=False)  # identity hash: records are cached singletons
class VendorCoefficients:
    """Logic-fabric costs in the vendor's logic unit (``logic_kind``: lut or alm)."""

    name: str
    logic_kind: str
    logic_per_tile: float
    ff_per_tile: float
    adder_bit: float
    compare_bit: float
    mux2_bit: float
    mux4_bit: float
    shift_stage_bit: float
    mult_bit2: float
    fixed: FixedCoefficients


@dataclass(frozen=True, eq=False)  # identity hash: used as a cache key by the SRAM mapper
class FamilyCoefficients:
    """Block-RAM primitives, DSP packing and area weights of one FPGA family."""

    name: str
    vendor: VendorCoefficients
    bram_kind: str
    bram_bits: int
    shapes: dict[str, tuple[Shape, ...]]  # "tdp" | "sdp" -> full-block shapes
    half_shapes: dict[str, tuple[Shape, ...]]
    half_block: float
    uram_shape: Shape | None
    uram_bits: int
    uram_min_fill: float
    gemm_prefer: str
    dsp_modes: tuple[tuple[int, int, int], ...]
    dsp_area_tiles: float
    spill_to_logic: bool


@dataclass(frozen=True)
class Coefficients:
    """Every coefficient of the model, typed; ``entries`` keeps units and sources by path."""

    path: str
    area: AreaCoefficients
    vta: VtaCoefficients
    gemm: GemmCoefficients
    alu: AluCoefficients
    families: dict[str, FamilyCoefficients]
    entries: dict[str, Coefficient]

    def family(self, name: str) -> FamilyCoefficients:
        try:
            return self.families[name]
        except KeyError:
            have = ", ".join(self.families)
            raise ConfigError(
                self.path, [f"no coefficients for family {name!r} (have: {have})"]
            ) from None

    def source(self, dotted: str) -> str:
        """Where a coefficient comes from, e.g. ``source('families.xilinx-7series.shapes_tdp')``."""
        return self.entries[dotted].source


# ---- validation ------------------------------------------------------------------------------

Check = Callable[[Any], str | None]  # returns a problem (without the path) or None


def _number(minimum: float = 0.0, strict: bool = False) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return f"must be a number, got {v!r}"
        if v < minimum or (strict and v == minimum):
            return f"must be {'>' if strict else '>='} {minimum}, got {v!r}"
        return None

    return check


def _integer(minimum: int = 0) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int):
            return f"must be an integer, got {v!r}"
        if v < minimum:
            return f"must be >= {minimum}, got {v!r}"
        return None

    return check


def _fraction(v: Any) -> str | None:
    problem = _number()(v)
    if problem is None and not 0 < v <= 1:
        return f"must be in (0, 1], got {v!r}"
    return problem


def _one_of(*allowed: str) -> Check:
    def check(v: Any) -> str | None:
        if v not in allowed:
            return f"must be one of {', '.join(allowed)}, got {v!r}"
        return None

    return check


def _string(v: Any) -> str | None:
    return None if isinstance(v, str) and v else f"must be a non-empty string, got {v!r}"


def _boolean(v: Any) -> str | None:
    return None if isinstance(v, bool) else f"must be true or false, got {v!r}"


def _int_rows(length: int, allow_empty: bool) -> Check:
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or (not v and not allow_empty):
            return f"must be a {'' if allow_empty else 'non-empty '}list of [{length} integers]"
        for row in v:
            if (
                not isinstance(row, list)
                or len(row) != length
                or any(isinstance(x, bool) or not isinstance(x, int) or x <= 0 for x in row)
            ):
                return f"every entry must be {length} positive integers, got {row!r}"
        return None

    return check


def _shape_or_empty(v: Any) -> str | None:
    if v == []:
        return None
    if (
        isinstance(v, list)
        and len(v) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v)
    ):
        return None
    return f"must be [depth, width] (positive integers) or [], got {v!r}"


def _ops(v: Any) -> str | None:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        return f"must be a list of operation names, got {v!r}"
    unknown = [x for x in v if x not in ALU_OPS]
    return f"unknown ALU operations {unknown} (known: {', '.join(ALU_OPS)})" if unknown else None


_MODE = _one_of("tdp", "sdp")

_SPEC_AREA = {
    "node": _string,
    "logic_tile_um2": _number(strict=True),
    "memory_tile_heights": _number(strict=True),
    "memory_tile_bits": _integer(1),
}
_SPEC_VTA = {
    "max_port_bits": _integer(1),
    "uop_bits": _integer(1),
    **{f"port_mode_{m}": _MODE for m in PORTS},
    "cmd_queues": _integer(),
    "cmd_queue_bits": _integer(1),
    "cmd_queue_depth": _integer(1),
    "dep_queues": _integer(),
    "dep_queue_bits": _integer(1),
    "dep_queue_depth": _integer(1),
}
_SPEC_GEMM = {
    "tree_levels_per_register": _integer(1),
    "register_operands": _number(),
    "register_products": _number(),
}
_SPEC_ALU = {"ops": _ops, "shift_extra_stages": _integer(), "mul_arg_bits": _integer(1)}
_SPEC_VENDOR = {
    "logic_kind": _one_of("lut", "alm"),
    "logic_per_tile": _number(strict=True),
    "ff_per_tile": _number(strict=True),
    **{k: _number() for k in ("adder_bit", "compare_bit", "mux2_bit", "mux4_bit",
                              "shift_stage_bit", "mult_bit2")},
}
_SPEC_FIXED = {
    name: (_integer() if name in ("axi_masters", "axi_lite_slaves") else _number())
    for name in FixedCoefficients.__dataclass_fields__
}
_SPEC_FAMILY = {
    "vendor": _one_of(*VENDORS),
    "bram_kind": _one_of("bram36", "m10k"),
    "bram_bits": _integer(1),
    "shapes_tdp": _int_rows(2, allow_empty=False),
    "shapes_sdp": _int_rows(2, allow_empty=False),
    "half_shapes_tdp": _int_rows(2, allow_empty=True),
    "half_shapes_sdp": _int_rows(2, allow_empty=True),
    "half_block": _fraction,
    "uram_shape": _shape_or_empty,
    "uram_bits": _integer(),
    "uram_min_fill": _fraction,
    "gemm_prefer": _one_of("logic", "dsp"),
    "dsp_modes": _int_rows(3, allow_empty=False),
    "dsp_area_tiles": _number(),
    "spill_to_logic": _boolean,
}


def _spec() -> dict[str, Check]:
    """Dotted path of every coefficient the model needs -> its check."""
    spec: dict[str, Check] = {}
    for prefix, section in (("area", _SPEC_AREA), ("vta", _SPEC_VTA), ("gemm", _SPEC_GEMM),
                            ("alu", _SPEC_ALU)):
        spec.update({f"{prefix}.{k}": v for k, v in section.items()})
    for vendor in VENDORS:
        spec.update({f"vendors.{vendor}.{k}": v for k, v in _SPEC_VENDOR.items()})
        spec.update({f"vendors.{vendor}.fixed.{k}": v for k, v in _SPEC_FIXED.items()})
    for family in FAMILIES:
        spec.update({f"families.{family}.{k}": v for k, v in _SPEC_FAMILY.items()})
    return spec


def _leaves(node: dict[str, Any], prefix: str, out: dict[str, Any], problems: list[str]) -> None:
    """Collect coefficient tables (those with a ``value``) by dotted path."""
    for key, val in node.items():
        path = f"{prefix}{key}"
        if isinstance(val, dict) and "value" in val:
            out[path] = val
        elif isinstance(val, dict):
            _leaves(val, path + ".", out, problems)
        else:
            problems.append(f"{path}: expected {{ value, unit, source }}, got {val!r}")


def validate(raw: Any, source: str) -> dict[str, Coefficient]:
    """Every coefficient by dotted path, or one ``ConfigError`` listing every problem."""
    if not isinstance(raw, dict):
        raise ConfigError(source, ["expected a TOML document"])
    problems: list[str] = []
    if raw.get("schema") != SCHEMA:
        problems.append(f"schema must be {SCHEMA}, got {raw.get('schema')!r}")
    body = {k: v for k, v in raw.items() if k not in ("schema", "description")}
    found: dict[str, Any] = {}
    _leaves(body, "", found, problems)
    spec = _spec()
    entries: dict[str, Coefficient] = {}
    for path, table in found.items():
        if path not in spec:
            problems.append(f"{path}: unknown coefficient")
            continue
        extra = set(table) - {"value", "unit", "source"}
        if extra:
            problems.append(f"{path}: unknown fields {sorted(extra)}")
        for field_name in ("unit", "source"):
            if not isinstance(table.get(field_name), str) or not table.get(field_name):
                problems.append(f"{path}: needs a non-empty {field_name}")
        problem = spec[path](table["value"])
        if problem:
            problems.append(f"{path}: {problem}")
        entries[path] = Coefficient(table["value"], str(table.get("unit", "")),
                                    str(table.get("source", "")))
    problems.extend(f"{path}: missing" for path in spec if path not in found)
    if problems:
        raise ConfigError(source, problems)
    return entries


# ---- typed records ---------------------------------------------------------------------------


def _build(entries: dict[str, Coefficient], source: str) -> Coefficients:
    def v(path: str) -> Any:
        return entries[path].value

    def shapes(path: str) -> tuple[Shape, ...]:
        return tuple((int(d), int(w)) for d, w in v(path))

    area = AreaCoefficients(
        node=v("area.node"),
        logic_tile_um2=float(v("area.logic_tile_um2")),
        memory_um2_per_bit=(
            float(v("area.memory_tile_heights")) * float(v("area.logic_tile_um2"))
            / int(v("area.memory_tile_bits"))
        ),
    )
    vta = VtaCoefficients(
        max_port_bits=v("vta.max_port_bits"),
        uop_bits=v("vta.uop_bits"),
        port_modes={m: v(f"vta.port_mode_{m}") for m in PORTS},
        **{k: v(f"vta.{k}") for k in ("cmd_queues", "cmd_queue_bits", "cmd_queue_depth",
                                      "dep_queues", "dep_queue_bits", "dep_queue_depth")},
    )
    gemm = GemmCoefficients(
        tree_levels_per_register=v("gemm.tree_levels_per_register"),
        register_operands=float(v("gemm.register_operands")),
        register_products=float(v("gemm.register_products")),
    )
    alu = AluCoefficients(
        ops=tuple(v("alu.ops")),
        shift_extra_stages=v("alu.shift_extra_stages"),
        mul_arg_bits=v("alu.mul_arg_bits"),
    )
    vendors = {}
    for name in VENDORS:
        p = f"vendors.{name}."
        fixed = FixedCoefficients(**{k: v(f"{p}fixed.{k}") for k in _SPEC_FIXED})
        vendors[name] = VendorCoefficients(
            name=name, fixed=fixed, **{k: v(p + k) for k in _SPEC_VENDOR}
        )
    families = {}
    for name in FAMILIES:
        p = f"families.{name}."
        uram = v(p + "uram_shape")
        families[name] = FamilyCoefficients(
            name=name,
            vendor=vendors[v(p + "vendor")],
            bram_kind=v(p + "bram_kind"),
            bram_bits=v(p + "bram_bits"),
            shapes={m: shapes(f"{p}shapes_{m}") for m in ("tdp", "sdp")},
            half_shapes={m: shapes(f"{p}half_shapes_{m}") for m in ("tdp", "sdp")},
            half_block=float(v(p + "half_block")),
            uram_shape=(int(uram[0]), int(uram[1])) if uram else None,
            uram_bits=v(p + "uram_bits"),
            uram_min_fill=float(v(p + "uram_min_fill")),
            gemm_prefer=v(p + "gemm_prefer"),
            dsp_modes=tuple((int(a), int(b), int(n)) for a, b, n in v(p + "dsp_modes")),
            dsp_area_tiles=float(v(p + "dsp_area_tiles")),
            spill_to_logic=v(p + "spill_to_logic"),
        )
    return Coefficients(path=source, area=area, vta=vta, gemm=gemm, alu=alu, families=families,
                        entries=entries)


def default_path() -> Path:
    """The shipped ``hwconfigs/area/coefficients.toml``."""

    return project_root() / "hwconfigs" / "area" / "coefficients.toml"


def from_text(text: str, source: str = "area coefficients") -> Coefficients:
    """Parse and validate coefficient TOML text (no caching; for tests and tools)."""

    return _build(validate(parse_toml(text, source), source), source)


@lru_cache(maxsize=8)
def _load_cached(path: str) -> Coefficients:

    return from_text(read_text(path, "area coefficients"), path)


def load(path: str | Path | None = None) -> Coefficients:
    """The validated coefficients (the shipped file by default); cached per path."""
    return _load_cached(str(Path(path) if path is not None else default_path()))
