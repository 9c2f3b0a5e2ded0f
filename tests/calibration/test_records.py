"""Measured records: validation of a JSON list (one clear error per problem), the design from a
bitstream name, and AutoTVM logs (what is kept, what is skipped and why)."""

from __future__ import annotations

import json

import pytest

from vtatune import calibration as cal
from vtatune.errors import UserError
from vtatune.hardware import boards
from vtatune.hardware.config import default

PYNQ = boards.load("pynq-z1")


def _raw(shape: tuple[int, ...], knobs: dict[str, int], ms: float) -> dict:
    keys = ("n", "cin", "h", "w", "cout", "kh", "kw", "pad", "stride")
    return {"shape": {"op": "conv2d", **dict(zip(keys, shape, strict=True)), "groups": 1},
            "knobs": knobs, "ms": ms, "board": "pynq-z1"}


@pytest.mark.parametrize("raw,message", [
    ({"not": "a list"}, "expected a JSON list"),
    ([], "no measured records"),
    ([{"shape": {}, "ms": 1.0}], "missing or wrong-typed knobs"),
    ([_raw((1, 16, 8, 8, 16, 3, 3, 1, 1), {}, "fast")], "wrong-typed ms"),
    ([_raw((1, 16, 8, 8, 16, 3, 3, 1, 1), {}, -1.0)], "ms must be a positive number"),
    ([{**_raw((1, 16, 8, 8, 16, 3, 3, 1, 1), {}, 1.0), "board": "ultra96"}],
     "measured on board 'ultra96'"),
    ([{**_raw((1, 16, 8, 8, 16, 3, 3, 1, 1), {}, 1.0),
       "shape": {"op": "dense", "n": 1}}], "shape needs integer m, k"),
    ([{**_raw((1, 16, 8, 8, 16, 3, 3, 1, 1), {}, 1.0),
       "shape": {"op": "pool2d"}}], "operator 'pool2d' cannot be calibrated on"),
    ([{**_raw((1, 16, 8, 8, 16, 3, 3, 1, 1), {}, 1.0),
       "shape": {**_raw((2**40, 16, 8, 8, 16, 3, 3, 1, 1), {}, 1.0)["shape"]}}],
     "shape n above 65,536"),
    ([_raw((1, 16, 8, 8, 16, 3, 3, 1, 1), {"tile_h": 1.5}, 1.0)], "knobs must be integers"),
    ([{**_raw((1, 16, 8, 8, 16, 3, 3, 1, 1), {}, 1.0), "shape": {"n": 1, "cin": 16}}],
     "shape needs integer h, w"),
])
def test_bad_records_are_one_clear_error(raw, message: str) -> None:
    with pytest.raises(UserError, match=message):
        cal.records_from_list(raw, "m.json", default(), "pynq-z1")


def test_design_from_bitstream_name() -> None:
    rec = {**_raw((1, 16, 8, 8, 16, 3, 3, 1, 1), {}, 1.0),
           "model": "pynq_1x16_i8w8a32_15_15_18_17"}
    (r,) = cal.records_from_list([rec], "m.json", default(), "pynq-z1")
    assert r.hw == default()
    rec["model"] = "pynq_1x8_i8w8a32_14_14_16_16"
    (r,) = cal.records_from_list([rec], "m.json", default(), "pynq-z1")
    assert (r.hw.block_in, r.hw.block_out, r.hw.log_uop_buff_size) == (8, 8, 14)


def _line(target: str, task: str, args: list, code: int = 0, seconds: float = 1e-3) -> str:
    entity = [["tile_b", "sp", [1, 1]], ["tile_h", "sp", [1, 8]], ["tile_w", "sp", [1, 8]],
              ["tile_ci", "sp", [2, 1]], ["tile_co", "sp", [2, 1]], ["oc_nthread", "ot", 2],
              ["h_nthread", "ot", 1]]
    return json.dumps({"input": [target, task, args, {}],
                       "config": {"index": 1, "code_hash": None, "entity": entity},
                       "result": [[seconds], code, 1.0, 1565395200.0], "version": 0.2,
                       "tvm_version": "0.7.dev0"})


VTA = "ext_dev -device=vta -keys=cpu -model=pynq_1x16_i8w8a32_15_15_18_17"
CONV = [["TENSOR", [1, 2, 8, 8, 1, 16], "int8"], ["TENSOR", [2, 2, 3, 3, 16, 16], "int8"],
        [1, 1], [1, 1, 1, 1], [1, 1], "NCHW1n16c", "int32"]


def test_log_skips_other_targets_boards_tasks_and_errors() -> None:
    text = "\n".join([
        "# MyNet - pynq_1x16_i8w8a32_15_15_18_17",
        _line(VTA, "conv2d_packed.vta", CONV),
        _line(VTA, "conv2d_packed.vta", CONV, code=1),
        _line(VTA, "conv2d_packed.vta", CONV, code=4),
        _line("llvm -device=arm_cpu -model=pynq", "conv2d_nchw_spatial_pack.arm_cpu", CONV),
        _line(VTA.replace("pynq_", "ultra96_"), "conv2d_packed.vta", CONV),
        _line(VTA, "pool2d.vta", CONV),
        _line(VTA, "conv2d_packed.vta", [CONV[0], CONV[1], [1, 1], [1, 0, 1, 0], [1, 1]]),
        "# Other - pynq_1x16_i8w8a32_15_15_18_17",
        _line(VTA, "conv2d_packed.vta", CONV, seconds=2e-3),
        _line(VTA, "dense_packed.vta", [["TENSOR", [1, 32, 1, 16], "int8"],
                                        ["TENSOR", [64, 32, 16, 16], "int8"], None, "int32"]),
    ])
    m = cal.records_from_log(text, "t.log", default(), PYNQ)
    assert m.skipped == {"with an error code": 2, "of other targets": 1, "of other boards": 1,
                         "of other tasks": 1, "whose conv2d arguments vtatune cannot express "
                         "(padding [1, 0, 1, 0])": 1}
    conv, conv2, dense = m.records
    assert conv.workload.signature == conv2.workload.signature
    assert (conv.workload.cin, conv.workload.cout, conv.workload.h, conv.workload.pad) == (
        32, 32, 8, 1)
    assert conv.knobs == {"tile_b": 1, "tile_h": 8, "tile_w": 8, "tile_ci": 1, "tile_co": 1,
                          "oc_nthread": 2, "h_nthread": 1}
    assert (conv.network, conv2.network, conv.session) == ("MyNet", "Other", "2019-08")
    assert (conv.ms, conv2.ms) == (pytest.approx(1.0), pytest.approx(2.0))
    assert (dense.workload.kind, dense.workload.m, dense.workload.k, dense.workload.n) == (
        "dense", 1, 512, 1024)
    with pytest.raises(UserError, match="line 2: not an AutoTVM record"):
        cal.records_from_log("# x\n{\"input\": 1}", "t.log", default(), PYNQ)
    with pytest.raises(UserError, match="no measurement of pynq-z1's VTA designs"):
        cal.records_from_log(_line(VTA, "conv2d_packed.vta", CONV, code=1), "t.log",
                             default(), PYNQ)
