"""``vtatune boards``: the known FPGA boards with their resources, clock and AXI width, and
each board's timing profiles with their calibration figures."""

from __future__ import annotations

from typing import Any

import typer

from vtatune.cli import console
from vtatune.cli.options import JsonOption

_KINDS = ("lut", "alm", "ff", "bram36", "m10k", "uram", "dsp")


def boards_cmd(json_: JsonOption = False) -> None:
    """List the boards in hwconfigs/boards/ (device resources, clock in MHz, AXI width in bits)
    and their timing profiles (use one with --board NAME@PROFILE): shipped ones and yours."""
    from vtatune.hardware import boards, timing_profiles

    known = boards.all_boards()
    profiles = {b.name: timing_profiles.all_of(b.name) for b in known}
    if json_:
        console.print_json([
            {"name": b.name, "part": b.part, "family": b.family, "vta_target": b.vta_target,
             "clock_mhz": b.clock_mhz, "axi_bits": b.axi_bits, "resources": dict(b.resources),
             "description": b.description, "sources": dict(b.sources),
             "profiles": [_profile_json(p) for p in profiles[b.name]]}
            for b in known
        ])
        return
    rows = [[b.name, f"{b.part} ({b.family})", b.clock_mhz, b.axi_bits,
             ", ".join(f"{b.resources[k]:,} {k}" for k in _KINDS if k in b.resources)]
            for b in known]
    console.table("boards (hwconfigs/boards/)",
                  ["name", "part (family)", "MHz", "AXI bits", "resources"], rows)
    rows = [[p.spec + (" (default)" if p.default else ""), p.origin, *_figures(p)]
            for b in known for p in profiles[b.name]]
    console.table("timing profiles (--board NAME@PROFILE; figures over all of a profile's records)",
                  ["profile", "from", "records", "median error", "worst", "LOO median",
                   "LONO median"], rows)
    console.line(f"your profiles are read from {timing_profiles.data_dir() / 'timing'} "
                 "(vtatune calibrate --save NAME)")


def _figures(p: Any) -> list[str]:
    cal = p.content.get("calibration") or {}
    if not cal.get("records"):
        how = "derived from " + str((p.content.get("derivation") or {}).get("from", "?"))
        return [f"not calibrated ({how})", "", "", "", ""]

    def pct(key: str) -> str:
        v = cal.get(key)
        return "n/a" if not isinstance(v, int | float) else f"{v:.1%}"

    build = f", build {cal['build']}" if cal.get("build") else ""
    return [f"{cal.get('n_records', '?')} of {cal['records']}{build}", pct("median_error"),
            pct("worst_error"), pct("loo_median_error"), pct("lono_median_error")]


def _profile_json(p: Any) -> dict[str, Any]:
    cal = p.content.get("calibration") or {}
    return {"name": p.name, "spec": p.spec, "default": p.default, "origin": p.origin,
            "path": str(p.path), "params": p.content.get("params", {}),
            "calibration": {k: cal.get(k) for k in (
                "records", "build", "design", "n_records", "median_error", "worst_error",
                "all_records_median_error", "all_records_worst_error", "loo_median_error",
                "lono_median_error", "transfer", "unpinned", "domain", "by_network",
                "left_out")
                if k in cal}}


def register(app: typer.Typer) -> None:
    app.command("boards")(boards_cmd)
