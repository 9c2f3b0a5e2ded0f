"""VerifySram: each SRAM scope's allocation must fit VTA's buffer of that scope.

Measured after InjectVirtualThread (each thread owns a copy of its buffers) and StorageRewrite
(which folds the shift/clip chain into one accumulator allocation; before it the chain counts
four times).
"""

from __future__ import annotations

from typing import Any

from vtatune.hardware.config import HwConfig
from vtatune.passes.scopes import ACC_SCOPE, INP_SCOPE, WGT_SCOPE
from vtatune.passes.verify import Problem

SCOPE_NAMES = {INP_SCOPE: "inp", WGT_SCOPE: "wgt", ACC_SCOPE: "acc"}


def capacity(hw: HwConfig) -> dict[str, int]:
    """Bytes of each SRAM, keyed by short name (inp, wgt, acc, uop)."""
    return {"inp": hw.inp_buff_bytes, "wgt": hw.wgt_buff_bytes, "acc": hw.acc_buff_bytes,
            "uop": hw.uop_buff_bytes}


def sram_bytes(func: Any) -> dict[str, int]:
    """Bytes allocated per SRAM scope (short names), zero where nothing is allocated."""
    from tvm import s_tir

    raw = s_tir.analysis.calculate_allocated_bytes(func)
    used = dict(raw.get("main", raw)) if hasattr(raw, "get") else {}
    return {name: int(used.get(scope, 0)) for scope, name in SCOPE_NAMES.items()}


def sram_problems(used: dict[str, int], hw: HwConfig) -> list[Problem]:
    """The scopes of ``used`` (bytes, from ``sram_bytes``) that overflow ``hw``'s buffers."""
    cap = capacity(hw)
    return [Problem("sram", f"{name} buffer", used[name], cap[name], "bytes")
            for name in SCOPE_NAMES.values() if used[name] > cap[name]]


def verify_sram(func: Any, hw: HwConfig) -> tuple[dict[str, int], list[Problem]]:
    used = sram_bytes(func)
    return used, sram_problems(used, hw)
