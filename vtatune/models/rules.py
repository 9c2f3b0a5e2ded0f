"""Which ONNX nodes VTA runs, and as which vtatune operator shape.

A rule reads one node of a loaded model (``graph.ModelGraph``) and returns the ``Workload``
VTA runs for it, or a ``Refusal`` naming why VTA cannot run this node although it runs nodes
of its kind (a dilation, an asymmetric padding, a 3-D convolution ...): such a node stays on
the host with its reason, never a wrong layer. Operators without a rule run on the host; one
whose name says it computes a convolution or a matrix product (``LAYER_LIKE``: ``Conv``,
``Gemm``, ``MatMul``, ``Einsum``, ``Attention``, a recurrent layer), in any domain, stays there
with a reason too, so no layer is ever dropped silently. Rules register themselves by domain
and ONNX operator name (``@rule("Conv", ...)``, ``@rule("QGemm", domain="com.microsoft")``).

The mapping, against what each vtatune operator takes (``vtatune/workloads/*.py``):

- ``Conv`` / ``ConvInteger`` / ``QLinearConv`` (and onnxruntime's ``com.microsoft``
  ``QLinearConv``, NCHW or ``channels_last``, and ``FusedConv``): group 1 -> ``conv2d``,
  other groups (depthwise included) -> ``group_conv2d``. Both take a padding per axis, the
  same before and after (rows above and below, columns left and right: Inception's 1x7 pads
  ``(0, 3)``), one stride for both axes, any ``KH x KW`` kernel, no dilation; the DMA engine
  pads at most 15 rows or columns (4-bit pad fields). A padding that differs before and after
  on an axis (``SAME_UPPER`` at stride 2, ``pads [0, 0, 1, 1]``) is refused as "asymmetric
  padding".
- ``ConvTranspose`` -> ``conv2d_transpose``: one group, a padding per axis (the same before
  and after), one stride, no dilation, no ``output_padding`` (the output is
  ``(H - 1) * S - 2 * PAD_H + KH`` by ``(W - 1) * S - 2 * PAD_W + KW``).
- ``Gemm`` (``transA`` 0, constant ``B``), ``MatMul`` / ``MatMulInteger`` / ``QLinearMatMul``
  of a 2-D input by a constant 2-D weight -> ``dense`` ``M,K,N``; so are onnxruntime's
  ``com.microsoft`` ``QGemm`` (int8 ``Gemm``), ``FusedGemm``, ``DynamicQuantizeMatMul`` and
  ``MatMulIntegerToFloat``.

Every layer is checked against the output shape ONNX inferred for the node: a layer whose
output would differ is refused, not imported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vtatune.errors import WorkloadError
from vtatune.models.graph import ModelGraph, dims_of
from vtatune.workloads.base import Workload
from vtatune.workloads.conv2d import Conv2d
from vtatune.workloads.conv2d_transpose import Conv2dTranspose
from vtatune.workloads.dense import Dense
from vtatune.workloads.group_conv2d import GroupConv2d

#: Largest padding VTA's load engine writes on the fly (4-bit pad fields, hw_spec.h).
MAX_PAD = (1 << 4) - 1
#: onnxruntime's contrib operator domain.
MICROSOFT = "com.microsoft"
#: Operator names that compute a convolution or a matrix product (a layer's kind): a node of
#: such an operator without a rule stays on the host with a reason, never silently.
LAYER_LIKE = re.compile(r"Conv|Gemm|MatMul|Einsum|Attention|LSTM|GRU|RNN")


@dataclass(frozen=True)
class Refusal:
    """Why VTA cannot run this node (it stays on the host)."""

    reason: str


Rule = Callable[[Any, ModelGraph], "Workload | Refusal"]
_RULES: dict[tuple[str, str], Rule] = {}


def rule(*op_types: str, domain: str = "") -> Callable[[Rule], Rule]:
    """Register ``fn`` as the rule of operators ``op_types`` of ``domain`` (default: ONNX's).
    """
    def wrap(fn: Rule) -> Rule:
        for op in op_types:
            _RULES[(domain, op)] = fn
        return fn
    return wrap


def recognized() -> tuple[str, ...]:
    """Operators VTA may run (``domain.Op`` outside ONNX's domain)."""
    return tuple(op if not domain else f"{domain}.{op}" for domain, op in _RULES)


def read(node: Any, g: ModelGraph) -> Workload | Refusal | None:
    """What VTA runs for ``node``: a workload, a refusal, or None (a host operator)."""
    domain = "" if node.domain == "ai.onnx" else node.domain
    fn = _RULES.get((domain, node.op_type))
    if fn is None:
        if LAYER_LIKE.search(node.op_type):
            op = node.op_type if not domain else f"{domain}.{node.op_type}"
            return Refusal(f"{op} computes a convolution or a matrix product, but vtatune has "
                           "no rule for it (VTA runs " + ", ".join(recognized()) + ")")
        return None
    try:
        return fn(node, g)
    except WorkloadError as exc:  # a shape vtatune's operator refuses (too large, ...)
        return Refusal(str(exc))


# ---- attributes ------------------------------------------------------------------------------

def attrs(node: Any) -> dict[str, Any]:
    import onnx

    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _text(v: Any) -> Any:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def _pads(a: dict[str, Any], spatial: tuple[int, ...], kernel: tuple[int, ...],
          strides: tuple[int, ...]) -> tuple[int, ...] | Refusal:
    """``(top, left, bottom, right)`` of a convolution, ``auto_pad`` resolved as ONNX does."""
    auto = _text(a.get("auto_pad", "NOTSET"))
    if auto in ("NOTSET", ""):
        pads = tuple(a.get("pads", (0,) * (2 * len(spatial))))
        return pads
    if auto == "VALID":
        return (0,) * (2 * len(spatial))
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        return _split_pads([max((-(-x // s) - 1) * s + k - x, 0)
                            for x, k, s in zip(spatial, kernel, strides, strict=True)], auto)
    return Refusal(f"auto_pad {auto!r} is not an ONNX padding mode")


def _split_pads(totals: list[int], auto: str) -> tuple[int, ...]:
    """``(*begins, *ends)``: each axis's ``total`` padding split as ONNX does, the odd one at
    the end for ``SAME_UPPER`` and at the beginning otherwise."""
    halves = [(t // 2, t - t // 2) if auto == "SAME_UPPER" else (t - t // 2, t // 2)
              for t in totals]
    return (*(begin for begin, _ in halves), *(end for _, end in halves))


def _common(a: dict[str, Any], rank: int, kernel: tuple[int, ...],
            spatial: tuple[int, ...], what: str) -> tuple[int, int, int] | Refusal:
    """``(pad_h, pad_w, stride)`` of a 2-D convolution VTA can run, or why it cannot."""
    if rank != 4:
        return Refusal(f"{rank - 2}-D {what}: VTA runs 2-D convolutions (NCHW)")
    dil = tuple(a.get("dilations", (1, 1)))
    if any(d != 1 for d in dil):
        return Refusal(f"dilations {'x'.join(map(str, dil))}: vtatune's {what} has no dilation")
    strides = tuple(a.get("strides", (1, 1)))
    if len(set(strides)) != 1:
        return Refusal(f"strides {'x'.join(map(str, strides))}: vtatune's {what} takes one "
                       "stride for both axes")
    pads = _pads(a, spatial, kernel, strides)
    if isinstance(pads, Refusal):
        return pads
    top, left, bottom, right = pads
    if (top, left) != (bottom, right):
        return Refusal(f"asymmetric padding (pads {list(pads)}: top, left, bottom, right): "
                       f"the padding before and after differs on an axis; vtatune's {what} "
                       "(as VTA's template) pads rows alike above and below and columns "
                       "alike left and right")
    return top, left, strides[0]


def _shapes(node: Any, g: ModelGraph, x: int, w: int, channels_last: bool = False
            ) -> tuple[tuple[int, ...], tuple[int, ...]] | Refusal:
    xs = g.shape(node.input[x]) if len(node.input) > x else None
    if channels_last and xs is not None and len(xs) >= 3:  # NHWC read as NCHW
        xs = (xs[0], xs[-1], *xs[1:-1])
    ws = g.shape(node.input[w]) if len(node.input) > w else None
    if xs is None or ws is None:
        return Refusal("its input shapes are unknown after ONNX shape inference")
    xd, wd = dims_of(xs), dims_of(ws)
    if xd is None or wd is None:
        return Refusal(f"its input shapes are not fixed ({_show(xs)}, {_show(ws)})")
    return xd, wd


def _show(shape: Any) -> str:
    return "x".join("?" if d is None else str(d) for d in shape)


def _check_output(node: Any, g: ModelGraph, want: tuple[int, ...],
                  channels_last: bool = False) -> Refusal | None:
    got = g.shape(node.output[0]) if node.output else None
    if channels_last and got is not None and len(got) >= 3:
        got = (got[0], got[-1], *got[1:-1])
    if got is not None and dims_of(got) is not None and tuple(got) != want:
        return Refusal(f"ONNX infers output {_show(got)} where the layer gives {_show(want)}")
    return None


# ---- convolutions ----------------------------------------------------------------------------

def _conv(node: Any, g: ModelGraph, x: int, w: int) -> Workload | Refusal:

    last = any(a.name == "channels_last" and a.i for a in node.attribute)
    found = _shapes(node, g, x, w, last)
    if isinstance(found, Refusal):
        return found
    xd, wd = found
    a = attrs(node)
    if len(wd) != len(xd):
        return Refusal(f"weight rank {len(wd)} does not match input rank {len(xd)}")
    common = _common(a, len(xd), wd[2:], xd[2:], "conv2d")
    if isinstance(common, Refusal):
        return common
    pad_h, pad_w, stride = common
    n, c, h, wi = xd
    m, cg, kh, kw = wd
    group = int(a.get("group", 1))
    if group < 1 or cg * group != c:
        return Refusal(f"weight {_show(wd)} with group {group} does not match {c} input "
                       "channels")
    if max(pad_h, pad_w) > MAX_PAD:
        return Refusal(f"padding {max(pad_h, pad_w)}: VTA's load engine pads at most "
                       f"{MAX_PAD}")
    if group == 1:
        wl: Workload = Conv2d(n, c, h, wi, m, kh, kw, pad_h, stride, pad_w=pad_w)
    else:
        wl = GroupConv2d(n, c, h, wi, m, kh, kw, pad_h, stride, group, pad_w=pad_w)
    return (_check_output(node, g, (n, m, wl.oh, wl.ow), last)  # type: ignore[attr-defined]
            or wl)


@rule("Conv")
@rule("FusedConv", domain=MICROSOFT)  # a Conv and its activation (host-side on VTA's flow)
def conv(node: Any, g: ModelGraph) -> Workload | Refusal:
    return _conv(node, g, 0, 1)


@rule("ConvInteger")
def conv_integer(node: Any, g: ModelGraph) -> Workload | Refusal:
    return _conv(node, g, 0, 1)


@rule("QLinearConv")
@rule("QLinearConv", domain=MICROSOFT)  # onnxruntime's, NCHW or channels_last (NHWC)
def qlinear_conv(node: Any, g: ModelGraph) -> Workload | Refusal:
    return _conv(node, g, 0, 3)


@rule("ConvTranspose")
def conv_transpose(node: Any, g: ModelGraph) -> Workload | Refusal:

    found = _shapes(node, g, 0, 1)
    if isinstance(found, Refusal):
        return found
    xd, wd = found
    a = attrs(node)
    what = "conv2d_transpose"
    if len(xd) != 4 or len(wd) != 4:
        return Refusal(f"{len(xd) - 2}-D transposed convolution: VTA runs 2-D ones (NCHW)")
    group = int(a.get("group", 1))
    if group != 1:
        return Refusal(f"group {group}: vtatune's {what} has no groups")
    if any(p != 0 for p in a.get("output_padding", ())):
        return Refusal(f"output_padding {list(a['output_padding'])}: vtatune's {what} has "
                       "none")
    n, c, h, w = xd
    cin, m, kh, kw = wd
    if cin != c:
        return Refusal(f"weight {_show(wd)} does not match {c} input channels")
    strides = tuple(a.get("strides", (1, 1)))
    if "output_shape" in a:
        # pads follow from the requested output size (ONNX's rule); then as any padding
        out = tuple(a["output_shape"])[-2:]
        if len(out) != 2:
            return Refusal(f"output_shape {list(a['output_shape'])} is not 2-D")
        totals = [s * (x - 1) + k - o
                  for x, k, s, o in zip((h, w), (kh, kw), strides, out, strict=False)]
        pads = _split_pads(totals, _text(a.get("auto_pad", "NOTSET")))
        b = {**a, "pads": pads, "auto_pad": "NOTSET"}
    elif _text(a.get("auto_pad", "NOTSET")) in ("SAME_UPPER", "SAME_LOWER"):
        totals = [max(k - s, 0) for k, s in zip((kh, kw), strides, strict=False)]  # out = in * S
        b = {**a, "pads": _split_pads(totals, _text(a["auto_pad"])), "auto_pad": "NOTSET"}
    else:
        b = a
    common = _common(b, 4, (kh, kw), (h, w), what)
    if isinstance(common, Refusal):
        return common
    pad_h, pad_w, stride = common
    wl = Conv2dTranspose(n, c, h, w, m, kh, kw, pad_h, stride, pad_w=pad_w)
    return _check_output(node, g, (n, m, wl.oh, wl.ow)) or wl


# ---- dense -----------------------------------------------------------------------------------

def _dense(node: Any, g: ModelGraph, a_i: int, b_i: int, trans_b: bool = False
           ) -> Workload | Refusal:

    if len(node.input) <= b_i or node.input[b_i] not in g.constants:
        return Refusal("its weights are not constant (a product of two computed tensors): "
                       "VTA's dense multiplies by a weight matrix")
    found = _shapes(node, g, a_i, b_i)
    if isinstance(found, Refusal):
        return found
    ad, bd = found
    if len(ad) != 2 or len(bd) != 2:
        return Refusal(f"a {max(len(ad), len(bd))}-D product ({_show(ad)} by {_show(bd)}): "
                       "vtatune's dense multiplies 2-D matrices")
    m, k = ad
    n = bd[0] if trans_b else bd[1]
    kb = bd[1] if trans_b else bd[0]
    if kb != k:
        return Refusal(f"inner sizes differ ({_show(ad)} by {_show(bd)})")
    wl = Dense(m, k, n)
    return _check_output(node, g, (m, n)) or wl


def _gemm(node: Any, g: ModelGraph, a_i: int, b_i: int) -> Workload | Refusal:
    a = attrs(node)
    if int(a.get("transA", 0)):
        return Refusal("transA=1 (a transposed input): vtatune's dense reads its input as "
                       "M x K")
    return _dense(node, g, a_i, b_i, trans_b=bool(int(a.get("transB", 0))))


@rule("Gemm")
@rule("FusedGemm", domain=MICROSOFT)  # a Gemm and its activation
def gemm(node: Any, g: ModelGraph) -> Workload | Refusal:
    return _gemm(node, g, 0, 1)


@rule("QGemm", domain=MICROSOFT)
def qgemm(node: Any, g: ModelGraph) -> Workload | Refusal:
    """onnxruntime's int8 Gemm: ``A, A_scale, A_zp, B, B_scale, B_zp, C, ...``."""
    return _gemm(node, g, 0, 3)


@rule("MatMul", "MatMulInteger")
@rule("DynamicQuantizeMatMul", "MatMulIntegerToFloat", domain=MICROSOFT)
def matmul(node: Any, g: ModelGraph) -> Workload | Refusal:
    return _dense(node, g, 0, 1)


@rule("QLinearMatMul")
def qlinear_matmul(node: Any, g: ModelGraph) -> Workload | Refusal:
    return _dense(node, g, 0, 3)
