"""The dense schedule template on ``tvm.s_tir``.

Knobs (in whole tiles): ``tile_b`` BATCH tiles and ``tile_co`` BLOCK_OUT tiles per output
tile, ``tile_ci`` BLOCK_IN tiles per reduction step, ``oc_nthread`` virtual threads (1 or 2)
over output-channel tiles.
"""

from __future__ import annotations

from typing import Any

from vtatune.hardware.config import HwConfig
from vtatune.passes.scopes import ACC_SCOPE
from vtatune.schedules import intrinsics
from vtatune.schedules._stage import EPILOGUE, stage_and_tensorize
from vtatune.schedules.conv2d import NTHREADS
from vtatune.schedules.knobs import Knobs, KnobSpace, divisors
from vtatune.workloads.dense import Dense


def knob_space(wl: Dense, hw: HwConfig) -> KnobSpace:
    t = wl.tiles(hw)

    def constraint(k: Knobs) -> str | None:
        if (t["co"] // k["tile_co"]) % k["oc_nthread"]:
            return (f"oc_nthread={k['oc_nthread']} does not divide the "
                    f"{t['co'] // k['tile_co']} channel tiles (tile_co={k['tile_co']})")
        return None

    return KnobSpace(
        axes={"tile_b": divisors(t["b"]), "tile_ci": divisors(t["ci"]),
              "tile_co": divisors(t["co"]), "oc_nthread": NTHREADS},
        constraint=constraint,
        units={"tile_b": "BATCH tiles", "tile_ci": "BLOCK_IN tiles",
               "tile_co": "BLOCK_OUT tiles", "oc_nthread": "threads"},
    )


def apply(sch: Any, hw: HwConfig, k: Knobs) -> None:
    """Schedule the dense PrimFunc in ``sch`` for ``hw`` with knobs ``k`` (in place)."""
    gemm, reset = intrinsics.register(hw)
    blk = sch.get_sblock
    res = blk("res")
    b, oc, b_t, oc_t = sch.get_loops(res)
    b_o, b_i = sch.split(b, [None, k["tile_b"]])
    oc_o, oc_i = sch.split(oc, [None, k["tile_co"]])
    threads = []
    if k["oc_nthread"] > 1:
        oc_o, oc_v = sch.split(oc_o, [None, k["oc_nthread"]])
        threads.append(oc_v)
    sch.reorder(*threads, b_o, oc_o, b_i, oc_i, b_t, oc_t)
    for v in threads:
        sch.bind(v, "cthread")

    for name in (*reversed(EPILOGUE), "res_conv"):
        sch.compute_at(blk(name), oc_o, preserve_unit_loops=True)
        sch.set_scope(blk(name), 0, ACC_SCOPE)
    gemm_blk = blk("res_conv")
    *_, gb_i, goc_i, gb_t, goc_t, ko, ki = sch.get_loops(gemm_blk)
    ko_o, ko_i = sch.split(ko, [None, k["tile_ci"]])
    sch.reorder(ko_o, gb_i, goc_i, ko_i, gb_t, goc_t, ki)

    stage_and_tensorize(sch, hw, ko_o, b_i, 4, gemm, reset)


def footprint(wl: Dense, hw: HwConfig, k: Knobs) -> dict[str, int]:
    """Analytic SRAM bytes (all threads) and largest micro-op kernel (see conv2d)."""
    threads = k["oc_nthread"]
    b = k["tile_b"] * hw.batch
    inp = b * k["tile_ci"] * hw.block_in * hw.inp_bits // 8
    wgt = k["tile_co"] * hw.block_out * k["tile_ci"] * hw.block_in * hw.wgt_bits // 8
    acc = b * k["tile_co"] * hw.block_out * hw.acc_bits // 8
    loops = [e for e in (k["tile_b"], k["tile_co"], k["tile_ci"]) if e > 1]
    uops = 1
    for e in loops[2:]:
        uops *= e
    return {"inp": inp * threads, "wgt": wgt * threads, "acc": acc * threads, "uops": uops}


def traffic(wl: Dense, hw: HwConfig, k: Knobs) -> int:
    t = wl.tiles(hw)
    tiles = (t["b"] // k["tile_b"]) * (t["co"] // k["tile_co"])
    inp = k["tile_b"] * hw.batch * t["ci"] * hw.block_in
    wgt = k["tile_co"] * hw.block_out * t["ci"] * hw.block_in
    return tiles * (inp + wgt) + t["b"] * hw.batch * t["co"] * hw.block_out


def suggest(wl: Dense, hw: HwConfig) -> Knobs:
    from vtatune.schedules.conv2d import _suggest

    return _suggest(knob_space(wl, hw), lambda k: footprint(wl, hw, k),
                    lambda k: traffic(wl, hw, k), hw)
