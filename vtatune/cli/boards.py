"""``vtatune boards``: the known FPGA boards with their resources, clock and AXI width."""

from __future__ import annotations

import typer

from vtatune.cli import console
from vtatune.cli.options import JsonOption

_KINDS = ("lut", "alm", "ff", "bram36", "m10k", "uram", "dsp")


def boards_cmd(json_: JsonOption = False) -> None:
    """List the boards in hwconfigs/boards/ (device resources, clock in MHz, AXI width in bits)."""
    from vtatune.hardware import boards

    known = boards.all_boards()
    if json_:
        console.print_json([
            {"name": b.name, "part": b.part, "family": b.family, "vta_target": b.vta_target,
             "clock_mhz": b.clock_mhz, "axi_bits": b.axi_bits, "resources": dict(b.resources),
             "description": b.description, "sources": dict(b.sources)}
            for b in known
        ])
        return
    rows = [[b.name, f"{b.part} ({b.family})", b.clock_mhz, b.axi_bits,
             ", ".join(f"{b.resources[k]:,} {k}" for k in _KINDS if k in b.resources)]
            for b in known]
    console.table("boards (hwconfigs/boards/)",
                  ["name", "part (family)", "MHz", "AXI bits", "resources"], rows)


def register(app: typer.Typer) -> None:
    app.command("boards")(boards_cmd)
