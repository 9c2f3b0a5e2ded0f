"""``vtatune hw``: validate a vta_config.json and show its derived sizes and ISA field widths."""

from __future__ import annotations

from typing import Annotated

import typer

from vtatune.cli import console
from vtatune.cli.options import HwOption, JsonOption


def hw(hw: HwOption = "default", json_: JsonOption = False,
       list_: Annotated[bool, typer.Option("--list", help="List the shipped configs.")] = False
       ) -> None:
    """Validate a hardware config; show derived buffer depths and instruction field widths."""
    from vtatune.hardware import config

    if list_:
        rows = []
        for p in config.shipped():
            c = config.load(p)
            rows.append([p.stem, c.shape_label, c.inp_buff_bytes // 1024, c.wgt_buff_bytes // 1024,
                         c.acc_buff_bytes // 1024, c.uop_buff_bytes // 1024])
        if json_:
            console.print_json([dict(zip(["name", "shape", "inp_kib", "wgt_kib", "acc_kib",
                                          "uop_kib"], r, strict=True)) for r in rows])
        else:
            console.table("shipped hardware configs (hwconfigs/)",
                          ["name", "BxIxO", "inp KiB", "wgt KiB", "acc KiB", "uop KiB"], rows)
        return
    from vtatune.hardware.hw_spec import layouts

    cfg = config.load(hw)
    lay = layouts(cfg)
    info = {"status": "valid", "vta_config": cfg.to_vta_json(), **cfg.summary(),
            "field_bits": cfg.field_bits, "gemm_insn_bits": lay["gemm"].end_bit,
            "alu_insn_bits": lay["alu"].end_bit, "gemm_uop_bits": cfg.gemm_uop_bits}
    if json_:
        console.print_json(info)
        return
    console.line(f"{hw}: valid VTA {cfg.shape_label} (BATCH x BLOCK_IN x BLOCK_OUT), "
                 f"peak {cfg.peak_ops_per_cycle} ops/cycle")
    rows = [[scope, getattr(cfg, f"{scope}_buff_bytes"), getattr(cfg, f"{scope}_depth")]
            for scope in ("inp", "wgt", "acc", "out", "uop")]
    console.table(None, ["buffer", "bytes", "depth (tiles/uops)"], rows)
    console.line(f"instruction bits used (64-bit word aligned): GEMM {info['gemm_insn_bits']}/128,"
                 f" ALU {info['alu_insn_bits']}/128; GEMM micro-op {cfg.gemm_uop_bits}/32")


def register(app: typer.Typer) -> None:
    app.command("hw")(hw)
