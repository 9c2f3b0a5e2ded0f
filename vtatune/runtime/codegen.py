"""VTA-level TIR -> a Python host program that calls the runtime (VTA's JIT, in Python).

The host part of a lowered candidate is a loop nest around runtime calls (DMA, dependence
tokens, micro-op tasks). ``compile_host`` turns it into Python source once: loops become
``for`` loops, every argument expression becomes inline integer arithmetic (via
``passes._eval``), and each ``coproc_uop_scope`` becomes one call ``task(k, key)`` where ``key``
holds the values of the enclosing variables the scope reads. The scope's body becomes a
separate *kernel function* of those variables that records its micro-op loops and pushes; the
runtime calls it once per distinct key (VTA's runtime likewise records a kernel once and
caches it), so a program with thousands of GEMM tasks evaluates only a handful of kernels.

Running the host program on a ``CommandQueue`` produces the instruction stream.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vtatune.errors import ProgramError
from vtatune.passes import vta_calls as vc
from vtatune.passes._eval import Unsupported, source
from vtatune.passes.scopes import COPROC_UOP_SCOPE, GEMM_UOP_SCOPE

#: A kernel function: free-variable values -> (loops, uops, metas); see ``KernelSpec``.
KernelFn = Callable[..., tuple[list[tuple[int, ...]], list[tuple[int, int, int]], set]]


@dataclass(frozen=True)
class KernelSpec:
    """One ``coproc_uop_scope`` of the TIR.

    ``fn(*free_values)`` returns ``(loops, uops, metas)``: ``loops`` are ``(pushes_before,
    extent, dst_factor, src_factor, wgt_factor)`` per ``VTAUopLoopBegin`` (outermost first),
    ``uops`` are ``(dst, src, wgt)`` tile indices, ``metas`` the set of ``(mode, reset,
    alu_opcode, use_imm, imm)`` of the pushes (a valid kernel has exactly one).
    """

    index: int
    gemm: bool
    free_vars: tuple[str, ...]
    fn: KernelFn
    source: str


@dataclass(frozen=True)
class HostProgram:
    """The compiled host program: ``run(rt)`` issues every runtime call on ``rt``."""

    source: str
    regions: tuple[str, ...]
    kernels: tuple[KernelSpec, ...]
    run: Callable[[Any], None]


def compile_host(func: Any) -> HostProgram:
    """Compile the body of a VTA-level PrimFunc into a ``HostProgram``."""
    gen = _Gen([p.name for p in func.params])
    gen.stmt(func.body, 1, host=True)
    lines = ["def _host(rt):",
             "    _load, _store, _push, _pop, _task, _sync = (rt.load, rt.store, rt.dep_push,",
             "        rt.dep_pop, rt.task, rt.synchronize)",
             *gen.lines, "    return None"]
    src = "\n".join(lines)
    namespace: dict[str, Any] = {}
    exec(compile(src, "<vtatune host program>", "exec"), namespace)  # noqa: S102 - from TIR
    kernels = []
    for k in gen.kernels:
        ns: dict[str, Any] = {}
        exec(compile(k.source, f"<vtatune uop kernel {k.index}>", "exec"), ns)  # noqa: S102
        kernels.append(KernelSpec(k.index, k.gemm, k.free_vars, ns[f"_kernel{k.index}"],
                                  k.source))
    return HostProgram(src, tuple(gen.regions), tuple(kernels), namespace["_host"])


@dataclass
class _KernelSrc:
    index: int
    gemm: bool
    free_vars: tuple[str, ...]
    source: str


class _Gen:
    """Emits Python for host statements, and separate kernel functions for uop scopes."""

    def __init__(self, params: list[str]):
        self.params = params
        self.regions: list[str] = []
        self.names: dict[Any, str] = {}
        self.lines: list[str] = []
        self.kernels: list[_KernelSrc] = []

    # ---- names and expressions ---------------------------------------------------------------
    def bind(self, var: Any) -> str:
        name = f"v{len(self.names)}"
        self.names[var] = name
        return name

    def expr(self, e: Any) -> str:
        try:
            return source(e, self.names, vector=False)
        except Unsupported as exc:
            raise ProgramError(f"host code: cannot evaluate {e} ({exc})") from None

    def region(self, e: Any) -> str:
        """The DRAM region (a PrimFunc parameter) a ``buffer_data(buf)`` argument names."""
        from tvm import ir

        buf = e.args[0] if isinstance(e, ir.Call) and e.op.name == "tirx.buffer_data" else None
        for _ in range(8):  # follow views (``data_1 = data.view(...)``) back to a parameter
            if buf is None:
                break
            if buf.name in self.params:
                return self._use(buf.name)
            nxt = buf.data
            inner = nxt.args[0] if isinstance(nxt, ir.Call) and nxt.args else None
            buf = None if inner is None or inner.same_as(buf) else inner
        name = re.sub(r"_\d+$", "", getattr(e.args[0], "name", "") if isinstance(e, ir.Call)
                      else "")
        if name in self.params:
            return self._use(name)
        raise ProgramError(f"host code: DMA address {e} is not a view of a parameter "
                           f"({', '.join(self.params)})")

    def _use(self, name: str) -> str:
        if name not in self.regions:
            self.regions.append(name)
        return repr(name)

    # ---- host statements -----------------------------------------------------------------------
    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def block(self, body: Any, depth: int, host: bool) -> None:
        """``body`` at ``depth``, under the header just emitted (``pass`` if it emits nothing)."""
        mark = len(self.lines)
        self.stmt(body, depth, host)
        if len(self.lines) == mark:
            self.emit(depth, "pass")

    def stmt(self, s: Any, depth: int, host: bool) -> None:
        """Emit ``s``; ``host`` is False inside a uop scope (kernel function)."""
        from tvm import ir, tirx

        if isinstance(s, tirx.SeqStmt):
            for x in s.seq:
                self.stmt(x, depth, host)
        elif isinstance(s, tirx.For):
            lo, ext = self.expr(s.min), self.expr(s.extent)
            var = self.bind(s.loop_var)
            rng = f"range({ext})" if lo == "0" else f"range({lo}, {lo} + {ext})"
            self.emit(depth, f"for {var} in {rng}:")
            self.block(s.body, depth + 1, host)
        elif isinstance(s, tirx.AttrStmt):
            if host and s.attr_key == COPROC_UOP_SCOPE:
                self.uop_scope(s, depth)
            else:
                self.stmt(s.body, depth, host)
        elif isinstance(s, tirx.IfThenElse):
            self.emit(depth, f"if {self.expr(s.condition)}:")
            self.block(s.then_case, depth + 1, host)
            if s.else_case is not None:
                self.emit(depth, "else:")
                self.block(s.else_case, depth + 1, host)
        elif isinstance(s, tirx.LetStmt):
            value = self.expr(s.value)
            self.emit(depth, f"{self.bind(s.var)} = {value}")
            self.stmt(s.body, depth, host)
        elif isinstance(s, tirx.Bind):
            value = self.expr(s.value)
            self.emit(depth, f"{self.bind(s.var)} = {value}")
        elif isinstance(s, tirx.AllocBuffer | tirx.DeclBuffer):
            pass  # SRAM allocations and views: addresses are already tile indices
        elif isinstance(s, tirx.Evaluate):
            if isinstance(s.value, ir.Call):
                (self.host_call if host else self.kernel_call)(s.value, depth)
            # a constant Evaluate is a no-op
        else:
            raise ProgramError(f"host code: unsupported statement {type(s).__name__}")

    def host_call(self, call: Any, depth: int) -> None:
        name = vc.extern_name(call)
        args = list(call.args[1:])
        if name == vc.LOAD_2D:
            rest = ", ".join(self.expr(a) for a in args[1:])
            self.emit(depth, f"_load({self.region(args[0])}, {rest})")
        elif name == vc.STORE_2D:
            head = ", ".join(self.expr(a) for a in args[:2])
            rest = ", ".join(self.expr(a) for a in args[3:])
            self.emit(depth, f"_store({head}, {self.region(args[2])}, {rest})")
        elif name == vc.DEP_PUSH:
            self.emit(depth, f"_push({self.expr(args[0])}, {self.expr(args[1])})")
        elif name == vc.DEP_POP:
            self.emit(depth, f"_pop({self.expr(args[0])}, {self.expr(args[1])})")
        elif name == vc.SYNCHRONIZE:
            self.emit(depth, "_sync()")
        else:
            raise ProgramError(f"host code: unexpected call {call} outside a micro-op scope")

    # ---- micro-op scopes -----------------------------------------------------------------------
    def uop_scope(self, s: Any, depth: int) -> None:
        """Emit ``_task(k, key)`` and generate kernel function ``k`` of the scope's free vars."""
        import tvm_ffi
        from tvm import tirx

        used: list[Any] = []

        def on_var(v: Any) -> None:
            if v in self.names and not any(v.same_as(u) for u in used):
                used.append(v)

        tvm_ffi.structural_walk(s.body, (tirx.Var, on_var))
        free = [self.names[v] for v in used]
        index = len(self.kernels)
        gemm = s.value.value == GEMM_UOP_SCOPE

        outer_lines, self.lines = self.lines, []
        outer_names = dict(self.names)
        self.stmt(s.body, 1, host=False)
        body, self.lines = self.lines, outer_lines
        self.names = outer_names
        src = "\n".join([f"def _kernel{index}({', '.join(free)}):",
                         "    _loops, _uops, _metas = [], [], set()",
                         *body, "    return _loops, _uops, _metas"])
        self.kernels.append(_KernelSrc(index, gemm, tuple(free), src))
        key = f"({', '.join(free)},)" if free else "()"
        self.emit(depth, f"_task({index}, {key})")

    def kernel_call(self, call: Any, depth: int) -> None:
        name = vc.extern_name(call)
        args = [self.expr(a) for a in call.args[1:]]
        if name == vc.UOP_LOOP_BEGIN:
            self.emit(depth, f"_loops.append((len(_uops), {', '.join(args)}))")
        elif name == vc.UOP_LOOP_END:
            pass  # the loop levels are fixed by their begins (at most two, before any push)
        elif name == vc.UOP_PUSH:
            mode, reset, dst, src, wgt, op, use_imm, imm = args
            self.emit(depth, f"_uops.append(({dst}, {src}, {wgt}))")
            self.emit(depth, f"_metas.add(({mode}, {reset}, {op}, {use_imm}, {imm}))")
        else:
            raise ProgramError(f"micro-op scope: unexpected call {call}")
