"""The ``vtatune`` command: a Typer app; every command lives in its own module.

Commands are thin wrappers over the library. Heavy imports (TVM, numpy, optuna) happen inside
command bodies so ``vtatune --help`` stays instant. ``UserError`` ends as one line on stderr
and exit code 2; anything else keeps its traceback (it is a bug).
"""

from __future__ import annotations

import sys

import typer

from vtatune.cli import console

app = typer.Typer(
    name="vtatune",
    help="Joint hardware x schedule autotuning and design-space exploration for VTA.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        console.line(version_line())
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", "-V", is_eager=True,
                                 callback=_show_version,
                                 help="Print vtatune's, TVM's and tvm-ffi's versions and exit."),
) -> None:
    """Joint hardware x schedule autotuning and design-space exploration for VTA."""


def version_line() -> str:
    """``vtatune X (TVM Y, tvm-ffi Z, Python P)`` from package metadata: TVM is not imported."""
    import platform
    from importlib import metadata

    from vtatune import __version__

    def dist(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return (f"vtatune {__version__} (TVM {dist('apache-tvm')}, tvm-ffi {dist('apache-tvm-ffi')}, "
            f"Python {platform.python_version()})")


def _register() -> None:
    # One module per command; each exposes ``register(app)``. Listed in the order of --help.
    # Once per process: main() may be called many times (tests, the Python API), and Typer
    # would keep every registration and rebuild all of them on each call.
    if app.registered_commands:
        return
    from vtatune.cli import (
        area,
        boards,
        calibrate,
        compare,
        export,
        hw,
        import_,
        operators,
        report,
        search,
        show,
        simulate,
        space,
        studies,
        verify_export,
    )
    from vtatune.cli import compile as compile_

    for module in (search, show, studies, report, compare, export, verify_export, import_,
                   compile_, simulate, calibrate, space, operators, area, boards, hw):
        module.register(app)


def main(argv: list[str] | None = None) -> int:
    from typer.exceptions import TyperException

    from vtatune.errors import UserError

    _register()
    console.reset_json()
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rc = app(args=args, standalone_mode=False)
    except UserError as exc:
        _fail(str(exc), args)
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        console.error("aborted")
        return 130
    except KeyboardInterrupt:
        console.error("interrupted")
        return 130
    except TyperException as exc:  # usage errors (bad option, missing argument): one line
        _fail(exc.format_message() if hasattr(exc, "format_message") else str(exc), args)
        return 2
    if isinstance(rc, int) and not isinstance(rc, bool):
        return rc
    return 0


def _fail(message: str, args: list[str]) -> None:
    """Bad input: one line on stderr and, with ``--json`` (before ``--``), one JSON object
    ``{"error": message}`` on stdout, unless the command printed its object already."""
    console.error(message)
    given = args[:args.index("--")] if "--" in args else args
    if "--json" in given and not console.printed_json():
        console.print_json({"error": console.error_text(message)})  # (as the line says it)


def entry() -> None:
    sys.exit(main())
