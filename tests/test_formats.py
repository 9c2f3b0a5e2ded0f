"""vtatune.formats: one spelling per quantity."""

from __future__ import annotations

from vtatune import formats


def test_each_quantity_has_one_format() -> None:
    assert formats.cycles(544328) == "544,328" and formats.cycles(None) == "-"
    assert formats.ms(5.44328) == "5.443" and formats.ms(78.4) == "78.400"
    assert formats.ms_of_cycles(544328, 100.0) == "5.443"  # 100 MHz: 1e5 cycles per ms
    assert formats.area(37.4159) == "37.42" and formats.area(None) == "-"
    assert formats.percent(0.8414) == "84.1%" and formats.percent(1.0) == "100.0%"
    assert formats.count(38574) == "38,574" and formats.count(116.5) == "116.5"
    assert formats.count(116.0) == "116"
    assert formats.kib(32768) == "32" and formats.kib(512) == "0.5"
    assert formats.knobs({"tile_w": 14, "tile_h": 7}) == "tile_h=7, tile_w=14"
    assert formats.cycles(float("nan")) == "-"


def test_hw_name_legend_explains_the_generated_names() -> None:
    text = formats.HW_NAME_LEGEND
    assert "BATCHxBLOCK_INxBLOCK_OUT" in text and "KiB" in text and "1x16x8-i8w32a64u8" in text


def test_counted_says_one_thing_in_the_singular() -> None:
    assert formats.counted(1, "design") == "1 design"
    assert formats.counted(0, "design") == "0 designs"
    assert formats.counted(1024, "trial") == "1,024 trials"
    assert formats.counted(2, "study", "studies") == "2 studies"
