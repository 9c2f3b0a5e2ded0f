"""Random command lines (hypothesis) and the process-level cases of the fuzz suite.

Random: any command of ``fuzz_cases.OPTIONS`` with one to three of its options set to random
integers (past 64 bits), floats (NaN, infinities), or text (controls, surrogates, markup).
Every run must end with exit 0, 1 or 2, no traceback, one error line, no raw control
character, within the memory and time limits. ``make fuzz`` runs many more examples.

Process level (real interpreters, real argv bytes): undecodable command-line bytes, and a
memory limit on the whole process while it reads a zip bomb.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

from fuzz_cases import OPTIONS
from fuzz_harness import DEEP, REPO, problems, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ALLOWED = frozenset({0, 1, 2})
ODD_TEXT = ["\udcff", "\x1b[31m", "\x1b]0;t\x07", "\u202e", "\r", "\b", "$", "[/b]", "[b]",
            "=", "+", "-", "@", "'", '"', ";", "\\", "\n", "\t", " ", ",", "=", ".."]


def _value(kind: str | list[str]) -> st.SearchStrategy[str]:
    text = st.lists(st.one_of(st.text(max_size=6), st.sampled_from(ODD_TEXT)),
                    max_size=6).map("".join)
    numbers = st.one_of(
        st.integers(-(2**70), 2**70).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.sampled_from(["nan", "inf", "-inf", "1e400", "", "9" * 5000, "0x10", "1_0"]),
    )
    if isinstance(kind, list):
        return st.one_of(st.sampled_from(kind), numbers, text)
    return st.one_of(numbers, text) if kind in ("int", "float") else st.one_of(text, numbers)


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[str, list[str]]:
    cmd = draw(st.sampled_from(sorted(k for k in OPTIONS if k != "search-run")))
    head, brake, options = OPTIONS[cmd]
    names = draw(st.lists(st.sampled_from(sorted(options)), min_size=1, max_size=3,
                          unique=True))
    argv = [*head, *brake]
    for name in names:
        argv += [name, draw(_value(options[name]))]
    return cmd, argv


@settings(max_examples=400 if DEEP else 20, deadline=None, derandomize=not DEEP,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(command_lines())
def test_random_command_lines_end_cleanly(fuzz_world, line: tuple[str, list[str]]) -> None:
    cmd, argv = line
    where = fuzz_world.where
    resolved = []
    for arg in argv:
        for key, value in where.items():
            arg = arg.replace("{" + key + "}", value)
        resolved.append(arg)
    o = run_cli(resolved, fuzz_world.home, cwd=fuzz_world.ws)
    found = problems(o, ALLOWED)
    assert not found, f"{cmd} {resolved!r:.300}: {found}\n{o.stderr[-2000:]}"


def _cli(args: list[bytes], home: str, limit_bytes: int | None = None,
         timeout: float = 120.0) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "VTATUNE_HOME": home, "LC_ALL": "C.UTF-8"}

    def limit() -> None:
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    # a session of its own, ended whole: nothing the command starts outlives the case
    proc = subprocess.Popen([sys.executable.encode(), b"-m", b"vtatune", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _clean(p: subprocess.CompletedProcess[bytes], expect: set[int]) -> list[str]:
    err = p.stderr.decode("utf-8", "replace")
    found = []
    if p.returncode not in expect:
        found.append(f"exit {p.returncode}")
    if "Traceback" in err:
        found.append("traceback")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if p.returncode == 2 and (len(lines) != 1 or not lines[0].startswith("vtatune: error:")):
        found.append(f"{len(lines)} error lines")
    if b"\x1b" in p.stdout + p.stderr:
        found.append("raw escape character")
    return found


def test_undecodable_argv_bytes(fuzz_world) -> None:
    # bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape); echoing
    # them must neither crash the strict UTF-8 stdout nor print them raw
    # (each is a whole interpreter start: two cases; in-process cases cover the rest)
    home = str(fuzz_world.home)
    for args in ([b"hw", b"--hw", b"\xff\xfe.json"],
                 [b"show", b"caf\xe9", b"--db", fuzz_world.where["db"].encode()]):
        p = _cli(args, home)
        assert not _clean(p, {2}), (args, _clean(p, {2}), p.stderr[-1500:])


def test_zip_bomb_under_a_process_memory_limit(fuzz_world) -> None:
    # the whole interpreter (TVM included) under a 3 GiB address-space limit: reading the
    # inputs must not inflate the 2 GiB member (the in-process corpus also feeds a bomb in a
    # member that is not read)
    ws = fuzz_world.ws
    p = _cli([b"simulate", b"dense", b"--shape", b"16,64,64", b"--inputs",
              str(ws / "npz" / "bomb_data.npz").encode()], str(fuzz_world.home),
             limit_bytes=3 << 30)
    assert not _clean(p, {2}), p.stderr[-1500:]
