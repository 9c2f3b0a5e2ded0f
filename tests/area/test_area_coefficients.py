"""The coefficient file: every coefficient has a unit and a source; all problems listed at once."""

from __future__ import annotations

import pytest

from vtatune.area import coefficients
from vtatune.errors import ConfigError
from vtatune.hardware.boards import FAMILIES


def shipped_text() -> str:
    return coefficients.default_path().read_text()


def test_shipped_file_is_valid_and_sourced() -> None:
    co = coefficients.load()
    assert set(co.families) == set(FAMILIES)
    assert len(co.entries) > 100
    for path, entry in co.entries.items():
        assert entry.unit.strip(), path
        assert entry.source.strip(), path
    assert "VTR" in co.source("area.logic_tile_um2")
    assert "UG473" in co.source("families.xilinx-7series.shapes_tdp")


def test_load_is_cached() -> None:
    assert coefficients.load() is coefficients.load()


def test_derived_area_per_bit() -> None:
    # 32 Kbit VTR memory block = 6 logic tiles of 8100 um^2.
    assert coefficients.load().area.memory_um2_per_bit == pytest.approx(6 * 8100 / 32768)


def test_every_problem_is_listed_at_once() -> None:
    text = shipped_text()
    text = text.replace('adder_bit = { value = 1.0, unit = "LUT per adder bit"',
                        'adder_bit = { value = "one", unit = "LUT per adder bit"', 1)
    text = text.replace("uop_bits = { value = 32, unit = \"bits per micro-op\", source = "
                        "\"VTA hw_spec.h: VTA_UOP_WIDTH = 32\" }",
                        "uop_bits = { value = 32, unit = \"bits per micro-op\", source = \"\" }")
    text = text.replace('[gemm]\n', '[gemm]\nbogus = { value = 1, unit = "x", source = "y" }\n')
    text = text.replace("tree_levels_per_register = ", "tree_levels_per_registerX = ")
    with pytest.raises(ConfigError) as err:
        coefficients.from_text(text, "test.toml")
    problems = err.value.problems
    assert any("vendors.xilinx.adder_bit: must be a number" in p for p in problems)
    assert any("vta.uop_bits: needs a non-empty source" in p for p in problems)
    assert any("gemm.bogus: unknown coefficient" in p for p in problems)
    assert any("gemm.tree_levels_per_register: missing" in p for p in problems)
    assert len(problems) >= 5  # tree_levels_per_registerX is unknown too
    assert str(err.value).startswith("test.toml: ")


def test_bare_numbers_and_bad_toml_are_rejected() -> None:
    with pytest.raises(ConfigError, match="expected"):
        coefficients.from_text(shipped_text().replace(
            'cmd_queues = { value = 3, unit = "FIFOs"',
            'cmd_queues = 3\nx = { value = 3, unit = "FIFOs"'))
    with pytest.raises(ConfigError, match="not valid TOML"):
        coefficients.from_text("schema = [", "broken.toml")
    with pytest.raises(ConfigError, match="no such file"):
        coefficients.load("/nonexistent/coefficients.toml")
