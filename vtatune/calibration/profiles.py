"""Timing files of a fit: a profile's content from a calibration (constants, sources and
the ``calibration`` block of figures), multi-profile files, priors, and the derived boards."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from vtatune.calibration.fit import Calibration
from vtatune.calibration.records import display_path
from vtatune.simulator.timing import (
    FIT_KEYS,
    TimingParams,
)


def timing_profile(cal: Calibration, base: dict[str, Any], build: str | None = None,
                   description: str | None = None) -> dict[str, Any]:
    """A flat timing file (one profile) for ``cal``: ``base``'s structure and sources (the
    profile the fit started from), with the fitted constants and a ``calibration`` block
    holding the figures over every record, the records left out and why."""
    out = {k: v for k, v in base.items() if k not in ("profiles", "default_profile")}
    params = dict(out.get("params", {}))
    sources = dict(out.get("sources", {}))
    for k in cal.fit_keys:
        params[k] = round(float(getattr(cal.params, k)), 4)
        head = sources.get(k, "").split(" | fitted: ")[0]
        sources[k] = (f"{head} | fitted: vtatune calibrate on {display_path(cal.source)}"
                      + (f" (build {build})" if build else "") + "; figures in 'calibration'")
    out["params"] = params
    out["sources"] = sources
    if description:
        out["description"] = description
    out["calibration"] = calibration_block(cal, build)
    return out


def calibration_block(cal: Calibration, build: str | None = None) -> dict[str, Any]:
    """What a timing profile records of its fit: the records, those left out and why, and
    the figures over every record."""
    def r4(v: float | None) -> float | None:
        return None if v is None else round(v, 4)

    block = dict(cal.params.calibration)
    if build:
        block["build"] = build
    block.update(
        left_out_reasons={str(r.index): r.reason for r in cal.records if r.trimmed},
        kept_by_current=[r.index for r in cal.records if r.protected],
        median_error=r4(cal.median_error), worst_error=r4(cal.worst_error),
        loo_median_error=r4(cal.loo_median_error),
        lono_median_error=r4(cal.lono_median_error),
        by_network={k: r4(v) for k, v in cal.by_network().items()},
    )
    if cal.skipped:
        block["skipped"] = dict(cal.skipped)
    return block


def put_profile(raw: dict[str, Any], name: str, profile: dict[str, Any]) -> dict[str, Any]:
    """A multi-profile timing file ``raw`` with its profile ``name`` set to the flat timing
    file ``profile`` (only what differs from the file's shared blocks is kept there)."""
    out = dict(raw)
    profs = dict(out.get("profiles", {}))
    shared_sources = out.get("sources", {})
    body: dict[str, Any] = {}
    if profile.get("description") and profile["description"] != out.get("description"):
        body["description"] = profile["description"]
    body["params"] = profile["params"]
    body["sources"] = {k: v for k, v in profile.get("sources", {}).items()
                       if shared_sources.get(k) != v}
    if profile.get("prior") not in (None, out.get("prior")):
        body["prior"] = profile["prior"]
    body["calibration"] = profile.get("calibration", {})
    profs[name] = body
    out["profiles"] = profs
    return out



def read_timing_file(path: str | Path) -> dict[str, Any]:
    """The raw JSON of a timing file (already validated by ``load_params``)."""
    return json.loads(Path(path).read_text())


def prior_params(base: TimingParams, raw: dict[str, Any]) -> TimingParams:
    """``base`` with the fitted constants set to the file's ``prior`` block (the physical
    estimates the fit starts from and is regularized towards); without one, ``base``."""
    prior = raw.get("prior") or {}
    return replace(base, **{k: float(prior[k]) for k in FIT_KEYS if k in prior})


def dump_timing_file(content: dict[str, Any]) -> str:
    """JSON with two-space indents and lists of numbers on one line."""
    text = json.dumps(content, indent=2)
    return re.sub(r"\[\s*([-\d.,\s]*?)\s*\]",
                  lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",") if v.strip())
                  + "]", text) + "\n"


#: Constants a derived board scales with its clock (latencies in time carry over) or with its
#: host (the ARM's per-call work); the rest (IIs, pad writes, cycles per beat) carry over.
_CLOCK_SCALED = ("dma_row_cycles", "insn_cycles", "gemm_refill_cycles", "alu_refill_cycles")
_HOST_SCALED = ("host_call_us", "host_insn_us")


def derive(reference: dict[str, Any], derived: dict[str, Any]) -> dict[str, Any]:
    """``derived`` (a timing file with a ``derivation`` block: ``from``, ``clock_scale``,
    ``host_scale``) with its parameters recomputed from the reference board's file: the
    constants of a board that has no measurements, from one that has (SOURCES.md#D1)."""
    rule = derived["derivation"]
    params = dict(reference["params"])
    for k in _CLOCK_SCALED:
        params[k] = round(float(params[k]) * float(rule["clock_scale"]), 4)
    for k in _HOST_SCALED:
        params[k] = round(float(params[k]) * float(rule["host_scale"]), 4)
    return {**derived, "params": params}
