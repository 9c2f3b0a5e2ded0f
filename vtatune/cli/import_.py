"""``vtatune import``: an ONNX model read as the network vtatune searches."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vtatune.cli import console
from vtatune.cli.options import JsonOption, int_in

#: Host operators named in the text output before "and N more".
SHOWN_HOST_OPS = 12
#: ``vtatune.models.graph.MAX_BATCH`` (which the library enforces too), not imported here:
#: the models package pulls in the network code, and --help stays instant.
MAX_BATCH = 4096


def import_model(
    model: Annotated[str, typer.Argument(help="ONNX model file (.onnx).", show_default=False)],
    batch: Annotated[int | None, typer.Option(
        "--batch", callback=int_in(1, MAX_BATCH),
        help="Batch for a model whose batch dimension is not fixed (default 1).")] = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="Network name (default: the file name).")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write the network file (TOML) here, for `vtatune search FILE`.")] = None,
    json_: JsonOption = False,
) -> None:
    """Read an ONNX model and print the network vtatune sees: the layers VTA runs (identical
    ones merged, with counts) and the operators that stay on the host.

    Weights are not read (only the graph and the tensors' shapes), so models of any size and
    models with external data import quickly.
    """
    from vtatune.escaping import shell_command
    from vtatune.models import import_model as read_model
    from vtatune.models.importer import shape_text
    from vtatune.models.space import toml_text

    _zoo_hint(model)
    m = read_model(model, batch=batch, name=name)
    written = None
    if out is not None:
        from vtatune.cli.files import write_files

        text = toml_text(m)

        def write() -> None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")

        write_files(write, out)
        written = out
    if json_:
        console.print_json({**m.describe(), "out": None if written is None else str(written)})
        return
    g = m.graph
    console.line(f"model {g.path.name}: ONNX opset {g.opset}, {_n(len(g.nodes), 'node')}, "
                 f"{g.file_bytes / 1e6:,.1f} MB"
                 + (f" + {g.external_files} external data file"
                    f"{'s' if g.external_files != 1 else ''}" if g.external_files else "")
                 + f"; {g.batch_note}")
    console.line(f"sha256 (graph and shapes, without weights): {m.fingerprint}")
    net = m.network
    console.table(f"network {m.name}: {_n(len(m.layers), 'layer')} "
                  f"({_n(net.invocations, 'run')}), "
                  f"{net.macs / 1e9:,.3f} GMACs on VTA",
                  ["layer", "kind", "shape", "count", "ONNX nodes"],
                  [[la.name, la.workload.kind, shape_text(la.workload), la.count,
                    _nodes(la.nodes)] for la in m.layers],
                  right=[False, False, False, True, False])
    plain = [h for h in m.host_ops if h.reason is None]
    shown_ops = ", ".join(f"{h.op} {h.count}" for h in plain[:SHOWN_HOST_OPS])
    more = len(plain) - SHOWN_HOST_OPS
    console.line("host operators (not run on VTA; their time is not in the latency): "
                 + (shown_ops or "none") + (f", and {more} more" if more > 0 else ""))
    by_reason: dict[str, list[Any]] = {}  # one line per reason, however many operators
    for h in m.host_ops:
        if h.reason is not None:
            by_reason.setdefault(h.reason, []).append(h)
    for reason, ops in by_reason.items():
        console.line("on the host, though VTA runs " + "; ".join(
            f"{h.op}: {_n(h.count, 'node')} ({_nodes(h.nodes)})" for h in ops) + f": {reason}")
    if m.folded:
        console.line("folded into layers or computed once at load: "
                     + ", ".join(f"{op} {n}" for op, n in m.folded))
    if written is not None:
        console.line(f"wrote {written} (search it: "
                     f"{shell_command(['vtatune', 'search', str(written)])})")


def _zoo_hint(model: str) -> None:
    """``UserError`` for a name of vtatune's model zoo that is no file here: import reads
    ONNX files, search takes the zoo's networks by name."""
    from vtatune.errors import UserError
    from vtatune.escaping import shell_command
    from vtatune.networks.space import builtin_names

    try:
        exists = Path(model).exists()
    except (OSError, ValueError):
        return  # (the reader says what is wrong with the name)
    if not exists and model in builtin_names():
        raise UserError(f"model '{model}': no such file; {model} is a network of vtatune's "
                        f"zoo, which needs no import: search it with "
                        f"`{shell_command(['vtatune', 'search', model])}` (import reads ONNX "
                        "files)")


def _n(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _nodes(nodes: tuple[str, ...], limit: int = 3) -> str:
    head = ", ".join(nodes[:limit])
    return head + (f", ... ({len(nodes)} in all)" if len(nodes) > limit else "")


def register(app: typer.Typer) -> None:
    app.command("import")(import_model)
