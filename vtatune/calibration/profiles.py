"""Timing files of a fit: a profile's content from a calibration (constants, sources and
the ``calibration`` block of figures), multi-profile files, priors, and the derived boards."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from vtatune.calibration import physical
from vtatune.calibration.fit import Calibration
from vtatune.calibration.physical import JointFit
from vtatune.calibration.prepare import Prepared
from vtatune.calibration.records import display_path
from vtatune.simulator.timing import (
    FIT_KEYS,
    MODEL_VERSION,
    TimingParams,
    end_cycles,
    host_seconds,
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
    constants of a board that has no measurements, from one that has (SOURCES.md#D1). With
    ``dram_gbps`` (the board's DRAM peak, from its datasheet: SOURCES.md#B1) a beat costs at
    least the cycles the DRAM needs for one bus word at the board's clock and AXI width."""
    rule = derived["derivation"]
    params = dict(reference["params"])
    for k in _CLOCK_SCALED:
        params[k] = round(float(params[k]) * float(rule["clock_scale"]), 4)
    for k in _HOST_SCALED:
        params[k] = round(float(params[k]) * float(rule["host_scale"]), 4)
    if isinstance(rule.get("dram_gbps"), int | float) and rule["dram_gbps"] > 0:
        from vtatune.hardware.boards import load

        b = load(str(derived["board"]))
        port_gbps = b.clock_mhz * 1e6 * b.axi_bits / 8 / 1e9
        params["dma_beat_cycles"] = round(max(float(params["dma_beat_cycles"]),
                                              port_gbps / float(rule["dram_gbps"])), 4)
    return {**derived, "params": params}


def physical_profile(fit: JointFit, items: Sequence[Prepared], base: TimingParams,
                     build: str | None, source: str, transfer: dict[str, Any],
                     board: str, clock_hz: float) -> dict[str, Any]:
    """One profile of a joint physical fit (``physical.fit_joint``): the shared constants
    with ``build``'s pipeline refills (the population values for None), the sources saying
    which constants are fitted (with their uncertainty) and which are held at their priors,
    and a ``calibration`` block: the records, the errors on the build's records and on every
    record, the transfer figures, the estimates and correlations, and the domain (designs,
    layer kinds, boards) the joint fit saw (every profile of it shares its constants but the
    refills)."""
    values = fit.values(build)
    params = {**{k: round(values[k], 4) for k in FIT_KEYS},
              **{k: getattr(base, k) for k in TimingParams.keys() if k not in FIT_KEYS}}
    p = replace(base, **{k: params[k] for k in FIT_KEYS})
    acc = np.array([math.ceil(end_cycles(it.rows, p)) / clock_hz for it in items])
    host = np.array([host_seconds(it.rows.n, p) for it in items])
    errs = (acc + host) / np.array([it.record.ms * 1e-3 for it in items]) - 1
    own = [i for i, it in enumerate(items) if build is None or physical.build_of(it) == build]
    ests = [*fit.shared.values(), *(fit.builds[build].values() if build in fit.builds else [])]
    by_net: dict[str, list[float]] = {}
    for i in own:
        by_net.setdefault(items[i].record.network or "(none)", []).append(abs(errs[i]))
    design, _, month = (build or "").partition(" ")

    def r4(v: Any) -> float | None:
        return None if v is None else round(float(v), 4)

    cal = {
        "records": display_path(source), "n_records": len(own),
        "fitted": [items[i].record.index for i in own], "all_records": len(items),
        "left_out": [], "solver": physical.SOLVER, "model_version": MODEL_VERSION,
        **({"build": month, "design": design} if build else {}),
        "median_error": r4(np.median(np.abs(errs[own]))),
        "worst_error": r4(np.max(np.abs(errs[own]))),
        "all_records_median_error": r4(np.median(np.abs(errs))),
        "all_records_worst_error": r4(np.max(np.abs(errs))),
        "loo_median_error": (transfer.get("loo") or {}).get("median"),
        "lono_median_error": (transfer.get("lono") or {}).get("median"),
        "transfer": transfer,
        "by_network": {k: r4(np.median(v)) for k, v in by_net.items()},
        "estimates": [e.as_dict() for e in ests],
        "unpinned": [e.name for e in ests if not e.pinned],
        "correlations": fit.as_dict()["correlations"],
        "sigma": r4(fit.sigma),
        "domain": {"designs": sorted({physical.design_of(it) for it in items}),
                   "kinds": sorted({it.record.workload.kind for it in items}),
                   "boards": [board]},
    }
    sources = {k: _physical_source(k, fit, build, display_path(source)) for k in FIT_KEYS}
    return {"board": board, "params": params, "sources": sources, "calibration": cal,
            "prior": {k: round(fit.shared[k].prior, 4) for k in FIT_KEYS}}


def _physical_source(key: str, fit: JointFit, build: str | None, source: str) -> str:
    term = physical.TERMS[key]
    own = bool(build and term.build and build in fit.builds)
    est = fit.builds[build][key] if own and build else fit.shared[key]
    scope = (f"this build's value ({build})" if own else
             "the population value over builds" if term.build else
             "shared by every build, design and board")
    how = (f"fitted jointly to {source} ({scope}), x/÷ {est.factor:.2f} (one sigma)"
           if est.pinned and est.factor is not None else
           f"held at its prior ({scope}): the records do not pin it")
    return f"SOURCES.md#{term.source}; prior {term.prior:g} x/÷ {term.factor:g} | {how}"
