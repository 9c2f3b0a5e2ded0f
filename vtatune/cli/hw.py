"""``vtatune hw``: validate a vta_config.json and show its derived sizes and ISA field widths."""

from __future__ import annotations

from typing import Annotated

import typer

from vtatune.cli import console
from vtatune.cli.options import HwOption, JsonOption


def hw(hw: HwOption = "default", json_: JsonOption = False,
       list_: Annotated[bool, typer.Option("--list", help="List the shipped configs.")] = False,
       board: Annotated[str | None, typer.Option(
           "--board", help="Board for the board-dependent stock-VTA checks (default: the "
           "board the config's TARGET names, if any).")] = None,
       ) -> None:
    """Validate a hardware config; show derived buffer depths, instruction field widths and
    whether stock VTA can build it."""
    from vtatune.hardware import boards, config, stock

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
    board_name = board or stock.default_board(cfg)
    brd = boards.load(board_name) if board_name else None
    stock_problems = stock.stock_problems(cfg, brd)
    info = {"status": "valid", "vta_config": cfg.to_vta_json(), **cfg.summary(),
            "field_bits": cfg.field_bits, "gemm_insn_bits": lay["gemm"].end_bit,
            "alu_insn_bits": lay["alu"].end_bit, "gemm_uop_bits": cfg.gemm_uop_bits,
            "stock_vta": not stock_problems, "stock_vta_problems": stock_problems,
            "stock_vta_board": brd.name if brd else None}
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
    where = f" on {brd.name}" if brd else " (no board: board-dependent checks skipped)"
    if stock_problems:
        console.line(f"stock VTA{where}: no: " + "; ".join(stock_problems))
    else:
        console.line(f"stock VTA{where}: yes (apache/tvm-vta builds it as it is)")


def register(app: typer.Typer) -> None:
    app.command("hw")(hw)
