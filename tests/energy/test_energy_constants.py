"""The shipped energy constants: every one cited, ranged and present for every board."""

from __future__ import annotations

import pytest

from vtatune.energy import constants as ec
from vtatune.errors import ConfigError
from vtatune.hardware import boards
from vtatune.readers import parse_toml, read_text


def test_every_shipped_board_has_cited_ranged_constants() -> None:
    table = ec.load()
    for name in boards.names():
        b = boards.load(name)
        k = table.for_board(b.name, b.family)
        assert set(k.constants) == set(ec.FAMILY_KEYS) | set(ec.BOARD_KEYS)
        for c in k.constants.values():
            assert c.low <= c.value <= c.high, c
            assert c.unit.strip() and c.source.strip(), c


def test_pynq_z1_dynamic_constants_are_sourced_and_match_the_research_note() -> None:
    """The PYNQ-Z1's figures are the research note's (hwconfigs/energy/SOURCES.md s3/s6)."""
    k = ec.load().for_board("pynq-z1", "xilinx-7series")
    assert (k["bram_access_pj"].low, k["bram_access_pj"].value, k["bram_access_pj"].high) == (
        5.0, 20.0, 40.0)
    assert (k["dram_pj_per_byte"].low, k["dram_pj_per_byte"].high) == (160.0, 560.0)
    assert k["pl_static_w"].value == pytest.approx(0.12)
    assert not {"bram_access_pj", "mac_lut_pj", "mac_dsp_pj", "dram_pj_per_byte",
                "pl_static_w", "base_w"} & set(k.unsourced)


def test_a_malformed_file_lists_every_problem() -> None:
    doc = parse_toml(read_text(ec.default_path()), "shipped")
    fam = doc["families"]["xilinx-7series"]
    fam["bram_access_pj"] = {"value": 50.0, "low": 5.0, "high": 40.0, "unit": "pJ",
                             "source": "x"}
    fam["mac_lut_pj"] = {"value": -1.0, "low": 0.0, "high": 1.0, "unit": "pJ", "source": "x"}
    del doc["boards"]["pynq-z1"]["base_w"]
    doc["boards"]["pynq-z1"]["typo_w"] = {"value": 1.0}
    with pytest.raises(ConfigError) as err:
        ec.parse(doc, "bad.toml")
    text = "\n".join(err.value.problems)
    for part in ("low <= value <= high", "mac_lut_pj.value", "base_w: missing", "typo_w"):
        assert part in text, text


def test_a_board_without_constants_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no energy constants for board 'nope'"):
        ec.load().for_board("nope", "xilinx-7series")
