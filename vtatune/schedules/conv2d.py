"""The conv2d schedule template on ``tvm.s_tir`` (the VTA conv2d tutorial's recipe).

Knobs (all in whole tiles, so a value means the same work on any BLOCK size):

- ``tile_b``: BATCH tiles per output tile; ``tile_co``: BLOCK_OUT channel tiles per output tile;
- ``tile_h`` / ``tile_w``: output rows / columns per output tile;
- ``tile_ci``: BLOCK_IN channel tiles loaded per reduction step;
- ``h_nthread`` / ``oc_nthread``: virtual threads (1 or 2) over output-row / channel tiles.

Every tile knob divides its extent, so no partial tiles (and no guards) reach the VTA passes.
"""

from __future__ import annotations

from typing import Any

from vtatune.hardware.config import HwConfig
from vtatune.passes.scopes import ACC_SCOPE
from vtatune.schedules import intrinsics
from vtatune.schedules._stage import EPILOGUE, stage_and_tensorize
from vtatune.schedules.knobs import Knobs, KnobSpace, divisors
from vtatune.workloads.conv2d import Conv2d

NTHREADS = (1, 2)


def knob_space(wl: Conv2d, hw: HwConfig) -> KnobSpace:
    t = wl.tiles(hw)

    def constraint(k: Knobs) -> str | None:
        if (wl.oh // k["tile_h"]) % k["h_nthread"]:
            return (f"h_nthread={k['h_nthread']} does not divide the {wl.oh // k['tile_h']} "
                    f"row tiles (tile_h={k['tile_h']})")
        if (t["co"] // k["tile_co"]) % k["oc_nthread"]:
            return (f"oc_nthread={k['oc_nthread']} does not divide the "
                    f"{t['co'] // k['tile_co']} channel tiles (tile_co={k['tile_co']})")
        return None

    return KnobSpace(
        axes={"tile_b": divisors(t["b"]), "tile_h": divisors(wl.oh), "tile_w": divisors(wl.ow),
              "tile_ci": divisors(t["ci"]), "tile_co": divisors(t["co"]),
              "h_nthread": NTHREADS, "oc_nthread": NTHREADS},
        constraint=constraint,
        units={"tile_b": "BATCH tiles", "tile_h": "output rows", "tile_w": "output columns",
               "tile_ci": "BLOCK_IN tiles", "tile_co": "BLOCK_OUT tiles",
               "h_nthread": "threads", "oc_nthread": "threads"},
    )


def apply(sch: Any, hw: HwConfig, k: Knobs) -> None:
    """Schedule the conv2d PrimFunc in ``sch`` for ``hw`` with knobs ``k`` (in place)."""
    gemm, reset = intrinsics.register(hw)
    blk = sch.get_sblock
    res = blk("res")
    b, oc, y, x, b_t, oc_t = sch.get_loops(res)
    b_o, b_i = sch.split(b, [None, k["tile_b"]])
    oc_o, oc_i = sch.split(oc, [None, k["tile_co"]])
    y_o, y_i = sch.split(y, [None, k["tile_h"]])
    x_o, x_i = sch.split(x, [None, k["tile_w"]])
    threads = []
    if k["oc_nthread"] > 1:
        oc_o, oc_v = sch.split(oc_o, [None, k["oc_nthread"]])
        threads.append(oc_v)
    if k["h_nthread"] > 1:
        y_o, y_v = sch.split(y_o, [None, k["h_nthread"]])
        threads.append(y_v)
    sch.reorder(*threads, b_o, oc_o, y_o, x_o, b_i, oc_i, y_i, x_i, b_t, oc_t)
    for v in threads:
        sch.bind(v, "cthread")

    # The accumulator stages live in one output tile (acc SRAM), computed at x_o.
    for name in (*reversed(EPILOGUE), "res_conv"):
        sch.compute_at(blk(name), x_o, preserve_unit_loops=True)
        sch.set_scope(blk(name), 0, ACC_SCOPE)
    conv = blk("res_conv")
    *_, cb_i, coc_i, cy_i, cx_i, cb_t, coc_t, ci, dy, dx, ci_t = sch.get_loops(conv)
    ci_o, ci_i = sch.split(ci, [None, k["tile_ci"]])
    # Reduction over channel tiles outermost; one of the output axes (x) right above the
    # tensorized tile so consecutive GEMMs write different accumulator tiles.
    sch.reorder(ci_o, cb_i, coc_i, cy_i, ci_i, dy, dx, cx_i, cb_t, coc_t, ci_t)

    # Input and weight tiles go to their SRAMs at every reduction step, by DMA.
    stage_and_tensorize(sch, hw, ci_o, b_i, 6, gemm, reset)


def footprint(wl: Conv2d, hw: HwConfig, k: Knobs) -> dict[str, int]:
    """Analytic SRAM bytes (all threads) and largest micro-op kernel of a knob setting.

    Mirrors what the compile path allocates: the padded input window of one output tile for
    ``tile_ci`` channel tiles, the matching weights, the int32 output tile; virtual threads
    each own a copy. The verification passes remain the authority.
    """
    s = wl.stride
    rows = (k["tile_h"] - 1) * s + wl.kh
    cols = (k["tile_w"] - 1) * s + wl.kw
    threads = k["h_nthread"] * k["oc_nthread"]
    b = k["tile_b"] * hw.batch
    inp = b * k["tile_ci"] * hw.block_in * rows * cols * hw.inp_bits // 8
    wgt = k["tile_co"] * hw.block_out * k["tile_ci"] * hw.block_in * wl.kh * wl.kw \
        * hw.wgt_bits // 8
    acc = b * k["tile_co"] * hw.block_out * k["tile_h"] * k["tile_w"] * hw.acc_bits // 8
    loops = [e for e in (k["tile_b"], k["tile_co"], k["tile_h"], k["tile_ci"], wl.kh, wl.kw,
                         k["tile_w"]) if e > 1]
    uops = 1
    for e in loops[2:]:
        uops *= e
    return {"inp": inp * threads, "wgt": wgt * threads, "acc": acc * threads, "uops": uops}


def traffic(wl: Conv2d, hw: HwConfig, k: Knobs) -> int:
    """Analytic DRAM bytes moved by a knob setting (inputs re-read per output tile)."""
    t = wl.tiles(hw)
    tiles = (t["b"] // k["tile_b"]) * (t["co"] // k["tile_co"]) * (wl.oh // k["tile_h"]) \
        * (wl.ow // k["tile_w"])
    s = wl.stride
    rows = (k["tile_h"] - 1) * s + wl.kh
    cols = (k["tile_w"] - 1) * s + wl.kw
    inp = k["tile_b"] * hw.batch * t["ci"] * hw.block_in * rows * cols
    wgt = k["tile_co"] * hw.block_out * t["ci"] * hw.block_in * wl.kh * wl.kw
    out = t["b"] * hw.batch * t["co"] * hw.block_out * wl.oh * wl.ow
    return tiles * (inp + wgt) + out


def suggest(wl: Conv2d, hw: HwConfig) -> Knobs:
    """The knob setting with the least analytic DRAM traffic whose footprint fits, preferring
    two virtual threads; the space's default when nothing fits."""
    return _suggest(knob_space(wl, hw), lambda k: footprint(wl, hw, k),
                    lambda k: traffic(wl, hw, k), hw)


def _suggest(space: KnobSpace, fp: Any, cost: Any, hw: HwConfig) -> Knobs:
    best, best_key = None, None
    for k in space:
        f = fp(k)
        if (f["inp"] > hw.inp_buff_bytes or f["wgt"] > hw.wgt_buff_bytes
                or f["acc"] > hw.acc_buff_bytes or f["uops"] > hw.uop_depth):
            continue
        threads = k.get("h_nthread", 1) * k.get("oc_nthread", 1)
        key = (cost(k), -min(threads, 2), -threads)
        if best_key is None or key < best_key:
            best, best_key = k, key
    return best if best is not None else space.default()
