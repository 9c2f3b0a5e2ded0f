"""Reports of studies: the data (front, knee, convergence, parameter relations) computed in
``data``, drawn by ``plots`` (figures returned, never shown), written by ``write`` as PNG/SVG,
CSV (``csv_files``) and one self-contained HTML page (``html``)."""

from __future__ import annotations

from vtatune.reports.data import (
    CompareData,
    Convergence,
    DesignPoint,
    HvBox,
    ParamRelation,
    Reference,
    ReportData,
    StudySeries,
    ValueStats,
    compare_data,
    convergence,
    eta_squared,
    front_points,
    host_ops_text,
    hv_box,
    hypervolume,
    knee,
    param_relations,
    report_data,
    require_feasible,
    unique_points,
)
from vtatune.reports.write import write_comparison, write_report

__all__ = ["CompareData", "Convergence", "DesignPoint", "HvBox", "ParamRelation",
           "Reference", "ReportData", "StudySeries", "ValueStats", "compare_data",
           "convergence", "eta_squared", "front_points", "host_ops_text", "hv_box",
           "hypervolume", "knee",
           "param_relations", "report_data", "require_feasible", "safe_name",
           "unique_points", "write_comparison", "write_report"]


def safe_name(name: str, limit: int = 80) -> str:
    """``name`` as one folder name: characters other than letters, digits, ``.-_`` become
    ``_``; longer than ``limit``, it is cut and given a short hash (stays unique)."""
    import hashlib
    import re

    s = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "study"
    if len(s) > limit:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
        s = s[:limit - 9] + "-" + digest[:8]
    return s
