"""``vtatune calibrate``: fit a board's timing constants to latencies measured on it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vtatune.cli import console
from vtatune.cli.options import BoardOption, JsonOption
from vtatune.hardware.boards import DEFAULT_BOARD


def calibrate_cmd(
    measured: Annotated[Path, typer.Argument(
        help="Measured records: a JSON list (the format of vta_pynq_measured.json) or an "
        "AutoTVM log (TopHub's format, e.g. vta_pynq_measured.log).")],
    board: BoardOption = DEFAULT_BOARD,
    hw: Annotated[str, typer.Option(
        "--hw", help="Design of records that name none (no 'model' or 'hw' key): a "
        "vta_config.json path or shipped config name.")] = "default",
    build: Annotated[str | None, typer.Option(
        "--build", help="Fit only the records measured in this month (YYYY-MM): one build "
        "of the board.")] = None,
    save: Annotated[str | None, typer.Option(
        "--save", help="Save the fitted constants as your profile NAME of the board (in "
        "$VTATUNE_DATA or the XDG data folder); then --board BOARD@NAME uses them.")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write the fitted profile to this timing file (a file of several "
        "profiles gets the --board profile replaced). Without --out or --save nothing is "
        "written.")] = None,
    loo: Annotated[bool, typer.Option(
        "--loo/--no-loo", help="Also compute the transfer errors: each record predicted by a "
        "fit without it, without its network, its design and its build.")] = True,
    json_: JsonOption = False,
) -> None:
    """Fit BOARD's timing constants to MEASURED latencies and report how well they transfer.

    Every record's schedule is compiled and simulated with the real pipeline. One physical
    model is fitted jointly to every record (each with its build: design and month): the
    constants shared by every build, and the pipeline refills per build, each regularised
    towards its prior from VTA's sources; a constant the records do not pin is held at its
    prior. Prints each record's error (simulated / measured - 1) with its build's constants
    and when left out (one record, its network, its design, its build), the median and worst
    over every record, each constant with its uncertainty (or held at its prior) and the
    strong correlations. --board BOARD@PROFILE starts from (and with --out replaces) that
    profile.
    """
    from vtatune import calibration as cal
    from vtatune.calibration import physical
    from vtatune.calibration.profiles import physical_profile
    from vtatune.errors import UserError
    from vtatune.hardware import boards, config, timing_profiles
    from vtatune.simulator.timing import load_params

    brd = boards.load(board)
    if save is not None:
        timing_profiles.check_free(brd.base, save)  # before any work
    if out is not None and out.exists() and out.is_dir():
        raise UserError(f"--out {out}: is a directory")
    default_hw = config.load(hw)
    data = cal.read_measured(measured, default_hw, brd)
    readings = _power_readings(measured) if data.kind == "json" else None
    profile = timing_profiles.resolve(brd.base, brd.profile)
    current = load_params(brd)
    prior = cal.prior_params(current, profile.content)
    priors = {**physical.board_priors(brd),
              **{k: v for k, v in (profile.content.get("prior") or {}).items()
                 if k in physical.TERMS}}

    def progress(stage: str, done: int, total: int) -> None:
        if not json_ and console.err.is_terminal:
            console.err.print(f"\r{stage}: {done}/{total}", end="", markup=False)
            if done == total:
                console.err.print("", markup=False)

    items, dropped = cal.prepare_counting(
        data.records, brd, prior, lambda d, t: progress("compile", d, t),
        skip_failing=data.kind != "json")
    skipped = {**data.skipped, **dropped}
    if build is not None:
        items = cal.only_session(items, build)
    if not items:
        raise UserError(f"{measured}: no records to fit")
    fit = physical.fit_joint(items, brd, prior, priors)
    groupings = tuple(physical.GROUPINGS) if loo else ()
    trans = physical.transfer(items, brd, prior, groupings, priors, progress)
    builds = sorted(fit.builds)
    chosen = builds[0] if len(builds) == 1 else None
    content = physical_profile(fit, items, prior, chosen, str(measured), trans.summary(),
                               brd.base, brd.clock_hz)
    content = {**{k: v for k, v in profile.content.items()
                  if k not in ("profiles", "default_profile", "derivation")}, **content,
               "sources": {**profile.content.get("sources", {}), **content["sources"]}}
    if build:
        content["calibration"]["build"] = build
    if skipped:
        content["calibration"]["skipped"] = dict(skipped)
    written = []
    if out is not None:
        text = cal.dump_timing_file(_into(out, brd.base, profile.name, content))
        try:
            out.write_text(text)
        except OSError as exc:
            raise UserError(f"--out {out}: cannot write ({exc.strerror or exc})") from None
        written.append(str(out))
    if save is not None:
        content = {**content, "description": f"{brd.base} as calibrated by vtatune calibrate "
                   f"on {Path(measured).name}" + (f" (build {build})" if build else "")}
        written.append(str(timing_profiles.save(brd.base, save, content)))
    power = None
    if readings is not None:
        power = _fit_power(data.records, readings, brd, build)
        if save is not None:
            from vtatune.energy import profiles as power_profiles
            from vtatune.energy.calibrate import profile_of

            written.append(str(power_profiles.save(profile_of(power, brd.base, save))))
    summary = _summary(items, fit, trans, content, skipped)
    summary.update(board=brd.name, source=str(measured), profile=profile.name, build=build,
                   builds=_builds(data.records),
                   power=power.as_dict() if power is not None else None,
                   written=written[0] if len(written) == 1 else (written or None))
    if json_:
        console.print_json(summary)
        return
    _report(summary, fit, profile, save)
    if power is not None:
        _report_power(power)


def _power_readings(measured: Path) -> dict[int, tuple[float, float]] | None:
    """The records' power readings (``idle_w``, ``running_w``), when they carry them."""
    from vtatune.calibration.power import power_readings
    from vtatune.readers import read_json

    return power_readings(read_json(measured, "measured records"), str(measured))


def _fit_power(records: Any, readings: dict[int, tuple[float, float]], board: Any,
               build: str | None) -> Any:
    """The board's baseline power and dynamic scale fitted to the records' readings."""
    from vtatune.calibration.power import fit_measured

    chosen = [r for r in records if build is None or r.session == build]
    fitted, _ = fit_measured(chosen, readings, board)
    return fitted


def _report_power(p: Any) -> None:
    def one(name: str, f: Any, unit: str) -> str:
        held = "" if f.pinned else " (held at its prior: the records cannot pin it)"
        return (f"{name} {f.value:.4g}{unit} +- {f.stderr:.2g} (prior {f.prior:.4g}{unit} "
                f"+- {f.prior_spread:.2g}){held}")

    console.line(f"power: {one('baseline', p.baseline_w, ' W')}; "
                 f"{one('dynamic scale', p.scale, '')}; correlation {p.correlation:+.2f}")
    console.line(f"power over all {p.records} records: median error "
                 f"{p.median_abs_error:.1%}, worst "
                 f"{max(p.errors, key=abs):+.1%} (predicted running watts / measured - 1)")


def _summary(items: Any, fit: Any, trans: Any, content: dict[str, Any],
             skipped: dict[str, int]) -> dict[str, Any]:
    """What ``--json`` prints: every record's figures, the medians and worst over every
    record, the constants with their uncertainty, the rank agreement."""
    import numpy as np

    from vtatune import calibration as cal
    from vtatune.calibration import physical
    from vtatune.simulator.timing import FIT_KEYS, MODEL_VERSION

    errs = trans.errors
    records = []
    for i, it in enumerate(items):
        r = it.record
        sim = float(fit.accelerator_s[i] + fit.host_s[i]) * 1e3
        records.append({
            "index": r.index, "label": r.label, "network": r.network, "session": r.session,
            "build": physical.build_of(it), "measured_ms": r.ms, "simulated_ms": sim,
            "accelerator_ms": float(fit.accelerator_s[i]) * 1e3,
            "host_ms": float(fit.host_s[i]) * 1e3, "error": float(fit.errors[i]),
            **{f"{g}_error": (errs.get(g) or [None] * len(items))[i]
               for g in physical.GROUPINGS}, "trimmed": False})
    meas = np.array([r["measured_ms"] for r in records])
    sim = np.array([r["simulated_ms"] for r in records])
    layers = [it.record.workload.signature + "|" + it.record.hw.key for it in items]
    abs_err = np.abs(fit.errors)
    return {
        "solver": physical.SOLVER, "model_version": MODEL_VERSION,
        "params": {k: content["params"][k] for k in FIT_KEYS},
        "median_error": float(np.median(abs_err)), "worst_error": float(abs_err.max()),
        **{f"{g}_median_error": trans.median(g) for g in physical.GROUPINGS},
        **{f"{g}_worst_error": trans.worst(g) for g in physical.GROUPINGS},
        "by_network": _by_network(items, abs_err),
        "estimates": [e.as_dict() for e in fit.estimates],
        "unpinned": fit.unpinned, "held": list(fit.held),
        "correlations": fit.as_dict()["correlations"], "sigma": fit.sigma,
        "domain": content["calibration"]["domain"],
        "rank_agreement": cal.rank_agreement(meas, sim).as_dict(),
        "rank_agreement_same_layer": cal.rank_agreement(meas, sim, layers).as_dict(),
        "skipped": dict(skipped), "left_out": [], "records": records,
    }


def _builds(records: Any) -> dict[str, dict[str, Any]]:
    """The builds of the board the records were measured on (the month of each record, its
    ``session``; ``undated`` when the file does not say), each with its record count and its
    networks (an AutoTVM log's sections), in month order."""
    out: dict[str, dict[str, Any]] = {}
    for r in sorted(records, key=lambda r: r.session or "~"):
        b = out.setdefault(r.session or "undated", {"records": 0, "networks": []})
        b["records"] += 1
        if r.network and r.network not in b["networks"]:
            b["networks"].append(r.network)
    return out


def _builds_hint(board: str, builds: dict[str, dict[str, Any]],
                 records: list[dict[str, Any]]) -> str:
    """One line: the records mix builds of the board, which they are, which the left-out
    records are of, and how the fit treats them (each build its own pipeline refills, the
    rest shared; ``--build`` fits one alone, a shipped profile of that name)."""
    from vtatune import formats
    from vtatune.hardware import timing_profiles

    shipped = {p.name for p in timing_profiles.shipped(board)}
    parts = []
    for month, b in builds.items():
        nets = f": {', '.join(b['networks'])}" if b["networks"] else ""
        parts.append(f"{month} ({formats.counted(b['records'], 'record')}{nets})")
    left = {r.get("session") or "undated" for r in records if r.get("trimmed")}
    dated = [m for m in builds if m != "undated"]
    line = (f"builds: these records are of {len(builds)} builds of {board} (the month each "
            f"was measured): {', '.join(parts)}; each build gets its own pipeline refills, "
            "the other constants are shared")
    if left and len(left) < len(builds):
        line += f"; the records left out are all of {', '.join(sorted(left))}"
    if dated:
        line += "; fit one build alone with " + " or ".join(f"--build {m}" for m in dated)
        same = [f"{board}@{m}" for m in dated if m in shipped]
        if same:
            line += f" (shipped as {', '.join(same)})"
    return line


def _into(out: Path, board: str, name: str, content: dict[str, Any]) -> dict[str, Any]:
    """What ``--out`` writes: ``out``'s own profiles with ``name`` replaced when ``out`` is a
    timing file of several profiles of ``board``, else ``content`` alone."""
    import json

    from vtatune import calibration as cal

    try:
        raw = json.loads(out.read_text()) if out.is_file() else None
    except (OSError, ValueError):
        raw = None
    if isinstance(raw, dict) and raw.get("board") == board and "profiles" in raw:
        return cal.put_profile(raw, name, content)
    return content


def _by_network(items: Any, abs_err: Any) -> dict[str, float]:
    """Median |error| of each network's records (each with its build's constants)."""
    import numpy as np

    nets: dict[str, list[float]] = {}
    for it, e in zip(items, abs_err, strict=True):
        nets.setdefault(it.record.network or "(none)", []).append(float(e))
    return {k: float(np.median(v)) for k, v in nets.items()}


def _report(s: dict[str, Any], fit: Any, profile: Any, save: str | None) -> None:
    from vtatune import formats
    from vtatune.calibration import physical

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{v:+.1%}"

    groups = [g for g in physical.GROUPINGS if s.get(f"{g}_median_error") is not None]
    heads = {"loo": "LOO", "lono": "LONO", "lodo": "LODO", "lobo": "LOBO"}
    rows = [[r["index"], r["network"], r["build"], r["label"], formats.ms(r["measured_ms"]),
             formats.ms(r["simulated_ms"]), formats.ms(r["host_ms"]), pct(r["error"]),
             *[pct(r[f"{g}_error"]) for g in groups]] for r in s["records"]]
    console.table(f"{s['board']}: simulated vs measured ({len(rows)} records, starting "
                  f"from profile {profile.name})",
                  ["#", "network", "build", "record", "measured ms", "simulated ms", "host ms",
                   "error", *[f"{heads[g]} error" for g in groups]], rows)
    console.line(f"over all {len(rows)} records: median error {s['median_error']:.1%}, worst "
                 f"{s['worst_error']:.1%}" + "".join(
                     f"; {physical.GROUPING_NAMES[g]} median {s[f'{g}_median_error']:.1%}, "
                     f"worst {s[f'{g}_worst_error']:.1%}" for g in groups))
    if not groups:
        console.line("leave-one-out median n/a (--no-loo)")
    nets = s["by_network"]
    if len(nets) > 1:
        console.line("median error by network: "
                     + ", ".join(f"{k} {v:.1%}" for k, v in nets.items()))
    erows = [[e.name, f"{e.value:.4g}",
              "" if e.factor is None or not e.pinned else f"x/÷ {e.factor:.2f}",
              "fitted" if e.pinned else "held at prior (not pinned by the records)",
              f"{e.prior:.4g}"] for e in fit.estimates]
    console.table("constants (one physical model: shared, and per build [design month]; "
                  "uncertainty one sigma)", ["constant", "value", "uncertainty", "", "prior"],
                  erows)
    strong = fit.strong_correlations()
    if strong:
        console.line("strongly correlated: " + ", ".join(f"{a} ~ {b} ({c:+.2f})"
                                                         for a, b, c in strong))
    if s["unpinned"]:
        console.line(f"not pinned by these records, held at their priors: "
                     f"{', '.join(s['unpinned'])}")
    pa, ps = s["rank_agreement"], s["rank_agreement_same_layer"]
    console.line(f"rank agreement: {pa['agree']}/{pa['pairs']} record pairs ordered as "
                 "measured; " + (f"{ps['agree']}/{ps['pairs']} pairs of schedules of the same "
                                 "layer" if ps["pairs"] else "no two records share a layer"))
    console.line("fitted: " + ", ".join(f"{k} {v:.4g}" for k, v in s["params"].items()))
    console.line(f"solver: {s['solver']}")
    if s["skipped"]:
        console.line("skipped: " + "; ".join(f"{n} records {why}"
                                             for why, n in s["skipped"].items()))
    if s["build"] is None and len(s["builds"]) > 1:
        console.line(_builds_hint(s["board"].partition("@")[0], s["builds"], s["records"]))
    written = s["written"]
    for path in [written] if isinstance(written, str) else (written or []):
        console.line(f"wrote {path}")
    if save:
        console.line(f"use it with --board {s['board'].partition('@')[0]}@{save}")
    if not written:
        console.line(f"nothing written (use --save NAME, or --out FILE; the profile came "
                     f"from {profile.path})")


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_cmd)
