"""InjectCoProcSync: tokens between load, compute and store tasks are balanced and ordered."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import TUTORIAL, calls, lower_until
from tvm import tirx

from vtatune.passes import vta_calls as vc
from vtatune.passes._ir import VtaPass, attr, seq
from vtatune.passes.errors import LoweringError
from vtatune.passes.inject_coproc_sync import inject_coproc_sync
from vtatune.passes.scopes import COPROC_SCOPE
from vtatune.workloads import Dense


def _task(queue: int, tag: int):
    return attr(COPROC_SCOPE, queue, tirx.Evaluate(tirx.const(tag, "int32")))


def _func(body):
    return tirx.PrimFunc([], body)


def _run(body):
    p = inject_coproc_sync()
    assert isinstance(p, VtaPass)
    return p.fn(_func(body)).body


def _events(stmt):
    """Sequential trace: ('task', queue) / ('push'|'pop', from, to), loops unrolled."""
    out = []

    def visit(s, queue=None):
        if isinstance(s, tirx.SeqStmt):
            for x in s.seq:
                visit(x, queue)
        elif isinstance(s, tirx.For):
            for _ in range(int(s.extent.value)):
                visit(s.body, queue)
        elif isinstance(s, tirx.AttrStmt):
            q = int(s.value.value) if s.attr_key == COPROC_SCOPE else queue
            if s.attr_key == COPROC_SCOPE:
                out.append(("task", q))
            visit(s.body, q)
        elif isinstance(s, tirx.Evaluate):
            name = vc.extern_name(s.value)
            if name in (vc.DEP_PUSH, vc.DEP_POP):
                a = [int(x.value) for x in s.value.args[1:]]
                out.append(("push" if name == vc.DEP_PUSH else "pop", a[0], a[1]))

    visit(stmt)
    return out


def _check_tokens(events):
    """Every pop finds a token pushed earlier; nothing is left over at the end."""
    tokens = Counter()
    for e in events:
        if e[0] == "push":
            tokens[e[1:]] += 1
        elif e[0] == "pop":
            assert tokens[e[1:]] > 0, f"pop {e[1:]} before any push"
            tokens[e[1:]] -= 1
    assert all(v == 0 for v in tokens.values()), tokens


def test_loop_of_reset_load_gemm_store() -> None:
    loop = tirx.For(tirx.Var("i", "int32"), 0, 3, tirx.ForKind.SERIAL,
                    seq(_task(2, 0), _task(1, 1), _task(2, 2), _task(3, 3)))
    out = _run(loop)
    ev = _events(out)
    _check_tokens(ev)
    # the load waits for the compute task before it, the store for the compute, and the
    # next iteration's reset for the store (primed by a push before the loop)
    assert ev[0] == ("push", 3, 2)
    assert ev[1:4] == [("task", 2), ("pop", 3, 2), ("push", 2, 1)]
    assert ("pop", 2, 1) in ev and ("pop", 2, 3) in ev and ev[-2:] == [("push", 3, 2),
                                                                         ("pop", 3, 2)]
    # without virtual threads the loop's last pop follows VTASynchronize, as in VTA's lowered
    # code (TVM's CoProcSync puts the synchronize first)
    assert [vc.extern_name(s.value) for s in out.seq[-2:]] == [vc.SYNCHRONIZE, vc.DEP_POP]


def test_direct_load_to_store_is_rejected() -> None:
    with pytest.raises(LoweringError, match="no queue between them"):
        _run(seq(_task(1, 0), _task(3, 1)))


@pytest.mark.parametrize("knobs", [TUTORIAL, {**TUTORIAL, "oc_nthread": 1},
                                   {**TUTORIAL, "tile_h": 1, "h_nthread": 2, "tile_ci": 1}])
def test_pipeline_tokens_balance_per_thread(hw, c8, knobs) -> None:
    mod = lower_until(c8, hw, knobs, ["front", "task", "thread", "hardware"])
    _check_tokens(_events(mod["main"].body))


def test_dense_tokens_balance(hw) -> None:
    mod = lower_until(Dense(16, 128, 64), hw, dict(tile_b=1, tile_ci=2, tile_co=2, oc_nthread=2),
                      ["front", "task", "thread", "hardware"])
    _check_tokens(_events(mod["main"].body))
    assert Counter(c[0] for c in calls(mod))[vc.SYNCHRONIZE] == 1
