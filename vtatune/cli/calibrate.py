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
        "--loo/--no-loo", help="Also compute the leave-one-out and leave-one-network-out "
        "errors.")] = True,
    json_: JsonOption = False,
) -> None:
    """Fit BOARD's timing constants to MEASURED latencies and report how well they explain them.

    Every record's schedule is compiled and simulated with the real pipeline. Prints each
    record's error (simulated / measured - 1), the median and worst over every record (those
    left out of the fit included, each with the reason), the leave-one-out and
    leave-one-network-out medians, and the rank agreement of record pairs. --board
    BOARD@PROFILE starts from (and with --out replaces) that profile.
    """
    from vtatune.errors import UserError
    from vtatune.hardware import boards, config, timing_profiles
    from vtatune.simulator import calibrate as cal
    from vtatune.simulator.timing import load_params

    brd = boards.load(board)
    if save is not None:
        timing_profiles.check_free(brd.base, save)  # before any work
    if out is not None and out.exists() and out.is_dir():
        raise UserError(f"--out {out}: is a directory")
    default_hw = config.load(hw)
    data = cal.read_measured(measured, default_hw, brd)
    profile = timing_profiles.resolve(brd.base, brd.profile)
    current = load_params(brd)
    prior = cal.prior_params(current, profile.content)

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
    result = cal.calibrate_prepared(items, brd, prior, str(measured), loo=loo,
                                    progress=progress, current=current, lono=loo,
                                    skipped=skipped)
    content = cal.timing_profile(result, profile.content, build)
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
    builds = _builds(data.records)
    summary = {**result.as_dict(), "profile": profile.name, "build": build, "builds": builds,
               "written": written[0] if len(written) == 1 else (written or None)}
    if json_:
        console.print_json(summary)
        return
    _report(result, summary, profile, save)


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


def _builds_hint(board: str, builds: dict[str, dict[str, Any]], result: Any) -> str:
    """One line: the records mix builds of the board, which they are, which the left-out
    records are of, and how to fit one (``--build``, a shipped profile of that name)."""
    from vtatune import formats
    from vtatune.hardware import timing_profiles

    shipped = {p.name for p in timing_profiles.shipped(board)}
    parts = []
    for month, b in builds.items():
        nets = f": {', '.join(b['networks'])}" if b["networks"] else ""
        parts.append(f"{month} ({formats.counted(b['records'], 'record')}{nets})")
    left = {r.session or "undated" for r in result.records if r.trimmed}
    dated = [m for m in builds if m != "undated"]
    line = (f"builds: these records are of {len(builds)} builds of {board} (the month each "
            f"was measured): {', '.join(parts)}")
    if left and len(left) < len(builds):
        line += f"; the records left out are all of {', '.join(sorted(left))}"
    if dated:
        line += ("; one build's constants do not time another's: fit one with "
                 + " or ".join(f"--build {m}" for m in dated))
        same = [f"{board}@{m}" for m in dated if m in shipped]
        if same:
            line += f" (shipped as {', '.join(same)})"
    return line


def _into(out: Path, board: str, name: str, content: dict[str, Any]) -> dict[str, Any]:
    """What ``--out`` writes: ``out``'s own profiles with ``name`` replaced when ``out`` is a
    timing file of several profiles of ``board``, else ``content`` alone."""
    import json

    from vtatune.simulator import calibrate as cal

    try:
        raw = json.loads(out.read_text()) if out.is_file() else None
    except (OSError, ValueError):
        raw = None
    if isinstance(raw, dict) and raw.get("board") == board and "profiles" in raw:
        return cal.put_profile(raw, name, content)
    return content


def _report(result: Any, summary: dict[str, Any], profile: Any, save: str | None) -> None:
    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{v:+.1%}"

    has_lono = result.lono_median_error is not None
    from vtatune import formats

    rows = [[r.index, r.network, r.label, formats.ms(r.measured_ms),
             formats.ms(r.simulated_ms), formats.ms(r.host_ms), pct(r.error), pct(r.loo_error),
             *([pct(r.lono_error)] if has_lono else []),
             "left out" if r.trimmed else ("kept (current)" if r.protected else "")]
            for r in result.records]  # fmt: skip
    console.table(f"{result.board}: simulated vs measured ({len(rows)} records, starting "
                  f"from profile {profile.name})",
                  ["#", "network", "record", "measured ms", "simulated ms", "host ms", "error",
                   "LOO error", *(["LONO error"] if has_lono else []), ""], rows)
    loo, lono = result.loo_median_error, result.lono_median_error
    console.line(f"over all {len(rows)} records: median error {result.median_error:.1%}, "
                 f"worst {result.worst_error:.1%}, leave-one-out median "
                 + ("n/a" if loo is None else f"{loo:.1%}") + ", leave-one-network-out median "
                 + ("n/a (one network)" if lono is None else f"{lono:.1%}"))
    nets = result.by_network()
    if len(nets) > 1:
        console.line("median error by network: "
                     + ", ".join(f"{k} {v:.1%}" for k, v in nets.items()))
    for r in result.records:
        if r.trimmed:
            console.line(f"left out: record {r.index} ({r.label}): error {r.error:+.1%} with "
                         f"the fitted constants; {r.reason}")
    pa, ps = result.pairs_all, result.pairs_same_layer
    console.line(f"rank agreement: {pa.agree}/{pa.pairs} record pairs ordered as measured; "
                 + (f"{ps.agree}/{ps.pairs} pairs of schedules of the same layer"
                    if ps.pairs else "no two records share a layer"))
    console.line("fitted: " + ", ".join(f"{k} {getattr(result.params, k):.4g}"
                                        for k in result.fit_keys))
    console.line(f"solver: {result.solver}")
    if result.skipped:
        console.line("skipped: " + "; ".join(f"{n} records {why}"
                                             for why, n in result.skipped.items()))
    for note in result.notes:
        console.line(f"note: {note}")
    if summary["build"] is None and len(summary["builds"]) > 1:
        console.line(_builds_hint(result.board.partition("@")[0], summary["builds"], result))
    written = summary["written"]
    for path in [written] if isinstance(written, str) else (written or []):
        console.line(f"wrote {path}")
    if save:
        console.line(f"use it with --board {result.board.partition('@')[0]}@{save}")
    if not written:
        console.line(f"nothing written (use --save NAME, or --out FILE; the profile came "
                     f"from {profile.path})")


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_cmd)
