"""The operator registry: every operator keeps the contract, and a new operator is one module.

The plug-in test defines an operator whose knobs have names no other module knows and checks
that parsing, the knob space, the search space, the cost-model features, the analytic estimate,
compilation and bit-exact simulation all work without touching anything else.
"""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from vtatune import schedules, workloads
from vtatune.errors import WorkloadError
from vtatune.hardware import config
from vtatune.schedules import knobs as kn
from vtatune.workloads import registry
from vtatune.workloads.base import Workload
from vtatune.workloads.dense import Dense

#: Names of the toy operator's knobs -> the Dense knob each one stands for.
RENAMED = {"rows": "tile_b", "depth": "tile_ci", "cols": "tile_co", "lanes": "oc_nthread"}


@dataclass(frozen=True)
class Matmul(Dense):
    """Dense under another name, with knobs named so that no closed list could know them."""

    kind: ClassVar[str] = "toy_matmul"
    KNOBS: ClassVar[tuple[kn.Knob, ...]] = (
        kn.spatial("rows", "b", kn.BATCH_TILES),
        kn.reduction("depth", "ci", kn.IN_CHANNEL_TILES),
        kn.spatial("cols", "co", kn.OUT_CHANNEL_TILES),
        kn.thread("lanes", "cols"),
    )
    SIGNATURE: ClassVar[re.Pattern[str]] = re.compile(r"toy_matmul_m(\d+)_k(\d+)_n(\d+)")
    DEFAULT: ClassVar[str] = "8,64,48"

    @property
    def signature(self) -> str:
        return f"toy_matmul_m{self.m}_k{self.k}_n{self.n}"

    @staticmethod
    def _dense(k: dict[str, int]) -> dict[str, int]:
        return {RENAMED[n]: v for n, v in k.items()}

    def schedule(self, sch: Any, hw: Any, knobs: dict[str, int]) -> None:
        super().schedule(sch, hw, self._dense(knobs))

    def footprint(self, hw: Any, knobs: dict[str, int]) -> dict[str, int]:
        return super().footprint(hw, self._dense(knobs))

    def traffic(self, hw: Any, knobs: dict[str, int]) -> int:
        return super().traffic(hw, self._dense(knobs))

    def copies(self, hw: Any, knobs: dict[str, int]) -> list[Any]:
        return super().copies(hw, self._dense(knobs))


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> type[Workload]:
    registry.operators()  # discover the shipped ones first
    monkeypatch.setitem(registry._operators, Matmul.kind, Matmul)
    return Matmul


def test_shipped_operators_are_registered() -> None:
    assert {"conv2d", "dense"} <= set(workloads.kinds())
    assert workloads.get("conv2d") is workloads.Conv2d


@pytest.mark.parametrize("kind", sorted(registry.operators()))
def test_every_operator_keeps_the_contract(kind: str) -> None:
    cls = registry.get(kind)
    wl = registry.parse(kind)  # its default
    assert isinstance(wl, cls) and wl.kind == kind
    assert registry.from_signature(wl.signature) == wl
    hw = config.default()
    extents = wl.tiles(hw)
    for k in cls.KNOBS:
        assert k.role == kn.THREAD or k.axis in extents, k
    space = schedules.knob_space(wl, hw)
    assert space.names == [k.name for k in cls.KNOBS]
    knobs = schedules.suggest(wl, hw)
    assert space.problem(knobs) is None
    fp = wl.footprint(hw, knobs)
    assert set(fp) == {"inp", "wgt", "acc", "uops"} and wl.traffic(hw, knobs) > 0
    assert wl.padded_macs(hw) >= wl.macs > 0
    for name, layer in cls.layers().items():
        assert name == name.upper() and layer.name == name
        assert registry.parse_layer(kind, name.lower()) == layer
    shape = ",".join(["x"] * len(cls.SHAPE.split(",")))
    with pytest.raises(WorkloadError, match="integer"):
        cls.from_shape(shape)


def test_parse_layer_takes_a_name_or_a_shape() -> None:
    assert registry.parse_layer("conv2d", "c2").name == "C2"
    assert registry.parse_layer("dense", "4,32,48") == Dense(4, 32, 48)
    with pytest.raises(WorkloadError, match="unknown layer 'C0' for conv2d"):
        registry.parse_layer("conv2d", "C0")
    with pytest.raises(WorkloadError, match="unknown workload 'pool'"):
        registry.parse_layer("pool", "C1")


def test_registering_a_malformed_or_clashing_operator_fails() -> None:
    @dataclass(frozen=True)
    class NoShape(Dense):
        kind: ClassVar[str] = "no_shape"
        SHAPE: ClassVar[str] = ""

    with pytest.raises(TypeError, match="SHAPE"):
        registry.register(NoShape)

    @dataclass(frozen=True)
    class Clash(Dense):
        kind: ClassVar[str] = "conv2d"

    with pytest.raises(TypeError, match="registered twice"):
        registry.register(Clash)

    @dataclass(frozen=True)
    class BadThread(Dense):
        kind: ClassVar[str] = "bad_thread"
        KNOBS: ClassVar[tuple[kn.Knob, ...]] = (kn.thread("t", "nowhere"),)

    with pytest.raises(TypeError, match="unknown knob 'nowhere'"):
        registry.register(BadThread)


def test_a_new_operator_is_one_module(toy: type[Workload]) -> None:
    from vtatune.compiler import compile_candidate
    from vtatune.runtime import build_program, execute, random_inputs
    from vtatune.search import space as spaces
    from vtatune.search.cost_model import analytic
    from vtatune.search.cost_model.features import Featurizer

    wl = workloads.parse("toy_matmul", shape="8,64,64")
    assert registry.from_signature(wl.signature) == wl
    hw = config.load("1x16x16_small")
    space = schedules.knob_space(wl, hw)
    assert space.names == ["rows", "depth", "cols", "lanes"]
    assert space.axes["cols"] == (1, 2, 4) and space.elements["depth"] == 16
    assert space.problem({"rows": 8, "depth": 1, "cols": 1, "lanes": 2}) is None
    assert "lanes=2" in space.problem({"rows": 8, "depth": 1, "cols": 4, "lanes": 2})

    # the search space: tile knobs become log-positions, the thread knob a category
    sp = spaces.from_dict({"workload": {"kind": "toy_matmul", "shape": "8,64,64"},
                           "hardware": {"base": "1x16x16_small", "LOG_BLOCK_OUT": [3, 4]}},
                          "toy")
    assert sp.thread_knobs == ("lanes",)
    kinds = {n: v[0] for n, v in sp.param_space().items()}
    assert kinds["u_rows"] == kinds["u_depth"] == "float" and kinds["lanes"] == "categorical"
    # u = 0.5 of 64 channels: 8 channels, one tile of BLOCK_OUT 8
    params = {"LOG_BLOCK_OUT": 3, "u_rows": 1.0, "u_depth": 0.0, "u_cols": 0.5, "lanes": 2}
    cand, why = sp.realize(params)
    assert cand is not None, why
    assert cand.knobs == {"rows": 8, "depth": 1, "cols": 1, "lanes": 2}
    # canonical positions: the smallest depth tile is one BLOCK_IN tile, 16 of 64 channels
    assert sp.params_of(cand) == pytest.approx({**params, "u_depth": 2 / 3})
    f = Featurizer(sp)
    point = f.point(params)
    assert point.knobs == cand.knobs and np.isfinite(f.matrix([point])).all()
    assert analytic.estimate(cand, sp.board).cycles > 0

    # compile, build and run bit-exactly
    knobs = {"rows": 8, "depth": 2, "cols": 1, "lanes": 1}
    res = compile_candidate(wl, hw, knobs)
    assert res.ok, res.reason
    program = build_program(res, wl, hw)
    data, kernel = random_inputs(wl, 3)
    np.testing.assert_array_equal(execute(program, wl, data, kernel).output,
                                  wl.reference(data, kernel))


def test_plugins_outside_the_package_load_from_entry_points(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "vt_plugin_op.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass
        from typing import ClassVar
        from vtatune.workloads.dense import Dense
        from vtatune.workloads.registry import register

        @register
        @dataclass(frozen=True)
        class Outside(Dense):
            kind: ClassVar[str] = "outside_op"
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))

    class EntryPoint:
        def load(self) -> Any:
            import importlib

            return importlib.import_module("vt_plugin_op")

    import importlib.metadata as md

    monkeypatch.setattr(md, "entry_points", lambda group: [EntryPoint()]
                        if group == registry.ENTRY_POINT_GROUP else [])
    monkeypatch.setattr(registry, "_discovered", False)
    monkeypatch.setattr(registry, "_operators", dict(registry._operators))
    monkeypatch.delitem(sys.modules, "vt_plugin_op", raising=False)
    assert "outside_op" in registry.kinds()
    assert registry.parse("outside_op", shape="1,16,16").kind == "outside_op"


def test_summary_names_the_layer_and_its_network() -> None:
    # a newcomer reads "C8" in every study name: the summary says what it is
    from vtatune.workloads import registry as reg

    assert reg.parse("conv2d", "C8").summary() == (
        "C8, a ResNet-18 layer: conv2d N=1, CIN=256, H=14, W=14, COUT=256, KH=3, KW=3, "
        "PAD=1, STRIDE=1")
    assert reg.parse("dense", None, "16,64,64").summary() == "dense M=16, K=64, N=64"
    # a stored signature of a named layer's shape comes back as that layer
    assert reg.from_signature("conv2d_n1_c64_h56_w56_o64_k3x3_p1_s1").summary().startswith(
        "C2, a ResNet-18 layer: ")
    for kind in reg.kinds():  # every named layer says where it comes from
        cls = reg.get(kind)
        if cls.layers():
            assert cls.LAYERS_FROM, kind
