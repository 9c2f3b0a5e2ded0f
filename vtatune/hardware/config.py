"""VTA hardware configuration: VTA's ``vta_config.json`` parsed, validated and derived.

The file format is VTA's own. Every size in the file is a base-2 logarithm; ``HwConfig`` keeps
those and derives the linear quantities (bits, bytes, tiles) and the bit widths of the
instruction and micro-op fields, following VTA's ``hw_spec.h``.

Validation collects every problem before raising one ``ConfigError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from vtatune.errors import ConfigError
from vtatune.escaping import shown
from vtatune.hardware import hw_spec
from vtatune.hardware.hw_spec import (
    LOG_UOP_WIDTH,
    MEMOP_SRAM_ADDR_BITS,
    layout_problems,
)
from vtatune.paths import project_root
from vtatune.readers import read_json

#: VTA addresses DRAM physically with 32 bits (``typedef uint32_t vta_phy_addr_t`` in VTA's
#: include/vta/driver.h, unless built with USE_VTA64): everything a program touches in DRAM
#: fits in 4 GiB.
MAX_DRAM_BYTES = 1 << 32

#: Targets VTA knows (``sim`` is the simulator).
TARGETS = ("sim", "tsim", "pynq", "ultra96", "zcu104", "de10nano")

#: Data widths the compile path supports: int8 inputs and weights, int32 accumulators.
SUPPORTED_LOG_INP_WIDTH = (3,)
SUPPORTED_LOG_WGT_WIDTH = (3,)
SUPPORTED_LOG_ACC_WIDTH = (5,)

#: The log2 parameters a compiled program depends on: the data widths and the GEMM shape.
PROGRAM_KEYS = (
    "LOG_INP_WIDTH",
    "LOG_WGT_WIDTH",
    "LOG_ACC_WIDTH",
    "LOG_BATCH",
    "LOG_BLOCK_IN",
    "LOG_BLOCK_OUT",
)
#: The buffer sizes: they only decide whether a program fits (verification) and the area.
BUFFER_KEYS = (
    "LOG_UOP_BUFF_SIZE",
    "LOG_INP_BUFF_SIZE",
    "LOG_WGT_BUFF_SIZE",
    "LOG_ACC_BUFF_SIZE",
)
#: Keys of vta_config.json, in VTA's order. LOG_BLOCK may replace LOG_BLOCK_IN/LOG_BLOCK_OUT.
LOG_KEYS = PROGRAM_KEYS + BUFFER_KEYS

#: Defaults of VTA's shipped vta_config.json (the 1x16x16 design for Pynq).
DEFAULTS: dict[str, Any] = {
    "TARGET": "sim",
    "HW_VER": "0.0.2",
    "LOG_INP_WIDTH": 3,
    "LOG_WGT_WIDTH": 3,
    "LOG_ACC_WIDTH": 5,
    "LOG_BATCH": 0,
    "LOG_BLOCK_IN": 4,
    "LOG_BLOCK_OUT": 4,
    "LOG_UOP_BUFF_SIZE": 15,
    "LOG_INP_BUFF_SIZE": 15,
    "LOG_WGT_BUFF_SIZE": 18,
    "LOG_ACC_BUFF_SIZE": 17,
}

#: Plausible ranges for each log2 key (inclusive). Outside these no VTA can be built.
LOG_RANGES = {
    "LOG_BATCH": (0, 4),
    "LOG_BLOCK_IN": (1, 7),
    "LOG_BLOCK_OUT": (1, 7),
    "LOG_UOP_BUFF_SIZE": (10, 20),
    "LOG_INP_BUFF_SIZE": (10, 22),
    "LOG_WGT_BUFF_SIZE": (10, 22),
    "LOG_ACC_BUFF_SIZE": (10, 22),
}


@dataclass(frozen=True)
class HwConfig:
    """One VTA instance. Fields are VTA's log2 parameters; properties derive the rest.

    Units are in the property names: ``*_bits`` bits, ``*_bytes`` bytes, ``*_depth`` tiles
    (one tile is what one GEMM step reads or writes of that buffer).
    """

    log_inp_width: int = 3
    log_wgt_width: int = 3
    log_acc_width: int = 5
    log_batch: int = 0
    log_block_in: int = 4
    log_block_out: int = 4
    log_uop_buff_size: int = 15
    log_inp_buff_size: int = 15
    log_wgt_buff_size: int = 18
    log_acc_buff_size: int = 17
    target: str = "sim"
    hw_ver: str = "0.0.2"
    name: str = field(default="", compare=False)

    @classmethod
    def from_params(cls, params: Mapping[str, int], **kw: Any) -> HwConfig:
        """The config of log2 parameters keyed as in vta_config.json (``log_params()``'s
        form, as records and bundles store them); ``kw`` sets other fields (``target``,
        ``name``). Not validated (``validate``)."""
        fields: dict[str, Any] = {k.lower(): int(v) for k, v in params.items()}
        return cls(**fields, **kw)

    # ---- element widths (bits) and GEMM shape -------------------------------------------
    @property
    def inp_bits(self) -> int:
        return 1 << self.log_inp_width

    @property
    def wgt_bits(self) -> int:
        return 1 << self.log_wgt_width

    @property
    def acc_bits(self) -> int:
        return 1 << self.log_acc_width

    @property
    def out_bits(self) -> int:
        """Output elements have the input width (VTA stores back int8)."""
        return self.inp_bits

    @property
    def batch(self) -> int:
        return 1 << self.log_batch

    @property
    def block_in(self) -> int:
        return 1 << self.log_block_in

    @property
    def block_out(self) -> int:
        return 1 << self.log_block_out

    @property
    def macs_per_cycle(self) -> int:
        """Multiply-accumulates one GEMM step performs (BATCH x BLOCK_IN x BLOCK_OUT)."""
        return self.batch * self.block_in * self.block_out

    @property
    def peak_ops_per_cycle(self) -> int:
        """2 ops (multiply + add) per MAC."""
        return 2 * self.macs_per_cycle

    @property
    def inp_dtype(self) -> str:
        return f"int{self.inp_bits}"

    @property
    def wgt_dtype(self) -> str:
        return f"int{self.wgt_bits}"

    @property
    def acc_dtype(self) -> str:
        return f"int{self.acc_bits}"

    @property
    def out_dtype(self) -> str:
        return f"int{self.out_bits}"

    # ---- buffer sizes (bytes) ------------------------------------------------------------
    @property
    def uop_buff_bytes(self) -> int:
        return 1 << self.log_uop_buff_size

    @property
    def inp_buff_bytes(self) -> int:
        return 1 << self.log_inp_buff_size

    @property
    def wgt_buff_bytes(self) -> int:
        return 1 << self.log_wgt_buff_size

    @property
    def acc_buff_bytes(self) -> int:
        return 1 << self.log_acc_buff_size

    @property
    def log_out_buff_size(self) -> int:
        return self.log_acc_buff_size + self.log_inp_width - self.log_acc_width

    @property
    def out_buff_bytes(self) -> int:
        """Output buffer = acc buffer x out_width / acc_width."""
        return 1 << self.log_out_buff_size

    # ---- tile sizes (bytes) --------------------------------------------------------------
    @property
    def inp_tile_bytes(self) -> int:
        return self.batch * self.block_in * self.inp_bits // 8

    @property
    def wgt_tile_bytes(self) -> int:
        return self.block_out * self.block_in * self.wgt_bits // 8

    @property
    def acc_tile_bytes(self) -> int:
        return self.batch * self.block_out * self.acc_bits // 8

    @property
    def out_tile_bytes(self) -> int:
        return self.batch * self.block_out * self.out_bits // 8

    # ---- SRAM depths (tiles) and their log2 ----------------------------------------------
    @property
    def log_inp_depth(self) -> int:
        return self.log_inp_buff_size - self.log_batch - self.log_block_in - self.log_inp_width + 3

    @property
    def log_wgt_depth(self) -> int:
        return (
            self.log_wgt_buff_size - self.log_block_out - self.log_block_in - self.log_wgt_width + 3
        )

    @property
    def log_acc_depth(self) -> int:
        return self.log_acc_buff_size - self.log_batch - self.log_block_out - self.log_acc_width + 3

    @property
    def log_out_depth(self) -> int:
        return self.log_acc_depth

    @property
    def log_uop_depth(self) -> int:
        return self.log_uop_buff_size - LOG_UOP_WIDTH + 3

    @property
    def inp_depth(self) -> int:
        return 1 << self.log_inp_depth

    @property
    def wgt_depth(self) -> int:
        return 1 << self.log_wgt_depth

    @property
    def acc_depth(self) -> int:
        return 1 << self.log_acc_depth

    @property
    def out_depth(self) -> int:
        return 1 << self.log_out_depth

    @property
    def uop_depth(self) -> int:
        return 1 << self.log_uop_depth

    # ---- ISA field widths (bits) ---------------------------------------------------------
    @cached_property
    def field_bits(self) -> dict[str, int]:
        """Bit width of every variable-width field of the instructions and micro-ops."""
        return hw_spec.field_bits(self.log_uop_depth, self.log_inp_depth, self.log_wgt_depth,
                                  self.log_acc_depth)

    @property
    def gemm_uop_bits(self) -> int:
        """Bits of VTA's struct VTAUop: A + MAX(A, I) + W (must be <= 32). How many bits an
        instruction uses is the ISA layout's (``hw_spec.layouts``: fields are word-aligned)."""
        return hw_spec.uop_struct_bits(self.log_inp_depth, self.log_wgt_depth,
                                       self.log_acc_depth)

    # ---- identity and export -------------------------------------------------------------
    @property
    def shape_label(self) -> str:
        """E.g. ``1x16x16`` (BATCH x BLOCK_IN x BLOCK_OUT)."""
        return f"{self.batch}x{self.block_in}x{self.block_out}"

    @property
    def key(self) -> str:
        """A short stable identity of the hardware (all log2 params)."""
        return "_".join(str(v) for v in self.log_params().values())

    def log_params(self) -> dict[str, int]:
        """The ten log2 parameters, keyed as in vta_config.json."""
        return {k: getattr(self, k.lower()) for k in LOG_KEYS}

    def to_vta_json(self) -> dict[str, Any]:
        """VTA's own vta_config.json content. A square design (BLOCK_IN = BLOCK_OUT) carries
        ``LOG_BLOCK``, which stock VTA's pkg_config.py reads unconditionally; a non-square one
        can only be written with LOG_BLOCK_IN/LOG_BLOCK_OUT, which stock VTA cannot load."""
        out: dict[str, Any] = {"TARGET": self.target, "HW_VER": self.hw_ver}
        for key, val in self.log_params().items():
            if self.log_block_in == self.log_block_out and key == "LOG_BLOCK_IN":
                out["LOG_BLOCK"] = val
            elif not (self.log_block_in == self.log_block_out and key == "LOG_BLOCK_OUT"):
                out[key] = val
        return out

    def summary(self) -> dict[str, Any]:
        """Derived figures for display and JSON output."""
        return {
            "name": self.name,
            "shape": self.shape_label,
            "inp_buff_bytes": self.inp_buff_bytes,
            "wgt_buff_bytes": self.wgt_buff_bytes,
            "acc_buff_bytes": self.acc_buff_bytes,
            "out_buff_bytes": self.out_buff_bytes,
            "uop_buff_bytes": self.uop_buff_bytes,
            "inp_depth": self.inp_depth,
            "wgt_depth": self.wgt_depth,
            "acc_depth": self.acc_depth,
            "uop_depth": self.uop_depth,
        }

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def problems_of(cfg: HwConfig) -> list[str]:
    """Every reason ``cfg`` cannot be built or compiled for; empty when valid."""
    return list(_problems(cfg))


@lru_cache(maxsize=4096)
def _problems(cfg: HwConfig) -> tuple[str, ...]:
    # cached: the search checks the hardware of every proposal (~0.3 ms uncached)
    return tuple(_collect_problems(cfg))


def _collect_problems(cfg: HwConfig) -> list[str]:
    problems: list[str] = []
    if cfg.target not in TARGETS:
        problems.append(f"TARGET {cfg.target!r} is not one of {', '.join(TARGETS)}")
    for key, (lo, hi) in LOG_RANGES.items():
        val = getattr(cfg, key.lower())
        if not lo <= val <= hi:
            problems.append(f"{key}={val} is outside [{lo}, {hi}]")
    for key, allowed in (
        ("LOG_INP_WIDTH", SUPPORTED_LOG_INP_WIDTH),
        ("LOG_WGT_WIDTH", SUPPORTED_LOG_WGT_WIDTH),
        ("LOG_ACC_WIDTH", SUPPORTED_LOG_ACC_WIDTH),
    ):
        val = getattr(cfg, key.lower())
        if val not in allowed:
            problems.append(
                f"{key}={val} is not supported (supported: {', '.join(map(str, allowed))}; "
                "vtatune compiles int8 x int8 -> int32)"
            )
    if problems:  # derived checks below assume sane ranges
        return problems
    for scope, log_depth in (
        ("inp", cfg.log_inp_depth),
        ("wgt", cfg.log_wgt_depth),
        ("acc", cfg.log_acc_depth),
    ):
        if log_depth < 1:
            problems.append(
                f"{scope} buffer of {1 << getattr(cfg, f'log_{scope}_buff_size')} bytes holds "
                f"{'no' if log_depth < 0 else 'one'} {scope} tile; it needs at least 2"
            )
        if log_depth > MEMOP_SRAM_ADDR_BITS:
            problems.append(
                f"{scope} buffer depth 2^{log_depth} tiles exceeds the {MEMOP_SRAM_ADDR_BITS}-bit "
                "sram_base field of LOAD/STORE"
            )
    # The ISA layout is the authority on encodability: fields may not straddle a 64-bit word
    # (C bit-field layout of VTA's runtime structs), which the flat bit counts above ignore.
    problems.extend(layout_problems(cfg))
    return problems


def validate(cfg: HwConfig, source: str = "hardware config") -> HwConfig:
    """Return ``cfg`` or raise one ``ConfigError`` listing every problem."""
    problems = problems_of(cfg)
    if problems:
        raise ConfigError(source, problems)
    return cfg


def from_dict(raw: Any, source: str = "hardware config", name: str = "") -> HwConfig:
    """Parse VTA's vta_config.json content. Accepts LOG_BLOCK or LOG_BLOCK_IN/LOG_BLOCK_OUT.

    Missing keys take VTA's defaults; unknown keys and wrong types are problems.
    """
    if not isinstance(raw, dict):
        raise ConfigError(source, [f"expected a JSON object, got {type(raw).__name__}"])
    problems: list[str] = []
    known = set(LOG_KEYS) | {"TARGET", "HW_VER", "LOG_BLOCK", "NAME"}
    # Keys VTA's tooling writes that do not change the design vtatune models.
    ignored = {"LOG_OUT_BUFF_SIZE", "LOG_OUT_WIDTH", "DESCRIPTION"}
    for key in raw:
        if key not in known and key not in ignored:
            problems.append(f"unknown key {key!r}")
    values = dict(DEFAULTS)
    if "LOG_BLOCK" in raw:
        if "LOG_BLOCK_IN" in raw or "LOG_BLOCK_OUT" in raw:
            problems.append("give either LOG_BLOCK or LOG_BLOCK_IN/LOG_BLOCK_OUT, not both")
        values["LOG_BLOCK_IN"] = values["LOG_BLOCK_OUT"] = raw["LOG_BLOCK"]
    for key in LOG_KEYS + ("TARGET", "HW_VER"):
        if key in raw:
            values[key] = raw[key]
    for key in LOG_KEYS:
        if key in ("LOG_BLOCK_IN", "LOG_BLOCK_OUT") and "LOG_BLOCK" in raw:
            continue  # reported once, as LOG_BLOCK, below
        val = values[key]
        if isinstance(val, bool) or not isinstance(val, int):
            problems.append(f"{key} must be an integer, got {val!r}")
    for key in ("TARGET", "HW_VER"):
        if not isinstance(values[key], str):
            problems.append(f"{key} must be a string, got {values[key]!r}")
    if "NAME" in raw and not isinstance(raw["NAME"], str):
        problems.append(f"NAME must be a string, got {raw['NAME']!r}")
    if "LOG_BLOCK" in raw and (
        isinstance(raw["LOG_BLOCK"], bool) or not isinstance(raw["LOG_BLOCK"], int)
    ):
        problems.append(f"LOG_BLOCK must be an integer, got {raw['LOG_BLOCK']!r}")
    if problems:
        raise ConfigError(source, problems)
    cfg = HwConfig(
        **{k.lower(): values[k] for k in LOG_KEYS},
        target=values["TARGET"],
        hw_ver=values["HW_VER"],
        name=str(raw.get("NAME", name)),
    )
    return validate(cfg, source)


def load(path: str | Path) -> HwConfig:
    """Load and validate a vta_config.json file (or a shipped config's name)."""

    if str(path).strip() == "":
        raise ConfigError("hardware config", ["no file or shipped config name given"])
    p = resolve_path(path)
    raw = read_json(p, "hardware config")
    return from_dict(raw, source=f"hardware config {shown(str(p))}", name=p.stem)


def hwconfig_dir() -> Path:
    """The shipped ``hwconfigs/`` folder (beside the package)."""

    return project_root() / "hwconfigs"


def shipped() -> list[Path]:
    """Paths of the shipped hardware configs (not the malformed examples)."""
    return sorted(hwconfig_dir().glob("*.json"))


def resolve_path(path: str | Path) -> Path:
    """A file path as given, or the name of a shipped config (``default``, ``1x32x32``)."""
    p = Path(path)
    try:
        exists = p.exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return p  # the reader reports it
    if exists or p.suffix or len(p.parts) > 1:
        return p
    candidate = hwconfig_dir() / f"{path}.json"
    return candidate if candidate.exists() else p


def default() -> HwConfig:
    """VTA's default 1x16x16 design."""
    return HwConfig(name="default")


# ---- the hardware a compiled program sees (``compiler.compile``) -------------------------

#: HwConfig fields a compiled program must not depend on (they only change verification,
#: the micro-op cache while building the instruction stream, and area).
BUFFER_FIELDS = tuple(k.lower() for k in BUFFER_KEYS)

class BufferSizeDependence(RuntimeError):
    """Lowering read a buffer size: a bug, since one lowered program is shared by every
    buffer size. Checks that depend on buffer sizes belong in ``verify_program``."""


class _UnknownBufferSize:
    """The buffer sizes of ``program_hw``: equal only to itself, refuses every use as a
    number."""

    __slots__ = ()

    def _refuse(self, *_: Any) -> Any:
        raise BufferSizeDependence(
            "lowering used a buffer size; a compiled program is shared across buffer sizes, "
            "so anything that depends on them must be checked in verify_program")

    __int__ = __index__ = __float__ = __bool__ = __neg__ = __pos__ = __abs__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __floordiv__ = __rfloordiv__ = __truediv__ = __rtruediv__ = __mod__ = __rmod__ = _refuse
    __pow__ = __rpow__ = __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _refuse
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse

    def __repr__(self) -> str:
        return "UNKNOWN_BUFFER_SIZE"

    def __reduce__(self) -> str:
        return "UNKNOWN_BUFFER_SIZE"  # pickles as the module-level singleton


UNKNOWN_BUFFER_SIZE = _UnknownBufferSize()


@lru_cache(maxsize=256)
def program_hw(hw: HwConfig) -> HwConfig:
    """``hw`` as a compiled program sees it: GEMM shape, widths, target; no buffer sizes."""
    # the sentinel stands in for the int sizes (and refuses to be used as one)
    unknown: dict[str, Any] = dict.fromkeys(BUFFER_FIELDS, UNKNOWN_BUFFER_SIZE)
    return replace(hw, name="", **unknown)
