"""User passes and verifiers: a Python file adds TVM passes at named phases of the lowering
pipeline and checks of its own to the verification (as VTA's ``build_config(add_lower_pass=
[(phase, pass)])``).

The file defines

- ``PASSES``: a list of ``(phase, pass)`` pairs, ``phase`` one of ``PHASES`` (or TVM's integer
  phases 0-3, aliases of ``loops``, ``flat``, ``threads`` and ``vta``), ``pass`` a TVM pass over
  PrimFuncs (``tvm.tirx.transform.prim_func_pass``) or modules; passes of one phase run in
  list order, after vtatune's passes of that phase;
- optionally ``VERIFIERS``: functions ``(func, hw) -> problems`` called on the VTA-level
  PrimFunc with the candidate's ``HwConfig``; each problem (a string, or a
  ``vtatune.passes.verify.Problem``) makes the candidate ``invalid`` with that reason.

A ``PassSet`` is identified by its ``fingerprint``: a hash of the file's content and of the
list it defines (phases, pass names, verifier names). Candidates compiled with passes carry it
in their identity, so results with and without them (or with another version of the file)
never mix. A ``PassSet`` pickles as its path and fingerprint: a worker process re-imports the
file, and a file changed since the search started fails its candidates with a reason instead of
compiling something else.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vtatune.errors import UserError
from vtatune.readers import read_bytes

#: The named phases, in pipeline order: (name, TVM integer alias or None, what the IR is when
#: the phase's user passes run, what runs next).
PHASES: tuple[tuple[str, int | None, str, str], ...] = (
    ("scheduled", None,
     "the scheduled PrimFunc (s_tir blocks, the GEMM and DMA marked by pragmas)",
     "blocks lowered to loops: LowerInitBlock ... CompactBufferAllocation, TightenSramBuffers, "
     "LowerOpaqueBlock"),
    ("loops", 0,
     "loop nests over multi-dimensional buffers (TVM's phase 0: raw IR and loop levels)",
     "FlattenBuffer, NarrowDataType, PartitionTiles (partial tiles into body and tail)"),
    ("flat", 1,
     "flat buffers, partial tiles partitioned (TVM's phase 1: after storage flattening)",
     "VTA tasks: InjectGEMMIntrin, InjectDMA, AnnotateALUScope, AnnotateGEMMScope, "
     "InjectCoProcSync"),
    ("tasks", None,
     "VTA tasks: DMA calls, GEMM micro-op pushes, compute tasks and dependence tokens, one "
     "thread",
     "virtual threads: cthread_to_vthread, bind_tasks_to_threads, InjectVirtualThread, "
     "StorageRewrite; then SRAM use is measured"),
    ("threads", 2,
     "virtual threads injected and storage rewritten (TVM's phase 2: after loop "
     "transformations); SRAM use is measured after these passes",
     "hardware indices: LowerSramAccess, InjectALUIntrin, FoldUopLoop, simplification"),
    ("vta", 3,
     "the VTA-level TIR the runtime turns into instructions (TVM's phase 3: final)",
     "verification: SRAM bytes, micro-op kernel, ISA fields, then the file's VERIFIERS"),
)
PHASE_NAMES = tuple(p[0] for p in PHASES)
ALIASES = {p[1]: p[0] for p in PHASES if p[1] is not None}

#: A verifier: (VTA-level PrimFunc, HwConfig) -> problems (strings or Problems).
Verifier = Callable[[Any, Any], Iterable[Any]]


def phase_name(phase: Any) -> str:
    """The named phase ``phase`` is (a name or TVM's integer 0-3); ``ValueError`` otherwise."""
    if isinstance(phase, bool):
        raise ValueError(f"unknown phase {phase!r}")
    if isinstance(phase, int):
        if phase in ALIASES:
            return ALIASES[phase]
        raise ValueError(f"unknown phase {phase} (integer phases are 0-3)")
    if isinstance(phase, str) and phase in PHASE_NAMES:
        return phase
    raise ValueError(f"unknown phase {phase!r} (phases: {', '.join(PHASE_NAMES)}, or 0-3)")


@dataclass(frozen=True, eq=False)
class PassSet:
    """User passes by phase and user verifiers, with the fingerprint that identifies them.

    Equal (and hashed) by fingerprint. ``error`` is set when a worker process could not load
    the same file again: every compile with it then fails with that reason.
    """

    fingerprint: str
    passes: tuple[tuple[str, Any], ...] = ()
    verifiers: tuple[tuple[str, Verifier], ...] = ()
    path: str = ""
    error: str = field(default="")

    def at(self, phase: str) -> list[Any]:
        """The passes of ``phase``, in order."""
        return [p for ph, p in self.passes if ph == phase]

    def describe(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "path": self.path or None,
                "passes": [{"phase": ph, "name": _pass_name(p)} for ph, p in self.passes],
                "verifiers": [name for name, _ in self.verifiers]}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PassSet) and other.fingerprint == self.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        if not self.path:
            raise TypeError("passes given as a Python list cannot be sent to another process; "
                            "put them in a file and give its path")
        return _reload, (self.path, self.fingerprint)


def load(path: str | Path) -> PassSet:
    """The passes and verifiers a file defines; ``UserError`` (one line) when it cannot be
    used: missing, not a regular file, larger than 1 MiB, unreadable, a syntax error, an error
    while importing it, no ``PASSES``, an unknown phase, something that is not a TVM pass, a
    verifier that is not callable."""

    p = Path(path)
    source = read_bytes(p, "--passes")  # a regular file of at most 1 MiB (InputError)
    namespace = _execute(p, source)
    if "PASSES" not in namespace:
        raise UserError(f"--passes {path}: defines no PASSES (a list of (phase, pass) pairs)")
    passes = _passes(namespace["PASSES"], f"--passes {path}")
    verifiers = _verifiers(namespace.get("VERIFIERS", []), f"--passes {path}")
    return PassSet(_fingerprint(source, passes, verifiers), passes, verifiers,
                   path=str(p.resolve()))


def from_list(passes: Sequence[Any], verifiers: Sequence[Any] = ()) -> PassSet:
    """A ``PassSet`` from Python objects (``compile_candidate(..., passes=[(phase, pass)])``).

    Its fingerprint covers the phases and the names of the passes and verifiers only (there is
    no file to hash), and it cannot be sent to worker processes.
    """
    ps, vs = _passes(list(passes), "passes"), _verifiers(list(verifiers), "verifiers")
    return PassSet(_fingerprint(b"", ps, vs), ps, vs)


def resolve(passes: Any) -> PassSet | None:
    """None, a ``PassSet``, a path to a pass file, or a list of ``(phase, pass)`` pairs, as a
    ``PassSet`` (None when there are no passes)."""
    if passes is None or isinstance(passes, PassSet):
        return passes
    if isinstance(passes, str | Path):
        return load(passes)
    return from_list(passes)


def fingerprint(passes: PassSet | None) -> str:
    """The identity of ``passes`` in candidate keys; empty without passes."""
    return passes.fingerprint if passes is not None else ""


def _execute(p: Path, source: bytes) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"vtatune_user_passes_{p.stem}",
                                 "__file__": str(p)}
    try:
        code = compile(source, str(p), "exec")
    except SyntaxError as exc:
        raise UserError(f"--passes {p}: syntax error at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:  # e.g. null bytes
        raise UserError(f"--passes {p}: not Python source ({exc})") from None
    try:
        exec(code, namespace)  # noqa: S102 - the user's own pass file, as they asked
    except SystemExit as exc:  # sys.exit() in a pass file must not end vtatune silently
        raise UserError(f"--passes {p}: importing it called sys.exit("
                        f"{repr(exc.code)[:80]})") from None
    except Exception as exc:
        raise UserError(f"--passes {p}: importing it raised {type(exc).__name__}: "
                        f"{_last_line(exc)}") from None
    return namespace


def _passes(raw: Any, where: str) -> tuple[tuple[str, Any], ...]:
    import tvm

    if not isinstance(raw, list | tuple):
        raise UserError(f"{where}: PASSES must be a list of (phase, pass) pairs, got "
                        f"{type(raw).__name__}")
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, list | tuple) or len(item) != 2:
            raise UserError(f"{where}: PASSES[{i}] must be a (phase, pass) pair, got {item!r}")
        phase, p = item
        try:
            name = phase_name(phase)
        except ValueError as exc:
            raise UserError(f"{where}: PASSES[{i}]: {exc}") from None
        if not isinstance(p, tvm.ir.transform.Pass):
            raise UserError(f"{where}: PASSES[{i}] is not a TVM pass ({type(p).__name__}); "
                            "make one with tvm.tirx.transform.prim_func_pass")
        out.append((name, p))
    return tuple(out)


def _verifiers(raw: Any, where: str) -> tuple[tuple[str, Verifier], ...]:
    if not isinstance(raw, list | tuple):
        raise UserError(f"{where}: VERIFIERS must be a list of functions (func, hw) -> "
                        f"problems, got {type(raw).__name__}")
    out = []
    for i, v in enumerate(raw):
        if not callable(v):
            raise UserError(f"{where}: VERIFIERS[{i}] is not callable ({type(v).__name__})")
        out.append((getattr(v, "__name__", f"verifier{i}"), v))
    return tuple(out)


def _pass_name(p: Any) -> str:
    try:
        return str(p.info.name)
    except Exception:
        return type(p).__name__


def _fingerprint(source: bytes, passes: tuple[tuple[str, Any], ...],
                 verifiers: tuple[tuple[str, Verifier], ...]) -> str:
    h = hashlib.sha256(source)
    for phase, p in passes:
        h.update(f"\npass {phase} {_pass_name(p)}".encode())
    for name, _ in verifiers:
        h.update(f"\nverifier {name}".encode())
    return h.hexdigest()[:16]


def _reload(path: str, expected: str) -> PassSet:
    """Unpickling: load the file again; a failure or another fingerprint becomes ``error``."""
    try:
        ps = load(path)
    except UserError as exc:
        return PassSet(expected, path=path, error=str(exc))
    if ps.fingerprint != expected:
        return PassSet(expected, path=path, error=f"--passes {path} changed since the search "
                       f"started (fingerprint {ps.fingerprint}, expected {expected})")
    return ps


def _last_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[-1] if lines else ""
