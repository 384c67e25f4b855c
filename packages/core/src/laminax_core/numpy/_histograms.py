"""Multidimensional histograms: `histogramdd` (N samples of D coordinates into a D-dim
grid of bins) and `histogram2d` (two coordinate arrays), with NumPy's bins/range/weights/
density arguments.

Each coordinate gets its bin edges (`histogram_bin_edges`) and a bin index by `searchsorted`
(index 0 and `len(edges)` collect what falls outside, and a value on the last edge counts in
the last bin); the indices are raveled into one and counted with `bincount`, and the outer
"outside" bins are cut off.
"""

from __future__ import annotations

import math

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core.numpy._index_tricks import ravel_multi_index
from laminax_core.numpy._operands import as_array, check_arraylike, select
from laminax_core.numpy._shape import stack
from laminax_core.numpy._signal import diff
from laminax_core.numpy._sorting import bincount, histogram_bin_edges, searchsorted

__all__ = ["histogram2d", "histogramdd"]


def _bins_per_dimension(bins, d: int) -> list:
    if isinstance(bins, int | np.integer) or (hasattr(bins, "ndim") and bins.ndim == 0):
        return [bins] * d
    if len(bins) != d:
        raise ValueError(
            f"jnp.histogramdd: bins must be one count or one entry per dimension ({d}), got "
            f"{len(bins)} entries."
        )
    return list(bins)


def _check_range(range_, n: int, d: int):  # noqa: A002 (NumPy's name)
    if range_ is None:
        return [None] * d
    if len(range_) != d or any(r is not None and np.shape(r)[0] != 2 for r in range_):
        raise ValueError(
            f"jnp.histogramdd: for sample.shape={(n, d)}, range must be a sequence of {d} "
            f"(low, high) pairs or Nones; got range={range_}."
        )
    return list(range_)


def _bin_index(column, edges):
    index = searchsorted(edges, column, side="right")
    n_edges = get_aval(edges).shape[0]
    on_last_edge = lax.eq(column, lax.slice(edges, (n_edges - 1,), (n_edges,)))
    return select(on_last_edge, index, lax.sub(index, np.ones((), get_aval(index).dtype)))


def _normalize_density(hist, edges_by_dim):
    d = len(edges_by_dim)
    hist = lax.convert_element_type(hist, dtypes.promote_types(get_aval(hist).dtype, float))
    total = lax.reduce_sum(hist, tuple(range(d)))
    for axis, edges in enumerate(edges_by_dim):
        widths = diff(edges).astype(get_aval(hist).dtype)
        hist = lax.div(hist, lax.broadcast_in_dim(widths, get_aval(hist).shape, (axis,)))
    return lax.div(hist, total)


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The D-dimensional histogram of `sample` (N points in D dims, shape `(N, D)`).

    Args:
      sample: the points.
      bins: a bin count for every dimension, or one count or edge array per dimension.
      range: per dimension, `(low, high)` or None (the data's min and max).
      weights: optional weights, shape `(N,)`.
      density: normalise so that the histogram integrates to 1 over the grid.

    Returns:
      `(hist, edges)`: the counts (int32 without weights or density) and the list of D edge
      arrays.

    Example:
      >>> hist, edges = histogramdd(np.array([[0.0, 0.0], [1.0, 1.0]], np.float32), bins=2)
      >>> hist
      array([[1, 0],
             [0, 1]], dtype=int32)
    """
    check_arraylike("histogramdd", sample)
    sample = as_array(sample)
    if get_aval(sample).ndim != 2:
        raise ValueError(
            f"jnp.histogramdd: sample must have shape (N, D), got {get_aval(sample).shape}."
        )
    n, d = get_aval(sample).shape
    if weights is not None:
        weights = as_array(weights)
        if get_aval(weights).shape != (n,):
            raise ValueError(f"jnp.histogramdd: weights must have shape ({n},), one per sample.")
    ranges = _check_range(range, n, d)
    indices, edges_by_dim = [], []
    for i, bins_i in enumerate(_bins_per_dimension(bins, d)):
        column = lax.reshape(lax.slice(sample, (0, i), (n, i + 1)), (n,))
        edges = histogram_bin_edges(column, bins_i, ranges[i], weights)
        indices.append(_bin_index(column, edges))
        edges_by_dim.append(edges)
    n_bins = tuple(get_aval(e).shape[0] + 1 for e in edges_by_dim)
    flat = ravel_multi_index(tuple(indices), n_bins, mode="clip")
    hist = lax.reshape(bincount(flat, weights, length=math.prod(n_bins)), n_bins)
    hist = lax.slice(hist, (1,) * d, tuple(k - 1 for k in n_bins))
    if density:
        hist = _normalize_density(hist, edges_by_dim)
    return hist, edges_by_dim


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The 2-D histogram of points `(x[i], y[i])`.

    Args:
      x, y: the coordinates, 1-D of equal length.
      bins: one count or edge array for both axes, or a pair of them.
      range, weights, density: as for `histogramdd`.

    Returns:
      `(hist, x_edges, y_edges)`.

    Example:
      >>> histogram2d(np.array([0.0, 1.0]), np.array([0.0, 1.0]), bins=2)[0]
      array([[1, 0],
             [0, 1]], dtype=int32)
    """
    check_arraylike("histogram2d", x, y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):  # one edge array shared by both axes
        edges = as_array(bins)
        bins = [edges, edges]
    sample = stack([as_array(x), as_array(y)], axis=1)
    hist, (x_edges, y_edges) = histogramdd(sample, bins, range, weights, density)
    return hist, x_edges, y_edges
