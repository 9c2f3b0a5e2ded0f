"""Board files load, validate and carry the datasheet numbers."""

from __future__ import annotations

import pytest

from vtatune.errors import ConfigError
from vtatune.hardware import boards


def test_known_boards() -> None:
    assert {"pynq-z1", "ultra96", "zcu104", "de10-nano"} <= set(boards.names())


def test_pynq_z1_is_vtas_reference_board() -> None:
    b = boards.load("pynq-z1")
    assert b.clock_hz == 100e6 and b.axi_bytes_per_cycle == 8
    assert b.resources["lut"] == 53200 and b.resources["bram36"] == 140


def test_unknown_board_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown board 'vcu9000'.*pynq-z1"):
        boards.load("vcu9000")


def test_malformed_board_lists_every_problem() -> None:
    with pytest.raises(ConfigError) as err:
        boards.from_dict({"name": "x", "part": "y", "family": "asic", "clock_mhz": -1,
                          "axi_bits": 48, "resources": {"lut": -3, "gates": 5}}, "test")
    assert len(err.value.problems) == 5


def test_board_with_a_timing_profile() -> None:
    b = boards.load("pynq-z1@2019-07")
    assert (b.name, b.base, b.profile) == ("pynq-z1@2019-07", "pynq-z1", "2019-07")
    plain = boards.load("pynq-z1")
    assert (plain.base, plain.profile) == ("pynq-z1", None)
    assert (b.clock_mhz, b.resources) == (plain.clock_mhz, plain.resources)
    assert boards.is_known("pynq-z1@2019-07") and boards.is_known("pynq-z1")
    for bad in ("pynq-z1@nope", "nope@2019-07", "pynq-z1@", "../pynq-z1", "hwconfigs/x.json"):
        assert not boards.is_known(bad), bad


@pytest.mark.parametrize("spec,message", [
    # a known board with a missing profile: the board is known, the profile is not here
    ("pynq-z1@mylab", "board 'pynq-z1' is known, but its timing profile 'mylab' is not here"),
    # path characters in the profile of a known board: the name is refused, not the board
    ("pynq-z1@../../etc", "'../../etc' is not a profile name"),
    ("pynq-z1@a/b", "'a/b' is not a profile name"),
    ("nope@2019-07", "unknown board 'nope'"),
])
def test_what_is_wrong_with_a_board_and_profile_is_said(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        boards.load(spec)
    assert message in str(err.value)


def test_a_boards_device_needs_no_timing_profile() -> None:
    # a stored study's or a bundle's board with a profile of another machine: its clock and
    # resources (all a report needs) are the board's; a malformed profile is still refused
    b = boards.device("pynq-z1@mylab")
    plain = boards.load("pynq-z1")
    assert (b.name, b.base, b.profile) == ("pynq-z1@mylab", "pynq-z1", "mylab")
    assert (b.clock_mhz, b.resources) == (plain.clock_mhz, plain.resources)
    with pytest.raises(ConfigError, match="is not a profile name"):
        boards.device("pynq-z1@../x")
