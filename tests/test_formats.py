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


def test_shares_and_hypervolumes_have_one_format() -> None:
    assert formats.percent_value(0.23204) == "23.2" and formats.percent_value(None) == "-"
    assert formats.hypervolume(0.69412) == "0.694" and formats.hypervolume(1.0) == "1.000"


def test_every_face_prints_numbers_the_same_way(capsys, studies, network_studies,
                                                tmp_path) -> None:
    # report text of an operator and a network study, verify-export's cycles, calibrate's
    # table and the HTML layer table: the formats module's numbers, never another rounding
    import json
    import re

    from vtatune.cli.main import main
    from vtatune.export import verify_bundle, write_bundle
    from vtatune.reports import html
    from vtatune.reports.data import network_report_data
    from vtatune.store import Store

    for db, study in ((studies.db, studies.tpe), (network_studies.db, network_studies.study)):
        assert main(["report", study, "--db", db, "--out", str(tmp_path / study)]) == 0
        out = capsys.readouterr().out
        (hv,) = re.findall(r"hypervolume (\S+)", out)
        assert re.fullmatch(r"\d\.\d{3}", hv), hv
    store = Store(studies.db)
    res = write_bundle(store.study(studies.tpe), store.trials(studies.tpe), "knee",
                       tmp_path / "b")
    cycles = next(c for c in verify_bundle(tmp_path / "b", functional=False).checks
                  if c.name == "cycles")
    assert f"({formats.ms(res.seconds * 1e3)} ms)" in cycles.detail
    nets = Store(network_studies.db)
    data = network_report_data(nets.study(network_studies.study),
                               nets.network_trials(network_studies.study))
    page = html.layers_table(data.front[0])
    for la in data.front[0].layers:
        assert f">{formats.percent_value(la.share)}<" in page
    measured = tmp_path / "m.json"
    measured.write_text(json.dumps([{
        "shape": {"op": "dense", "m": 16, "k": 64, "n": 64},
        "knobs": {"tile_b": 16, "tile_ci": 2, "tile_co": 2, "oc_nthread": 2}, "ms": 0.2}]))
    assert main(["calibrate", str(measured), "--no-loo"]) == 0
    row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.lstrip().startswith("0 "))
    assert " 0.200 " in row  # measured ms, three decimals as every ms
