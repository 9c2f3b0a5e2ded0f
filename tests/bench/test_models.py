"""The import benchmark measures what each child process itself uses."""

from __future__ import annotations

import pytest

from vtatune.bench import models as bench


def test_peak_memory_is_the_child_s_own(tmp_path) -> None:
    # this process holds 300 MB; a child that allocates 100 MB must not report this
    # process's pages (a forked child's ru_maxrss would), nor less than its 100 MB
    here = bytearray(300 << 20)
    here[::4096] = b"1" * len(here[::4096])  # resident, not just mapped
    _, small = bench._run("pass")
    _, big = bench._run("x = bytearray(100 << 20); x[::4096] = b'1' * len(x[::4096])")
    assert small < 150
    assert big - small == pytest.approx(100, abs=15)
    del here


def test_quick_run_skips_the_import_rows() -> None:
    assert bench.bench_import(quick=True) == []
