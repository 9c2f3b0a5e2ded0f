"""from_signature: the inverse of Workload.signature."""

from __future__ import annotations

import pytest

from vtatune.errors import WorkloadError
from vtatune.workloads import RESNET18, Conv2d, Dense, from_signature


def test_round_trips_every_resnet18_layer_with_its_name() -> None:
    for name, layer in RESNET18.items():
        wl = from_signature(layer.signature)
        assert wl == layer and wl.name == name


def test_round_trips_plain_shapes() -> None:
    for wl in (Dense(16, 64, 64), Dense(1, 3, 5), Conv2d(2, 16, 8, 9, 32, 3, 1, 0, 2)):
        assert from_signature(wl.signature) == wl


@pytest.mark.parametrize("sig", ["", "dense_m16_k64", "conv2d_n1_c16", "gemm_m1_k2_n3",
                                 "dense_m16_k64_n64_extra", "dense_m0_k64_n64"])
def test_rejects_what_is_not_a_signature(sig: str) -> None:
    with pytest.raises(WorkloadError):
        from_signature(sig)


def test_padding_per_axis_round_trips_and_symmetric_forms_are_unchanged() -> None:
    from vtatune.models.importer import shape_text
    from vtatune.workloads import parse
    from vtatune.workloads.conv2d_transpose import Conv2dTranspose
    from vtatune.workloads.group_conv2d import GroupConv2d

    inception = Conv2d(1, 768, 17, 17, 192, 1, 7, 0, 1, pad_w=3)
    assert (inception.oh, inception.ow) == (17, 17)  # 17 + 2*3 - 7 + 1 columns
    assert inception.signature == "conv2d_n1_c768_h17_w17_o192_k1x7_p0x3_s1"
    assert shape_text(inception) == "1,768,17,17,192,1,7,0x3,1"
    assert "PAD=0x3" in inception.summary()
    assert parse("conv2d", shape="1,768,17,17,192,1,7,0x3,1") == inception
    grouped = GroupConv2d(1, 64, 14, 14, 64, 3, 1, 1, 2, 8, pad_w=0)
    transposed = Conv2dTranspose(1, 16, 5, 4, 16, 4, 4, 1, 2, pad_w=2)
    for wl in (inception, grouped, transposed):
        assert from_signature(wl.signature) == wl
        assert parse(wl.kind, shape=shape_text(wl)) == wl
    assert grouped.signature.endswith("_p1x0_s2_g8") and (grouped.oh, grouped.ow) == (7, 7)
    assert (transposed.oh, transposed.ow) == (4 * 2 - 2 + 4, 3 * 2 - 4 + 4)
    # the same padding on both axes: the forms stored results and records always had
    c8 = RESNET18["C8"]
    assert c8.signature == "conv2d_n1_c256_h14_w14_o256_k3x3_p1_s1"
    assert Conv2d(1, 256, 14, 14, 256, 3, 3, 1, 1, pad_w=1, name="C8") == c8
    assert from_signature("conv2d_n1_c256_h14_w14_o256_k3x3_p1_s1").pad_w == 1
    assert shape_text(c8) == "1,256,14,14,256,3,3,1,1" and "pad_w" not in c8.describe()


@pytest.mark.parametrize(("text", "why"), [
    ("1,16,8,8,16,1,3,0xa,1", "PAD must be an integer or PAD_HxPAD_W"),
    ("1,16,8,8,16,1,3,x1,1", "PAD must be an integer or PAD_HxPAD_W"),
    ("1,16,8,8,16,1,3,0x-1,1", "PAD must be an integer or PAD_HxPAD_W"),
    ("1,16,8,8,16,1,9,0x0,1", "does not fit"),
])
def test_bad_padding_per_axis_is_one_line(text: str, why: str) -> None:
    from vtatune.workloads import parse

    with pytest.raises(WorkloadError, match=why) as exc:
        parse("conv2d", shape=text)
    assert "\n" not in str(exc.value)
