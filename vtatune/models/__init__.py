"""Models in: ONNX files read as vtatune networks (``vtatune import``, ``search MODEL.onnx``).

``reader`` reads an ONNX file without its weights, ``graph`` checks it and infers every
value's shape, ``rules`` says which nodes VTA runs and as which operator shape, ``importer``
turns a model into a network (identical layers merged, host operators listed) and ``space``
into a network file or a network search space.
"""

from __future__ import annotations

from vtatune.models.importer import HostOp, ImportedLayer, ImportedModel, import_model

__all__ = ["HostOp", "ImportedLayer", "ImportedModel", "import_model"]
