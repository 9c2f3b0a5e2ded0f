"""InsnTable: instructions as columns read back as the same records; programs built from
records and from tables are the same program."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vtatune.errors import EncodingError, ProgramError
from vtatune.hardware.config import default
from vtatune.program import GemmInsn, MemId, MemInsn, Opcode, Program
from vtatune.program.examples import DenseShape, dense_program
from vtatune.program.isa import (
    ALU_COL,
    COL_DEPS,
    COL_OPCODE,
    TABLE_WIDTH,
    AluInsn,
    AluOp,
    DepFlags,
    FinishInsn,
    InsnTable,
    decode_table,
    encode_insns,
)

_FLAGS = st.builds(DepFlags, st.booleans(), st.booleans(), st.booleans(), st.booleans())
_INT = st.integers(-(1 << 40), 1 << 40)  # any int64 is a valid column value
_RECORDS = st.one_of(
    st.builds(MemInsn, st.sampled_from([Opcode.LOAD, Opcode.STORE]), _FLAGS,
              st.sampled_from(MemId), *[_INT] * 9),
    st.builds(GemmInsn, _FLAGS, st.booleans(), *[_INT] * 10),
    st.builds(AluInsn, _FLAGS, st.booleans(), *[_INT] * 8, st.sampled_from(AluOp),
              st.booleans(), _INT),
    st.builds(FinishInsn, _FLAGS),
)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(st.lists(_RECORDS, max_size=12))
def test_records_round_trip_through_the_table(records: list) -> None:
    table = InsnTable.of(records)
    assert len(table) == len(records)
    assert table.cols.shape == (len(records), TABLE_WIDTH)
    assert list(table) == records and table == records and table == tuple(records)
    for k, r in enumerate(records):
        assert table.record(k) == r and type(table.record(k)) is type(r)
    again = InsnTable(table.cols.copy())
    assert again == table and InsnTable.of(table) is table


def test_a_table_is_read_only_and_checked() -> None:
    table = InsnTable.of([FinishInsn()])
    with pytest.raises(ValueError):
        table.cols[0, COL_OPCODE] = 1
    rows = np.zeros((3, TABLE_WIDTH), dtype=np.int64)
    rows[:, COL_OPCODE] = Opcode.FINISH
    for col, value, name in ((COL_OPCODE, 7, "opcode 7"), (COL_DEPS, 16, "flag bits 16")):
        bad = rows.copy()
        bad[2, col] = value
        with pytest.raises(ProgramError, match=f"instruction #2: unknown .*{name}"):
            InsnTable(bad)
    bad = rows.copy()
    bad[1, :3] = (Opcode.LOAD, 0, 9)
    with pytest.raises(ProgramError, match="instruction #1: unknown memory_type 9"):
        InsnTable(bad)
    bad = rows.copy()
    bad[0, COL_OPCODE], bad[0, ALU_COL["alu_opcode"]] = Opcode.ALU, 5
    with pytest.raises(ProgramError, match="instruction #0: unknown alu_opcode 5"):
        InsnTable(bad)


def test_a_value_beyond_int64_names_its_instruction_and_field() -> None:
    huge = MemInsn(Opcode.LOAD, DepFlags(), MemId.INP, 0, 1 << 70, 1, 1, 1)
    with pytest.raises(EncodingError, match=r"instruction #1: field dram_base=\d+ does not fit"):
        InsnTable.of([FinishInsn(), huge])
    with pytest.raises(ProgramError, match="instruction #0: not an instruction"):
        InsnTable.of(["LOAD"])


def test_a_program_of_records_equals_its_table_and_counts_like_its_records() -> None:
    hw = default()
    prog = dense_program(hw, DenseShape(m=4, k=64, n=64, tm=2, tk=2, tn=2, threads=2))
    records = list(prog.insns)
    same = Program(hw, InsnTable(prog.insns.cols), prog.uops, prog.regions, prog.dram_bytes)
    assert same == prog and same.insns == records
    counts = prog.counts()
    assert counts["total"] == len(records)
    for op in Opcode:
        assert counts[op.name] == sum(r.opcode == op for r in records)
    loads = [r for r in records if r.opcode == Opcode.LOAD]
    for m in MemId:
        if m != MemId.OUT:
            assert counts[f"LOAD_{m.name}"] == sum(r.memory_type == m for r in loads)
    uop_words = sum(r.y_size * r.x_size for r in loads if r.memory_type == MemId.UOP)
    assert uop_words > 0 and prog.uop_buffer_bytes == 4 * uop_words
    # decoding the encoded stream gives the same table
    assert decode_table(encode_insns(prog.insns, hw), hw) == prog.insns


def test_a_pickled_table_comes_back_read_only() -> None:
    import pickle

    table = InsnTable.of([FinishInsn(), GemmInsn(DepFlags(pop_prev=True), True, 0, 4)])
    list(table)  # records made: not pickled along
    again = pickle.loads(pickle.dumps(table))
    assert again == table and not again.cols.flags.writeable and again._records is None
