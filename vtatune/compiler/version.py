"""The compile path's version: bump on any change that can change the program a candidate
compiles to (instruction order, micro-ops, dependences), so results stored for programs of an
older compiler are never served (``vtatune.store.identity``).

- 1: the pipeline as first landed.
- 2: a virtual thread's consecutive loads form one task (VTA's order: input then weights of
  one thread, then the next thread's), not one task per load interleaved across threads.
- 3: VTA's instruction stream (issue 31): the GEMM's loops and the output tiles in VTA's
  template order (FoldUopLoop folds VTA's loops), the clip as min then max, a thread's
  epilogue ALU operations together, a micro-op kernel per call site and captured value
  (UopKernelMap), an ALU kernel's single loop as its inner loop, no push flag on a LOAD
  no-op (DepPush), store no-ops of memory type UOP, the last pops after VTASynchronize
  without virtual threads.
- 4: copies follow VTA's DMA rules (``passes.vta_copy_rules``): one 2-D DMA per copy as VTA's
  ``_inject_copy`` makes it (no loops around DMA calls, no row padding of partial tiles), and
  the copies VTA refuses make the candidate ``invalid``.
"""

from __future__ import annotations

COMPILER_VERSION = 4
