"""``vtatune operators``: the registered operators, their shapes, named layers and knobs."""

from __future__ import annotations

import typer

from vtatune.cli import console
from vtatune.cli.options import JsonOption


def operators_cmd(json_: JsonOption = False) -> None:
    """List the operators (--shape fields, named layers, default, knobs with their roles)."""
    from vtatune.workloads import registry

    ops = registry.operators()
    info = [{"kind": kind, "shape": cls.SHAPE, "default": cls.DEFAULT,
             "layers": list(cls.layers()), "module": cls.__module__,
             "knobs": [{"name": k.name, "role": k.role, "unit": k.unit.label,
                        "axis": k.axis or None, "over": k.over or None, "doc": k.doc}
                       for k in cls.KNOBS]}
            for kind, cls in ops.items()]
    if json_:
        console.print_json({"operators": info})
        return
    console.table("operators (vtatune/workloads/)", ["kind", "--shape", "named layers",
                                                      "default"],
                  [[i["kind"], i["shape"], " ".join(i["layers"]) or "-", i["default"]]
                   for i in info])
    for i in info:
        console.table(f"{i['kind']} knobs", ["knob", "role", "unit", "meaning"],
                      [[k["name"], k["role"] + (f" over {k['over']}" if k["over"] else ""),
                        k["unit"], k["doc"]] for k in i["knobs"]])


def register(app: typer.Typer) -> None:
    app.command("operators")(operators_cmd)
