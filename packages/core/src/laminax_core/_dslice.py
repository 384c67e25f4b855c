"""`Slice` and `ds` (JAX's `jax.ds`, "dynamic slice"): a slice given by a start and a size,
where the start may be a traced value, so `x[ds(i, 2)]` works under jit where `x[i:i + 2]`
cannot (its size would depend on `i`).

Indexing with one follows `lax.dynamic_slice` (stride 1: a negative start counts from the end,
and the window is moved back inside the axis) or a gather of `start + stride * arange(size)`
(each index clamped to the axis)."""

from __future__ import annotations

import dataclasses

import numpy as np

from laminax_core import lax
from laminax_core._avals import get_aval
from laminax_pytree import register_pytree_node

__all__ = ["apply_slices", "Slice", "ds"]


@dataclasses.dataclass(frozen=True)
class Slice:
    """A slice of `size` elements from `start` (static or traced) every `stride` (static)."""

    start: object
    size: int
    stride: int = 1

    def __post_init__(self):
        if self.stride < 0:
            raise ValueError("`stride` must be >= 0.")


def _flatten(s: Slice):
    # a static start stays static (aux data), so jit keys on it as JAX does
    if isinstance(s.start, int):
        return (), (s.start, s.size, s.stride)
    return (s.start,), (None, s.size, s.stride)


def _unflatten(aux, children):
    start, size, stride = aux
    return Slice(children[0] if children else start, size, stride)


register_pytree_node(Slice, _flatten, _unflatten)


def ds(start, size=None, stride=None):
    """A `Slice` of `size` elements from `start` (`ds(n)` is `ds(0, n)`; `ds(None)` is `:`).

    Args:
      start: int or scalar int array (may be traced), or None for a whole-axis `slice`.
      size: the number of elements (static).
      stride: a static int step (default 1).

    Returns:
      A `Slice` (or `slice(None)` when `start` is None).

    Example:
      >>> ds(2, 3)
      Slice(start=2, size=3, stride=1)
    """
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, size, stride)


def _consumed(entry) -> int:
    if entry is None or entry is Ellipsis:
        return 0
    if hasattr(entry, "dtype") or isinstance(entry, np.ndarray):
        aval = get_aval(entry)
        return aval.ndim if aval.dtype == np.bool_ else 1
    return 1


def apply_slices(x, idx):
    """`(x', idx')`: every `Slice` of `idx` applied to its axis of `x` and replaced by `:`."""
    entries = list(idx) if isinstance(idx, tuple) else [idx]
    if not any(isinstance(e, Slice) for e in entries):
        return x, idx
    ndim = get_aval(x).ndim
    ellipsis = next((k for k, e in enumerate(entries) if e is Ellipsis), len(entries))
    for k, entry in enumerate(entries):
        if not isinstance(entry, Slice):
            continue
        if k < ellipsis:
            axis = sum(_consumed(e) for e in entries[:k])
        else:
            axis = ndim - sum(_consumed(e) for e in entries[k:])
        x = _slice_axis(x, entry, axis)
        entries[k] = slice(None)
    return x, tuple(entries)


def _slice_axis(x, s: Slice, axis: int):
    if s.stride == 1:  # counts a negative start from the end, clamps the window
        return lax.dynamic_slice_in_dim(x, s.start, s.size, axis)
    n = get_aval(x).shape[axis]
    start = lax.convert_element_type(s.start, np.int32)
    positions = lax.add(start, lax.mul(np.int32(s.stride), lax.iota(np.int32, s.size)))
    positions = lax.clamp(np.int32(0), positions, np.int32(max(n - 1, 0)))
    return _take(x, positions, axis)


def _take(x, positions, axis):
    # the batch dimension of the gather lands where no offset dimension is: at `axis`
    shape = get_aval(x).shape
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(d for d in range(len(shape)) if d != axis),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    sizes = tuple(1 if d == axis else size for d, size in enumerate(shape))
    return lax.gather(x, lax.expand_dims(positions, (1,)), dnums, sizes,
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
