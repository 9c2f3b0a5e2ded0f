"""``vtatune verify-export DIR``: rebuild a bundle from its own files and check every part."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vtatune.cli import console
from vtatune.cli.options import JsonOption

if TYPE_CHECKING:
    from vtatune.export import Check

BundleArg = Annotated[Path, typer.Argument(help="Bundle folder written by `vtatune export`.")]
BoardOpt = Annotated[str | None, typer.Option(
    "--board", help="Time the program on this board (default: the bundle's).")]


def verify_export(folder: BundleArg, board: BoardOpt = None, json_: JsonOption = False) -> None:
    """Rebuild an exported bundle from its own files and check every part.

    Checks: checksums, vta_config.json, schedule, program.bin, byte-identical rebuild, exact
    cycles, bit-exact functional check, autotvm.log (the schedule's AutoTVM records for the
    design's VTA name), resources; a network bundle gets the program, rebuild, cycles and
    functional checks for every layer shape and a check of its network total.
    Exit 0 when every check passes, 1 when one fails, 2 when DIR is not a bundle.

    Examples:

    \b
      vtatune verify-export reports/conv2d-C8-xgb/export-trial42/
      vtatune verify-export bundle/ --board ultra96   # time it on another board
    """
    import time

    from vtatune.export import verify_bundle
    from vtatune.export.verify import bundle_kind

    t0 = time.perf_counter()
    # the width of the check names of each kind of bundle
    width = {"operator": 11, "network": 18}[bundle_kind(folder)]

    def show(c: Check) -> None:
        if not json_:
            console.line(f"{c.status:5s} {c.name:{width}s} {c.detail}")

    if not json_:
        line = _stock_line(folder)
        if line:
            console.line(line)
    report = verify_bundle(folder, board, on_check=show)
    elapsed = time.perf_counter() - t0
    if json_:
        console.print_json({"folder": str(folder), "board": report.board, "ok": report.ok,
                            "checks": [{"name": c.name, "status": c.status, "detail": c.detail}
                                       for c in report.checks], "elapsed_s": elapsed})
    else:
        failed = report.failed
        console.line(f"{'ok' if report.ok else 'FAILED'}: {folder} "
                     + ("passes every check" if report.ok else
                        f"fails {', '.join(c.name for c in failed)}")
                     + f" ({elapsed:.1f} s)")
    if not report.ok:
        raise typer.Exit(1)


def _stock_line(folder: Path) -> str:
    """What the bundle's manifest says of stock VTA, first ("" when it cannot be read: the
    checks then say why)."""
    import json

    from vtatune.export.autotvm import stock_line

    try:
        manifest = json.loads((folder / "manifest.json").read_text())
        problems = manifest.get("stock_vta_problems") or []
        return stock_line([str(p) for p in problems], manifest)
    except (OSError, ValueError, AttributeError, TypeError, RecursionError):
        return ""


def register(app: typer.Typer) -> None:
    app.command("verify-export")(verify_export)
