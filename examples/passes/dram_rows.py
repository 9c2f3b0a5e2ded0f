"""An example ``--passes`` file: one pass and one verifier for vtatune's lowering pipeline.

    vtatune compile conv2d --layer C8 --passes examples/passes/dram_rows.py
    vtatune search conv2d --passes examples/passes/dram_rows.py --trials 50

``PASSES`` lists (phase, pass) pairs; ``vtatune compile --list-phases`` shows the phases.
``VERIFIERS`` lists functions ``(func, hw) -> problems``; any problem makes the candidate
invalid with that reason, as an SRAM overflow does.
"""

import tvm_ffi
from tvm import ir, sym, tirx

#: The shortest DRAM row a DMA may move (3 tiles of 16 bytes): shorter bursts spend most of
#: their time on the AXI round trip.
MIN_ROW_BYTES = 48


def _count_uop_pushes(func, mod, ctx):
    """Record how many micro-op pushes the VTA-level program holds (a function attribute)."""
    calls = []
    tvm_ffi.structural_walk(func.body, (ir.Call, calls.append))
    n = sum(1 for c in calls if c.op.name == "tirx.call_extern"
            and c.args[0].value == "VTAUopPush")
    return func.with_attr("example.uop_pushes", n)


count_uop_pushes = tirx.transform.prim_func_pass(_count_uop_pushes, opt_level=0,
                                                 name="CountUopPushes")


def dram_rows_of_48_bytes(func, hw):
    """Every DMA row (x_size tiles) must move at least MIN_ROW_BYTES in every iteration."""
    tile_bytes = {1: hw.wgt_tile_bytes, 2: hw.inp_tile_bytes, 4: hw.out_tile_bytes}
    problems = []

    def visit(stmt, loops):
        if isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                visit(s, loops)
        elif isinstance(stmt, tirx.For):
            visit(stmt.body, [*loops, stmt])
        elif isinstance(stmt, tirx.AttrStmt | tirx.IfThenElse):
            visit(stmt.body if isinstance(stmt, tirx.AttrStmt) else stmt.then_case, loops)
        elif isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, ir.Call):
            call = stmt.value
            if call.op.name != "tirx.call_extern":
                return
            name = call.args[0].value
            if name == "VTALoadBuffer2D":
                x_size, mem = call.args[3], int(call.args[11].value)
            elif name == "VTAStoreBuffer2D":
                x_size, mem = call.args[5], int(call.args[2].value)
            else:
                return
            ana = sym.Analyzer()
            for lp in loops:
                ana.bind(lp.loop_var, ir.Range.from_min_extent(lp.min, lp.extent))
            row = ana.const_int_bound(x_size).min_value * tile_bytes.get(mem, 0)
            if 0 < row < MIN_ROW_BYTES:
                kind = "load" if name == "VTALoadBuffer2D" else "store"
                problems.append(f"a {kind} moves rows of {row} bytes (< {MIN_ROW_BYTES})")

    visit(func.body, [])
    return problems[:1]


PASSES = [("vta", count_uop_pushes)]
VERIFIERS = [dram_rows_of_48_bytes]
