"""Capture VTA's own instruction streams for ``test_vta_streams.py`` (a helper, not a test).

Run with the oracle's Python (TVM 0.19 + AutoTVM + VTA's ``vta/python``, set up as
``/work/shared/vta-oracle/README.md`` says; never a dependency of vtatune)::

    /tmp/oldtvm/bin/python tests/runtime/vta_oracle_streams.py \
        --oracle /work/shared/vta-oracle --out tests/runtime/data/vta_streams.json
    VTA_ORACLE_DESIGN=4x8_i8w8a32_15_16_16_18 /tmp/oldtvm/bin/python \
        tests/runtime/vta_oracle_streams.py --out tests/runtime/data/vta_streams.json

(one design per run, VTA's Environment being global; a run replaces its design's entries).
For every record (``VARIATIONS`` below: TopHub's measured records of
``/work/shared/data/vta_pynq_measured.log`` on the design, and variations of their tiles and
virtual threads) it instantiates VTA's conv2d template (``vta.top.conv2d_packed`` +
``schedule_conv2d_packed`` with the tutorial's epilogue, as ``check_log.py`` registers it)
with the record's knobs, lowers it with ``tvm.lower`` under ``vta.build_config()`` (VTA's
own passes: InjectDMAIntrin, InjectALUIntrin, FoldUopLoop, ...; TVM 0.19's
common-subexpression pass off, see ``no_cse``), and runs the lowered host code's runtime
calls (``VTALoadBuffer2D``, ``VTAStoreBuffer2D``, ``coproc_dep_push/pop``, each
``coproc_uop_scope`` with its ``VTAUopLoopBegin``/``uop_push`` calls, ``coproc_sync``) through
``Runtime`` below: a line-by-line transcription of apache/tvm-vta ``src/runtime/runtime.cc``
(``InsnQueue::DepPush/DepPop/CommitPendingPop/PushNoop/Create``, ``UopQueue::Push/
FlushUopLoad``, ``UopKernelMap::Get`` keyed by the call site and the kernel's captured value,
``UopKernel::VerifyDep``, ``CommandQueue::PushGEMMOp/PushALUUop/Synchronize``). The result
is the instruction stream VTA's stack issues for the schedule, written as canonical text
lines (``line`` below; DRAM addresses as (tensor, offset) since physical addresses are the
board's), one stream per record with its summary (counts, micro-op loads, GEMM/ALU loop
shapes) and a digest; the full lines when they are short (``--keep-chars``). A schedule VTA
refuses is stored with VTA's error (``vta_error``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections import Counter

# ---- records ------------------------------------------------------------------------------------

#: (record index in the design's sections of the measured log, knob changes): every measured
#: record as measured, then variations of tile sizes and virtual threads (those VTA refuses
#: are stored with its error and left out of the tests).
VARIATIONS = [(i, {}) for i in range(21)] + [
    (0, {"oc_nthread": 1}),
    (0, {"oc_nthread": 1, "h_nthread": 2, "tile_co": 8}),
    (0, {"tile_co": 4, "h_nthread": 2}),
    (1, {"tile_co": 8, "h_nthread": 2, "oc_nthread": 1}),
    (2, {"tile_h": 7, "tile_w": 7, "oc_nthread": 2, "h_nthread": 2}),
    (3, {"tile_ci": 2}),
    (3, {"tile_h": 7, "tile_co": 8}),  # the conv2d tutorial's schedule of C8
    (3, {"tile_h": 2, "tile_co": 1, "oc_nthread": 1}),  # VerifyDep: rows 0 1 0 1 ...
    (3, {"tile_h": 1, "tile_co": 2, "oc_nthread": 1}),  # VerifyDep: channel tiles 0 1 0 ...
    (3, {"tile_h": 7, "tile_co": 1, "oc_nthread": 1}),
    (3, {"tile_co": 1, "oc_nthread": 1}),
    (4, {"h_nthread": 2}),
    (4, {"tile_w": 14, "oc_nthread": 1}),
    (5, {"tile_ci": 4, "tile_co": 2}),
    (6, {"tile_ci": 2, "tile_co": 4}),
    (7, {"tile_h": 7, "h_nthread": 2, "oc_nthread": 1}),
    (7, {"tile_ci": 4, "tile_h": 14}),
    (8, {"tile_ci": 2, "tile_co": 1}),
    (9, {"tile_co": 2, "tile_h": 14, "tile_w": 14}),
    (9, {"tile_h": 1, "tile_co": 2}),
    (9, {"tile_h": 7, "tile_w": 7, "tile_co": 1, "oc_nthread": 2}),
]


def line(insn: dict) -> str:
    """One instruction as canonical text (the same form ``test_vta_streams`` makes of a
    vtatune program)."""
    f = "".join("1" if insn[k] else "0" for k in ("pop_prev", "pop_next", "push_prev", "push_next"))
    op = insn["op"]
    if op in ("LOAD", "STORE"):
        if insn["x_size"] == 0:
            return f"{op} NOP mem={insn['mem']} deps={f}"
        head = (f"{op} mem={insn['mem']} deps={f} sram={insn['sram']} y={insn['y_size']} "
                f"x={insn['x_size']} xs={insn['x_stride']}")
        if insn["mem"] == "UOP":
            return head
        return (head + f" pad={insn['y_pad_0']},{insn['y_pad_1']},{insn['x_pad_0']},"
                f"{insn['x_pad_1']} dram={insn['tensor']}+{insn['offset']}")
    if op == "FINISH":
        return f"FINISH deps={f}"
    loops = (f"iter={insn['iter_out']}x{insn['iter_in']} dst={insn['dst_out']},{insn['dst_in']} "
             f"src={insn['src_out']},{insn['src_in']}")
    uops = ";".join(f"{d},{s},{w}" for d, s, w in insn["uops"])
    if op == "GEMM":
        return (f"GEMM deps={f} reset={insn['reset']} uop={insn['uop_bgn']}:{insn['uop_end']} "
                f"{loops} wgt={insn['wgt_out']},{insn['wgt_in']} uops={uops}")
    return (f"ALU deps={f} reset={insn['reset']} uop={insn['uop_bgn']}:{insn['uop_end']} "
            f"{loops} op={insn['alu_op']} imm={insn['use_imm']},{insn['imm']} uops={uops}")


# ---- runtime.cc, transcribed -------------------------------------------------------------

LOAD_STAGE, COMPUTE_STAGE, STORE_STAGE = 1, 2, 3
MEM = {0: "UOP", 1: "WGT", 2: "INP", 3: "ACC", 4: "OUT", 5: "ACC_8BIT"}


class Kernel:
    """``UopKernel``: loops (extent, dst, src, wgt factors), micro-ops, mode and ALU op."""

    def __init__(self):
        self.loops, self.seq, self.meta = [], [], None
        self.sram_begin = self.sram_end = 0

    def cached(self):
        return self.sram_begin != self.sram_end


class Runtime:
    def __init__(self, uop_depth: int):
        self.insns: list[dict] = []
        self.pop_prev = [0] * 4
        self.pop_next = [0] * 4
        self.uop_depth = uop_depth
        # UopQueue
        self.cache: list[Kernel] = []
        self.cache_idx = 0
        self.q_begin = self.q_end = 0
        self.kmaps: dict = {}  # call site -> UopKernelMap (value -> kernel)
        self.uop_loads = 0

    # InsnQueue
    def _next(self, **kw):
        insn = dict(pop_prev=0, pop_next=0, push_prev=0, push_next=0, **kw)
        self.insns.append(insn)
        return insn

    def create(self, stage, **kw):
        insn = self._next(**kw)
        insn["pop_prev"], insn["pop_next"] = self.pop_prev[stage], self.pop_next[stage]
        insn["stage"] = stage
        self.pop_prev[stage] = self.pop_next[stage] = 0
        return insn

    def push_noop(self, stage, push_prev, push_next, pop_prev, pop_next):
        insn = self._next(op="STORE" if stage == STORE_STAGE else "LOAD",
                          mem="INP" if stage == LOAD_STAGE else "UOP", x_size=0)
        insn.update(push_prev=int(push_prev), push_next=int(push_next), pop_prev=int(pop_prev),
                    pop_next=int(pop_next))
        # GetPipelineStage: a LOAD of x_size 0 is kNoneStage, a STORE always kStoreStage
        insn["stage"] = STORE_STAGE if stage == STORE_STAGE else 0

    def commit_pending_pop(self, stage):
        if self.pop_prev[stage] or self.pop_next[stage]:
            self.push_noop(stage, False, False, self.pop_prev[stage], self.pop_next[stage])
            self.pop_prev[stage] = self.pop_next[stage] = 0

    def dep_pop(self, frm, to):
        if frm < to:
            if self.pop_prev[to]:
                self.commit_pending_pop(to)
            self.pop_prev[to] = 1
        else:
            if self.pop_next[to]:
                self.commit_pending_pop(to)
            self.pop_next[to] = 1

    def dep_push(self, frm, to):
        self.commit_pending_pop(frm)
        if self.insns:
            last = self.insns[-1]
            if last["stage"] == frm:
                if frm < to and not last["push_next"]:
                    last["push_next"] = 1
                    return
                if frm > to and not last["push_prev"]:
                    last["push_prev"] = 1
                    return
        if frm < to:
            self.push_noop(frm, False, True, False, False)
        else:
            self.push_noop(frm, True, False, False, False)

    # CommandQueue
    def load(self, tensor, offset, x_size, y_size, x_stride, xp0, yp0, xp1, yp1, sram, mem):
        stage = COMPUTE_STAGE if mem in (0, 3, 5) else LOAD_STAGE
        self.create(stage, op="LOAD", mem=MEM[mem], sram=sram, tensor=tensor, offset=offset,
                    y_size=y_size, x_size=x_size, x_stride=x_stride, y_pad_0=yp0, y_pad_1=yp1,
                    x_pad_0=xp0, x_pad_1=xp1)

    def store(self, sram, mem, tensor, offset, x_size, y_size, x_stride):
        self.create(STORE_STAGE, op="STORE", mem=MEM[mem], sram=sram, tensor=tensor,
                    offset=offset, y_size=y_size, x_size=x_size, x_stride=x_stride, y_pad_0=0,
                    y_pad_1=0, x_pad_0=0, x_pad_1=0)

    def kernel(self, site, key, record):
        """``UopKernelMap::Get``: one kernel per call site and captured value."""
        kmap = self.kmaps.setdefault(site, {})
        if len(key) > 1:
            raise RuntimeError(f"uop kernel captures {len(key)} values: VTA's UopKernelMap "
                               "takes at most one (CHECK nbytes == sizeof(int))")
        k = (key[0] + 1) if key else 0
        if k >= 100:
            raise RuntimeError(f"uop kernel key {k} >= 100 (UopKernelMap CHECK_LT(key, 100))")
        if k not in kmap:
            kmap[k] = record()
        return kmap[k]

    def uop_push(self, kernel: Kernel):
        """``UopQueue::Push`` + ``FlushUopLoad``."""
        if kernel.cached():
            return False
        n = len(kernel.seq)
        assert n <= self.uop_depth
        uop_begin = 0
        if self.q_end + n > self.uop_depth:
            self.cache_idx = 0
            self.q_begin = 0
            self.q_end = n
        else:
            uop_begin = self.q_end
            self.q_end += n
        evict_begin = self.cache_idx
        while self.cache_idx < len(self.cache):
            if self.cache[self.cache_idx].sram_begin >= self.q_end:
                break
            self.cache[self.cache_idx].sram_begin = self.cache[self.cache_idx].sram_end = 0
            self.cache_idx += 1
        kernel.sram_begin, kernel.sram_end = uop_begin, self.q_end
        self.cache.insert(self.cache_idx, kernel)
        del self.cache[evict_begin:self.cache_idx]
        self.cache_idx = evict_begin + 1
        return True

    def push_op(self, kernel: Kernel, gemm: bool):
        self.uop_push(kernel)
        if self.q_begin != self.q_end:  # uop_queue_.pending()
            self.create(COMPUTE_STAGE, op="LOAD", mem="UOP", sram=self.q_begin, y_size=1,
                        x_size=self.q_end - self.q_begin, x_stride=self.q_end - self.q_begin)
            self.q_begin = self.q_end
            self.uop_loads += 1
        mode, reset, alu_op, use_imm, imm = kernel.meta
        loops = kernel.loops
        if gemm:
            out = loops[0] if len(loops) > 0 else (1, 0, 0, 0)
            inn = loops[1] if len(loops) > 1 else (1, 0, 0, 0)
        else:  # PushALUUop: a single loop is the inner one
            out = loops[0] if len(loops) > 1 else (1, 0, 0, 0)
            inn = loops[1] if len(loops) > 1 else loops[0] if loops else (1, 0, 0, 0)
        insn = self.create(COMPUTE_STAGE, op="GEMM" if gemm else "ALU", reset=reset,
                           uop_bgn=kernel.sram_begin, uop_end=kernel.sram_end,
                           iter_out=out[0], iter_in=inn[0], dst_out=out[1], dst_in=inn[1],
                           src_out=out[2], src_in=inn[2], uops=list(kernel.seq))
        if gemm:
            insn.update(wgt_out=out[3], wgt_in=inn[3])
        else:
            insn.update(alu_op=alu_op, use_imm=use_imm, imm=imm)

    def synchronize(self):
        self.dep_push(STORE_STAGE, COMPUTE_STAGE)
        self.dep_push(LOAD_STAGE, COMPUTE_STAGE)
        self.dep_pop(STORE_STAGE, COMPUTE_STAGE)
        self.dep_pop(LOAD_STAGE, COMPUTE_STAGE)
        self.commit_pending_pop(COMPUTE_STAGE)
        self.create(COMPUTE_STAGE, op="FINISH")
        assert not any(self.pop_prev) and not any(self.pop_next)


def no_cse(ctx):
    """``ctx`` (VTA's build_config) with TVM's common-subexpression pass off
    (``tir.disable_cse_tir``)."""
    import tvm

    cfg = dict(ctx.config)
    cfg["tir.disable_cse_tir"] = True
    return tvm.transform.PassContext(opt_level=ctx.opt_level, config=cfg,
                                     required_pass=list(ctx.required_pass),
                                     disabled_pass=list(ctx.disabled_pass))


# ---- the lowered host code, run -------------------------------------------------------------


ALU_NAMES = {0: "MIN", 1: "MAX", 2: "ADD", 3: "SHR", 4: "MUL"}


def run_host(func, uop_depth):
    from tvm import tir

    params = {p: i for i, p in enumerate(func.params)}
    tensor_of = {}
    for p, i in params.items():
        buf = func.buffer_map.get(p)
        if buf is not None:
            tensor_of[buf.data] = ("data", "kernel", "res")[i]
    rt = Runtime(uop_depth)

    def ev(e, env):
        if isinstance(e, (int,)):
            return e
        if isinstance(e, tir.IntImm):
            return int(e.value)
        if isinstance(e, tir.Var):
            return env[e]
        if isinstance(e, tir.Cast):
            return ev(e.value, env)
        bin_ops = {tir.Add: lambda a, b: a + b, tir.Sub: lambda a, b: a - b,
                   tir.Mul: lambda a, b: a * b, tir.FloorDiv: lambda a, b: a // b,
                   tir.FloorMod: lambda a, b: a % b, tir.Min: min, tir.Max: max,
                   tir.EQ: lambda a, b: int(a == b), tir.NE: lambda a, b: int(a != b),
                   tir.LT: lambda a, b: int(a < b), tir.LE: lambda a, b: int(a <= b),
                   tir.GT: lambda a, b: int(a > b), tir.GE: lambda a, b: int(a >= b),
                   tir.And: lambda a, b: int(a and b), tir.Or: lambda a, b: int(a or b),
                   tir.Div: lambda a, b: int(a / b), tir.Mod: lambda a, b: a - b * int(a / b)}
        for cls, fn in bin_ops.items():
            if isinstance(e, cls):
                return fn(ev(e.a, env), ev(e.b, env))
        if isinstance(e, tir.Not):
            return int(not ev(e.a, env))
        if isinstance(e, tir.Select):
            return ev(e.true_value, env) if ev(e.condition, env) else ev(e.false_value, env)
        if isinstance(e, tir.Let):
            return ev(e.body, {**env, e.var: ev(e.value, env)})
        raise RuntimeError(f"cannot evaluate {type(e).__name__}: {e}")

    def free_vars(body, env):
        seen = []

        def visit(n):
            if isinstance(n, tir.Var) and n in env and not any(n.same_as(s) for s in seen):
                seen.append(n)

        tir.stmt_functor.post_order_visit(body, visit)
        return seen

    def record_kernel(body, env):
        k = Kernel()
        metas = set()

        def rec(s, env):
            if isinstance(s, tir.SeqStmt):
                for x in s.seq:
                    rec(x, env)
            elif isinstance(s, tir.For):
                lo, n = ev(s.min, env), ev(s.extent, env)
                for v in range(lo, lo + n):
                    rec(s.body, {**env, s.loop_var: v})
            elif isinstance(s, tir.LetStmt):
                rec(s.body, {**env, s.var: ev(s.value, env)})
            elif isinstance(s, tir.AttrStmt):
                rec(s.body, env)
            elif isinstance(s, tir.Evaluate):
                c = s.value
                if not isinstance(c, tir.Call):
                    return
                name = c.op.name
                if name == "tir.call_extern":
                    name = c.args[0].value
                    args = [ev(a, env) for a in c.args[1:]]
                    if name == "VTAUopLoopBegin":
                        assert not k.seq and len(k.loops) < 2
                        k.loops.append(tuple(args))
                    elif name != "VTAUopLoopEnd":
                        raise RuntimeError(f"unexpected call {name} in a uop scope")
                elif name == "tir.vta.uop_push":
                    mode, reset, dst, src, wgt, op, use_imm, imm = [ev(a, env) for a in c.args]
                    if any(d == dst for d, _, _ in k.seq[-2:]):  # UopKernel::VerifyDep
                        raise RuntimeError(
                            f"UopKernel::VerifyDep: CHECK failed: micro-op {len(k.seq)} "
                            f"writes accumulator tile {dst}, as one of the two before it")
                    k.seq.append((dst, src, wgt))
                    metas.add((mode, reset, ALU_NAMES.get(op, op) if mode else 0,
                               use_imm if mode else 0, imm if mode else 0))
                else:
                    raise RuntimeError(f"unexpected call {name} in a uop scope")
            else:
                raise RuntimeError(f"unexpected {type(s).__name__} in a uop scope")

        rec(body, env)
        assert len(metas) == 1, metas
        k.meta = next(iter(metas))
        return k

    def run(s, env):
        if isinstance(s, tir.SeqStmt):
            for x in s.seq:
                run(x, env)
        elif isinstance(s, tir.For):
            lo, n = ev(s.min, env), ev(s.extent, env)
            for v in range(lo, lo + n):
                run(s.body, {**env, s.loop_var: v})
        elif isinstance(s, tir.LetStmt):
            run(s.body, {**env, s.var: ev(s.value, env)})
        elif isinstance(s, tir.IfThenElse):
            if ev(s.condition, env):
                run(s.then_case, env)
            elif s.else_case is not None:
                run(s.else_case, env)
        elif isinstance(s, tir.AttrStmt):
            if s.attr_key == "coproc_uop_scope":
                fv = free_vars(s.body, env)
                key = tuple(env[v] for v in fv)
                kernel = rt.kernel(s, key, lambda: record_kernel(s.body, env))
                rt.push_op(kernel, s.value.value == "VTAPushGEMMOp")
            else:
                run(s.body, env)
        elif isinstance(s, (tir.Allocate, tir.DeclBuffer)):
            run(s.body, env)
        elif isinstance(s, tir.Evaluate):
            c = s.value
            if not isinstance(c, tir.Call):
                return
            name = c.op.name
            if name == "tir.call_extern":
                name = c.args[0].value
                if name == "VTALoadBuffer2D":
                    a = c.args[2:]
                    rt.load(tensor_of[a[0]], *[ev(x, env) for x in a[1:]])
                elif name == "VTAStoreBuffer2D":
                    a = c.args[2:]
                    rt.store(ev(a[0], env), ev(a[1], env), tensor_of[a[2]],
                             *[ev(x, env) for x in a[3:]])
                else:
                    raise RuntimeError(f"unexpected host call {name}")
            elif name == "tir.vta.coproc_dep_push":
                rt.dep_push(ev(c.args[0], env), ev(c.args[1], env))
            elif name == "tir.vta.coproc_dep_pop":
                rt.dep_pop(ev(c.args[0], env), ev(c.args[1], env))
            elif name == "tir.vta.coproc_sync":
                rt.synchronize()
            else:
                raise RuntimeError(f"unexpected host call {name}")
        else:
            raise RuntimeError(f"unexpected statement {type(s).__name__}")

    run(func.body, {})
    return rt


def summary(rt: Runtime) -> dict:
    insns = rt.insns
    lines = [line(i) for i in insns]
    gemm = Counter(f"{i['iter_out']}x{i['iter_in']}x{len(i['uops'])}"
                   for i in insns if i["op"] == "GEMM")
    alu = Counter(f"{i['iter_out']}x{i['iter_in']}x{len(i['uops'])}"
                  for i in insns if i["op"] == "ALU")
    return {
        "insns": len(insns),
        "nops": sum(1 for i in insns if i["op"] in ("LOAD", "STORE") and i["x_size"] == 0),
        "uop_loads": rt.uop_loads,
        "uop_kernels": sum(len(m) for m in rt.kmaps.values()),
        "gemm": dict(sorted(gemm.items())),
        "alu": dict(sorted(alu.items())),
        "digest": hashlib.sha256("\n".join(lines).encode()).hexdigest(),
        "lines": lines,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", default="/work/shared/vta-oracle")
    ap.add_argument("--log", default="/work/shared/data/vta_pynq_measured.log",
                    help="TopHub's measured records (both designs; the repository's copy in "
                    "hwconfigs/timing/measured holds the 1x16 design's only)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--keep-chars", type=int, default=30000,
                    help="store the full stream of records whose lines take at most this many "
                    "characters (the others: digest and summary)")
    args = ap.parse_args()
    sys.path.insert(0, args.oracle)
    import copy

    import check_log as C
    import vta_compat

    designs = {}
    for ln in open(args.log):
        if ln.startswith("#") and "pynq_" in ln:
            designs.setdefault(ln.split("pynq_")[1].strip(), None)
    out = []
    for name in designs:
        b, rest = name.split("_", 1)[0], name.split("_")
        batch, block = (int(x) for x in b.split("x"))
        uop, inp, wgt, acc = (int(x) for x in rest[2:6])
        cfg = {"TARGET": "sim", "HW_VER": "0.0.2", "LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3,
               "LOG_ACC_WIDTH": 5, "LOG_BATCH": batch.bit_length() - 1,
               "LOG_BLOCK": block.bit_length() - 1, "LOG_UOP_BUFF_SIZE": uop,
               "LOG_INP_BUFF_SIZE": inp, "LOG_WGT_BUFF_SIZE": wgt, "LOG_ACC_BUFF_SIZE": acc}
        designs[name] = cfg
    import json as _json

    out = []
    for name, cfg in designs.items():
        # one process per design (VTA's Environment is global): re-run for each
        if os.environ.get("VTA_ORACLE_DESIGN", next(iter(designs))) != name:
            continue
        vta = vta_compat.setup(cfg)
        import tvm
        from tvm import autotvm
        from tvm.autotvm.task.space import OtherOptionEntity, SplitEntity

        env = vta.get_env()
        C.register_vta_tuning_tasks(vta)
        recs = []
        section = None
        for ln in open(args.log):
            if ln.startswith("#"):
                section = ln
                continue
            if ln.strip() and section and name in section:
                recs.append(ln)
        uop_depth = (1 << cfg["LOG_UOP_BUFF_SIZE"]) // 4
        for ri, changes in VARIATIONS:
            if ri >= len(recs):
                continue
            inp, _ = autotvm.record.decode(recs[ri])
            cfg_ = copy.deepcopy(inp.config)
            for k, v in changes.items():
                cfg_._entity_map[k] = (SplitEntity([-1, v]) if k.startswith("tile")
                                       else OtherOptionEntity(v))
            targs = list(inp.task.args)
            if len(targs) == 8:  # the 2019-07-30 records name the layout twice
                del targs[6]
            task = autotvm.task.create(inp.task.name, args=tuple(targs), target=env.target)
            knobs = {k: (e.size[-1] if hasattr(e, "size") else e.val)
                     for k, e in cfg_._entity_map.items()}
            entry = {"design": name, "vta_config": cfg, "record": ri, "changes": changes,
                     "task_args": _json.loads(_json.dumps(targs, default=list)),
                     "knobs": knobs}
            try:
                with env.target:
                    s, bufs = task.instantiate(cfg_)
                # without TVM 0.19's common-subexpression pass (the 2019 TVM that measured
                # these records had none): it binds ``cthread * 784`` to a variable that the
                # uop kernels would then capture instead of the thread index, beyond
                # UopKernelMap's 100 keys
                with no_cse(vta.build_config()):
                    mod = tvm.lower(s, bufs, simple_mode=False)
                    vta.build(s, bufs, target=env.target, target_host=env.target_host)
                rt = run_host(mod["main"], uop_depth)
                sm = summary(rt)
                if sum(len(x) + 1 for x in sm["lines"]) > args.keep_chars:
                    del sm["lines"]
                entry.update(sm)
            except Exception as e:  # noqa: BLE001 - VTA refuses the schedule: say so
                msg = str(e).strip().splitlines()
                entry["vta_error"] = f"{type(e).__name__}: {msg[-1] if msg else ''}"
            print(name, ri, changes, {k: entry.get(k) for k in
                                      ("insns", "uop_loads", "gemm", "alu", "vta_error")},
                  flush=True)
            out.append(entry)
    old = []
    if os.path.exists(args.out):
        old = [e for e in _json.load(open(args.out)) if e["design"] not in
               {e2["design"] for e2 in out}]
    with open(args.out, "w") as fh:
        _json.dump(old + out, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
