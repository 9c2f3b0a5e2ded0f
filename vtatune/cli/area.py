"""``vtatune area``: FPGA resources per component, totals, utilization and fit on a board."""

from __future__ import annotations

from typing import Any

import typer

from vtatune.cli import console
from vtatune.cli.options import BoardOption, HwOption, JsonOption
from vtatune.hardware.boards import DEFAULT_BOARD


def area(hw: HwOption = "default", board: BoardOption = DEFAULT_BOARD, json_: JsonOption = False
         ) -> None:
    """Estimate LUT/FF/BRAM/URAM/DSP (ALM/M10K on Intel) and fabric area (mm^2) of a VTA config
    on a board, and check that it fits."""
    from vtatune.area import estimate, fit
    from vtatune.hardware import boards, config

    cfg = config.load(hw)
    brd = boards.load(board)
    report = estimate(cfg, brd)
    fitted = fit(report, brd)
    if json_:
        console.print_json(_as_json(report, fitted))
        return

    name = cfg.name or str(hw)
    console.line(f"{name}: VTA {cfg.shape_label} on {brd.name} ({brd.family}, {brd.part})")
    kinds = list(report.kinds)
    rows: list[list[Any]] = []
    for c in report.components:
        rows.append([c.name, *[_num(c.resources[k]) for k in kinds], round(c.area_mm2, 3)])
    rows.append(["total", *[_num(report.totals[k]) for k in kinds], round(report.area_mm2, 3)])
    console.table(None, ["component", *kinds, "mm²"], rows)
    for c in report.components:
        if c.group != "fixed":
            console.line(f"  {c.name}: {c.detail}")
    use = "; ".join(
        f"{u.kind} {_pct(u.utilization_pct)} ({_num(u.used):,}/{u.available:,})"
        for u in fitted.usage
    )
    console.line(f"utilization: {use}")
    console.line(f"area: {report.area_mm2:.2f} mm² ({report.node}: logic and DSP tiles + SRAM "
                 "bits)")
    for note in report.notes:
        console.line(f"note: {note}")
    console.line(fitted.summary())


def _as_json(report: Any, fitted: Any) -> dict[str, Any]:
    t = report.totals
    return {
        "config": report.config_name or report.config_key,
        "shape": report.shape,
        "board": report.board,
        "family": report.family,
        "lut": t[report.logic_kind],
        "logic_kind": report.logic_kind,
        "ff": t["ff"],
        "bram": t[report.bram_kind],
        "bram_kind": report.bram_kind,
        "uram": t.get("uram", 0.0),
        "dsp": t["dsp"],
        "area_mm2": report.area_mm2,
        "area_node": report.node,
        "fits": fitted.fits,
        "over": list(fitted.over),
        "utilization": {u.kind: u.utilization_pct for u in fitted.usage},
        "usage": [u.as_dict() for u in fitted.usage],
        "totals": dict(t),
        "components": [c.as_dict() for c in report.components],
        "notes": list(report.notes),
    }


def _num(v: float) -> float | int:
    return int(v) if v == int(v) else v


def _pct(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.1f}%"


def register(app: typer.Typer) -> None:
    app.command("area")(area)
