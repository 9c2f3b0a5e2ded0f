"""The model zoo: each network file holds its paper's layers (counted here independently from
the published stage descriptions), and importing the same model built in ONNX gives the same
layers."""

from __future__ import annotations

from collections import Counter

import pytest

from vtatune.models import examples, import_model
from vtatune.networks import space as nspace
from vtatune.workloads.conv2d import Conv2d
from vtatune.workloads.conv2d_transpose import Conv2dTranspose
from vtatune.workloads.dense import Dense
from vtatune.workloads.group_conv2d import GroupConv2d

ZOO = ("resnet18", "resnet34", "resnet50", "mobilenet_v1", "vgg16", "dcgan")


def _kinds(net) -> Counter:
    """Layer runs per operator kind."""
    c: Counter = Counter()
    for la in net.layers:
        c[la.workload.kind] += la.count
    return c


def _signatures(net) -> Counter:
    c: Counter = Counter()
    for la in net.layers:
        c[la.workload.signature] += la.count
    return c


# ---- the architectures, from the papers' tables ----------------------------------------------

def _resnet_convs(blocks: list[int], bottleneck: bool) -> Counter:
    """Every convolution of a ResNet (He et al. 2016, Table 1) at 224x224, by shape: conv1,
    then per stage (widths 64..512, sizes 56..7) its blocks, the first block of stages 3-5
    downsampling (the basic block's first 3x3, the bottleneck's first 1x1), a 1x1 projection
    where the shape changes."""
    convs: Counter = Counter({Conv2d(1, 3, 224, 224, 64, 7, 7, 3, 2).signature: 1})
    cin, size = 64, 56
    for stage, n in enumerate(blocks):
        width = 64 << stage
        out = width * 4 if bottleneck else width
        for i in range(n):
            s = 2 if i == 0 and stage > 0 else 1
            h = size * s  # the block's input size
            if bottleneck:
                convs[Conv2d(1, cin, h, h, width, 1, 1, 0, s).signature] += 1
                convs[Conv2d(1, width, size, size, width, 3, 3, 1, 1).signature] += 1
                convs[Conv2d(1, width, size, size, out, 1, 1, 0, 1).signature] += 1
            else:
                convs[Conv2d(1, cin, h, h, width, 3, 3, 1, s).signature] += 1
                convs[Conv2d(1, width, size, size, width, 3, 3, 1, 1).signature] += 1
            if s != 1 or cin != out:
                convs[Conv2d(1, cin, h, h, out, 1, 1, 0, s).signature] += 1
            cin = out
        size //= 2 if stage < 3 else 1
    return convs


def test_resnet_counts_from_table_1() -> None:
    for name, blocks, bottleneck, n_conv in (("resnet18", [2, 2, 2, 2], False, 20),
                                             ("resnet34", [3, 4, 6, 3], False, 36),
                                             ("resnet50", [3, 4, 6, 3], True, 53)):
        net = nspace.load(name).network
        want = _resnet_convs(blocks, bottleneck)
        assert sum(want.values()) == n_conv
        fc_in = 2048 if bottleneck else 512
        assert _signatures(net) == want + Counter({Dense(1, fc_in, 1000).signature: 1}), name
        assert _kinds(net) == {"conv2d": n_conv, "dense": 1}


def test_resnet50_has_53_convolutions_and_one_fc() -> None:
    # the paper's 50 weight layers: 49 convolutions on the main path (1 + 3 x 16) and the fc;
    # the 4 projection shortcuts make 53
    net = nspace.load("resnet50").network
    assert _kinds(net) == {"conv2d": 1 + 3 * (3 + 4 + 6 + 3) + 4, "dense": 1}
    # ~3.8-4.1 GMACs as commonly quoted; exactly this count for the layers VTA runs
    assert net.macs == sum(Conv2d.from_signature(s).macs * n
                           for s, n in _resnet_convs([3, 4, 6, 3], True).items()) + 2048 * 1000


def test_mobilenet_v1_from_table_1() -> None:
    net = nspace.load("mobilenet_v1").network
    want: Counter = Counter({Conv2d(1, 3, 224, 224, 32, 3, 3, 1, 2).signature: 1,
                             Dense(1, 1024, 1000).signature: 1})
    size, c = 112, 32
    # Table 1 after conv1: (dw stride, pointwise channels) x 13; the last dw at stride 1
    for s, out in [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)] + [(1, 512)] * 5 \
            + [(2, 1024), (1, 1024)]:
        want[GroupConv2d(1, c, size, size, c, 3, 3, 1, s, c).signature] += 1
        size = (size + 2 - 3) // s + 1
        want[Conv2d(1, c, size, size, out, 1, 1, 0, 1).signature] += 1
        c = out
    assert size == 7 and c == 1024
    assert _signatures(net) == want
    # the paper's 28 layers; its Table 2 mult-adds: 569 million
    assert _kinds(net) == {"conv2d": 14, "group_conv2d": 13, "dense": 1}
    assert round(net.macs / 1e6) == 569


def test_vgg16_configuration_d() -> None:
    net = nspace.load("vgg16").network
    want: Counter = Counter()
    c, size = 3, 224
    for n, width in ((2, 64), (2, 128), (3, 256), (3, 512), (3, 512)):
        for _ in range(n):
            want[Conv2d(1, c, size, size, width, 3, 3, 1, 1).signature] += 1
            c = width
        size //= 2
    for k, n in ((512 * 7 * 7, 4096), (4096, 4096), (4096, 1000)):
        want[Dense(1, k, n).signature] += 1
    assert _signatures(net) == want
    assert _kinds(net) == {"conv2d": 13, "dense": 3}  # 16 weight layers


def test_dcgan_generator_figure_1() -> None:
    net = nspace.load("dcgan").network
    want = Counter({Dense(1, 100, 4 * 4 * 1024).signature: 1})
    size, c = 4, 1024
    for out in (512, 256, 128, 3):
        wl = Conv2dTranspose(1, c, size, size, out, 4, 4, 1, 2)
        assert wl.oh == 2 * size  # each doubles the size: 8, 16, 32, 64
        want[wl.signature] += 1
        size, c = wl.oh, out
    assert size == 64 and c == 3
    assert _signatures(net) == want


# ---- the same models in ONNX -----------------------------------------------------------------

@pytest.mark.parametrize("arch", ZOO)
def test_importing_the_onnx_model_gives_the_zoo_layers(tmp_path, arch) -> None:
    path = tmp_path / f"{arch}.onnx"
    examples.build(arch, batch="N", weights="external", path=path)
    m = import_model(path)
    zoo = nspace.load(arch).network
    assert _signatures(m.network) == _signatures(zoo)
    assert m.network.macs == zoo.macs
    assert m.graph.batch == 1 and "not fixed" in m.graph.batch_note


def test_the_int8_qdq_form_gives_the_same_layers(tmp_path) -> None:
    path = tmp_path / "resnet50_int8.onnx"
    examples.build("resnet50", qdq=True, weights="external", path=path)
    m = import_model(path)
    assert _signatures(m.network) == _signatures(nspace.load("resnet50").network)
    folded = dict(m.folded)
    # 54 weights and 54 layer inputs dequantized, 54 layer inputs quantized: all folded
    assert folded == {"DequantizeLinear": 108, "QuantizeLinear": 54}
    assert not any(h.op in ("QuantizeLinear", "DequantizeLinear") for h in m.host_ops)


def test_zoo_names_are_search_names() -> None:
    assert set(ZOO) <= set(nspace.builtin_names())


# ---- host operators --------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ZOO)
def test_zoo_host_ops_are_what_import_reads(tmp_path, arch) -> None:
    """The zoo file lists the host operators `vtatune import` reads from the same model."""
    path = tmp_path / f"{arch}.onnx"
    examples.build(arch, batch="N", weights="external", path=path)
    imported = [(h.op, h.count) for h in import_model(path).host_ops]
    zoo = nspace.load(arch).network.host_ops
    assert [(h.op, h.count) for h in zoo] == imported
    assert all(h.shapes for h in zoo)


def test_resnet_host_ops_from_table_1() -> None:
    """He et al. 2016, Table 1: one max pool after conv1, one residual addition per block
    (a ReLU after it and after every convolution of the block but its last, plus conv1's),
    one global average pool; batch normalization after every convolution."""
    for arch, blocks, convs_per_block, convs in (("resnet18", 8, 2, 20),
                                                  ("resnet50", 16, 3, 53)):
        host = {h.op: h for h in nspace.load(arch).network.host_ops}
        assert host["Add"].count == blocks
        assert host["Relu"].count == 1 + blocks * convs_per_block
        assert host["BatchNormalization"].count == convs
        assert host["MaxPool"].count == 1 and host["MaxPool"].shapes == ("1x64x112x112",)
        assert host["GlobalAveragePool"].count == 1
    assert nspace.load("resnet18").network.host_ops[2].shapes == (
        "1x64x56x56", "1x128x28x28", "1x256x14x14", "1x512x7x7")
