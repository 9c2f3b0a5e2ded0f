"""vtatune's instruction streams are VTA's, word for word where the data allow.

The expected streams in ``data/vta_streams.json`` come from VTA's own compiler and runtime, not
from vtatune: ``tests/runtime/vta_oracle_streams.py`` (run with the oracle's TVM 0.19 + VTA
Python, see its docstring; the command is
``/tmp/oldtvm/bin/python tests/runtime/vta_oracle_streams.py --out tests/runtime/data/
vta_streams.json``, once per design with ``VTA_ORACLE_DESIGN``) instantiated VTA's conv2d
template with each record's knobs, lowered it with VTA's passes (FoldUopLoop,
InjectALUIntrin, ...) and ran the lowered host code's runtime calls through a transcription
of apache/tvm-vta ``src/runtime/runtime.cc`` (dependence pushes and pops, no-ops, the
micro-op kernel cache per call site and captured value). Records: TopHub's 31 measured
schedules (ResNet-18, AlexNet and VGG layers on the default 1x16 design, ResNet-18 on the 4x8
one) and variations of their tiles and virtual threads that VTA builds.

Records VTA's runtime refuses (a kernel that ``UopKernel::VerifyDep`` stops) are flagged by
vtatune's build (``BuildStats.vta_refuses``). Each instruction is compared as canonical
text: opcode, the four dependence flags, every field; DRAM addresses as (tensor, tile
offset); a GEMM/ALU instruction with the micro-ops it runs (what the micro-op SRAM holds at
[uop_bgn, uop_end) when it issues).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from vtatune.hardware import config
from vtatune.program.isa import MemId, Opcode, uop_fields
from vtatune.program.program import tile_bytes
from vtatune.workloads.conv2d import Conv2d

DATA = Path(__file__).parent / "data" / "vta_streams.json"
_MEM = {int(m): m.name for m in MemId}
_ALU = {0: "MIN", 1: "MAX", 2: "ADD", 3: "SHR", 4: "MUL"}


def _entries() -> list[dict]:
    return [e for e in json.loads(DATA.read_text()) if "vta_error" not in e]


def _label(e: dict) -> str:
    return f"{e['design']}-r{e['record']}-" + ",".join(f"{k}{v}" for k, v in e["changes"].items())


def workload_of(e: dict) -> Conv2d:
    """The conv2d of a record's AutoTVM task arguments (packed NCHWnc data and OIHWoi kernel)."""
    (_, d, _), (_, k, _), stride, pad = e["task_args"][:4]
    return Conv2d(d[0] * d[4], d[1] * d[5], d[2], d[3], k[0] * k[4], k[2], k[3], pad[0],
                  stride[0])


@cache
def _program(index: int):
    from vtatune.compiler import compile_candidate
    from vtatune.runtime import build_program

    e = _entries()[index]
    hw = config.from_dict(e["vta_config"], source="vta_streams.json")
    wl = workload_of(e)
    res = compile_candidate(wl, hw, e["knobs"])
    assert res.ok, res.reason
    return build_program(res, wl, hw)


def canonical(program) -> list[str]:
    """``program`` as the oracle's canonical lines (``vta_oracle_streams.line``)."""
    hw = program.hw
    uop_base = program.regions["uops"].tile(hw, MemId.UOP)
    sram: dict[int, int] = {}  # micro-op SRAM: index -> word
    out = []
    for insn in program.insns:
        d = insn.deps
        f = "".join("1" if x else "0" for x in (d.pop_prev, d.pop_next, d.push_prev,
                                                  d.push_next))
        op = insn.opcode
        if op in (Opcode.LOAD, Opcode.STORE):
            name = "LOAD" if op == Opcode.LOAD else "STORE"
            mem = _MEM[int(insn.memory_type)]
            if insn.x_size == 0:
                out.append(f"{name} NOP mem={mem} deps={f}")
                continue
            head = (f"{name} mem={mem} deps={f} sram={insn.sram_base} y={insn.y_size} "
                    f"x={insn.x_size} xs={insn.x_stride}")
            if insn.memory_type == MemId.UOP:
                at = insn.dram_base - uop_base
                for i in range(insn.x_size):
                    sram[insn.sram_base + i] = int(program.uops[at + i])
                out.append(head)
                continue
            tb = tile_bytes(hw, insn.memory_type)
            byte = insn.dram_base * tb
            region = next(r for r in program.regions.values() if r.offset <= byte < r.end)
            out.append(head + f" pad={insn.y_pad_0},{insn.y_pad_1},{insn.x_pad_0},"
                       f"{insn.x_pad_1} dram={region.name}+"
                       f"{insn.dram_base - region.tile(hw, insn.memory_type)}")
        elif op == Opcode.FINISH:
            out.append(f"FINISH deps={f}")
        else:
            gemm = op == Opcode.GEMM
            words = [sram[i] for i in range(insn.uop_bgn, insn.uop_end)]
            dst, src, wgt = uop_fields(words, hw, "gemm" if gemm else "alu")
            uops = ";".join(f"{a},{b},{c if gemm else 0}" for a, b, c in
                            zip(dst.tolist(), src.tolist(), wgt.tolist(), strict=True))
            loops = (f"iter={insn.iter_out}x{insn.iter_in} "
                     f"dst={insn.dst_factor_out},{insn.dst_factor_in} "
                     f"src={insn.src_factor_out},{insn.src_factor_in}")
            head = (f"{'GEMM' if gemm else 'ALU'} deps={f} reset={int(insn.reset)} "
                    f"uop={insn.uop_bgn}:{insn.uop_end} {loops}")
            if gemm:
                out.append(f"{head} wgt={insn.wgt_factor_out},{insn.wgt_factor_in} uops={uops}")
            else:
                out.append(f"{head} op={_ALU[int(insn.alu_opcode)]} "
                           f"imm={int(insn.use_imm)},{insn.imm} uops={uops}")
    return out


CASES = list(range(len(_entries())))
IDS = [_label(e) for e in _entries()]


@pytest.mark.parametrize("index", CASES, ids=IDS)
def test_stream_is_vtas(index):
    """The whole stream, instruction by instruction (the stored full stream when the record
    is small, else its digest plus the summary counts)."""
    import hashlib

    e = _entries()[index]
    program = _program(index)
    mine = canonical(program)
    build = program.meta["build"]
    gemm: dict[str, int] = {}
    alu: dict[str, int] = {}
    for insn in program.insns:
        if insn.opcode in (Opcode.GEMM, Opcode.ALU):
            key = f"{insn.iter_out}x{insn.iter_in}x{insn.uop_end - insn.uop_bgn}"
            bucket = gemm if insn.opcode == Opcode.GEMM else alu
            bucket[key] = bucket.get(key, 0) + 1
    assert build["vta_refuses"] == ""
    summary = {"insns": len(mine), "uop_loads": build["uop_loads"],
               "gemm": dict(sorted(gemm.items())), "alu": dict(sorted(alu.items()))}
    assert summary == {k: e[k] for k in summary}
    if "lines" in e:
        for i, (a, b) in enumerate(zip(mine, e["lines"], strict=True)):
            assert a == b, f"instruction {i}"
    assert hashlib.sha256("\n".join(mine).encode()).hexdigest() == e["digest"]


REFUSED = [e for e in json.loads(DATA.read_text()) if "VerifyDep" in e.get("vta_error", "")]


@pytest.mark.parametrize("e", REFUSED, ids=[_label(e) for e in REFUSED])
def test_kernels_vtas_runtime_refuses_are_refused(e):
    """A micro-op kernel in which a micro-op writes the accumulator tile one of the two
    before it writes: VTA's runtime stops at ``UopKernel::VerifyDep`` (the oracle's
    transcription of runtime.cc applies the check to VTA's own lowered kernels); vtatune's
    build says so (``vta_refuses``, naming the rule), and says nothing for the streams VTA
    runs."""
    from vtatune.compiler import compile_candidate
    from vtatune.runtime import build_program

    assert REFUSED, "the oracle data should hold kernels VTA's runtime refuses"
    hw = config.from_dict(e["vta_config"], source="vta_streams.json")
    wl = workload_of(e)
    res = compile_candidate(wl, hw, e["knobs"])
    assert res.ok, res.reason
    assert "VerifyDep" in build_program(res, wl, hw).meta["build"]["vta_refuses"]
