"""User passes and verifiers: phases, pass files (good and bad), identity, worker processes."""

from __future__ import annotations

import pickle
import re
import textwrap
from pathlib import Path

import pytest
import tvm
from tvm import tirx

from vtatune.compiler import compile_candidate
from vtatune.compiler.cache import ProgramCache
from vtatune.errors import UserError
from vtatune.hardware import config
from vtatune.passes import user
from vtatune.search.space import Candidate
from vtatune.workloads import Dense

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "passes" / "dram_rows.py"
DENSE = Dense(16, 64, 64)
KNOBS = dict(tile_b=16, tile_ci=4, tile_co=4, oc_nthread=1)


def _recorder(seen: list[str], phase: str) -> tvm.ir.transform.Pass:
    def fn(func, mod, ctx):
        seen.append(phase)
        return func

    return tirx.transform.prim_func_pass(fn, opt_level=0, name=f"Record_{phase}")


def _write(tmp_path: Path, body: str, name: str = "p.py") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


def test_phases_run_in_pipeline_order_and_integers_alias_tvm_phases() -> None:
    seen: list[str] = []
    names = list(user.PHASE_NAMES)
    passes = [(name, _recorder(seen, name)) for name in reversed(names)]
    r = compile_candidate(DENSE, config.default(), KNOBS, passes=passes)
    assert r.ok, r.reason
    assert seen == names and r.passes
    assert [user.phase_name(i) for i in range(4)] == ["loops", "flat", "threads", "vta"]
    for bad in (4, -1, "phase1", True, None):
        with pytest.raises(ValueError):
            user.phase_name(bad)


def test_a_pass_changes_the_program_and_the_example_verifier_rejects(tmp_path) -> None:
    hw = config.default()
    ps = user.load(EXAMPLE)
    assert ps.describe()["passes"] == [{"phase": "vta", "name": "CountUopPushes"}]
    r = compile_candidate(DENSE, hw, KNOBS, passes=ps)
    assert r.ok and int(r.module["main"].attrs["example.uop_pushes"]) > 0
    # one output-channel tile per store row: 16 bytes, under the example's 48
    narrow = compile_candidate(DENSE, hw, dict(KNOBS, tile_b=1, tile_co=1), passes=ps)
    assert narrow.status == "invalid"
    assert narrow.reason == "dram_rows_of_48_bytes: a store moves rows of 16 bytes (< 48)"
    assert narrow.problems[-1].as_dict()["kind"] == "user"
    assert compile_candidate(DENSE, hw, dict(KNOBS, tile_b=1, tile_co=1)).ok


def test_a_pass_or_verifier_that_raises_fails_the_candidate(tmp_path) -> None:
    def boom(func, mod, ctx):
        raise RuntimeError("no luck")

    raising = tirx.transform.prim_func_pass(boom, opt_level=0, name="Boom")
    r = compile_candidate(DENSE, config.default(), KNOBS, passes=[(1, raising)])
    assert r.status == "failed"
    assert "user pass Boom at phase flat raised" in r.reason and "no luck" in r.reason

    def verifier(func, hw):
        raise ValueError("cannot tell")

    r = compile_candidate(DENSE, config.default(), KNOBS,
                          passes=user.from_list([], [verifier]))
    assert r.status == "failed" and "user verifier verifier raised ValueError: cannot tell" \
        in r.reason


@pytest.mark.parametrize(("body", "message"), [
    ("x = (\n", "syntax error at line 1"),
    ("raise KeyError('gone')\n", "importing it raised KeyError"),
    ("X = 1\n", "defines no PASSES"),
    ("PASSES = 3\n", "PASSES must be a list"),
    ("PASSES = [('vta',)]\n", "must be a (phase, pass) pair"),
    ("PASSES = [('late', None)]\n", "unknown phase 'late'"),
    ("PASSES = [(9, None)]\n", "unknown phase 9 (integer phases are 0-3)"),
    ("PASSES = [('vta', len)]\n", "is not a TVM pass (builtin_function_or_method)"),
    ("PASSES = []\nVERIFIERS = [3]\n", "VERIFIERS[0] is not callable"),
])
def test_bad_pass_files_are_one_line_user_errors(tmp_path, body: str, message: str) -> None:
    p = _write(tmp_path, body)
    with pytest.raises(UserError, match=re.escape(message)) as err:
        user.load(p)
    assert str(err.value).startswith(f"--passes {p}") and "\n" not in str(err.value)
    with pytest.raises(UserError, match="no such file"):
        user.load(tmp_path / "missing.py")
    with pytest.raises(UserError, match="is a folder, not a regular file"):
        user.load(tmp_path)


def test_fingerprint_follows_the_file_and_the_list(tmp_path) -> None:
    src = EXAMPLE.read_text()
    a = user.load(_write(tmp_path, src, "a.py"))
    assert user.load(_write(tmp_path, src, "b.py")).fingerprint == a.fingerprint
    changed = user.load(_write(tmp_path, src.replace("MIN_ROW_BYTES = 48",
                                                     "MIN_ROW_BYTES = 32"), "c.py"))
    assert changed.fingerprint != a.fingerprint
    fewer = user.load(_write(tmp_path, src.replace("VERIFIERS = [dram_rows_of_48_bytes]",
                                                   "VERIFIERS = []"), "d.py"))
    assert fewer.fingerprint != a.fingerprint


def test_passes_are_part_of_the_identity() -> None:
    hw = config.default()
    ps = user.load(EXAMPLE)
    plain, with_passes = Candidate(DENSE, hw, KNOBS), Candidate(DENSE, hw, KNOBS, ps)
    assert "passes" not in plain.key  # keys of results without passes do not change
    assert with_passes.key == f"{plain.key}|passes={ps.fingerprint}"
    cache = ProgramCache()
    low_a, _ = cache.lower(DENSE, hw, KNOBS)
    low_b, reused = cache.lower(DENSE, hw, KNOBS, passes=ps)
    assert not reused and low_a.key != low_b.key
    assert cache.lower(DENSE, hw, KNOBS, passes=user.load(EXAMPLE))[1]  # same fingerprint


def test_pass_sets_travel_to_workers_by_path_and_fingerprint(tmp_path) -> None:
    p = _write(tmp_path, EXAMPLE.read_text())
    ps = user.load(p)
    again = pickle.loads(pickle.dumps(ps))
    assert again == ps and again.passes and not again.error
    p.write_text(p.read_text().replace("MIN_ROW_BYTES = 48", "MIN_ROW_BYTES = 8"))
    stale = pickle.loads(pickle.dumps(ps))
    assert stale == ps and "changed since the search started" in stale.error
    r = compile_candidate(DENSE, config.default(), KNOBS, passes=stale)
    assert r.status == "failed" and "changed since" in r.reason
    with pytest.raises(TypeError, match="cannot be sent to another process"):
        pickle.dumps(user.from_list([("vta", _recorder([], "vta"))]))
