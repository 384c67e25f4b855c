"""Indexing compositions JAX's lax offers beside gather and scatter: `index_take` (take
along several axes, indices wrapping around) and `scatter_apply` (apply a function at
scattered positions, once per time a position is hit)."""

from __future__ import annotations

import numpy as np

from laminax_core._api import vmap
from laminax_core._avals import get_aval
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._control_flow import while_loop
from laminax_core.lax._indexing import GatherDimensionNumbers, gather, scatter_add
from laminax_core.lax._joining import concatenate
from laminax_core.lax._math import rem
from laminax_core.lax._reductions import reduce_max
from laminax_core.lax._structural import broadcast_in_dim, reshape

__all__ = ["apply_counted", "index_take", "scatter_apply"]


def index_take(src, idxs, axes):
    """`src` indexed along `axes` by the integer arrays `idxs` (one per axis, each of shape
    `(n,)`): result row `i` is the slice of `src` at `idxs[0][i], idxs[1][i], ...`. Indices
    wrap around modulo the axis length (negative ones count from the end).

    Example:
      >>> index_take(np.arange(6.0).reshape(2, 3), (np.array([1, -2]),), (0,))
      array([[3., 4., 5.],
             [0., 1., 2.]], dtype=float32)
    """
    axes = tuple(int(a) for a in axes)
    if len(idxs) != len(axes):
        raise ValueError(f"lax.index_take: got {len(idxs)} index arrays for {len(axes)} axes; "
                         "give one per axis.")
    shape = get_aval(src).shape
    columns = [reshape(i, (get_aval(i).shape[0], 1)) for i in idxs]
    indices = concatenate(columns, 1) if len(columns) > 1 else columns[0]
    dtype = get_aval(indices).dtype
    sizes = broadcast_in_dim(np.asarray([shape[a] for a in axes], dtype),
                             get_aval(indices).shape, (1,))
    # floor modulo (the sizes are positive): a negative remainder moves up by the size
    r = rem(indices, sizes)
    zero = broadcast_in_dim(np.zeros((), dtype), get_aval(r).shape, ())
    wrapped = ew.select_n(ew.lt(r, zero), r, ew.add(r, sizes))
    slice_sizes = tuple(1 if d in axes else n for d, n in enumerate(shape))
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
        collapsed_slice_dims=axes, start_index_map=axes)
    return gather(src, wrapped, dnums, slice_sizes, mode="promise_in_bounds")


def apply_counted(operand, counts, func):
    """`operand` with `func` applied `counts[i]` times to element `i` (to one scalar at a
    time): what a scatter whose update is `func(old)` does where indices repeat. The rounds
    run in a `while_loop` up to the largest count."""
    aval = get_aval(operand)
    count_dtype = get_aval(counts).dtype

    def apply_all(x):
        out = vmap(func)(reshape(x, (aval.size,)))
        return ew.convert_element_type(reshape(out, aval.shape), aval.dtype)

    def body(state):
        k, x = state
        due = ew.gt(counts, broadcast_in_dim(k, aval.shape, ()))
        return ew.add(k, np.ones((), count_dtype)), ew.select_n(due, x, apply_all(x))

    rounds = reduce_max(counts, tuple(range(aval.ndim)))
    _, out = while_loop(lambda state: ew.lt(state[0], rounds), body,
                        (np.zeros((), count_dtype), operand))
    return out


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """`operand` with `func` applied at the positions a scatter with these indices and
    dimension numbers would update (`update_shape` is the shape its updates would have); a
    position hit k times gets `func` applied k times, as XLA's scatter applies it per update.

    Args:
      operand: the array.
      scatter_indices, dimension_numbers, indices_are_sorted, unique_indices, mode: as for
        `lax.scatter`.
      func: an elementwise function of one scalar.
      update_shape: the shape of the (implicit) updates.

    Returns:
      The updated array. Like JAX's, it has no derivative rule of its own; it differentiates
      through `func` (JAX raises NotImplementedError).

    Example:
      >>> dn = ScatterDimensionNumbers((), (0,), (0,))
      >>> scatter_apply(np.zeros(3, np.float32), np.array([[1], [1]]), lambda v: v + 1, dn,
      ...               update_shape=(2,))
      array([0., 2., 0.], dtype=float32)
    """
    shape = get_aval(operand).shape
    counts = scatter_add(np.zeros(shape, np.int32), scatter_indices,
                         np.ones(tuple(update_shape), np.int32), dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)
    return apply_counted(operand, counts, func)
