"""AutoTVM records for VTA's flow: names, tasks and configurations against the FPGA-measured
TopHub records (hwconfigs/timing/measured: the 31 records as AutoTVM wrote them, and the same
records with shape and knobs in plain terms), AutoTVM's own index decoding, the bundle's log."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from vtatune.export import autotvm as at
from vtatune.hardware.config import HwConfig, default
from vtatune.workloads.conv2d import Conv2d
from vtatune.workloads.conv2d_transpose import Conv2dTranspose
from vtatune.workloads.dense import Dense
from vtatune.workloads.group_conv2d import MOBILENET_G, GroupConv2d

DATA = Path(__file__).parents[2] / "hwconfigs" / "timing" / "measured"
PYNQ = replace(default(), target="pynq")


def _measured() -> list[tuple[dict, dict]]:
    plain = json.loads((DATA / "vta_pynq_measured.json").read_text())
    lines = [json.loads(line) for line in (DATA / "vta_pynq_measured.log").read_text()
             .splitlines() if line.startswith("{")]
    assert len(plain) == len(lines) == 31
    return list(zip(plain, lines, strict=True))


#: The second design of the records (pynq_4x8_i8w8a32_15_16_16_18).
PYNQ_4X8 = replace(PYNQ, log_batch=2, log_block_in=3, log_block_out=3, log_inp_buff_size=16,
                   log_wgt_buff_size=16, log_acc_buff_size=18)


@pytest.mark.parametrize("i", range(31))
def test_the_measured_records_input_and_config_are_rebuilt_from_shape_and_knobs(i) -> None:
    plain, logged = _measured()[i]
    s = plain["shape"]
    wl = Conv2d(s["n"], s["cin"], s["h"], s["w"], s["cout"], s["kh"], s["kw"], s["pad"],
                s["stride"])
    hw = PYNQ_4X8 if plain["model"].startswith("pynq_4x8") else PYNQ
    task = at.task_of(wl, hw, plain["knobs"])
    rec = at.record(task, hw, plain["ms"] / 1e3, 1.0, 0.0, "x")
    want = logged["input"]
    if hw is PYNQ_4X8:
        # the 4x8 section was tuned with a template that also passed the output layout
        # (..., 'NCHW4n8c', 'NCHW4n8c', 'int32'); vtatune writes today's (layout, dtype)
        args = want[2]
        assert args[5] == args[6] == "NCHW4n8c"
        want = [want[0], want[1], [*args[:6], *args[7:]], *want[3:]]
    assert rec["input"] == want
    assert rec["config"] == logged["config"]
    assert rec["version"] == logged["version"] == 0.2


def test_configuration_names_as_pkg_config_spells_them() -> None:
    assert at.bitstream_name(default()) == "1x16_i8w8a32_15_15_18_17"
    # every record's -model= is TARGET + "_" + the name
    models = {r["input"][0].rpartition("-model=")[2] for _, r in _measured()}
    assert models == {at.model_name(PYNQ), at.model_name(PYNQ_4X8)} == {
        "pynq_1x16_i8w8a32_15_15_18_17", "pynq_4x8_i8w8a32_15_16_16_18"}
    big = replace(default(), log_batch=1, log_block_in=5, log_block_out=5,
                  log_uop_buff_size=16, log_inp_buff_size=16, log_wgt_buff_size=19,
                  log_acc_buff_size=18, target="ultra96")
    assert at.model_name(big) == "ultra96_2x32_i8w8a32_16_16_19_18"
    assert at.target_string(big) == \
        "ext_dev -device=vta -keys=cpu -model=ultra96_2x32_i8w8a32_16_16_19_18"
    wide = replace(default(), log_block_out=5)
    assert at.bitstream_name(wide) is None and at.target_string(wide) is None
    with pytest.raises(at.NotInTemplate, match="non-square GEMM"):
        at.task_of(Dense(16, 64, 64), wide, {"tile_b": 1, "tile_ci": 1, "tile_co": 1,
                                             "oc_nthread": 1})


# ---- the index, decoded as AutoTVM's ConfigSpace.get does -----------------------------------

def _split_space(extent: int) -> list[list[int]]:
    """SplitSpace(policy="factors", num_outputs=2): one entity per factor f, [extent/f, f]."""
    return [[extent // f, f] for f in range(1, extent + 1) if extent % f == 0]


def _decode(index: int, spaces: list[tuple[str, str, list]]) -> list[list]:
    """``ConfigSpace.get(index)``: knobs in declared order, the first varying fastest."""
    out = []
    for name, kind, entities in spaces:
        out.append([name, kind, entities[index % len(entities)]])
        index //= len(entities)
    assert index == 0, "index beyond the space"
    return out


def _conv_spaces(b: int, oh: int, ow: int, ci: int, co: int) -> list[tuple[str, str, list]]:
    return [("tile_b", "sp", _split_space(b)), ("tile_h", "sp", _split_space(oh)),
            ("tile_w", "sp", _split_space(ow)), ("tile_ci", "sp", _split_space(ci)),
            ("tile_co", "sp", _split_space(co)), ("oc_nthread", "ot", [1, 2]),
            ("h_nthread", "ot", [1, 2])]


def _all_points(extents: dict[str, int], threads: tuple[str, ...]):
    axes = {n: [f for f in range(1, e + 1) if e % f == 0] for n, e in extents.items()}
    axes.update({t: [1, 2] for t in threads})
    for combo in itertools.product(*axes.values()):
        yield dict(zip(axes, combo, strict=True))


def test_every_dense_point_decodes_back_from_its_index() -> None:
    wl = Dense(32, 64, 48)  # 32 BATCH tiles, 4 BLOCK_IN, 3 BLOCK_OUT tiles
    spaces = [("tile_b", "sp", _split_space(32)), ("tile_ci", "sp", _split_space(4)),
              ("tile_co", "sp", _split_space(3)), ("oc_nthread", "ot", [1, 2])]
    seen = set()
    for k in _all_points({"tile_b": 32, "tile_ci": 4, "tile_co": 3}, ("oc_nthread",)):
        task = at.task_of(wl, PYNQ, k)
        assert _decode(task.index, spaces) == task.entity
        seen.add(task.index)
    assert seen == set(range(6 * 3 * 2 * 2))  # a bijection onto the space
    assert task.name == "dense_packed.vta"
    assert task.args == [["TENSOR", [32, 4, 1, 16], "int8"], ["TENSOR", [3, 4, 16, 16], "int8"],
                         None, "int32"]


def test_conv2d_transpose_points_decode_back_and_carry_vta_arguments() -> None:
    wl = Conv2dTranspose(1, 64, 4, 4, 32, 4, 4, 1, 2)  # 8x8 output
    spaces = _conv_spaces(1, 8, 8, 4, 2)
    for k in _all_points({"tile_b": 1, "tile_h": 8, "tile_w": 8, "tile_ci": 4, "tile_co": 2},
                         ("oc_nthread", "h_nthread")):
        task = at.task_of(wl, PYNQ, k)
        assert _decode(task.index, spaces) == task.entity
    assert task.name == "conv2d_transpose_packed.vta"
    # VTA's graph_pack gives the kernel in packed OIHW: (COUT/16, CIN/16, KH, KW, 16, 16)
    assert task.args == [["TENSOR", [1, 4, 4, 4, 1, 16], "int8"],
                         ["TENSOR", [2, 4, 4, 4, 16, 16], "int8"], [2, 2], [1, 1, 1, 1],
                         "int32", [0, 0]]


def test_group_conv2d_maps_onto_vtas_output_channel_tiles() -> None:
    d5 = MOBILENET_G["D5"]  # 256 -> 256 channels in 16 groups: one 16-channel tile each
    base = {"tile_b": 1, "tile_g": 1, "tile_h": 7, "tile_w": 28, "tile_ci": 1,
            "oc_nthread": 2, "h_nthread": 1}
    # (the mapping: VTA's compiler refuses these padded tiles over several channel tiles)
    with pytest.raises(at.NotInTemplate, match="Do not support pad on the innermost block"):
        at.task_of(d5, PYNQ, {**base, "tile_co": 4})
    task = at.TEMPLATES["group_conv2d"](d5, PYNQ, {**base, "tile_co": 4})
    assert task.name == "group_conv2d_packed.vta"
    assert task.args == [["TENSOR", [1, 16, 28, 28, 1, 16], "int8"],
                         ["TENSOR", [16, 1, 3, 3, 16, 16], "int8"], [1, 1], [1, 1, 1, 1],
                         [1, 1], 16, "int32"]
    # four whole groups per output tile: four of VTA's 16 output-channel tiles
    assert dict((e[0], e[2]) for e in task.entity)["tile_co"] == [4, 4]
    assert _decode(task.index, _conv_spaces(1, 28, 28, 1, 16)) == task.entity
    # groups of two input and two output tiles: tile_ci within a group, tile_co over all
    wl = GroupConv2d(1, 128, 14, 14, 128, 3, 3, 1, 1, 4)
    for tile_co, split in ((1, [8, 1]), (2, [4, 2]), (4, [2, 4]), (8, [1, 8])):
        task = at.TEMPLATES["group_conv2d"](wl, PYNQ, {**base, "tile_h": 14, "tile_w": 14,
                                                       "tile_ci": 2, "tile_co": tile_co})
        ent = dict((e[0], e[2]) for e in task.entity)
        assert ent["tile_co"] == split and ent["tile_ci"] == [1, 2]
        assert _decode(task.index, _conv_spaces(1, 14, 14, 2, 8)) == task.entity
    assert task.args[1] == ["TENSOR", [8, 2, 3, 3, 16, 16], "int8"]
    # three output tiles a group: a tile of 2 cuts groups unevenly, one of 4 straddles two
    wl = GroupConv2d(1, 192, 14, 14, 192, 3, 3, 1, 1, 4)
    k = {**base, "tile_h": 14, "tile_w": 14}
    grouped = at.TEMPLATES["group_conv2d"]
    assert dict((e[0], e[2]) for e in grouped(wl, PYNQ, {**k, "tile_co": 6}).entity)[
        "tile_co"] == [2, 6]
    with pytest.raises(at.NotInTemplate, match="does not divide a group's 3 output tiles"):
        at.TEMPLATES["group_conv2d"](wl, PYNQ, {**k, "tile_co": 2})
    with pytest.raises(at.NotInTemplate, match="straddles groups of 3"):
        at.TEMPLATES["group_conv2d"](wl, PYNQ, {**k, "tile_co": 4})
    with pytest.raises(at.NotInTemplate, match="tile_g 1"):
        at.TEMPLATES["group_conv2d"](wl, PYNQ, {**k, "tile_co": 3, "tile_g": 2})


def test_what_stock_vta_cannot_run_is_named() -> None:
    depthwise = GroupConv2d(1, 32, 56, 56, 32, 3, 3, 1, 1, 32)
    k = {"tile_b": 1, "tile_g": 16, "tile_h": 8, "tile_w": 56, "tile_ci": 1, "tile_co": 1,
         "oc_nthread": 1, "h_nthread": 1}
    with pytest.raises(at.NotInTemplate, match="depthwise"):
        at.task_of(depthwise, PYNQ, k)
    with pytest.raises(at.NotInTemplate, match="^grouped"):
        at.task_of(GroupConv2d(1, 64, 56, 56, 64, 3, 3, 1, 1, 8), PYNQ, k)
    c8 = Conv2d(1, 256, 14, 14, 256, 3, 3, 1, 1)
    k = {"tile_b": 1, "tile_h": 4, "tile_w": 14, "tile_ci": 1, "tile_co": 4, "oc_nthread": 1,
         "h_nthread": 1}
    with pytest.raises(at.NotInTemplate, match="tile_h of 4 does not divide its extent 14"):
        at.task_of(c8, PYNQ, k)
    with pytest.raises(at.NotInTemplate, match="tile_x"):
        at.task_of(c8, PYNQ, {**k, "tile_h": 7, "tile_x": 1})


def test_build_log_lists_what_it_leaves_out() -> None:
    c8 = Conv2d(1, 256, 14, 14, 256, 3, 3, 1, 1)
    ok = {"tile_b": 1, "tile_h": 7, "tile_w": 14, "tile_ci": 1, "tile_co": 4, "oc_nthread": 2,
          "h_nthread": 1}
    log = at.build_log(PYNQ, [at.Layer(("C8",), c8, ok, 0.004),
                              at.Layer(("x", "y"), c8, {**ok, "tile_w": 5}, 0.005)], 1e9, "t")
    assert len(log.records) == 1 and log.records[0]["result"] == [[0.004], 0, 0.0, 1e9]
    assert log.left_out == ({"layers": ["x", "y"], "workload": c8.signature,
                             "reason": "tile_w of 5 does not divide its extent 14: VTA's "
                                       "template splits by exact factors"},)
    lines = log.text().decode().splitlines()
    assert [json.loads(line) for line in lines] == list(log.records)
    assert at.compare(at.parse_log(log.text()), log) == []
    assert log.manifest(PYNQ)["records"] == 1


# ---- a bundle's autotvm.log and its verification -------------------------------------------

def _bundle(tmp_path: Path, hw: HwConfig, knobs: dict[str, int]) -> Path:
    from vtatune.export.bundle import build, write_design
    from vtatune.hardware import boards

    board = boards.load("pynq-z1")
    built = build(Dense(16, 64, 64), hw, knobs, board)
    folder = tmp_path / "bundle"
    write_design(folder, built, board, {"test": True}, "h")
    return folder


DENSE_KNOBS = {"tile_b": 16, "tile_ci": 2, "tile_co": 2, "oc_nthread": 2}


def _resign(folder: Path, name: str, data: bytes) -> None:
    (folder / name).write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_a_bundle_carries_its_record_and_verify_checks_it(tmp_path) -> None:
    from vtatune.export import verify_bundle

    folder = _bundle(tmp_path, PYNQ, DENSE_KNOBS)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["bitstream"] == "pynq_1x16_i8w8a32_15_15_18_17"
    assert manifest["autotvm"] == {"file": "autotvm.log", "records": 1, "not_in_log": [],
                                   "target": at.target_string(PYNQ),
                                   "layers": [{"layer": "dense_m16_k64_n64",
                                               "workload": "dense_m16_k64_n64",
                                               "offloaded": True, "in_log": True}]}
    assert list(manifest)[:3] == ["format", "stock_vta", "stock_vta_problems"]
    (rec,) = [json.loads(line) for line in (folder / "autotvm.log").read_text().splitlines()]
    sched = json.loads((folder / "schedule.json").read_text())
    (entry,) = sched["workloads"].values()
    assert rec["input"][1] == "dense_packed.vta"
    assert abs(rec["result"][0][0] - entry["latency_ms"] / 1e3) < 1e-12
    assert rec["result"][1] == 0 and rec["result"][2] > 0
    ent = {e[0]: e[2] for e in rec["config"]["entity"]}
    assert ent == {"tile_b": [1, 16], "tile_ci": [2, 2], "tile_co": [2, 2], "oc_nthread": 2}
    report = verify_bundle(folder, functional=False)
    assert report.ok and {c.name: c.status for c in report.checks}["autotvm"] == "pass"

    # a record whose knobs differ from schedule.json's, re-signed: a failed check
    other = tmp_path / "other"
    shutil.copytree(folder, other)
    bad = dict(rec, config=dict(rec["config"], entity=[*rec["config"]["entity"][:3],
                                                        ["oc_nthread", "ot", 1]]))
    _resign(other, "autotvm.log", (json.dumps(bad) + "\n").encode())
    report = verify_bundle(other, functional=False)
    assert [c.name for c in report.failed] == ["autotvm"]
    assert "is not schedule.json's knobs" in report.failed[0].detail
    # another time, a missing record, a line that is not a record
    for data, why in ((json.dumps(dict(rec, result=[[1.0], 0, 1, 2])), "schedule.json says"),
                      ("", "no record for dense_packed.vta"),
                      ("{\"input\": 1}", "malformed autotvm.log")):
        _resign(other, "autotvm.log", (data + "\n").encode())
        (failed,) = verify_bundle(other, functional=False).failed
        assert failed.name == "autotvm" and why in failed.detail
    # the manifest names another configuration
    shutil.rmtree(other)
    shutil.copytree(folder, other)
    manifest["bitstream"] = "pynq_1x32_i8w8a32_15_15_18_17"
    (other / "manifest.json").write_text(json.dumps(manifest))
    (failed,) = verify_bundle(other, functional=False).failed
    assert failed.name == "autotvm" and "not this design's VTA name" in failed.detail


def test_a_non_square_design_has_no_name_and_an_empty_log(tmp_path) -> None:
    from vtatune.export import verify_bundle

    hw = replace(PYNQ, log_block_out=5)
    folder = _bundle(tmp_path, hw, {"tile_b": 16, "tile_ci": 2, "tile_co": 1, "oc_nthread": 2})
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["bitstream"] is None and (folder / "autotvm.log").read_bytes() == b""
    (left,) = manifest["autotvm"]["not_in_log"]
    assert "non-square GEMM" in left["reason"] and left["workload"] == "dense_m16_k64_n64"
    report = verify_bundle(folder, functional=False)
    assert report.ok, report.failed
    assert "no records: non-square GEMM" in next(c.detail for c in report.checks
                                                  if c.name == "autotvm")


def test_padding_per_axis_is_relays_four_way_padding() -> None:
    k = {"tile_b": 1, "tile_h": 17, "tile_w": 17, "tile_ci": 1, "tile_co": 1,
         "oc_nthread": 1, "h_nthread": 1}
    seven_by_one = Conv2d(1, 16, 17, 17, 16, 7, 1, 3, 1, pad_w=0)
    assert at.task_of(seven_by_one, PYNQ, k).args[3] == [3, 0, 3, 0]  # top, left, bottom, right
    # symmetric layers keep the workload they always had
    assert at.task_of(Conv2d(1, 16, 17, 17, 16, 3, 3, 1, 1), PYNQ, k).args[3] == [1, 1, 1, 1]
    # VTA's template pads nothing when it pads no rows (vta_conv2d.py `if padding[0]`; seen
    # with VTA's compiler: padding (0, 3, 0, 3) of a 17x17 input by 1x7 gives 17x11)
    with pytest.raises(at.NotInTemplate, match="pads columns only when it pads rows"):
        at.task_of(Conv2d(1, 16, 17, 17, 16, 1, 7, 0, 1, pad_w=3), PYNQ, k)
    transposed = Conv2dTranspose(1, 64, 4, 4, 32, 4, 4, 1, 2, pad_w=0)  # 8 x 10 output
    task = at.task_of(transposed, PYNQ, {**k, "tile_h": 8, "tile_w": 10, "tile_ci": 4,
                                         "tile_co": 2})
    assert task.args[3] == [1, 0, 1, 0]


#: VTA's compiler's answers for ResNet-18's C2 (3x3, 64 channels, 56x56) on the default
#: design, tile_w 56, tile_ci 1, tile_co 1: (tile_h, oc_nthread, h_nthread) -> builds.
#: From ``/tmp/oldtvm/bin/python tests/export/vta_oracle_threads.py`` (2026-12-02): refused
#: ones end "Allocation exceed bound of memory tag local.acc_buffer" (1,835,008 bits).
VTA_THREAD_ANSWERS = {(4, 2, 2): False, (2, 2, 2): True, (8, 2, 1): True, (14, 2, 1): True,
                      (14, 1, 1): True}


def test_two_thread_axes_keep_vta_accumulators_apart() -> None:
    from vtatune.export.autotvm import NotInTemplate, acc_problem, task_of
    from vtatune.hardware import config as cfg
    from vtatune.workloads import Conv2d

    hw = cfg.load("default")
    wl = Conv2d(1, 64, 56, 56, 64, 3, 3, 1, 1)
    for (th, oc, hn), builds in VTA_THREAD_ANSWERS.items():
        k = dict(tile_b=1, tile_h=th, tile_w=56, tile_ci=1, tile_co=1, oc_nthread=oc,
                 h_nthread=hn)
        assert (acc_problem(wl, hw, k) is None) == builds, k
        if not builds:
            with pytest.raises(NotInTemplate, match="local.acc_buffer"):
                task_of(wl, hw, k)
