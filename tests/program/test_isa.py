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


def test_alu_uop_src_has_acc_width() -> None:
    # 1x32x16: acc depth 2^11 > inp depth 2^10; ALU sources are acc indices (Chisel view).
    hw = load("1x32x16")
    assert hw.log_acc_depth > hw.log_inp_depth
    uops = [Uop(3, (1 << hw.log_acc_depth) - 1)]
    assert decode_uops(encode_uops(uops, hw, "alu"), hw, "alu") == uops
    with pytest.raises(EncodingError):
        encode_uops(uops, hw, "gemm")


def test_config_not_word_aligned_is_rejected() -> None:
    # Flat bit count fits 128, but iter_in would straddle word 0 and push word 1 past 64:
    # the ISA layout reports it, HwConfig validation rejects it, encoding refuses it.
    hw = HwConfig(log_uop_buff_size=16, log_acc_buff_size=16, log_inp_buff_size=14,
                  log_wgt_buff_size=17)
    assert hw.gemm_insn_bits <= 128
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
