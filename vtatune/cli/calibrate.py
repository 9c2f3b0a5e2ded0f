"""``vtatune calibrate``: fit a board's timing constants to latencies measured on it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vtatune.cli import console
from vtatune.cli.options import BoardOption, JsonOption


def calibrate_cmd(
    measured: Annotated[Path, typer.Argument(
        help="JSON list of measured records (the format of vta_pynq_measured.json).")],
    board: BoardOption = "pynq-z1",
    hw: Annotated[str, typer.Option(
        "--hw", help="Design of records that name none (no 'model' or 'hw' key): a "
        "vta_config.json path or shipped config name.")] = "default",
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write the fitted timing file here (e.g. hwconfigs/timing/<board>.json "
        "to use it). Without it nothing is written.")] = None,
    loo: Annotated[bool, typer.Option(
        "--loo/--no-loo", help="Also compute the leave-one-out errors.")] = True,
    per_session: Annotated[str | None, typer.Option(
        "--per-session", help="Constants fitted once per measurement session (records grouped "
        "by the month of their 'measured' date), comma-separated, e.g. alu_refill_cycles.")
    ] = None,
    session: Annotated[str | None, typer.Option(
        "--session", help="With --per-session: the session (YYYY-MM) whose values the fitted "
        "constants carry (default: the latest).")] = None,
    json_: JsonOption = False,
) -> None:
    """Fit BOARD's timing constants to MEASURED latencies and report how well they explain them.

    Every record's schedule is compiled and simulated with the real pipeline. Prints each
    record's error (simulated / measured - 1), the median and worst, the leave-one-out median,
    and the rank agreement of record pairs. Writes the timing file only with --out.
    """
    from vtatune.errors import UserError
    from vtatune.hardware import boards, config
    from vtatune.simulator import calibrate as cal
    from vtatune.simulator.timing import load_params, timing_dir

    brd = boards.load(board)
    default_hw = config.load(hw)
    records = cal.read_records(measured, default_hw, brd.name)
    base_path = timing_dir() / f"{brd.name}.json"
    base = load_params(brd)
    raw = cal.read_timing_file(base_path)
    prior = cal.prior_params(base, raw)
    if out is not None and out.exists() and out.is_dir():
        raise UserError(f"--out {out}: is a directory")

    def progress(stage: str, done: int, total: int) -> None:
        if not json_ and console.err.is_terminal:
            console.err.print(f"\r{stage}: {done}/{total}", end="", markup=False)
            if done == total:
                console.err.print("", markup=False)

    keys = tuple(k.strip() for k in per_session.split(",") if k.strip()) if per_session else ()
    result = cal.calibrate(records, brd, prior, str(measured), loo=loo, progress=progress,
                           per_session=keys, session=session)
    written = None
    if out is not None:
        text = cal.dump_timing_file(cal.timing_file(result, raw))
        try:
            out.write_text(text)
        except OSError as exc:
            raise UserError(f"--out {out}: cannot write ({exc.strerror or exc})") from None
        written = str(out)
    summary = {**result.as_dict(), "written": written}
    if json_:
        console.print_json(summary)
        return
    _report(result, summary, base_path)


def _report(result: Any, summary: dict[str, Any], base_path: Path) -> None:
    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{v:+.1%}"

    rows = [[r.index, r.label, round(r.measured_ms, 4), round(r.simulated_ms, 4),
             round(r.host_ms, 4), pct(r.error), pct(r.loo_error),
             "left out" if r.trimmed else ""] for r in result.records]  # fmt: skip
    console.table(f"{result.board}: simulated vs measured ({len(rows)} records)",
                  ["#", "record", "measured ms", "simulated ms", "host ms", "error",
                   "LOO error", ""], rows)
    loo = result.loo_median_error
    console.line(f"median error {result.median_error:.1%}, worst {result.worst_error:.1%}, "
                 f"leave-one-out median " + ("n/a" if loo is None else f"{loo:.1%}"))
    pa, ps = result.pairs_all, result.pairs_same_layer
    console.line(f"rank agreement: {pa.agree}/{pa.pairs} record pairs ordered as measured; "
                 + (f"{ps.agree}/{ps.pairs} pairs of schedules of the same layer"
                    if ps.pairs else "no two records share a layer"))
    console.line("fitted: " + ", ".join(f"{k} {getattr(result.params, k):.4g}"
                                        for k in result.fit_keys))
    console.line(f"solver: {result.solver}")
    for note in result.notes:
        console.line(f"note: {note}")
    if summary["written"]:
        console.line(f"wrote {summary['written']}")
    else:
        console.line(f"nothing written (use --out FILE; the board's file is {base_path})")


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_cmd)
