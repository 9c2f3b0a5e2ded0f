"""ISA encoding: golden bytes of VTA's C layout, exact round trips, field overflow errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vtatune.errors import ConfigError, EncodingError, ProgramError
from vtatune.hardware.config import HwConfig, default, load, shipped, validate
from vtatune.program.isa import (
    AluInsn,
    AluOp,
    DepFlags,
    FinishInsn,
    GemmInsn,
    MemId,
    MemInsn,
    Module,
    Opcode,
    Uop,
    decode_insns,
    decode_uops,
    encode_insn,
    encode_insns,
    encode_uops,
    layout_problems,
    layouts,
    module_of,
    routing_problems,
)

SHIPPED = [load(p) for p in shipped()]
IDS = [hw.name for hw in SHIPPED]


def test_every_shipped_config_encodes() -> None:
    for hw in SHIPPED:
        assert layout_problems(hw) == [], hw.name


def test_golden_bytes_match_vta_c_structs() -> None:
    # Bytes of VTA's hw_spec.h bit-field structs for the default config, built with gcc.
    hw = default()
    mem = MemInsn(Opcode.LOAD, DepFlags(push_next=True), MemId.INP, 0x1234, 0xDEADBEEF, 7, 9,
                  300, 1, 2, 3, 15)  # fmt: skip
    gemm = GemmInsn(DepFlags(pop_prev=True), True, 8000, 8191, 16000, 3, 2047, 5, 1000, 7,
                    1023, 9)  # fmt: skip
    alu = AluInsn(DepFlags(push_prev=True), False, 5, 6, 2, 3, 4, 5, 6, 7, AluOp.SHR, True, -8)
    assert encode_insn(mem, hw).hex() == "40d148bcfbb67a03070009002c0121f3"
    assert encode_insn(gemm, hw).hex() == "8a40ffff03f40700ff2f00fa0ef07f02"
    assert encode_insn(alu, hw).hex() == "2405c00010000600042880010eb0f8ff"


def test_mem_fields_sit_in_their_words() -> None:
    lay = {f.name: f for f in layouts(default())["mem"].fields}
    assert lay["dram_base"].offset + lay["dram_base"].bits == 58  # 6 bits unused in word 0
    assert lay["y_size"].offset == 64
    assert lay["x_pad_1"].offset + lay["x_pad_1"].bits == 128


def _flags() -> st.SearchStrategy[DepFlags]:
    return st.builds(DepFlags, st.booleans(), st.booleans(), st.booleans(), st.booleans())


def _insns(hw: HwConfig) -> st.SearchStrategy:
    lay = {k: {f.name: f.bits for f in v.fields} for k, v in layouts(hw).items()}

    def u(kind: str, name: str) -> st.SearchStrategy[int]:
        return st.integers(0, (1 << lay[kind][name]) - 1)

    mem = st.builds(
        MemInsn, st.sampled_from([Opcode.LOAD, Opcode.STORE]), _flags(), st.sampled_from(MemId),
        *(u("mem", n) for n in ("sram_base", "dram_base", "y_size", "x_size", "x_stride",
                                "y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1")),
    )  # fmt: skip
    loop = ("uop_bgn", "uop_end", "iter_out", "iter_in", "dst_factor_out", "dst_factor_in",
            "src_factor_out", "src_factor_in")  # fmt: skip
    gemm = st.builds(GemmInsn, _flags(), st.booleans(), *(u("gemm", n) for n in loop),
                     u("gemm", "wgt_factor_out"), u("gemm", "wgt_factor_in"))  # fmt: skip
    alu = st.builds(AluInsn, _flags(), st.booleans(), *(u("alu", n) for n in loop),
                    st.sampled_from(AluOp), st.booleans(), st.integers(-(1 << 15), (1 << 15) - 1))
    return st.one_of(mem, gemm, alu, st.builds(FinishInsn, _flags()))


@pytest.mark.parametrize("hw", SHIPPED, ids=IDS)
def test_insn_round_trip(hw: HwConfig) -> None:
    @settings(max_examples=60, deadline=None)
    @given(st.lists(_insns(hw), min_size=1, max_size=20))
    def check(insns: list) -> None:
        raw = encode_insns(insns, hw)
        assert raw.shape == (len(insns), 2)
        assert decode_insns(raw.tobytes(), hw) == insns
        assert decode_insns(raw, hw) == insns

    check()


@pytest.mark.parametrize("hw", SHIPPED, ids=IDS)
def test_uop_round_trip(hw: HwConfig) -> None:
    f = hw.field_bits

    @settings(max_examples=40, deadline=None)
    @given(
        st.lists(st.builds(Uop, st.integers(0, (1 << f["uop_gemm_dst"]) - 1),
                           st.integers(0, (1 << f["uop_gemm_src"]) - 1),
                           st.integers(0, (1 << f["uop_gemm_wgt"]) - 1)), max_size=30),
        st.lists(st.builds(Uop, st.integers(0, (1 << f["uop_alu_dst"]) - 1),
                           st.integers(0, (1 << f["uop_alu_src"]) - 1)), max_size=30),
    )  # fmt: skip
    def check(gemm: list[Uop], alu: list[Uop]) -> None:
        assert decode_uops(encode_uops(gemm, hw, "gemm"), hw, "gemm") == gemm
        words = encode_uops(alu, hw, "alu")
        assert decode_uops(words.astype("<u4").tobytes(), hw, "alu") == alu

    check()


@pytest.mark.parametrize(
    ("insn", "field"),
    [
        (MemInsn(Opcode.LOAD, DepFlags(), MemId.INP, 1 << 16, 0, 1, 1, 1), "sram_base"),
        (MemInsn(Opcode.LOAD, DepFlags(), MemId.INP, 0, 1 << 32, 1, 1, 1), "dram_base"),
        (MemInsn(Opcode.LOAD, DepFlags(), MemId.INP, 0, 0, 1, 1, 1, 16), "y_pad_0"),
        (MemInsn(Opcode.LOAD, DepFlags(), MemId.INP, 0, 0, 1, -1, 1), "x_size"),
        (GemmInsn(DepFlags(), False, 0, 1, 1 << 14), "iter_out"),
        (GemmInsn(DepFlags(), False, 0, 1 << 14), "uop_end"),
        (GemmInsn(DepFlags(), False, 0, 1, wgt_factor_in=1 << 10), "wgt_factor_in"),
        (AluInsn(DepFlags(), False, 0, 1, imm=1 << 15), "imm"),
        (AluInsn(DepFlags(), False, 0, 1, imm=-(1 << 15) - 1), "imm"),
        (AluInsn(DepFlags(), False, 0, 1, src_factor_out=1 << 11), "src_factor_out"),
    ],
)
def test_overflow_names_field_value_and_width(insn, field: str) -> None:
    hw = default()
    lay = {f.name: f.bits for k in layouts(hw).values() for f in k.fields}
    value = getattr(insn, field)
    with pytest.raises(EncodingError) as exc:
        encode_insns([FinishInsn(), insn], hw)
    msg = str(exc.value)
    assert f"field {field}={value}" in msg and f"{lay[field]}-bit" in msg
    assert "instruction #1" in msg


def test_uop_overflow_and_alu_wgt() -> None:
    hw = default()
    with pytest.raises(EncodingError, match=r"wgt=1024 does not fit its 10-bit field"):
        encode_uops([Uop(0, 0, 1024)], hw, "gemm")
    with pytest.raises(EncodingError, match="must be 0 in an ALU micro-op"):
        encode_uops([Uop(0, 0, 1)], hw, "alu")


def test_gemm_uop_src_field_is_max_of_acc_and_inp_widths() -> None:
    # 1x32x16: A = 11 > I = 10. VTA's struct VTAUop gives src_idx MAX(A, I) = 11 bits, so wgt
    # starts at bit 22 (not A + I = 21, where VTA's HLS macros put it).
    hw = load("1x32x16")
    a, i = hw.log_acc_depth, hw.log_inp_depth
    assert (a, i) == (11, 10)
    words = encode_uops([Uop(1, 2, 3)], hw, "gemm")
    assert int(words[0]) == 1 | 2 << 11 | 3 << 22
    # ALU micro-ops use the same struct: src (an acc index) at A, MAX(A, I) bits wide.
    uops = [Uop(3, (1 << a) - 1)]
    assert int(encode_uops(uops, hw, "alu")[0]) == 3 | ((1 << a) - 1) << a
    assert decode_uops(encode_uops(uops, hw, "alu"), hw, "alu") == uops


def test_gemm_uop_wider_inp_field() -> None:
    # I > A: src_idx is I bits wide, wgt at A + I (runtime and HLS agree).
    hw = HwConfig(log_inp_buff_size=16, log_acc_buff_size=16, log_wgt_buff_size=17)
    a, i = hw.log_acc_depth, hw.log_inp_depth
    assert i > a
    assert int(encode_uops([Uop(1, (1 << i) - 1, 1)], hw, "gemm")[0]) == (
        1 | ((1 << i) - 1) << a | 1 << (a + i))


def test_uop_struct_over_32_bits_is_rejected_with_its_bit_count() -> None:
    # A + I + W = 32 fits a flat count, but VTAUop needs A + MAX(A, I) + W = 33 bits.
    hw = HwConfig(log_block_in=3, log_block_out=3, log_inp_buff_size=13, log_wgt_buff_size=17,
                  log_acc_buff_size=16, log_uop_buff_size=13)
    assert (hw.log_acc_depth, hw.log_inp_depth, hw.log_wgt_depth) == (11, 10, 11)
    assert hw.gemm_uop_bits == 33
    with pytest.raises(ConfigError, match=r"micro-op needs 33 bits > 32 \(VTA's struct VTAUop"):
        validate(hw)
    with pytest.raises(EncodingError, match="needs 33 bits"):
        encode_uops([Uop(0, 0, 0)], hw, "gemm")


def test_config_not_word_aligned_is_rejected() -> None:
    # Flat bit count fits 128, but iter_in would straddle word 0 and push word 1 past 64:
    # the ISA layout reports it, HwConfig validation rejects it, encoding refuses it.
    hw = HwConfig(log_uop_buff_size=16, log_acc_buff_size=16, log_inp_buff_size=14,
                  log_wgt_buff_size=17)
    f = hw.field_bits  # the GEMM instruction's fields counted flat, without word alignment
    flat = (3 + 4 + 1 + f["uop_bgn"] + f["uop_end"] + 2 * 14 + 2 * f["gemm_dst_factor"]
            + 2 * f["gemm_src_factor"] + 2 * f["gemm_wgt_factor"])
    assert flat <= 128
    assert any("GEMM" in p for p in layout_problems(hw))
    with pytest.raises(ConfigError, match="GEMM instruction needs 137 bits"):
        validate(hw)
    with pytest.raises(EncodingError, match="GEMM instruction needs"):
        encode_insns([FinishInsn()], hw)


def test_decode_rejects_unknown_opcode_and_length() -> None:
    hw = default()
    with pytest.raises(ProgramError, match="unknown opcode 7"):
        decode_insns(bytes([7]) + bytes(15), hw)
    with pytest.raises(ProgramError, match="multiple of 16"):
        decode_insns(bytes(17), hw)


def test_routing() -> None:
    load_inp = MemInsn(Opcode.LOAD, DepFlags(), MemId.INP, 0, 0, 1, 1, 1)
    assert module_of(load_inp) == Module.LOAD
    assert module_of(MemInsn(Opcode.LOAD, DepFlags(), MemId.UOP, 0, 0, 1, 1, 1)) == Module.COMPUTE
    assert module_of(MemInsn(Opcode.LOAD, DepFlags(), MemId.ACC, 0, 0, 1, 1, 1)) == Module.COMPUTE
    assert module_of(MemInsn(Opcode.STORE, DepFlags(), MemId.OUT, 0, 0, 1, 1, 1)) == Module.STORE
    assert module_of(GemmInsn(DepFlags(), False, 0, 1)) == Module.COMPUTE
    assert module_of(FinishInsn()) == Module.COMPUTE
    bad = MemInsn(Opcode.LOAD, DepFlags(pop_prev=True), MemId.WGT, 0, 0, 1, 1, 1)
    assert any("no previous module" in p for p in routing_problems(bad))
    store_inp = MemInsn(Opcode.STORE, DepFlags(push_next=True), MemId.INP, 0, 0, 1, 1, 1)
    probs = routing_problems(store_inp)
    assert any("memory type" in p for p in probs) and any("no next module" in p for p in probs)
    assert routing_problems(MemInsn(Opcode.STORE, DepFlags(), MemId.OUT, 0, 0, 1, 1, 1, 1))


def _uop_struct_program(cases: list[tuple[int, int, int, int, int, int]]) -> str:
    """A C program that lays out VTA's ``struct VTAUop`` (hw_spec.h: uint32_t bit-fields dst
    A, src MAX(A, I), wgt W) for each case (A, I, W, dst, src, wgt) and prints its size and
    bytes, one line per case."""
    lines = ["#include <stdint.h>", "#include <stdio.h>", "#include <string.h>",
             "#define MAX(a, b) (((a) > (b)) ? (a) : (b))"]
    body = []
    for n, (a, i, w, dst, src, wgt) in enumerate(cases):
        lines.append(f"typedef struct {{ uint32_t dst_idx : {a}; uint32_t src_idx : MAX({a}, {i});"
                     f" uint32_t wgt_idx : {w}; }} Uop{n};")
        body.append(f"{{ Uop{n} u; unsigned char b[8] = {{0}}; memset(&u, 0, sizeof u);"
                    f" u.dst_idx = {dst}u; u.src_idx = {src}u; u.wgt_idx = {wgt}u;"
                    " memcpy(b, &u, sizeof u); printf(\"%zu\", sizeof u);"
                    " for (size_t k = 0; k < sizeof u; k++) printf(\" %02x\", b[k]);"
                    " printf(\"\\n\"); }")
    return "\n".join(lines + ["int main(void) {", *body, "return 0; }"]) + "\n"


def test_uop_encoding_matches_gcc_layout_of_vta_struct(tmp_path) -> None:
    # Independent reference: gcc's bit-field layout of VTA's struct VTAUop, for every shipped
    # config (incl. 1x32x16, where I < A) and the 33-bit design validation rejects.
    import random
    import shutil
    import subprocess

    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler")
    rng = random.Random(7)
    configs = [*SHIPPED, HwConfig(log_inp_buff_size=16, log_acc_buff_size=16,
                                  log_wgt_buff_size=17)]
    cases, expect = [], []
    for hw in configs:
        a, i, w = hw.log_acc_depth, hw.log_inp_depth, hw.log_wgt_depth
        for _ in range(4):
            gemm = Uop(rng.randrange(1 << a), rng.randrange(1 << i), rng.randrange(1 << w))
            alu = Uop(rng.randrange(1 << a), rng.randrange(1 << a))
            for kind, u in (("gemm", gemm), ("alu", alu)):
                cases.append((a, i, w, u.dst, u.src, u.wgt))
                expect.append("4 " + " ".join(
                    f"{b:02x}" for b in encode_uops([u], hw, kind).astype("<u4").tobytes()))
    too_wide = (11, 10, 11, 1, 1, 1)  # A + MAX(A, I) + W = 33: the struct grows to 8 bytes
    cases.append(too_wide)
    src = tmp_path / "uop.c"
    src.write_text(_uop_struct_program(cases))
    exe = tmp_path / "uop"
    subprocess.run([gcc, "-std=c99", "-o", str(exe), str(src)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    assert out[:len(expect)] == expect
    assert out[len(expect)].startswith("8 ")
