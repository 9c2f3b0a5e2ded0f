"""CSV tables of a report: the front (``front.csv``), every trial (``trials.csv``) and a
comparison of studies (``compare.csv``). Units are in the column names. Text cells that a
spreadsheet would evaluate (``=HYPERLINK(...)``) are written as text (``escaping.csv_cell``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from vtatune.escaping import csv_cell
from vtatune.hardware.config import LOG_KEYS
from vtatune.reports.data import CompareData, DesignPoint, ReportData


def point_columns(points: Sequence[DesignPoint]) -> list[str]:
    """Columns of a point table: identity, the ten LOG_* parameters, every knob seen, results."""
    knobs = sorted({k for p in points for k in p.knobs})
    logic, bram = _kinds(points)
    return ["trial", "status", "hw_name", *LOG_KEYS, *knobs, "cycles", "latency_ms",
            "accelerator_ms", "host_ms", "area_mm2", logic, "ff", bram, "dsp", "bound_cycles",
            "efficiency", "accelerator_energy_j", "board_energy_j", "stock_vta",
            "stock_vta_problems", "reason"]


def point_row(p: DesignPoint, logic: str, bram: str) -> dict[str, Any]:
    """One point as a row of ``point_columns`` (``logic``/``bram``: their unit columns)."""
    row: dict[str, Any] = {"trial": p.trial, "status": p.status, "hw_name": p.hw_name,
                           "cycles": p.cycles, "latency_ms": p.latency_ms,
                           "accelerator_ms": p.accelerator_ms, "host_ms": p.host_ms,
                           "area_mm2": p.area_mm2, logic: p.lut, "ff": p.ff, bram: p.bram,
                           "dsp": p.dsp, "bound_cycles": p.bound_cycles,
                           "efficiency": p.efficiency,
                           "accelerator_energy_j": p.accelerator_energy_j,
                           "board_energy_j": p.board_energy_j, "stock_vta": p.stock_vta,
                           "stock_vta_problems": "; ".join(p.stock_vta_problems),
                           "reason": p.reason}
    row.update({k: p.hw.get(k) for k in LOG_KEYS})
    row.update(p.knobs)
    return row


def points_csv(points: Sequence[DesignPoint], knee: DesignPoint | None = None) -> str:
    """CSV text of ``points``; with ``knee`` a ``knee`` column marks it (1) among them."""
    columns = point_columns(points)
    logic, bram = _kinds(points)
    rows = [point_row(p, logic, bram) for p in points]
    if knee is not None:
        columns.insert(1, "knee")
        for p, row in zip(points, rows, strict=True):
            row["knee"] = int(p.trial == knee.trial)
    return _write(columns, rows)


def compare_csv(data: CompareData) -> str:
    """One row per study: trials, feasible, best cycles/ms, front size, hypervolume."""
    columns = ["study", "sampler", "trials", "feasible", "best_cycles", "best_latency_ms",
               "front_size", "hypervolume", "ref_area_mm2", "ref_latency_ms"]
    ref = data.ref_point or (None, None)
    rows = [{"study": s.study, "sampler": s.sampler, "trials": s.n_trials,
             "feasible": s.n_feasible, "best_cycles": s.best_cycles,
             "best_latency_ms": s.best_ms,
             "front_size": len(s.front), "hypervolume": s.hypervolume,
             "ref_area_mm2": ref[0], "ref_latency_ms": ref[1]} for s in data.series]
    return _write(columns, rows)


# ---- network studies: designs with their layers ----------------------------------------

#: The columns of a network design (the front's add the knee and each layer's numbers).
DESIGN_COLUMNS = ["trial", "status", "hw_name", "area_mm2", "cycles", "latency_ms",
                  "accelerator_ms", "host_ms", "bound_ms", "efficiency", "evaluated", "cached",
                  "reason"]


def design_row(p: DesignPoint) -> dict[str, Any]:
    return {"trial": p.trial, "status": p.status, "hw_name": p.hw_name,
            "area_mm2": p.area_mm2, "cycles": p.cycles, "latency_ms": p.latency_ms,
            "accelerator_ms": p.accelerator_ms, "host_ms": p.host_ms, "bound_ms": p.bound_ms,
            "efficiency": p.efficiency, "evaluated": p.evaluated, "cached": p.cached,
            "reason": p.reason}


def network_columns(points: Sequence[DesignPoint]) -> list[str]:
    """A study of several networks: per network its weight and latency columns (none for
    one network); ``latency_ms`` is then the weighted sum, the objective."""
    names = next((tuple(n.network for n in p.networks) for p in points if p.multi), ())
    return [c for n in names for c in (f"{n}_weight", f"{n}_latency_ms")]


def network_cells(p: DesignPoint) -> dict[str, Any]:
    if not p.multi:
        return {}
    return {k: v for n in p.networks for k, v in ((f"{n.network}_weight", n.weight),
                                                    (f"{n.network}_latency_ms", n.latency_ms))}


def designs_csv(points: Sequence[DesignPoint]) -> str:
    """Every design, any status (several networks: each network's weight and latency)."""
    cols = [*DESIGN_COLUMNS[:6], *network_columns(points), *DESIGN_COLUMNS[6:]]
    return _write(cols, [{**design_row(p), **network_cells(p)} for p in points])


def network_front_csv(data: ReportData) -> str:
    """Front designs with, per layer, its count-weighted latency, share and knobs."""
    names = list(data.layer_names)
    cols = [*DESIGN_COLUMNS[:6], *network_columns(data.front), *DESIGN_COLUMNS[6:-1], "knee"]
    for n in names:
        cols += [f"{n}_ms", f"{n}_share", f"{n}_knobs"]
    knee = data.knee.trial if data.knee else None
    rows = []
    for p in data.front:
        row = {**design_row(p), **network_cells(p)}
        row["knee"] = p.trial == knee
        for la in p.layers:
            row[f"{la.name}_ms"] = la.total_ms
            row[f"{la.name}_share"] = la.share
            row[f"{la.name}_knobs"] = ";".join(f"{k}={v}" for k, v in sorted(la.knobs.items()))
        rows.append(row)
    return _write(cols, rows)


def network_compare_csv(data: CompareData) -> str:
    """Every front design of the compared network studies."""
    cols = ["study", "sampler", "trial", "hw_name", "area_mm2", "latency_ms", "cycles"]
    rows = [{"study": s.study, "sampler": s.sampler, "trial": p.trial, "hw_name": p.hw_name,
             "area_mm2": p.area_mm2, "latency_ms": p.latency_ms, "cycles": p.cycles}
            for s in data.series for p in s.front]
    return _write(cols, rows)


def _kinds(points: Sequence[DesignPoint]) -> tuple[str, str]:
    for p in points:
        if p.lut is not None:
            return p.logic_kind, p.bram_kind
    return "lut", "bram36"


def _write(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    for r in rows:  # names are cells a spreadsheet must not run as formulas
        w.writerow({k: ("" if r.get(k) is None else csv_cell(r.get(k))) for k in columns})
    return buf.getvalue()
