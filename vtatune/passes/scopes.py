"""VTA's on-chip storage scopes and coprocessor queues as TIR sees them.

TVM 0.27 accepts custom storage scopes without registration when they are named
``local.<x>``; bare names are refused by ``cache_read``/``set_scope``.
"""

from __future__ import annotations

INP_SCOPE = "local.inp_buffer"
WGT_SCOPE = "local.wgt_buffer"
ACC_SCOPE = "local.acc_buffer"
SRAM_SCOPES = (INP_SCOPE, WGT_SCOPE, ACC_SCOPE)

#: Attribute keys our passes put on statements.
COPROC_SCOPE = "coproc_scope"  # value: the queue (module) that executes the body
COPROC_UOP_SCOPE = "coproc_uop_scope"  # value: "VTAPushGEMMOp" or "VTAPushALUOp"
PRAGMA_DMA = "pragma_dma_copy"
PRAGMA_ALU = "pragma_alu"

#: Coprocessor queues (VTA modules), in pipeline order: load -> compute -> store.
QUEUE_LOAD = 1
QUEUE_COMPUTE = 2
QUEUE_STORE = 3
QUEUE_NAMES = {QUEUE_LOAD: "load", QUEUE_COMPUTE: "compute", QUEUE_STORE: "store"}

GEMM_UOP_SCOPE = "VTAPushGEMMOp"
ALU_UOP_SCOPE = "VTAPushALUOp"

#: Pragmas the schedule templates put on the loop nest of one GEMM step and of one accumulator
#: reset; InjectGEMMIntrin turns each nest into a micro-op (after PartitionTiles, so the body
#: and the tail of a partial tile are each a plain nest).
PRAGMA_GEMM = "pragma_vta_gemm"
PRAGMA_RESET = "pragma_vta_reset"
