"""Network files: the built-in ResNet-18 against its architecture, and every kind of bad file."""

from __future__ import annotations

from collections import Counter

import pytest

from vtatune import networks
from vtatune.errors import ConfigError
from vtatune.networks import network as net
from vtatune.networks import space as nspace
from vtatune.workloads import Conv2d, Dense


def _resnet18_convs() -> list[Conv2d]:
    """ResNet-18's convolutions built from the architecture (He et al. 2016, Table 1; option B
    shortcuts as torchvision's BasicBlock), independently of the shipped file."""
    convs = [Conv2d(1, 3, 224, 224, 64, 7, 7, 3, 2)]
    h, cin = 56, 64  # after the 3x3/2 max pool
    for stage, cout in enumerate((64, 128, 256, 512)):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            convs.append(Conv2d(1, cin, h, h, cout, 3, 3, 1, stride))
            out = h // stride
            convs.append(Conv2d(1, cout, out, out, cout, 3, 3, 1, 1))
            if stride != 1 or cin != cout:
                convs.append(Conv2d(1, cin, h, h, cout, 1, 1, 0, stride))
            cin, h = cout, out
    return convs


def test_resnet18_counts_match_the_architecture() -> None:
    sp = networks.load("resnet18")
    convs = _resnet18_convs()
    assert len(convs) == 20
    shipped = Counter()
    for layer in sp.network.layers:
        if layer.workload.kind == "conv2d":
            shipped[layer.workload.signature] += layer.count
    assert shipped == Counter(c.signature for c in convs)
    assert sum(shipped.values()) == 20
    assert [la.name for la in sp.network.layers] == [f"C{i}" for i in range(1, 12)] + ["fc"]
    fc = sp.network.layer("fc")
    assert fc.workload == Dense(1, 512, 1000) and fc.count == 1
    # MACs of the whole network: ResNet-18's well-known ~1.8 G multiply-accumulates
    assert sp.network.macs == sum(c.macs for c in convs) + 512 * 1000
    assert 1.80e9 < sp.network.macs < 1.83e9


def test_resnet18_space_is_joint_over_the_conv2d_hardware() -> None:
    from vtatune.search import space as spaces

    sp = networks.load("resnet18")
    single = spaces.load("conv2d")
    assert sp.hw_choices == single.hw_choices and sp.board == single.board
    assert sp.objective == "area-latency" and len(sp.units) == 12
    c2 = sp.unit_spaces[sp.network.layer("C2").workload.signature]
    assert c2.knobs == single.knobs  # the same candidates as a per-layer study
    assert sp.hw_space.knobs == () and sp.hw_space.workload.name == "C2"


def _layers(*entries: dict) -> dict:
    return {"network": {"name": "n", "layers": list(entries)}}


GOOD = {"name": "a", "kind": "conv2d", "shape": "1,16,8,8,16,3,3,1,1", "count": 2}


def test_a_user_network_file(tmp_path) -> None:
    p = tmp_path / "mine.toml"
    p.write_text('[network]\nname = "tiny"\n'
                 '[[network.layers]]\nname = "a"\nkind = "conv2d"\n'
                 'shape = [1, 16, 8, 8, 16, 3, 3, 1, 1]\ncount = 2\n'
                 '[[network.layers]]\nname = "b"\nkind = "dense"\nshape = "1,64,32"\n'
                 '[[network.layers]]\nname = "a2"\nkind = "conv2d"\n'
                 'shape = "1,16,8,8,16,3,3,1,1"\ncount = 3\n')
    sp = networks.load(str(p))
    assert sp.network.name == "tiny" and [la.count for la in sp.network.layers] == [2, 1, 3]
    units = sp.units
    assert [u.name for u in units] == ["a", "b"] and units[0].count == 5  # same shape: one unit
    assert sp.objective == "latency" and not sp.searched_hw  # no [hardware]: fixed design
    assert networks.is_network_file(str(p))


@pytest.mark.parametrize(("raw", "needle"), [
    ({"network": {"name": "n"}}, "has no layers"),
    ({"network": {"layers": []}}, "has no layers"),
    (_layers({**GOOD, "kind": "pool2d"}), "unknown workload 'pool2d'"),
    (_layers({**GOOD, "count": 0}), "count 0 must be between 1"),
    (_layers({**GOOD, "count": -3}), "count -3 must be between 1"),
    (_layers({**GOOD, "count": 2.5}), "count 2.5 must be an integer"),
    (_layers({**GOOD, "count": True}), "count True must be an integer"),
    (_layers({**GOOD, "shape": "1,16,8"}), "takes 9 comma-separated integers"),
    (_layers({**GOOD, "shape": "1,16,8,8,x,3,3,1,1"}), "every field must be an integer"),
    (_layers({**GOOD, "shape": "1,16,8,8,16,0,3,1,1"}), "kh=0 must be >= 1"),
    (_layers({**GOOD, "shape": {"n": 1}}), "must be a string of comma-separated"),
    (_layers({**GOOD, "layer": "C2"}), "give either shape or layer, not both"),
    (_layers({k: v for k, v in GOOD.items() if k != "shape"}), "give either shape or layer"),
    (_layers({**GOOD, "name": "a b"}), "must be 1-64 letters"),
    (_layers({**GOOD, "name": "../x"}), "must be 1-64 letters"),
    (_layers({k: v for k, v in GOOD.items() if k != "name"}), "no name"),
    (_layers({k: v for k, v in GOOD.items() if k != "kind"}), "no kind"),
    (_layers(GOOD, dict(GOOD)), "duplicate name (also layer 1)"),
    (_layers({**GOOD, "stride": 2}), "unknown key 'stride'"),
    ({"network": {"layers": "C1"}}, "must be a list of tables"),
    ({"network": "resnet18"}, "[network] must be a table"),
    ({**_layers(GOOD), "workload": {"kind": "conv2d"}}, "unknown section [workload]"),
    ({**_layers(GOOD), "inner": {"trials": 0}}, "[inner] trials must be an integer"),
    ({**_layers(GOOD), "inner": {"sampler": "tpe"}}, "[inner] sampler 'tpe'"),
    ({**_layers(GOOD), "hardware": {"LOG_BLOCKS": [4]}}, "unknown parameter 'LOG_BLOCKS'"),
    ({**_layers(GOOD), "hardware": {"LOG_BLOCK": [4], "LOG_BLOCK_OUT": [3]}},
     "either LOG_BLOCK or LOG_BLOCK_IN/LOG_BLOCK_OUT"),
    # a minimum above the budget would tune each design until its layers' spaces run out
    ({**_layers(GOOD), "inner": {"trials": 8, "min_per_layer": 100_000}},
     "[inner] min_per_layer (100,000) must not exceed the layer evaluations per design"),
    ({**_layers(GOOD), "schedule": {"knobs": ["tile_q"]}}, "unknown knobs ['tile_q']"),
])
def test_bad_network_spaces_name_the_problem(raw, needle) -> None:
    with pytest.raises(ConfigError) as err:
        nspace.from_dict(raw, "bad.toml")
    assert needle in str(err.value)
    assert "\n" not in str(err.value)


def test_the_minimum_per_layer_may_equal_the_budget() -> None:
    sp = nspace.from_dict({**_layers(GOOD), "inner": {"trials": 3, "min_per_layer": 3}}, "ok")
    assert (sp.inner.trials, sp.inner.min_per_layer) == (3, 3)
    with pytest.raises(ConfigError, match="--layer-trials: 2"):
        nspace.from_dict({**_layers(GOOD), "inner": {"min_per_layer": 3}}, "x.toml",
                         inner_trials=2)


def test_a_long_layer_name_is_not_echoed_whole() -> None:
    long = "x" * 5000
    with pytest.raises(ConfigError) as err:
        nspace.from_dict(_layers({**GOOD, "name": long, "shape": "1,2"}), "bad.toml")
    assert err.value.problems and all(long[:100] not in p for p in err.value.problems)
    assert "must be 1-64 letters" in str(err.value)


def test_a_board_option_that_is_no_board_is_its_own_error(tmp_path) -> None:
    # --board names a board or a board JSON file: a file that is not one is blamed, not the
    # network file
    with pytest.raises(ConfigError) as err:
        nspace.from_dict(_layers(GOOD), "net.toml", board=str(tmp_path / ".." / "passwd"))
    assert err.value.source == "board" and "net.toml" not in str(err.value)
    bad = tmp_path / "passwd"
    bad.write_text("root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(ConfigError) as err:
        nspace.from_dict(_layers(GOOD), "net.toml", board=str(bad))
    assert str(err.value).startswith("board ") and "not valid JSON" in str(err.value)
    assert "net.toml" not in str(err.value)


def test_every_problem_is_listed_at_once() -> None:
    raw = _layers({**GOOD, "count": 0}, {**GOOD, "name": "b", "kind": "pool2d"},
                  {**GOOD, "name": "b"})
    raw["inner"] = {"trials": -1}
    with pytest.raises(ConfigError) as err:
        nspace.from_dict(raw, "bad.toml")
    assert len(err.value.problems) == 4


def test_unreadable_files_are_one_line(tmp_path) -> None:
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[network]\nname = "caf\xe9"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        networks.load(str(bad))
    huge = tmp_path / "huge.toml"
    huge.write_bytes(b"#" * (nspace.MAX_FILE_BYTES + 10))
    with pytest.raises(ConfigError, match="more than the 1,048,576 allowed"):
        networks.load(str(huge))
    broken = tmp_path / "broken.toml"
    broken.write_text("[network\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        networks.load(str(broken))
    with pytest.raises(ConfigError, match="no such file"):
        networks.load(str(tmp_path / "missing.toml"))
    plain = tmp_path / "plain.toml"
    plain.write_text('[workload]\nkind = "dense"\n')
    with pytest.raises(ConfigError, match="no \\[network\\] table"):
        networks.load(str(plain))


def test_too_many_layers_is_refused_without_parsing_them() -> None:
    many = [{**GOOD, "name": f"l{i}"} for i in range(net.MAX_LAYERS + 1)]
    with pytest.raises(ConfigError, match="at most 1000"):
        nspace.from_dict(_layers(*many), "many.toml")


def test_log_block_makes_every_design_square() -> None:
    # VTA's own key in a network file: one choice for BLOCK_IN = BLOCK_OUT, in the outer
    # (hardware) space and every layer's space alike
    from tests.networks.tiny_space import TINY

    hardware = {k: v for k, v in TINY["hardware"].items() if not k.startswith("LOG_BLOCK")}
    sp = nspace.from_dict({**TINY, "hardware": {**hardware, "LOG_BLOCK": [3, 4]}}, "sq.toml")
    assert sp.searched_hw == {"LOG_BLOCK_IN": (3, 4), "LOG_WGT_BUFF_SIZE": (15, 16)}
    for space in (sp.hw_space, *sp.unit_spaces.values()):
        for b in (3, 4):
            hw = space.hardware({"LOG_BLOCK_IN": b, "LOG_WGT_BUFF_SIZE": 15})
            assert hw.log_block_in == hw.log_block_out == b


def test_readme_network_example_yields_only_buildable_designs(tmp_path) -> None:
    # README's network-file example once searched LOG_BLOCK_IN = [3, 4]: half its designs
    # (1x8x16 with the default buffers) need a 139-bit GEMM instruction, hw_invalid
    import itertools
    import re
    from pathlib import Path

    from vtatune.area import estimate, fit
    from vtatune.hardware import boards, config

    readme = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "networks.md").read_text()
    example = next(b for b in re.findall(r"```toml\n(.*?)```", readme, re.S)
                   if "[network]" in b)
    (tmp_path / "mynet.toml").write_text(example)
    sp = nspace.load(str(tmp_path / "mynet.toml"))
    keys = list(sp.searched_hw)
    designs = [sp.hw_space.hardware(dict(zip(keys, c, strict=True)))
               for c in itertools.product(*sp.searched_hw.values())]
    assert len(designs) >= 2
    board = boards.load(sp.board)
    for hw in designs:
        assert config.problems_of(hw) == [], hw.name
        assert fit(estimate(hw, board), board).fits, hw.name
