"""Which designs stock VTA builds as they are (``hardware.stock``), and where it is reported."""

from __future__ import annotations

import json

import pytest

from vtatune.cli.main import main
from vtatune.hardware import boards
from vtatune.hardware.config import HwConfig, default, load
from vtatune.hardware.stock import default_board, stock_problems


def test_vta_default_is_stock_on_every_board() -> None:
    for board in boards.all_boards():
        assert stock_problems(default(), board) == [], board.name


def test_non_square_blocks_are_not_stock() -> None:
    (p,) = stock_problems(load("1x16x32"))  # I = 11 > A = 10: only the block shape
    assert "BLOCK_IN 16 != BLOCK_OUT 32" in p and "LOG_BLOCK" in p


def test_inp_shallower_than_acc_is_not_stock() -> None:
    hw = load("1x32x16")  # A = 11, I = 10, and non-square
    problems = stock_problems(hw)
    assert len(problems) == 2
    assert any("reads a GEMM micro-op's wgt index at bit 21" in p and "at bit 22" in p
               for p in problems)
    square = HwConfig(log_inp_buff_size=14, log_acc_buff_size=17)  # I = 10 < A = 11
    assert len(stock_problems(square)) == 1


def test_tiles_narrower_than_the_bus_are_board_dependent() -> None:
    hw = load("1x8x8")  # inp and out tiles of 64 bits
    assert stock_problems(hw, boards.load("pynq-z1")) == []
    problems = stock_problems(hw, boards.load("ultra96"))
    assert {p.split()[0] for p in problems} == {"inp", "out"}
    assert all("128-bit AXI bus" in p for p in problems)
    assert stock_problems(hw) == []  # no board: board-dependent checks skipped


def test_default_board_from_target() -> None:
    assert default_board(HwConfig(target="pynq")) == "pynq-z1"
    assert default_board(HwConfig(target="sim")) is None


def test_hw_command_reports_stock_vta(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hw", "--hw", "1x32x16", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["stock_vta"] is False and len(d["stock_vta_problems"]) == 2
    assert d["stock_vta_board"] is None
    assert main(["hw", "--hw", "1x8x8", "--board", "ultra96"]) == 0
    out = capsys.readouterr().out
    assert "stock VTA on ultra96: no:" in out
    assert main(["hw"]) == 0
    assert "stock VTA (no board" in capsys.readouterr().out
    assert main(["hw", "--board", "pynq-z1"]) == 0
    assert "stock VTA on pynq-z1: yes" in capsys.readouterr().out


def test_vta_config_carries_log_block_for_square_designs() -> None:
    d = default().to_vta_json()
    assert d["LOG_BLOCK"] == 4 and "LOG_BLOCK_IN" not in d and "LOG_BLOCK_OUT" not in d
    n = load("1x32x16").to_vta_json()
    assert "LOG_BLOCK" not in n and (n["LOG_BLOCK_IN"], n["LOG_BLOCK_OUT"]) == (5, 4)
