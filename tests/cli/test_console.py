"""Terminal output: plain progress lines and unwrapped tables in logs, tables that fit a
terminal, NO_COLOR."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from vtatune.cli import console

ROOT = Path(__file__).resolve().parents[2]
LONG_KNOBS = ", ".join(f"knob_{i}={i * 7}" for i in range(12))


def _capture(monkeypatch: pytest.MonkeyPatch, *, terminal: bool, width: int = 80
             ) -> tuple[io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(console, "out", Console(file=out, force_terminal=terminal, width=width,
                                                highlight=False, soft_wrap=True,
                                                color_system=None))
    monkeypatch.setattr(console, "err", Console(file=err, force_terminal=terminal,
                                                width=width, highlight=False, soft_wrap=True,
                                                color_system=None))
    return out, err


ROWS = [[1, 2190767, "21.908", "1x8x8-i8w32a16u8", LONG_KNOBS],
        [195, 1041834, "10.418", "1x16x8-i16w32a64u8", LONG_KNOBS]]
COLS = ["trial", "cycles", "ms", "hardware", "knobs"]


def test_table_in_a_log_is_one_line_per_row(monkeypatch) -> None:
    out, _ = _capture(monkeypatch, terminal=False)
    console.table("front", COLS, ROWS)
    lines = out.getvalue().splitlines()
    assert lines[0] == "front" and lines[1].split() == COLS
    assert len(lines) == 2 + len(ROWS)  # never wrapped, whatever the width
    assert lines[2].split()[:4] == ["1", "2,190,767", "21.908", "1x8x8-i8w32a16u8"]
    assert lines[2].endswith(LONG_KNOBS) and "│" not in out.getvalue()


def test_table_at_a_terminal_fits_and_never_splits_a_number_or_a_knob(monkeypatch) -> None:
    out, _ = _capture(monkeypatch, terminal=True, width=80)
    console.table("front", COLS, ROWS)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    for token in ("2,190,767", "1,041,834", "21.908", "1x16x8-i16w32a64u8"):
        assert token in text
    words = set(text.split())
    for i in range(12):  # knobs fold between knobs, never inside one
        assert f"knob_{i}={i * 7}," in words or f"knob_{i}={i * 7}" in words


DESIGN = {"trial": 3, "cycles": 1557512, "seconds": 0.0163, "accelerator_seconds": 0.0153,
          "host_seconds": 0.001, "area_mm2": 36.12, "efficiency": 0.8414,
          "hw_name": "1x16x8-i8w32a64u8", "knobs": {"tile_w": 14, "tile_h": 7, "tile_ci": 2,
                                                    "tile_co": 4, "h_nthread": 2}}


@pytest.mark.parametrize("width", [60, 80, 100])
def test_designs_at_a_narrow_terminal_cut_nothing(monkeypatch, width: int) -> None:
    # Nine columns do not fit 80 characters: the leading ones stay a table, the rest of each
    # row folds under it; every number, the hardware name and every knob are whole.
    out, _ = _capture(monkeypatch, terminal=True, width=width)
    console.designs("Pareto front", [DESIGN, {**DESIGN, "trial": 41, "cycles": 998}])
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= width
    words = {w.rstrip(",") for w in text.split()}  # whole: never split across lines
    for token in ("1,557,512", "16.300", "15.300", "1.000", "36.12", "84.1%", "998",
                  "1x16x8-i8w32a64u8", "tile_w=14", "tile_h=7", "h_nthread=2"):
        assert token in words, token
    assert "…" not in text


#: Rows as ``show`` prints a dense study's front: short knobs, long hardware names.
DENSE_ROWS = [
    {"trial": t, "cycles": c, "seconds": c / 1e8 + 4e-4, "accelerator_seconds": c / 1e8,
     "host_seconds": 4e-4, "area_mm2": a, "efficiency": e, "hw_name": hw,
     "knobs": {"tile_b": 1, "tile_ci": ci, "tile_co": co, "oc_nthread": th}}
    for t, c, a, e, hw, ci, co, th in [
        (12, 1_557_512, 36.12, 0.8414, "1x16x8-i8w32a64u8", 64, 8, 2),
        (140, 998_004, 52.7, 0.913, "1x16x16-i32w256a128u32", 32, 16, 1),
        (7, 12_345_678, 9.05, 0.052, "1x8x8-i2w16a8u4", 128, 64, 2)]]


@pytest.mark.parametrize("width", range(60, 201, 10))
def test_designs_never_split_a_token_at_any_width(monkeypatch, width: int) -> None:
    # The width check once allowed 2 characters between columns where the table's style
    # takes 3 plus its edges: at about 100 columns rich squeezed every column and printed
    # "tile_ci=6" / "4," for tile_ci=64.
    out, _ = _capture(monkeypatch, terminal=True, width=width)
    console.designs("Pareto front", DENSE_ROWS)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= width
    words = {w.rstrip(",") for w in text.split()}
    for r in DENSE_ROWS:
        tokens = [f"{r['trial']:,}", f"{r['cycles']:,}", f"{1e3 * r['seconds']:.3f}",
                  f"{1e3 * r['accelerator_seconds']:.3f}", f"{r['area_mm2']:.2f}",
                  f"{100 * r['efficiency']:.1f}%", r["hw_name"],
                  *(f"{k}={v}" for k, v in r["knobs"].items())]
        for token in tokens:
            assert token in words, (width, token)


@pytest.mark.parametrize("width", range(60, 201, 10))
def test_table_fits_exactly_or_stacks(monkeypatch, width: int) -> None:
    # The width the check computes is the width rich draws: a table that is drawn as a
    # table is never squeezed (every cell keeps its full width), whatever the window.
    out, _ = _capture(monkeypatch, terminal=True, width=width)
    console.table("front", COLS, ROWS)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= width
    words = {w.rstrip(",") for w in text.split()}
    for token in ("2,190,767", "1,041,834", "21.908", "10.418", "1x8x8-i8w32a16u8",
                  "1x16x8-i16w32a64u8", *(f"knob_{i}={i * 7}" for i in range(12))):
        assert token in words, (width, token)


def test_designs_use_the_shared_formats(monkeypatch) -> None:
    out, _ = _capture(monkeypatch, terminal=False)
    console.designs("Pareto front", [{"trial": 3, "cycles": 544328, "seconds": 0.00544328,
                                      "accelerator_seconds": 0.00504328,
                                      "host_seconds": 0.0004, "area_mm2": 37.4159,
                                      "efficiency": 0.8414,
                                      "hw_name": "1x16x8-i8w32a64u8",
                                      "knobs": {"tile_w": 14, "tile_h": 7}}])
    lines = out.getvalue().splitlines()
    assert lines[1].split() == ["trial", "cycles", "ms", "accel", "ms", "host", "ms", "mm²",
                                "eff.", "hardware", "knobs"]
    assert lines[2].split() == ["3", "544,328", "5.443", "5.043", "0.400", "37.42", "84.1%",
                                "1x16x8-i8w32a64u8", "tile_h=7,", "tile_w=14"]
    assert lines[3] == console.DESIGNS_LEGEND
    assert lines[4].startswith("hardware names: BATCHxBLOCK_INxBLOCK_OUT")


def test_designs_explain_the_columns_and_the_knobs(monkeypatch) -> None:
    # nothing told a newcomer what eff. and the knobs mean
    from vtatune.workloads import registry

    out, _ = _capture(monkeypatch, terminal=False)
    wl = registry.parse("conv2d", "C8")
    console.designs("front", [DESIGN], wl)
    text = out.getvalue()
    assert "eff.: the physical lower bound" in text and "ms: time per call end to end" in text
    knobs = next(ln for ln in text.splitlines() if ln.startswith("knobs: "))
    for name in ("tile_b", "tile_h", "tile_w", "tile_ci", "tile_co", "h_nthread",
                 "oc_nthread"):
        assert f"{name} = " in knobs
    assert "h_nthread = virtual threads over output-row tiles" in knobs


def test_progress_in_a_log_prints_plain_lines_at_a_steady_pace(monkeypatch) -> None:
    _, err = _capture(monkeypatch, terminal=False)
    monkeypatch.setattr(console, "LOG_EVERY_S", 0.2)
    monkeypatch.setattr(console, "HEARTBEAT_S", 0.3)
    with console.Progress("study", 5, header="search study: 5 trials", waiting="starting") as p:
        time.sleep(1.5)  # nothing finishes for a while: heartbeats say so
        for k in range(1, 6):
            p.update(k, f"best {k}")
    lines = err.getvalue().splitlines()
    assert lines[0] == "search study: 5 trials"  # at once, before any result
    assert any(ln.startswith("[0/5]") and ln.endswith("starting") for ln in lines[1:])
    assert lines[-1].startswith("[5/5]") and lines[-1].endswith("best 5")
    assert "\r" not in err.getvalue() and "\x1b" not in err.getvalue()  # no cursor tricks
    # updates closer together than LOG_EVERY_S are folded into the next line
    assert sum(ln.startswith("[") and "best" in ln for ln in lines) < 5


def test_progress_quiet_prints_nothing(monkeypatch) -> None:
    _, err = _capture(monkeypatch, terminal=False)
    with console.Progress("study", 3, header="x", quiet=True) as p:
        p.update(3, "done")
    assert err.getvalue() == ""


def test_search_in_a_log_starts_talking_at_once(tmp_path) -> None:
    """A real search with stderr to a file: the header comes before any trial is done."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    db = tmp_path / "log.sqlite"
    log = tmp_path / "err.log"
    with log.open("w") as f:
        res = subprocess.run([sys.executable, "-m", "vtatune", "search", "dense", "--shape",
                              "16,64,64", "--hw", "default", "--trials", "3", "--workers",
                              "1", "--sampler", "random", "--db", str(db)], stderr=f,
                             stdout=subprocess.PIPE, text=True, env=env, timeout=600)
    assert res.returncode == 0
    lines = log.read_text().splitlines()
    assert lines[0].startswith("search dense-dense_m16_k64_n64-sched-1x16x16-i32w256a128u32-random:"
                               " up to 3 trials")
    assert lines[-1].startswith("[3/3]")
    assert "\x1b" not in log.read_text() and "\x1b" not in res.stdout
    assert "fastest trials" in res.stdout


def test_no_color_is_honoured() -> None:
    code = ("from vtatune.cli import console; "
            "print(console.out.no_color, console.err.no_color)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.split() == ["True", "True"]


def test_the_dashboard_is_suggested_as_installed_or_as_an_extra(monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    for installed in (False, True):
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, real=real,
                            installed=installed: object() if installed and
                            name == "optuna_dashboard" else real(name, *a))
        step = console.dashboard_step("sqlite:///db/x.sqlite")
        if installed:
            assert step == "  optuna-dashboard sqlite:///db/x.sqlite  # every trial, in a browser"
        else:  # not a command that does not exist: how to get it
            assert "pip install 'vtatune[dashboard]'" in step
    # the extra is declared, with the distribution the step names
    import tomllib

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert any(d.startswith(console.DASHBOARD) for d in extras["dashboard"])


class _Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_progress_tells_the_time_left_at_this_runs_pace(monkeypatch) -> None:
    # a resumed study (40 of 100 done before) finishing 10 more in 20 s: 50 left at 2 s each
    _, err = _capture(monkeypatch, terminal=False)
    clock = _Clock()
    monkeypatch.setattr(console.time, "monotonic", clock)
    monkeypatch.setattr(console, "LOG_EVERY_S", 0.0)
    with console.Progress("study", 100, header="h") as p:
        p.update(40, "first")
        clock.now += 20
        p.update(50, "later")
        assert p.eta() == "eta 0:01:40"
        clock.now += 1
        p.update(50, "part of a design", position=50.5)  # moves within a step, too
        assert p.eta() == "eta 0:01:39"  # 49.5 left at 21 s / 10.5 steps
        p.update(100, "done")
        assert p.eta() == ""
    lines = err.getvalue().splitlines()
    assert any(ln.startswith("[ 50/100] 0:00:20 eta 0:01:40") for ln in lines), lines


def test_the_live_bar_moves_within_a_step_and_shows_the_eta(monkeypatch) -> None:
    _, err = _capture(monkeypatch, terminal=True, width=120)
    clock = _Clock()
    monkeypatch.setattr(console.time, "monotonic", clock)
    with console.Progress("net", 4, header="h") as p:
        p.update(0, "a", position=0.0)
        clock.now += 30
        p.update(0, "b", position=0.5)  # half of the first design's layer evaluations
        assert p.eta() == "eta 0:03:30"
    assert "eta 0:03:30" in err.getvalue()


def test_screened_designs_are_counted_in_words() -> None:
    assert console.screened_note(0) == ""
    assert console.screened_note(1) == ", 1 design screened"
    assert console.screened_note(12) == ", 12 designs screened"
