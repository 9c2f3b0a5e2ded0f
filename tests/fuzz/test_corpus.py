"""Every hostile input of the corpus ends cleanly: exit 0/1/2 as the case expects, one error
line, no traceback, no raw control character, bounded memory and time."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_cases import all_cases
from fuzz_harness import DEEP, problems, run_cli

CASES = [c for c in all_cases() if DEEP or not c.deep]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input(case, fuzz_world) -> None:
    argv = case.resolve(fuzz_world.where)
    o = run_cli(argv, fuzz_world.home, cwd=fuzz_world.ws)
    found = problems(o, case.expect)
    if case.check is not None and not found:
        out = next((Path(a) for a in reversed(argv) if a.startswith(str(fuzz_world.ws / "out"))),
                   fuzz_world.ws)
        found += case.check(o, out)
    assert not found, (f"{case.id}: {'; '.join(found)}\nexit {o.rc}\nstderr: "
                       f"{o.stderr[-3000:]}\nstdout: {o.stdout[-1500:]}")


def test_corpus_is_large_enough() -> None:
    # The issue counted 242 malformed inputs; the corpus holds at least that many cases in
    # the default suite alone.
    assert len(CASES) >= 242
