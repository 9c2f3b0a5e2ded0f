"""The runtime functions VTA-level TIR calls; the runtime turns them into instructions.

Arguments (all integers are in tiles of the named buffer unless stated):

- ``VTALoadBuffer2D(dram_var, dram_tile_offset, x_size, y_size, x_stride, x_pad_0, y_pad_0,
  x_pad_1, y_pad_1, sram_tile_index, memory_type)`` — a 2-D strided DMA into an SRAM, writing
  zero padding on the fly. ``sram_tile_index`` is an access pointer until LowerSramAccess.
- ``VTAStoreBuffer2D(sram_tile_index, memory_type, dram_var, dram_tile_offset, x_size, y_size,
  x_stride)`` — a 2-D strided DMA from the output SRAM to DRAM.
- ``VTAUopLoopBegin(extent, dst_factor, src_factor, wgt_factor)`` / ``VTAUopLoopEnd()`` — one
  level of the GEMM/ALU instruction's two-level loop.
- ``VTAUopPush(mode, reset, dst, src, wgt, alu_opcode, use_imm, imm)`` — one micro-op; mode 0
  is GEMM, 1 is ALU.
- ``VTADepPush(from_queue, to_queue)`` / ``VTADepPop(from_queue, to_queue)`` — dependence tokens.
- ``VTASynchronize()`` — end of the program (FINISH).
"""

from __future__ import annotations

LOAD_2D = "VTALoadBuffer2D"
STORE_2D = "VTAStoreBuffer2D"
UOP_LOOP_BEGIN = "VTAUopLoopBegin"
UOP_LOOP_END = "VTAUopLoopEnd"
UOP_PUSH = "VTAUopPush"
DEP_PUSH = "VTADepPush"
DEP_POP = "VTADepPop"
SYNCHRONIZE = "VTASynchronize"

#: Memory ids (VTA ISA).
MEM_UOP, MEM_WGT, MEM_INP, MEM_ACC, MEM_OUT = 0, 1, 2, 3, 4

#: ALU opcodes (VTA ISA).
ALU_MIN, ALU_MAX, ALU_ADD, ALU_SHR, ALU_MUL = 0, 1, 2, 3, 4

UOP_MODE_GEMM, UOP_MODE_ALU = 0, 1


def extern_name(call: object) -> str | None:
    """The callee of a ``call_extern``, or None for any other expression."""
    from tvm import ir

    if not isinstance(call, ir.Call) or not hasattr(call.op, "name"):
        return None
    if call.op.name != "tirx.call_extern":
        return None
    return call.args[0].value


def call(name: str, *args: object):  # noqa: ANN201
    """``Evaluate(call_extern("int32", name, *args))``."""
    from tvm import tirx

    return tirx.Evaluate(tirx.call_extern("int32", name, *args))
