"""ONNX models of the zoo's architectures, built with ``onnx.helper`` (nothing downloaded).

The tests import them and compare with the zoo's network files; the benchmarks time importing
them at full size. Each builder follows its paper's architecture table (the same sources as the
network files under ``spaces/``): ResNet-18/34/50 (He et al. 2016, Table 1), MobileNet v1
(Howard et al. 2017, Table 1), VGG-16 (Simonyan & Zisserman 2015, Table 1, column D) and the
DCGAN generator (Radford et al. 2016, Figure 1).

Weights are float32 zeros of the real shapes, stored in the model (``weights="embedded"``:
a ResNet-50 is ~100 MB) or in one external data file beside it (``"external"``: written as a
sparse file, so a 550 MB VGG-16 costs no disk and no memory to build). ``qdq=True`` builds the
int8 form quantization tools write: int8 weights behind ``DequantizeLinear`` and every layer's
input through ``QuantizeLinear``/``DequantizeLinear``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Architectures ``build`` knows.
ARCHITECTURES = ("resnet18", "resnet34", "resnet50", "mobilenet_v1", "vgg16", "dcgan")
#: Opset the builders write.
OPSET = 17


@dataclass
class Builder:
    """A graph under construction: nodes, weights (name, dims) and every value's shape."""

    name: str
    qdq: bool = False
    nodes: list[Any] = field(default_factory=list)
    weights: list[tuple[str, tuple[int, ...], str]] = field(default_factory=list)
    small: list[Any] = field(default_factory=list)  # small constant tensors (TensorProto)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    _n: int = 0

    def _id(self, op: str) -> str:
        self._n += 1
        return f"{op}{self._n}"

    def _node(self, op: str, inputs: list[str], name: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        name = name or self._id(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [name + "_out"], name=name, **attrs))
        return name + "_out"

    def _weight(self, name: str, dims: tuple[int, ...]) -> str:
        if not self.qdq:
            self.weights.append((name, dims, "float32"))
            return name
        from onnx import TensorProto, helper

        self.weights.append((name + "_q", dims, "int8"))
        self.small += [helper.make_tensor(name + "_scale", TensorProto.FLOAT, [], [0.01]),
                       helper.make_tensor(name + "_zp", TensorProto.INT8, [], [0])]
        return self._node("DequantizeLinear", [name + "_q", name + "_scale", name + "_zp"],
                          name=name + "_dq")

    def _qdq(self, x: str) -> str:
        """``x`` through QuantizeLinear and DequantizeLinear (the QDQ form's activations)."""
        if not self.qdq:
            return x
        from onnx import TensorProto, helper

        base = self._id("act")
        self.small += [helper.make_tensor(base + "_scale", TensorProto.FLOAT, [], [0.05]),
                       helper.make_tensor(base + "_zp", TensorProto.INT8, [], [0])]
        q = self._node("QuantizeLinear", [x, base + "_scale", base + "_zp"], name=base + "_q")
        out = self._node("DequantizeLinear", [q, base + "_scale", base + "_zp"],
                         name=base + "_dq")
        self.shapes[q] = self.shapes[out] = self.shapes[x]
        return out

    # ---- layers ------------------------------------------------------------------------------
    def input(self, shape: tuple[int, ...]) -> str:
        self.shapes["input"] = shape
        return "input"

    def conv(self, x: str, cout: int, k: int, stride: int = 1, pad: int | None = None,
             group: int = 1, name: str | None = None) -> str:
        n, c, h, w = self.shapes[x]
        pad = k // 2 if pad is None else pad
        name = name or self._id("conv")
        wt = self._weight(name + "_w", (cout, c // group, k, k))
        out = self._node("Conv", [self._qdq(x), wt], name=name, kernel_shape=[k, k],
                         pads=[pad] * 4, strides=[stride] * 2, group=group)
        self.shapes[out] = (n, cout, (h + 2 * pad - k) // stride + 1,
                            (w + 2 * pad - k) // stride + 1)
        return out

    def conv_transpose(self, x: str, cout: int, k: int, stride: int, pad: int,
                       name: str | None = None) -> str:
        n, c, h, w = self.shapes[x]
        name = name or self._id("convt")
        wt = self._weight(name + "_w", (c, cout, k, k))
        out = self._node("ConvTranspose", [self._qdq(x), wt], name=name, kernel_shape=[k, k],
                         pads=[pad] * 4, strides=[stride] * 2)
        self.shapes[out] = (n, cout, (h - 1) * stride - 2 * pad + k,
                            (w - 1) * stride - 2 * pad + k)
        return out

    def gemm(self, x: str, nout: int, name: str | None = None) -> str:
        n, k = self.shapes[x]
        name = name or self._id("fc")
        wt = self._weight(name + "_w", (nout, k))
        b = self._weight(name + "_b", (nout,)) if not self.qdq else None
        out = self._node("Gemm", [self._qdq(x), wt] + ([b] if b else []), name=name,
                         transB=1)
        self.shapes[out] = (n, nout)
        return out

    def bn(self, x: str) -> str:
        c = self.shapes[x][1]
        name = self._id("bn")
        params = [self._plain(f"{name}_{p}", (c,)) for p in ("scale", "bias", "mean", "var")]
        out = self._node("BatchNormalization", [x, *params], name=name)
        self.shapes[out] = self.shapes[x]
        return out

    def _plain(self, name: str, dims: tuple[int, ...]) -> str:
        self.weights.append((name, dims, "float32"))
        return name

    def act(self, x: str, op: str = "Relu") -> str:
        out = self._node(op, [x])
        self.shapes[out] = self.shapes[x]
        return out

    def add(self, a: str, b: str) -> str:
        out = self._node("Add", [a, b])
        self.shapes[out] = self.shapes[a]
        return out

    def maxpool(self, x: str, k: int, stride: int, pad: int) -> str:
        n, c, h, w = self.shapes[x]
        out = self._node("MaxPool", [x], kernel_shape=[k, k], strides=[stride] * 2,
                         pads=[pad] * 4)
        self.shapes[out] = (n, c, (h + 2 * pad - k) // stride + 1,
                            (w + 2 * pad - k) // stride + 1)
        return out

    def global_pool(self, x: str) -> str:
        n, c, _, _ = self.shapes[x]
        out = self._node("GlobalAveragePool", [x])
        self.shapes[out] = (n, c, 1, 1)
        return self.flatten(out)

    def flatten(self, x: str) -> str:
        n, *rest = self.shapes[x]
        out = self._node("Flatten", [x], axis=1)
        size = 1
        for d in rest:
            size *= d
        self.shapes[out] = (n, size)
        return out

    def reshape(self, x: str, shape: tuple[int, ...]) -> str:
        from onnx import TensorProto, helper

        name = self._id("shape")
        self.small.append(helper.make_tensor(name, TensorProto.INT64, [len(shape)],
                                             [-1, *shape[1:]]))  # any batch
        out = self._node("Reshape", [x, name])
        self.shapes[out] = shape
        return out

    # ---- the model ---------------------------------------------------------------------------
    def model(self, out: str, batch: int | str = 1, weights: str = "embedded",
              path: Path | None = None) -> Any:
        """The ModelProto (written to ``path`` when given; ``weights="external"`` needs
        ``path``: the data goes to ``<path>.data`` beside it)."""
        import numpy as np
        from onnx import TensorProto, helper, numpy_helper

        shape_in = list(self.shapes["input"])
        shape_in[0] = batch
        inits = list(self.small)
        offset = 0
        data_name = None if path is None else Path(path).name + ".data"
        for name, dims, dtype in self.weights:
            if weights == "embedded":
                inits.append(numpy_helper.from_array(np.zeros(dims, dtype=dtype), name))
                continue
            if data_name is None:
                raise ValueError("external weights need a path")
            t = TensorProto()
            t.name = name
            t.data_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
            t.dims.extend(dims)
            nbytes = int(np.prod(dims, dtype=np.int64)) * np.dtype(dtype).itemsize
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", data_name), ("offset", str(offset)),
                         ("length", str(nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            offset += (nbytes + 4095) // 4096 * 4096  # aligned, as onnx writes them
            inits.append(t)
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape_in)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="vtatune.models.examples")
        model.ir_version = 8
        if path is not None:
            path = Path(path)
            if weights == "external":
                with open(path.parent / data_name, "wb") as f:  # type: ignore[operator]
                    f.truncate(offset)  # sparse: zeros that take no disk
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
        return model


def build(arch: str, *, batch: int | str = 1, weights: str = "embedded",
          path: Path | None = None, qdq: bool = False) -> Any:
    """The ONNX model of ``arch`` (one of ``ARCHITECTURES``)."""
    if arch not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {arch!r} (known: {', '.join(ARCHITECTURES)})")
    b = Builder(arch, qdq=qdq)
    out = {"resnet18": lambda: _resnet(b, [2, 2, 2, 2], bottleneck=False),
           "resnet34": lambda: _resnet(b, [3, 4, 6, 3], bottleneck=False),
           "resnet50": lambda: _resnet(b, [3, 4, 6, 3], bottleneck=True),
           "mobilenet_v1": lambda: _mobilenet_v1(b), "vgg16": lambda: _vgg16(b),
           "dcgan": lambda: _dcgan(b)}[arch]()
    return b.model(out, batch=batch, weights=weights, path=path)


def _resnet(b: Builder, blocks: list[int], bottleneck: bool) -> str:
    """He et al. 2016, Table 1: conv1 7x7/2, max pool 3x3/2, four stages of basic (two 3x3)
    or bottleneck (1x1, 3x3, 1x1 at 4x width) blocks at widths 64-512; stages 3-5 halve the
    size in their first block (the basic block's first 3x3, the bottleneck's first 1x1, as
    the paper's released models) with a 1x1 projection shortcut wherever the shape changes
    (option B); global average pool, 1000-way fc."""
    x = b.input((1, 3, 224, 224))
    x = b.act(b.bn(b.conv(x, 64, 7, 2, 3, name="conv1")))
    x = b.maxpool(x, 3, 2, 1)
    for stage, (n, width) in enumerate(zip(blocks, (64, 128, 256, 512), strict=True), 2):
        for i in range(n):
            stride = 2 if i == 0 and stage > 2 else 1
            tag = f"conv{stage}_{i + 1}"
            cin = b.shapes[x][1]
            cout = width * 4 if bottleneck else width
            if bottleneck:
                y = b.act(b.bn(b.conv(x, width, 1, stride, 0, name=f"{tag}a")))
                y = b.act(b.bn(b.conv(y, width, 3, 1, 1, name=f"{tag}b")))
                y = b.bn(b.conv(y, cout, 1, 1, 0, name=f"{tag}c"))
            else:
                y = b.act(b.bn(b.conv(x, width, 3, stride, 1, name=f"{tag}a")))
                y = b.bn(b.conv(y, width, 3, 1, 1, name=f"{tag}b"))
            short = x
            if stride != 1 or cin != cout:
                short = b.bn(b.conv(x, cout, 1, stride, 0, name=f"{tag}_proj"))
            x = b.act(b.add(y, short))
    return b.gemm(b.global_pool(x), 1000, name="fc")


#: MobileNet v1 (Howard et al. 2017, Table 1) after conv1: (stride of the depthwise 3x3,
#: channels out of the pointwise 1x1). The table's last depthwise row says s2, but its input and
#: output are both 7x7: stride 1, as the reference implementation.
MOBILENET_V1 = ((1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512),
                (1, 512), (1, 512), (1, 512), (1, 512), (1, 512), (2, 1024), (1, 1024))


def _mobilenet_v1(b: Builder) -> str:
    x = b.input((1, 3, 224, 224))
    x = b.act(b.bn(b.conv(x, 32, 3, 2, 1, name="conv1")))
    for i, (stride, cout) in enumerate(MOBILENET_V1, 1):
        c = b.shapes[x][1]
        x = b.act(b.bn(b.conv(x, c, 3, stride, 1, group=c, name=f"dw{i}")))
        x = b.act(b.bn(b.conv(x, cout, 1, 1, 0, name=f"pw{i}")))
    return b.gemm(b.global_pool(x), 1000, name="fc")


#: VGG-16 (Simonyan & Zisserman 2015, Table 1, configuration D): 3x3 convolutions per stage
#: (count, channels), each stage followed by a 2x2/2 max pool.
VGG16 = ((2, 64), (2, 128), (3, 256), (3, 512), (3, 512))


def _vgg16(b: Builder) -> str:
    x = b.input((1, 3, 224, 224))
    for stage, (n, width) in enumerate(VGG16, 1):
        for i in range(n):
            x = b.act(b.conv(x, width, 3, 1, 1, name=f"conv{stage}_{i + 1}"))
        x = b.maxpool(x, 2, 2, 0)
    x = b.flatten(x)
    x = b.act(b.gemm(x, 4096, name="fc6"))
    x = b.act(b.gemm(x, 4096, name="fc7"))
    return b.gemm(x, 1000, name="fc8")


def _dcgan(b: Builder) -> str:
    """Radford et al. 2016, Figure 1: z (100) projected to 4x4x1024 (a matrix multiply), then
    four fractionally-strided convolutions to 8x8x512, 16x16x256, 32x32x128 and 64x64x3;
    batch norm and ReLU between, tanh at the end. Kernels 4x4, stride 2, padding 1 (as the
    authors' Torch code and VTA's DCGAN benchmark layers: the figure's 5x5 would need an
    output padding to double the size)."""
    x = b.input((1, 100))
    x = b.gemm(x, 4 * 4 * 1024, name="project")
    x = b.act(b.bn(b.reshape(x, (b.shapes[x][0], 1024, 4, 4))))
    for i, cout in enumerate((512, 256, 128, 3), 1):
        x = b.conv_transpose(x, cout, 4, 2, 1, name=f"deconv{i}")
        x = b.act(b.bn(x)) if cout != 3 else b.act(x, "Tanh")
    return x
