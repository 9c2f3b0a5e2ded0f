"""Can stock VTA (apache/tvm-vta as it is) build and run a design? ``stock_problems`` says why not.

vtatune compiles and simulates designs stock VTA cannot express or build; a user who wants to
take a design to an FPGA with VTA's own flow needs to know (hwconfigs/timing/SOURCES.md#S1-S3):

* S1 — ``config/pkg_config.py`` reads one ``LOG_BLOCK`` and sets ``LOG_BLOCK_IN =
  LOG_BLOCK_OUT = LOG_BLOCK``: a design with BLOCK_IN != BLOCK_OUT has no stock config.
* S2 — ``hw_spec.h``: VTA's runtime writes a GEMM micro-op's wgt index at bit
  A + MAX(A, I) (``struct VTAUop``) while its HLS hardware reads it at A + I
  (``VTA_UOP_GEM_2_0``) and reads ALU sources as I bits: with I < A (acc deeper than inp)
  the two disagree and the stock design computes with the wrong weights.
* S3 — ``hw_spec_const.h``: ``*_MAT_AXI_RATIO`` = tile bits / the board's AXI bus bits in
  integer division; a tile narrower than the bus gives 0 and the HLS memories cannot be
  declared (board-dependent: 64 bits on Pynq and DE10-Nano, 128 on UltraScale+).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vtatune.errors import VtatuneError
from vtatune.hardware import boards
from vtatune.hardware.config import HwConfig

if TYPE_CHECKING:
    from vtatune.hardware.boards import Board
    from vtatune.hardware.config import HwConfig

#: The board a config's TARGET names (VTA's target names -> vtatune's boards).
TARGET_BOARDS = {"pynq": "pynq-z1", "ultra96": "ultra96", "zcu104": "zcu104",
                 "de10nano": "de10-nano"}


def stock_problems(hw: HwConfig, board: Board | None = None) -> list[str]:
    """Why stock VTA cannot build ``hw`` as it is (empty: it can); with ``board``, also the
    board-dependent reasons."""
    problems = []
    if hw.log_block_in != hw.log_block_out:
        problems.append(
            f"BLOCK_IN {hw.block_in} != BLOCK_OUT {hw.block_out}: stock VTA's pkg_config.py "
            "reads one LOG_BLOCK for both")
    a, i = hw.log_acc_depth, hw.log_inp_depth
    if i < a:
        problems.append(
            f"inp depth 2^{i} < acc depth 2^{a}: VTA's HLS reads a GEMM micro-op's wgt index at "
            f"bit {a + i} (VTA_UOP_GEM_2_0) but its runtime writes it at bit {2 * a} "
            "(struct VTAUop)")
    if board is not None:
        for name, bits in (("inp", hw.inp_tile_bytes * 8), ("wgt", hw.wgt_tile_bytes * 8),
                           ("acc", hw.acc_tile_bytes * 8), ("out", hw.out_tile_bytes * 8)):
            if bits < board.axi_bits:
                problems.append(
                    f"{name} tile of {bits} bits is narrower than {board.name}'s "
                    f"{board.axi_bits}-bit AXI bus: VTA's {name.upper()}_MAT_AXI_RATIO is 0")
    return problems


def stock_of(hw: dict[str, int], board: str | None) -> dict[str, Any]:
    """``{"stock_vta": bool, "stock_vta_problems": (reasons...)}`` for stored LOG_* parameters
    on the board named ``board`` (empty when they do not make a config or the board is
    unknown: then it cannot be told)."""

    try:
        cfg = HwConfig.from_params(hw)
        problems = tuple(stock_problems(cfg, boards.device(board) if board else None))
    except (TypeError, ValueError, VtatuneError):
        return {}
    return {"stock_vta": not problems, "stock_vta_problems": problems}


def default_board(hw: HwConfig) -> str | None:
    """The board ``hw``'s TARGET names, if any."""
    return TARGET_BOARDS.get(hw.target)
