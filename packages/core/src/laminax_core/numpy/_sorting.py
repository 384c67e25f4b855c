"""Sorting, searching and counting: `sort`, `argsort`, `lexsort`, `searchsorted`, `unique`,
`bincount`, `histogram`, and the order statistics `quantile`, `percentile`, `median` (with
their `nan*` variants). Sorting uses `lax.sort`, which orders NaNs last, as JAX does."""

from __future__ import annotations

import math
import operator

import numpy as np

from laminax_core import _trace, dtypes, errors, lax
from laminax_core._avals import get_aval
from laminax_core.numpy import _creation, _indexing, _logic, _ufuncs
from laminax_core.numpy._index_tricks import compress
from laminax_core.numpy._operands import (
    as_array,
    canonicalize_axes,
    canonicalize_axis,
    check_arraylike,
    convert_dtype,
    flatten_or_axis,
    is_concrete,
    promote_dtypes,
    promote_dtypes_inexact,
    select,
)
from laminax_core.numpy._reductions import any as any_
from laminax_core.numpy._reductions import max as max_
from laminax_core.numpy._reductions import min as min_
from laminax_core.numpy._reductions import sum as sum_
from laminax_core.numpy._shape import concatenate, moveaxis

__all__ = [
    "argpartition", "argsort", "bincount", "histogram", "histogram_bin_edges", "intersect1d",
    "isin", "lexsort", "median", "nanmedian", "nanpercentile", "nanquantile", "partition",
    "percentile", "quantile", "searchsorted", "setdiff1d", "setxor1d", "sort", "sort_complex",
    "union1d", "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
]  # fmt: skip



def _check_kind(name: str, kind) -> None:
    if kind is not None:  # JAX's answer: a kind would be silently ignored otherwise
        raise TypeError(f"jnp.{name}: the 'kind' argument is not supported; use stable=True or "
                        "stable=False to choose the sort's stability.")


def sort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
         descending: bool = False):
    """`a` sorted along `axis` (the flattened array if None); NaNs go last.

    Args:
      a: the array.
      axis: the axis, or None.
      kind: NumPy's sort kind: refused, as in JAX (say `stable` instead).
      order: unsupported (structured arrays); must be None.
      stable: whether equal elements keep their order.
      descending: sort from largest to smallest.

    Returns:
      The sorted array.

    Example:
      >>> sort(np.array([3, 1, 2]))
      array([1, 2, 3], dtype=int32)
    """
    if order is not None:
        raise TypeError("jnp.sort: the order argument (structured arrays) is not supported.")
    _check_kind("sort", kind)
    a, axis = flatten_or_axis("sort", a, axis)
    if descending:
        return lax.rev(lax.sort(lax.rev(a, (axis,)), dimension=axis, is_stable=stable), (axis,))
    return lax.sort(a, dimension=axis, is_stable=stable)


def argsort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
            descending: bool = False):
    """The indices that sort `a` along `axis` (stable: ties keep their order).

    Example:
      >>> argsort(np.array([3, 1, 2]))
      array([1, 2, 0], dtype=int32)
    """
    if order is not None:
        raise TypeError("jnp.argsort: the order argument (structured arrays) is not supported.")
    _check_kind("argsort", kind)
    a, axis = flatten_or_axis("argsort", a, axis)
    shape = get_aval(a).shape
    index_dtype = dtypes.default_int_dtype()
    iota = lax.iota_p.bind(dtype=np.dtype(index_dtype), shape=shape, dimension=axis,
                           sharding=None)
    if descending:
        _, perm = lax.sort((lax.rev(a, (axis,)), iota), dimension=axis, is_stable=stable,
                           num_keys=1)
        last = np.asarray(shape[axis] - 1, index_dtype)
        return lax.rev(lax.sub(last, perm), (axis,))
    _, perm = lax.sort((a, iota), dimension=axis, is_stable=stable, num_keys=1)
    return perm


def lexsort(keys, axis: int = -1):
    """The indices that sort by several keys, the last key primary (as NumPy).

    Example:
      >>> lexsort((np.array([2, 1, 2]), np.array([1, 1, 0])))
      array([2, 1, 0], dtype=int32)
    """
    keys = list(keys)
    if not keys:
        raise TypeError("jnp.lexsort: need a sequence of keys with length > 0.")
    check_arraylike("lexsort", *keys)
    keys = [as_array(k) for k in keys]
    shapes = {get_aval(k).shape for k in keys}
    if len(shapes) > 1:
        raise ValueError(f"jnp.lexsort: all keys must have the same shape, got {shapes}.")
    shape = shapes.pop()
    axis = canonicalize_axis(axis, len(shape), "jnp.lexsort")
    iota = lax.iota_p.bind(dtype=np.dtype(dtypes.default_int_dtype()), shape=shape,
                           dimension=axis, sharding=None)
    outs = lax.sort((*keys[::-1], iota), dimension=axis, is_stable=True, num_keys=len(keys))
    return outs[-1]


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Where `v`'s elements would be inserted in the sorted 1-d `a` to keep it sorted.

    Args:
      a: a sorted 1-d array (or any 1-d array with `sorter`, its sorting permutation).
      v: the values to place.
      side: "left" (the first suitable index) or "right" (the last).
      sorter: optional indices that sort `a`.
      method: accepted for compatibility ("scan", "scan_unrolled", "sort",
        "compare_all"); every method computes the same result here, by comparing all pairs.

    Returns:
      Indices of `v`'s shape, in the default integer dtype.

    Example:
      >>> searchsorted(np.array([1, 2, 2, 3]), np.array([2, 0, 5]), side="right")
      array([3, 0, 4], dtype=int32)
    """
    if side not in ("left", "right"):
        raise ValueError(f"jnp.searchsorted: side must be 'left' or 'right', got {side!r}.")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"jnp.searchsorted: invalid argument method={method!r}, expected one "
                         "of ['compare_all', 'scan', 'scan_unrolled', 'sort'].")
    check_arraylike("searchsorted", a, v)
    a, v = promote_dtypes(as_array(a), as_array(v))
    if get_aval(a).ndim != 1:
        raise ValueError(f"jnp.searchsorted: a must be 1-d, got shape {get_aval(a).shape}.")
    if sorter is not None:
        a = _indexing.take(a, sorter, mode="clip")
    v_shape = get_aval(v).shape
    n = get_aval(a).shape[0]
    a_b = lax.broadcast_in_dim(a, (*v_shape, n), (len(v_shape),))
    v_b = lax.broadcast_in_dim(v, (*v_shape, n), tuple(range(len(v_shape))))
    before = _total_less(a_b, v_b) if side == "left" else lax.bitwise_not(_total_less(v_b, a_b))
    int_dtype = dtypes.default_int_dtype()
    return lax.reduce_sum(lax.convert_element_type(before, int_dtype), (len(v_shape),))


def _total_less(x, y):
    """`x < y` in the total order that puts NaNs last (as sorting does)."""
    if not dtypes.issubdtype(get_aval(x).dtype, np.floating):
        return lax.lt(x, y)
    x_nan, y_nan = lax.ne(x, x), lax.ne(y, y)
    return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(lax.bitwise_not(x_nan), y_nan))


# ----- unique -------------------------------------------------------------------------------


def _concrete_count(name, count):
    if isinstance(count, _trace.Tracer):
        if not is_concrete(count):
            raise errors.ConcretizationTypeError(
                count, f"The size argument of jnp.{name} must be statically specified to use "
                f"jnp.{name} within JAX transformations")
        count = count.to_concrete_value()
    return int(np.asarray(count))


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value=None, sorted: bool = True):  # noqa: A002
    """The sorted unique elements of the flattened `ar`.

    Args:
      ar: the array.
      return_index: also return the index of each unique value's first occurrence.
      return_inverse: also return, for each element of `ar`, the index of its unique value
        (shaped like `ar`).
      return_counts: also return how often each unique value occurs.
      axis: None (the flattened array), or the axis whose slices are compared: the unique
        slices along it, sorted lexicographically (the inverse then indexes that axis).
      equal_nan: whether NaNs count as one value.
      size: the static number of unique values to return (needed under tracing); extra
        slots hold `fill_value`, extra unique values are dropped.
      fill_value: the filler for `size` (default: the smallest unique value).
      sorted: accepted for compatibility; results are always sorted.

    Returns:
      The unique values, or a tuple with the requested extras, in that order.

    Example:
      >>> unique(np.array([3, 1, 3, 2]), size=5)
      array([1, 2, 3, 1, 1], dtype=int32)
    """
    if axis is not None:
        return _unique_along(ar, axis, return_index, return_inverse, return_counts, equal_nan,
                             size, fill_value)
    check_arraylike("unique", ar)
    ar = as_array(ar)
    in_shape = get_aval(ar).shape
    flat = lax.reshape(ar, (get_aval(ar).size,))
    n = get_aval(flat).shape[0]
    int_dtype = dtypes.default_int_dtype()
    perm = argsort(flat)
    values = lax.sort(flat)
    if n == 0:
        is_first = lax.convert_element_type(values, np.bool_)
    else:
        differs = lax.ne(lax.slice(values, (1,), (n,)), lax.slice(values, (0,), (n - 1,)))
        if equal_nan and dtypes.issubdtype(get_aval(values).dtype, np.inexact):
            both_nan = lax.bitwise_and(lax.ne(lax.slice(values, (1,), (n,)),
                                              lax.slice(values, (1,), (n,))),
                                       lax.ne(lax.slice(values, (0,), (n - 1,)),
                                              lax.slice(values, (0,), (n - 1,))))
            differs = lax.bitwise_and(differs, lax.bitwise_not(both_nan))
        is_first = lax.concatenate([np.ones((1,), np.bool_), differs], 0)
    group = lax.sub(_cumsum_int(is_first, int_dtype), np.asarray(1, int_dtype))
    count = lax.reduce_sum(lax.convert_element_type(is_first, int_dtype), (0,))
    if size is None:
        size = _concrete_count("unique", count)
    size = operator.index(size)

    (starts,) = _indexing.nonzero(is_first, size=size, fill_value=0)
    unique_values = _indexing.take(values, starts, mode="clip") if n else values
    valid = lax.lt(lax.iota(int_dtype, size), count)
    if fill_value is None:
        first_value = _indexing.take(values, np.zeros((), np.int32), mode="clip") if n else None
        fill = lax.broadcast_in_dim(first_value, (size,), ()) if n else unique_values
    else:
        fill = lax.broadcast_in_dim(convert_dtype(as_array(fill_value),
                                                  get_aval(values).dtype), (size,), ())
    results = [select(valid, fill, unique_values) if n else unique_values]
    if return_index:
        first_index = _indexing.take(perm, starts, mode="clip") if n else perm
        if n:
            first = _indexing.take(perm, np.zeros((), np.int32), mode="clip")
            first_index = select(valid, lax.broadcast_in_dim(first, (size,), ()), first_index)
        results.append(first_index)
    if return_inverse:
        inverse = _indexing.take(group, argsort(perm), mode="clip") if n else group
        results.append(lax.reshape(inverse, in_shape) if in_shape else inverse)
    if return_counts:
        ends = lax.concatenate([lax.slice(starts, (1,), (size,)),
                                np.full((1,), n, get_aval(starts).dtype)], 0) if size else starts
        ends = select(lax.lt(lax.iota(int_dtype, size), lax.sub(count, np.asarray(1, int_dtype))),
                      lax.broadcast_in_dim(np.asarray(n, int_dtype), (size,), ()), ends)
        counts = lax.sub(ends, starts)
        results.append(select(valid, lax.broadcast_in_dim(np.asarray(0, int_dtype), (size,), ()),
                              counts))
    return results[0] if len(results) == 1 else tuple(results)


def _unique_along(ar, axis, return_index, return_inverse, return_counts, equal_nan, size,
                  fill_value):
    """`unique` of the slices of `ar` along `axis`: each slice is a row of keys, rows are
    sorted lexicographically (one sort with a key per element of a row) and runs of equal
    rows are merged."""
    check_arraylike("unique", ar)
    ar = as_array(ar)
    shape = get_aval(ar).shape
    axis = canonicalize_axis(axis, len(shape), "jnp.unique")
    moved = moveaxis(ar, axis, 0)
    n, rest = shape[axis], get_aval(moved).shape[1:]
    m = math.prod(rest)
    rows = lax.reshape(moved, (n, m))
    int_dtype = dtypes.default_int_dtype()
    iota = lax.iota(int_dtype, n)
    if m and n:
        *columns, perm = lax.sort((*[lax.reshape(lax.slice_in_dim(rows, j, j + 1, axis=1), (n,))
                                     for j in range(m)], iota), num_keys=m)
        values = lax.concatenate([lax.reshape(c, (n, 1)) for c in columns], 1)
    else:
        perm, values = iota, rows
    if n == 0:
        is_first = np.zeros((0,), np.bool_)
    else:
        later, earlier = lax.slice_in_dim(values, 1, n, axis=0), lax.slice_in_dim(values, 0, n - 1)
        differs = lax.ne(later, earlier)
        if equal_nan and dtypes.issubdtype(get_aval(values).dtype, np.inexact):
            both_nan = lax.bitwise_and(lax.ne(later, later), lax.ne(earlier, earlier))
            differs = lax.bitwise_and(differs, lax.bitwise_not(both_nan))
        row_differs = any_(differs, axis=1) if m else lax.full((n - 1,), False, np.bool_)
        is_first = lax.concatenate([np.ones((1,), np.bool_), row_differs], 0)
    count = lax.reduce_sum(lax.convert_element_type(is_first, int_dtype), (0,))
    size = operator.index(_concrete_count("unique", count) if size is None else size)
    (starts,) = _indexing.nonzero(is_first, size=size, fill_value=0)
    valid = lax.lt(lax.iota(int_dtype, size), count)
    valid_rows = lax.broadcast_in_dim(valid, (size, m), (0,))
    picked = _indexing.take(values, starts, axis=0, mode="clip") if n else \
        lax.full((size, m), 0, get_aval(values).dtype)
    if fill_value is None:  # extra slots repeat the first unique slice, as in JAX
        fill = lax.broadcast_in_dim(lax.reshape(lax.slice_in_dim(picked, 0, 1), (m,)),
                                    (size, m), (1,)) if n and size else picked
    else:
        fill = lax.broadcast_in_dim(convert_dtype(as_array(fill_value), get_aval(values).dtype),
                                    (size, m), ())
    unique_rows = select(valid_rows, fill, picked)
    results = [moveaxis(lax.reshape(unique_rows, (size, *rest)), 0, axis)]
    first = _indexing.take(perm, starts, mode="clip") if n else lax.full((size,), 0, int_dtype)
    if return_index:
        filler = lax.broadcast_in_dim(lax.reshape(lax.slice(first, (0,), (1,)), ()), (size,),
                                      ()) if size else first
        results.append(select(valid, filler, first))
    if return_inverse:
        group = lax.sub(_cumsum_int(is_first, int_dtype), np.asarray(1, int_dtype))
        results.append(_indexing.take(group, argsort(perm), mode="clip") if n else group)
    if return_counts:
        ends = lax.concatenate([lax.slice(starts, (1,), (size,)),
                                np.full((1,), n, get_aval(starts).dtype)], 0) if size else starts
        last = lax.lt(lax.iota(int_dtype, size), lax.sub(count, np.asarray(1, int_dtype)))
        ends = select(last, lax.broadcast_in_dim(np.asarray(n, int_dtype), (size,), ()), ends)
        zeros = lax.broadcast_in_dim(np.asarray(0, int_dtype), (size,), ())
        results.append(select(valid, zeros, lax.sub(ends, starts)))
    return results[0] if len(results) == 1 else tuple(results)


def _cumsum_int(mask, int_dtype):
    return lax.cumsum(lax.convert_element_type(mask, int_dtype), axis=0)


def unique_values(x, /, *, size=None, fill_value=None):
    """The Array API `unique_values`: `unique(x)`.

    Example:
      >>> unique_values(np.array([2, 1, 2]))
      array([1, 2], dtype=int32)
    """
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """The Array API `unique_counts`: `(values, counts)`.

    Example:
      >>> unique_counts(np.array([2, 1, 2]))[1]
      array([1, 2], dtype=int32)
    """
    return unique(x, return_counts=True, size=size, fill_value=fill_value)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """The Array API `unique_inverse`: `(values, inverse_indices)`.

    Example:
      >>> unique_inverse(np.array([2, 1, 2]))[1]
      array([1, 0, 1], dtype=int32)
    """
    return unique(x, return_inverse=True, size=size, fill_value=fill_value)


def unique_all(x, /, *, size=None, fill_value=None):
    """The Array API `unique_all`: `(values, indices, inverse_indices, counts)`.

    Example:
      >>> len(unique_all(np.array([2, 1, 2])))
      4
    """
    return unique(x, return_index=True, return_inverse=True, return_counts=True, size=size,
                  fill_value=fill_value)


# ----- counting -----------------------------------------------------------------------------


def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None):
    """How often each value `0..length-1` occurs in the non-negative integer array `x`
    (summing `weights` instead of ones if given). Negative values count as 0 and values
    from `length` on are dropped, as in JAX.

    Args:
      x: a 1-d integer array.
      weights: optional weights, of `x`'s shape.
      minlength: the minimum length of the result.
      length: the static length of the result (needed under tracing).

    Returns:
      A 1-d array.

    Example:
      >>> bincount(np.array([0, 2, 2]), length=4)
      array([1, 0, 2, 0], dtype=int32)
    """
    check_arraylike("bincount", x)
    x = as_array(x)
    if not dtypes.issubdtype(get_aval(x).dtype, np.integer):
        raise TypeError(f"jnp.bincount: x must be an integer array, got "
                        f"{get_aval(x).dtype.name}.")
    if get_aval(x).ndim != 1:
        raise ValueError(f"jnp.bincount: x must be 1-d, got shape {get_aval(x).shape}.")
    if length is None:
        if not is_concrete(x):
            raise errors.ConcretizationTypeError(
                x, "The length argument of jnp.bincount must be statically specified to use "
                "jnp.bincount within JAX transformations")
        value = np.asarray(x.to_concrete_value() if isinstance(x, _trace.Tracer) else x)
        length = max(int(value.max(initial=-1)) + 1, operator.index(minlength))
    length = max(operator.index(length), 0)
    if weights is None:
        weights = lax.broadcast_in_dim(np.asarray(1, dtypes.default_int_dtype()),
                                       get_aval(x).shape, ())
    else:
        weights = as_array(weights)
    zeros = lax.broadcast_in_dim(np.zeros((), get_aval(weights).dtype), (length,), ())
    clipped = lax.max(x, convert_dtype(np.asarray(0), get_aval(x).dtype))
    return _indexing.IndexUpdateHelper(zeros)[clipped].add(weights, mode="drop")


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges `histogram` uses.

    Example:
      >>> histogram_bin_edges(np.array([0.0, 1.0], np.float32), bins=2)
      array([0. , 0.5, 1. ], dtype=float32)
    """
    return histogram(a, bins, range, weights)[1]


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The histogram of `a`: counts per bin and the bin edges (the last bin includes its
    right edge).

    Args:
      a: the values (flattened).
      bins: the number of equal-width bins (static), or the edges as a 1-d array.
      range: `(low, high)` for equal-width bins (default: `a`'s min and max).
      weights: optional weights of `a`'s shape.
      density: normalise so that the histogram integrates to 1.

    Returns:
      `(counts, edges)`.

    Example:
      >>> histogram(np.array([1.0, 2.0, 2.5, 4.0]), bins=3)[0]
      array([1., 2., 1.], dtype=float32)
    """
    check_arraylike("histogram", a)
    a = as_array(a)
    (a,) = promote_dtypes_inexact(lax.reshape(a, (get_aval(a).size,)))
    if isinstance(bins, int | np.integer):
        low, high = (min_(a), max_(a)) if range is None else range
        edges = _creation.linspace(low, high, operator.index(bins) + 1, dtype=get_aval(a).dtype)
    else:
        edges = convert_dtype(as_array(bins), get_aval(a).dtype)
    n_bins = get_aval(edges).shape[0] - 1
    index = lax.sub(searchsorted(edges, a, side="right"), np.asarray(1, dtypes.default_int_dtype()))
    last_edge = lax.eq(a, lax.slice(edges, (n_bins,), (n_bins + 1,)))
    index = select(last_edge, index, lax.broadcast_in_dim(
        np.asarray(n_bins - 1, get_aval(index).dtype), get_aval(index).shape, ()))
    outside = lax.bitwise_or(lax.lt(index, np.asarray(0, get_aval(index).dtype)),
                             lax.ge(index, np.asarray(n_bins, get_aval(index).dtype)))
    index = select(outside, index, lax.broadcast_in_dim(
        np.asarray(n_bins, get_aval(index).dtype), get_aval(index).shape, ()))
    w = (lax.broadcast_in_dim(np.ones((), get_aval(a).dtype), get_aval(a).shape, ())
         if weights is None else convert_dtype(lax.reshape(as_array(weights), get_aval(a).shape),
                                               get_aval(a).dtype))
    counts = bincount(index, w, length=n_bins)
    if density:
        widths = lax.sub(lax.slice(edges, (1,), (n_bins + 1,)), lax.slice(edges, (0,), (n_bins,)))
        counts = lax.div(counts, lax.mul(widths, lax.reduce_sum(counts, (0,))))
    return counts, edges


# ----- order statistics ---------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, a, q, axis, method, keepdims, ignore_nan):
    if method not in _METHODS:
        raise ValueError(f"jnp.{name}: method must be one of {_METHODS}, got {method!r}.")
    check_arraylike(name, a, q)
    # as in JAX, q does not promote a: the result has a's inexact dtype
    (a,) = promote_dtypes_inexact(as_array(a))
    q = convert_dtype(as_array(q), get_aval(a).dtype)
    a_shape = get_aval(a).shape
    if isinstance(axis, tuple | list):  # several axes, as JAX takes them: merged into one
        axes = canonicalize_axes(axis, len(a_shape), f"jnp.{name}")
    elif axis is None:
        axes = tuple(range(len(a_shape)))
    else:
        axes = (canonicalize_axis(axis, len(a_shape), f"jnp.{name}"),)
    kept = [d for d in range(len(a_shape)) if d not in axes]
    a = lax.transpose(a, (*kept, *axes))
    a = lax.reshape(a, (*[a_shape[d] for d in kept], math.prod(a_shape[d] for d in axes)))
    n = get_aval(a).shape[-1]
    values = lax.sort(a, dimension=get_aval(a).ndim - 1)
    if ignore_nan:
        count = lax.convert_element_type(sum_(lax.bitwise_not(_logic.isnan(a)), axis=-1,
                                              keepdims=True), get_aval(a).dtype)
    else:
        count = np.asarray(n, get_aval(a).dtype)
    q_shape = get_aval(q).shape
    q_flat = lax.reshape(q, (get_aval(q).size,))
    lead = get_aval(values).shape[:-1]
    pos = lax.mul(lax.broadcast_in_dim(q_flat, (*lead, get_aval(q_flat).shape[0]),
                                       (len(lead),)),
                  lax.sub(lax.broadcast_in_dim(count, (*lead, 1), tuple(range(len(lead) + 1))
                                               if get_aval(count).ndim else ()),
                          np.asarray(1, get_aval(a).dtype)))
    low = lax.floor(pos)
    high = lax.ceil(pos)
    if method == "nearest":
        low = high = lax.round(pos, lax.RoundingMethod.TO_NEAREST_EVEN)
    int_dtype = np.int32
    low_i = lax.convert_element_type(low, int_dtype)
    high_i = lax.convert_element_type(high, int_dtype)
    v_low = _indexing.take_along_axis(values, low_i, axis=-1, mode="clip")
    v_high = _indexing.take_along_axis(values, high_i, axis=-1, mode="clip")
    if method == "lower" or method == "nearest":
        out = v_low
    elif method == "higher":
        out = v_high
    elif method == "midpoint":
        out = lax.mul(lax.add(v_low, v_high), np.asarray(0.5, get_aval(a).dtype))
    else:
        frac = lax.sub(pos, low)
        out = lax.add(v_low, lax.mul(frac, lax.sub(v_high, v_low)))
    if not ignore_nan:
        has_nan = any_(_logic.isnan(a), axis=-1, keepdims=True)
        nan = lax.broadcast_in_dim(np.asarray(np.nan, get_aval(a).dtype), get_aval(out).shape, ())
        out = select(lax.broadcast_in_dim(has_nan, get_aval(out).shape,
                                          tuple(range(get_aval(out).ndim))), out, nan)
    # result layout: q's shape first, then the kept axes
    out = lax.transpose(out, (len(lead), *range(len(lead)))) if lead else out
    out = lax.reshape(out, (*q_shape, *lead))
    if keepdims:
        kept_shape = [1 if d in axes else size for d, size in enumerate(a_shape)]
        out = lax.reshape(out, (*q_shape, *kept_shape))
    return out


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None):
    """The `q`-th quantiles (0 <= q <= 1) of `a` along `axis` (NaN if a NaN is present).

    Args:
      a: the array.
      q: a scalar or array of quantiles.
      axis: an int, or None for the flattened array.
      out, overwrite_input: unsupported / ignored, for NumPy compatibility.
      method: "linear", "lower", "higher", "midpoint" or "nearest".
      keepdims: keep the reduced axis with size 1.
      interpolation: NumPy's older name for `method`.

    Returns:
      The quantiles, with `q`'s dimensions first.

    Example:
      >>> quantile(np.array([1.0, 2.0, 3.0, 4.0], np.float32), 0.5)
      array(2.5, dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("jnp.quantile: the out argument is not supported.")
    return _quantile("quantile", a, q, axis, interpolation or method, keepdims, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, interpolation=None):
    """`quantile`, ignoring NaNs.

    Example:
      >>> nanquantile(np.array([1.0, np.nan, 3.0], np.float32), 0.5)
      array(2., dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("jnp.nanquantile: the out argument is not supported.")
    return _quantile("nanquantile", a, q, axis, interpolation or method, keepdims, True)


def _percent(q):
    check_arraylike("percentile", q)
    return _ufuncs.true_divide(q, 100) if type(q) not in (int, float) else q / 100


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None):
    """`quantile` with `q` in percent (0 to 100).

    Example:
      >>> percentile(np.array([1.0, 2.0, 3.0], np.float32), 50)
      array(2., dtype=float32)
    """
    return quantile(a, _percent(q), axis, out, overwrite_input, method, keepdims,
                    interpolation=interpolation)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, interpolation=None):
    """`percentile`, ignoring NaNs.

    Example:
      >>> nanpercentile(np.array([1.0, np.nan, 3.0], np.float32), 50)
      array(2., dtype=float32)
    """
    return nanquantile(a, _percent(q), axis, out, overwrite_input, method, keepdims,
                       interpolation=interpolation)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along `axis` (NaN if a NaN is present).

    Example:
      >>> median(np.array([3.0, 1.0, 2.0], np.float32))
      array(2., dtype=float32)
    """
    return quantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along `axis`, ignoring NaNs.

    Example:
      >>> nanmedian(np.array([3.0, np.nan, 1.0], np.float32))
      array(2., dtype=float32)
    """
    return nanquantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)


# ----- partitions and set operations --------------------------------------------------------


def partition(a, kth: int, axis: int = -1):
    """`a` rearranged along `axis` so that the `kth` element is where sorting would put it:
    the `kth + 1` smallest first (ascending), then the others (descending), as JAX orders
    them.

    Example:
      >>> partition(np.array([5, 1, 4, 2, 3]), 2)
      array([1, 2, 3, 5, 4], dtype=int32)
    """
    check_arraylike("partition", a)
    a = as_array(a)
    return _indexing.take_along_axis(a, argpartition(a, kth, axis), axis, mode="clip")


def argpartition(a, kth: int, axis: int = -1):
    """The indices that `partition` would arrange `a` by.

    Example:
      >>> argpartition(np.array([5, 1, 4, 2, 3]), 2)
      array([1, 3, 4, 0, 2], dtype=int32)
    """
    check_arraylike("argpartition", a)
    a = as_array(a)
    axis = canonicalize_axis(axis, get_aval(a).ndim, "jnp.argpartition")
    n = get_aval(a).shape[axis]
    kth = operator.index(kth)
    kth = kth + n if kth < 0 else kth
    if not 0 <= kth < n:
        raise ValueError(f"jnp.argpartition: kth {kth} is out of bounds for an axis of size {n}.")
    ascending = argsort(a, axis)
    descending = argsort(a, axis, descending=True)
    shape = get_aval(a).shape
    start = [0] * len(shape)
    low_limit = list(shape)
    low_limit[axis] = kth + 1
    high_limit = list(shape)
    high_limit[axis] = n - kth - 1
    return concatenate([lax.slice(ascending, start, low_limit),
                        lax.slice(descending, start, high_limit)], axis)


def sort_complex(a):
    """`a` (flattened along its last axis) sorted, as a complex array.

    Example:
      >>> sort_complex(np.array([3.0, 1.0], np.float32))
      array([1.+0.j, 3.+0.j], dtype=complex64)
    """
    check_arraylike("sort_complex", a)
    out = sort(a)
    dtype = dtypes.to_complex_dtype(get_aval(out).dtype)
    return lax.convert_element_type(out, dtype)


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto"):
    """Whether each element of `element` occurs in `test_elements` (compared pairwise).

    Example:
      >>> isin(np.array([1, 2, 5]), np.array([2, 5]))
      array([False,  True,  True])
    """
    check_arraylike("isin", element, test_elements)
    element, tests = promote_dtypes(as_array(element), as_array(test_elements))
    tests = lax.reshape(tests, (get_aval(tests).size,))
    shape = get_aval(element).shape
    pairs = lax.eq(lax.broadcast_in_dim(element, (*shape, get_aval(tests).shape[0]),
                                        tuple(range(len(shape)))),
                   lax.broadcast_in_dim(tests, (*shape, get_aval(tests).shape[0]),
                                        (len(shape),)))
    found = lax.reduce_or(pairs, (len(shape),))
    return lax.bitwise_not(found) if invert else found


def _flat_unique(name, x):
    check_arraylike(name, x)
    x = as_array(x)
    return unique(lax.reshape(x, (get_aval(x).size,)))


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *,
                size=None, fill_value=None):
    """The sorted unique values present in both arrays (concrete inputs, or `size`).

    Example:
      >>> intersect1d(np.array([1, 3, 4, 3]), np.array([3, 1, 2, 1]))
      array([1, 3], dtype=int32)
    """
    if return_indices:
        raise NotImplementedError("jnp.intersect1d: return_indices is not supported.")
    u1 = _flat_unique("intersect1d", ar1)
    keep = isin(u1, ar2)

    return compress(keep, u1, size=size, fill_value=0 if fill_value is None else fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values present in either array.

    Example:
      >>> union1d(np.array([1, 4]), np.array([2, 1]))
      array([1, 2, 4], dtype=int32)
    """
    check_arraylike("union1d", ar1, ar2)
    joined = concatenate([as_array(ar1), as_array(ar2)], axis=None)
    return unique(joined, size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """The sorted unique values of `ar1` that are not in `ar2`.

    Example:
      >>> setdiff1d(np.array([1, 2, 3, 2]), np.array([2]))
      array([1, 3], dtype=int32)
    """
    u1 = _flat_unique("setdiff1d", ar1)
    keep = isin(u1, ar2, invert=True)
    return compress(keep, u1, size=size, fill_value=0 if fill_value is None else fill_value)


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """The sorted unique values in exactly one of the arrays.

    Example:
      >>> setxor1d(np.array([1, 2, 3]), np.array([2, 4]))
      array([1, 3, 4], dtype=int32)
    """
    u1, u2 = _flat_unique("setxor1d", ar1), _flat_unique("setxor1d", ar2)
    joined = concatenate([compress(isin(u1, u2, invert=True), u1),
                          compress(isin(u2, u1, invert=True), u2)])
    return unique(joined, size=size, fill_value=fill_value)
