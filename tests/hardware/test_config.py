"""HwConfig: VTA's derived sizes, field widths and validation."""

from __future__ import annotations

import json

import pytest

from vtatune.errors import ConfigError
from vtatune.hardware import config, hw_spec
from vtatune.hardware.config import HwConfig


def test_default_matches_vta_hw_spec() -> None:
    # Golden values of VTA's default 1x16x16 design (hw_spec.h derivations).
    c = config.default()
    assert (c.batch, c.block_in, c.block_out) == (1, 16, 16)
    assert (c.inp_depth, c.wgt_depth, c.acc_depth, c.uop_depth) == (2048, 1024, 2048, 8192)
    assert c.out_buff_bytes == 32 * 1024  # acc buffer x 8 / 32
    assert (c.inp_tile_bytes, c.wgt_tile_bytes, c.acc_tile_bytes) == (16, 256, 64)
    assert c.peak_ops_per_cycle == 512
    # 127 bits of GEMM/ALU fields; word-aligned by the ISA layout, they end at bit 128
    lay = hw_spec.layouts(c)
    assert lay["gemm"].end_bit == 128 and lay["alu"].end_bit == 128 and c.gemm_uop_bits == 32


@pytest.mark.parametrize("path", config.shipped(), ids=lambda p: p.stem)
def test_every_shipped_config_validates(path) -> None:
    c = config.load(path)
    assert config.problems_of(c) == []
    assert all(lay.fits for lay in hw_spec.layouts(c).values()) and c.gemm_uop_bits <= 32
    # a round trip through VTA's own format gives the same design
    assert config.from_dict(c.to_vta_json()) == c


def test_shipped_set_covers_shapes_and_buffers() -> None:
    cfgs = [config.load(p) for p in config.shipped()]
    assert len(cfgs) >= 6
    assert len({c.batch for c in cfgs}) > 1
    assert len({c.block_in for c in cfgs}) > 1 and len({c.block_out for c in cfgs}) > 1
    assert len({(c.inp_buff_bytes, c.wgt_buff_bytes, c.acc_buff_bytes) for c in cfgs}) > 3


def test_log_block_and_split_keys_agree() -> None:
    a = config.from_dict({"LOG_BLOCK": 5})
    b = config.from_dict({"LOG_BLOCK_IN": 5, "LOG_BLOCK_OUT": 5})
    assert a == b and a.block_in == a.block_out == 32


@pytest.mark.parametrize("name, expected", [
    ("unknown_keys", ["unknown key 'LOG_BLOK'", "unknown key 'LOG_INP_BUFF_SIZ'"]),
    ("bad_types", ["LOG_BATCH must be an integer", "LOG_BLOCK must be an integer",
                   "LOG_ACC_BUFF_SIZE must be an integer", "TARGET must be a string"]),
    ("impossible", ["TARGET 'fpga9000'", "LOG_BATCH=9 is outside", "LOG_UOP_BUFF_SIZE=30",
                    "LOG_INP_WIDTH=2 is not supported"]),
    ("too_deep", ["GEMM instruction needs 139 bits", "micro-op needs 35 bits"]),
    ("both_block_keys", ["either LOG_BLOCK or LOG_BLOCK_IN"]),
    ("not_json", ["not valid JSON"]),
])
def test_malformed_examples_list_every_error(name: str, expected: list[str]) -> None:
    with pytest.raises(ConfigError) as err:
        config.load(config.hwconfig_dir() / "malformed" / f"{name}.json")
    text = str(err.value)
    for fragment in expected:
        assert fragment in text
    assert len(err.value.problems) >= len(expected) or name == "not_json"


def test_missing_file_is_a_config_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        config.load(tmp_path / "nope.json")


def test_shipped_name_resolves() -> None:
    assert config.load("1x32x32").block_in == 32


def test_buffer_too_small_for_two_tiles(tmp_path) -> None:
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps({"LOG_BATCH": 3, "LOG_BLOCK": 7, "LOG_INP_BUFF_SIZE": 10}))
    with pytest.raises(ConfigError, match="inp buffer"):
        config.load(p)


def test_key_is_stable_and_distinct() -> None:
    assert HwConfig().key == config.load("default").key
    assert HwConfig().key != config.load("1x8x8").key


def test_program_and_buffer_keys_split_the_log_keys() -> None:
    from dataclasses import replace

    from vtatune.compiler.compile import program_hw

    assert config.LOG_KEYS == config.PROGRAM_KEYS + config.BUFFER_KEYS
    assert all("BUFF_SIZE" in k for k in config.BUFFER_KEYS)
    assert not any("BUFF_SIZE" in k for k in config.PROGRAM_KEYS)
    c = config.default()
    # a compiled program sees no buffer size, and every other parameter
    for k in config.BUFFER_KEYS:
        assert program_hw(replace(c, **{k.lower(): getattr(c, k.lower()) - 1})) == program_hw(c)
    for k in ("LOG_BLOCK_OUT", "LOG_BATCH"):
        assert program_hw(replace(c, **{k.lower(): getattr(c, k.lower()) - 1})) != program_hw(c)


def test_from_params_inverts_log_params() -> None:
    c = HwConfig(log_block_in=5, log_wgt_buff_size=17, target="pynq", name="x")
    back = HwConfig.from_params(c.log_params(), target="pynq", name="x")
    assert back == c and back.name == "x" and back.key == c.key
    assert HwConfig.from_params({"LOG_BATCH": 1}) == HwConfig(log_batch=1)
    with pytest.raises(TypeError):
        HwConfig.from_params({"LOG_NOT_A_KEY": 1})
