"""vtatune's modules import each other without cycles, lazy (in-function) imports included.

A function-level import hides a cycle from the interpreter but not from the design: two modules
that need each other are one concept split in two, or a shared fact in the wrong place. Imports
under ``if TYPE_CHECKING:`` are annotations only and do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import vtatune

ROOT = Path(vtatune.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the vtatune modules it imports (``from pkg import name`` counts as the
    submodule ``pkg.name`` when there is one, else as ``pkg``)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]
            graph[name].update(t for t in targets if t in mods and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_detects_a_cycle() -> None:
    # the checker itself can fail: a planted two-module cycle and a three-module one
    g = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert cycles(g) == [["a", "b"], ["c", "d", "e"]]


def test_graph_sees_lazy_and_relative_imports() -> None:
    g = import_graph()
    # compile_candidate imports the schedules and passes inside the function
    assert "vtatune.passes.pipeline" in g["vtatune.compiler.compile"]
    assert "vtatune.hardware.hw_spec" in g["vtatune.hardware.config"]
    # the ISA layout is a leaf: it needs no other vtatune module
    assert g["vtatune.hardware.hw_spec"] == set()


#: Modules outside ``vtatune/cli/`` that may import the CLI: ``python -m vtatune`` runs it.
CLI_ENTRY_POINTS = {"vtatune.__main__"}


def library_imports_of_cli(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Library module -> the ``vtatune.cli`` modules it imports (lazy imports included)."""
    def is_cli(m: str) -> bool:
        return m == "vtatune.cli" or m.startswith("vtatune.cli.")

    return {m: {t for t in targets if is_cli(t)} for m, targets in graph.items()
            if not is_cli(m) and m not in CLI_ENTRY_POINTS and any(is_cli(t) for t in targets)}


def test_the_library_never_imports_the_cli() -> None:
    # defaults, names and limits live in the library (vtatune.studies) and raise its errors;
    # cli/ and api.py are two faces over it
    assert library_imports_of_cli(import_graph()) == {}


def test_the_cli_check_can_fail() -> None:
    g = import_graph()
    assert "vtatune.studies" in g["vtatune.api"]  # the API reaches the library's defaults
    planted = {**g, "vtatune.api": g["vtatune.api"] | {"vtatune.cli.search"}}
    assert library_imports_of_cli(planted) == {"vtatune.api": {"vtatune.cli.search"}}
