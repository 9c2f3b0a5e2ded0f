"""VTA's rules for a DMA copy, as VTA's own compiler applies them (a leaf module).

VTA lowers a copy nest under ``pragma dma_copy`` in two steps (apache/tvm, before #17542):
TVM's ``InjectCopyIntrin`` (``src/tir/transforms/inject_copy_intrin.cc``) reads the nest's loops
(TE lowering never emits a loop of extent 1) as a buffer view whose shape is the loop extents,
whose strides are the index's coefficients and whose pads come from the ``if_then_else`` guard
(``DetectClipBound``); then VTA's ``_inject_copy`` (``vta/python/vta/transform.py``) turns the
view into *one* ``VTALoadBuffer2D`` / ``VTAStoreBuffer2D`` or refuses the copy:

- a padded load keeps its loop dimensions unfolded and may pad the two outer ones only
  (``Limitation of 2D pad load forbid ndim=N`` for fewer than 3 or more than 5 dimensions;
  ``Do not support pad on the innermost block`` for a pad on any other; with 5 dimensions the
  pads are on the 2nd and 3rd);
- the SRAM side must be compact (``_check_compact``: ``Cannot prove compact``);
- the DRAM side must be one 2-D pattern of whole element blocks (``_get_2d_pattern``; an
  unpadded copy first merges dimensions contiguous in DRAM, ``_fold_buffer_dim``): at most
  a y and an x dimension above the element block, else ``cannot detect 2d pattern``.

This module is that logic over plain integers (and, for pad sizes, whatever the caller
passes: only "is it zero" is asked), so the lowering (``passes.inject_dma``) and the schedule
space's cheap screen (``workloads.base.Workload.vta_copy_problem``) apply the same rules.
The messages are VTA's own, with where VTA raises them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: How every refusal's reason begins (the search's screen tells them by it).
REFUSED = "VTA's compiler refuses the copy"


class CopyRefused(Exception):
    """VTA's compiler refuses the copy; ``str()`` is VTA's message."""

    def __init__(self, message: str, where: str):
        self.vta_message = message
        self.where = where
        super().__init__(message)

    @property
    def reason(self) -> str:
        """The refusal as a stored reason: VTA's message and the function raising it."""
        return f"{REFUSED}: {self.vta_message} ({self.where})"


@dataclass(frozen=True)
class Pattern:
    """VTA's 2-D DMA of a copy: indices of the y and x dimensions in the copy's (unit-free)
    dimension list (None: size 1) and ``x_stride`` in element blocks; ``x_from_shape``: the
    x stride is the x size (a one-row copy)."""

    y: int | None
    x: int | None
    x_stride: int
    x_from_shape: bool = False


def _show(values: Sequence[Any]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def check_compact(shape: Sequence[int], strides: Sequence[int]) -> None:
    """``_check_compact``: row-major strides of ``shape``."""
    size = 1
    for i in reversed(range(len(shape))):
        if strides[i] != size:
            raise CopyRefused(f"Cannot prove compact: shape={_show(shape)}, "
                              f"strides={_show(strides)}", "_check_compact")
        size *= shape[i]


def fold_buffer_dim(shape: Sequence[int], strides: Sequence[int], scope: str,
                    elem_block: int) -> tuple[list[int], list[int]]:
    """``_fold_buffer_dim``: the element block, then runs of dimensions contiguous in memory
    merged (innermost first), as (shape, strides)."""
    ndim = len(shape)
    x_size, base = 1, 0
    for i in range(1, ndim + 1):
        if strides[ndim - i] != x_size:
            raise CopyRefused(f"scope {scope} needs to have block={elem_block}",
                              "_fold_buffer_dim")
        x_size *= shape[ndim - i]
        if x_size == elem_block:
            base = i + 1
            break
    if base == 0:
        raise CopyRefused(f"scope {scope} need to have block={elem_block}, "
                          f"shape={_show(shape)}", "_fold_buffer_dim")
    out_shape, out_strides = [elem_block], [1]
    if base < ndim + 1 and strides[ndim - base] != elem_block:
        out_shape.append(1)
        out_strides.append(elem_block)
    while base < ndim + 1:
        x_size, x_stride, next_base = 1, strides[ndim - base], base
        if x_stride % elem_block:
            raise CopyRefused(f"scope {scope} need to have block={elem_block}, "
                              f"shape={_show(shape)}, strides={_show(strides)}",
                              "_fold_buffer_dim")
        for i in range(base, ndim + 1):
            k = ndim - i
            if x_size * x_stride != strides[k]:
                break
            x_size *= shape[k]
            next_base = i + 1
        out_shape.append(x_size)
        out_strides.append(x_stride)
        base = next_base
    return list(reversed(out_shape)), list(reversed(out_strides))


def pattern_2d(shape: Sequence[Any], strides: Sequence[int], scope: str, elem_block: int,
               allow_fold: bool, shown_shape: Sequence[Any] | None = None) -> tuple[
                   list[Any], Pattern]:
    """``_get_2d_pattern`` of the DRAM side: (the dimensions it reads sizes from, the
    pattern). ``shape`` entries that are not integers (a padded load's sizes) are never
    compared, as in VTA, where they are symbolic; ``shown_shape``: the shape VTA's message
    prints (default ``shape``)."""
    orig_shape, orig_strides = list(shown_shape or shape), list(strides)
    if allow_fold:
        shape, strides = fold_buffer_dim(shape, strides, scope, elem_block)
    shape, strides = list(shape), list(strides)

    def refuse() -> CopyRefused:
        return CopyRefused(f"Scope[{scope}]: cannot detect 2d pattern with "
                           f"elem_block={elem_block}: shape={_show(orig_shape)}, "
                           f"strides={_show(orig_strides)}", "_get_2d_pattern")

    ndim = len(shape)
    if _eq(shape[-1], elem_block):  # the element block is already flat
        if strides[-1] != 1:
            raise refuse()
        if ndim == 1:
            return shape, Pattern(None, None, 1)
        if strides[-2] != elem_block:
            raise refuse()
        if ndim == 2:
            return shape, Pattern(None, ndim - 2, 0, x_from_shape=True)
        if strides[-3] % elem_block:
            raise refuse()
        if ndim == 3:
            return shape, Pattern(ndim - 3, ndim - 2, strides[-3] // elem_block)
    else:
        if strides[-1] != 1 or strides[-2] != shape[-1] or not _eq(shape[-1] * shape[-2],
                                                                    elem_block):
            raise refuse()
        if ndim == 2:
            return shape, Pattern(None, None, 1)
        if strides[-3] != elem_block:
            raise refuse()
        if ndim == 3:
            return shape, Pattern(None, ndim - 3, 0, x_from_shape=True)
        if strides[-4] % elem_block:
            raise refuse()
        if ndim == 4:
            return shape, Pattern(ndim - 4, ndim - 3, strides[-4] // elem_block)
    raise refuse()


def _eq(a: Any, b: int) -> bool:
    """``utils.equal_const_int``: a known integer equal to ``b``."""
    return isinstance(a, int) and not isinstance(a, bool) and a == b


def pad_dims(ndim: int, padded: Sequence[bool]) -> tuple[int, int]:
    """The (y, x) dimensions of a padded load of ``ndim`` dimensions, or ``CopyRefused``;
    ``padded[i]``: dimension i has a pad that is not the constant 0."""
    if ndim <= 2 or ndim > 5:
        raise CopyRefused(f"Limitation of 2D pad load forbid ndim={ndim}", "_inject_copy")
    y, x = (1, 2) if ndim == 5 else (0, 1)
    if any(padded[d] for d in range(x + 1, ndim)):
        raise CopyRefused("Do not support pad on the innermost block", "_inject_copy")
    return y, x


@dataclass(frozen=True)
class Copy:
    """A copy as a schedule makes it, before VTA's lowering: its dimensions outermost first
    (extents, DRAM strides in elements, whether each is padded), its SRAM scope, direction
    and element block (``BATCH * BLOCK`` elements: one SRAM row). Dimensions of extent 1 are
    dropped here, as TE lowering never emits their loops."""

    scope: str
    load: bool
    extents: tuple[int, ...]
    dram_strides: tuple[int, ...]
    elem_block: int
    padded: tuple[bool, ...] = ()
    #: the SRAM buffer's extents (default ``extents``): a partial tile's copy fills part of
    #: a buffer sized for the full tile
    sram_extents: tuple[int, ...] = ()

    def problem(self) -> str | None:
        """Why VTA's compiler refuses this copy (its message), or None."""
        try:
            self.pattern()
        except CopyRefused as exc:
            return exc.reason
        return None

    def pattern(self) -> Pattern:
        pads = self.padded or (False,) * len(self.extents)
        keep = [i for i, e in enumerate(self.extents) if e != 1]
        if any(pads[i] for i, e in enumerate(self.extents) if e == 1):
            # the guard of a dimension without a loop bounds no loop variable
            raise CopyRefused("Cannot match copy pattern (a padded dimension of extent 1)",
                              "InjectCopyIntrin")
        shape = [self.extents[i] for i in keep] or [1]
        dram = [self.dram_strides[i] for i in keep] or [1]
        buffer = _compact(self.sram_extents or self.extents)
        sram = [buffer[i] for i in keep] or [1]
        padded = [pads[i] for i in keep] or [False]
        return lower(self.scope, self.load, shape, dram, sram, self.elem_block,
                     padded if any(padded) else None)[1]


def _compact(shape: Sequence[int]) -> list[int]:
    out, size = [], 1
    for e in reversed(shape):
        out.append(size)
        size *= e
    return list(reversed(out))


def lower(scope: str, load: bool, shape: Sequence[Any], dram_strides: Sequence[int],
          sram_strides: Sequence[int], elem_block: int, padded: Sequence[bool] | None,
          dram_shape: Sequence[Any] | None = None) -> tuple[list[Any], Pattern]:
    """VTA's ``_inject_copy`` decision for a copy of loop extents ``shape`` (no unit loops):
    the dimensions the DMA's sizes come from and its ``Pattern``, or ``CopyRefused``.
    ``padded``: per dimension, whether the load pads it (None: no guard); ``dram_shape``: the
    DRAM side's shape (a padded load's extents less its pads; default ``shape``)."""
    if not load:
        if padded:
            raise CopyRefused("Do not support copy into DRAM with pad", "_inject_copy")
        check_compact(shape, sram_strides)
        return pattern_2d(dram_shape or shape, dram_strides, scope, elem_block, True)
    allow_fold = True
    if padded is not None:
        pad_dims(len(shape), padded)
        allow_fold = False
    check_compact(shape, sram_strides)
    return pattern_2d(dram_shape or shape, dram_strides, scope, elem_block, allow_fold)
