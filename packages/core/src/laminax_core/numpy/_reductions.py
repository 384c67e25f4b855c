"""Reductions with `axis`, `keepdims`, `where`, `initial` and `dtype`: `sum`, `prod`, `max`,
`min`, `all`, `any`, `mean`, `var`, `std`, `ptp`, `average`, `count_nonzero`, `argmax`/`argmin`,
the cumulative reductions, and the `nan*` variants that skip NaNs.

Dtype rules follow JAX: `sum`/`prod`/`cumsum` of integers narrower than the default integer
compute in the default integer (booleans too); float16/bfloat16 sums accumulate in float32;
`mean`/`var`/`std` of integers give the default float dtype."""

from __future__ import annotations

import builtins

import math

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core._shape_poly import DimExpr
from laminax_core.numpy import _logic
from laminax_core.numpy._operands import (
    as_array,
    broadcast_to_shape,
    canonicalize_axes,
    canonicalize_axis,
    check_arraylike,
    convert_dtype,
    flatten_or_axis,
    promote_dtypes_inexact,
    select,
)

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "average", "count_nonzero", "cumprod",
    "cumsum", "cumulative_prod", "cumulative_sum", "max", "mean", "min", "nanargmax",
    "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd",
    "nansum", "nanvar", "prod", "ptp", "std", "sum", "var",
]  # fmt: skip


def _is(x, kind) -> bool:
    return dtypes.issubdtype(get_aval(x).dtype, kind)


def _const(dtype, value):
    if isinstance(value, DimExpr):  # a symbolic count: the value the program computes
        return lax.convert_element_type(lax.dimension_as_value(value), dtype)
    return np.asarray(value, dtype)


def _promoted_integer_dtype(dtype, promote_integers: bool):
    if not promote_integers:
        return dtype
    if dtypes.issubdtype(dtype, np.bool_):
        return dtypes.default_int_dtype()
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        if dtypes.iinfo(dtype).bits < dtypes.iinfo(dtypes.default_uint_dtype()).bits:
            return dtypes.default_uint_dtype()
    elif dtypes.issubdtype(dtype, np.integer):
        if dtypes.iinfo(dtype).bits < dtypes.iinfo(dtypes.default_int_dtype()).bits:
            return dtypes.default_int_dtype()
    return dtype


def _upcast_f16(dtype):
    if np.dtype(dtype) in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
        return np.dtype(np.float32)
    return dtype


def _keep_dims(out, axes, ndim):
    if get_aval(out).ndim == ndim:
        return out
    return lax.expand_dims(out, tuple(sorted(axes)))  # a broadcast_in_dim, as JAX prints


def _check_out(name, out):
    if out is not None:
        raise NotImplementedError(f"jnp.{name}: the out argument is not supported (arrays are "
                                  "immutable); use the return value.")


def _reduce(name, a, axis, keepdims, where, initial, identity, lax_reduce, combine,
            result_dtype, compute_dtype=None):
    """The shared body: mask with `where`, reduce over `axis`, fold in `initial`, keep dims."""
    check_arraylike(name, a)
    a = as_array(a)
    ndim = get_aval(a).ndim
    axes = canonicalize_axes(axis, ndim, f"jnp.{name}")
    compute_dtype = compute_dtype or result_dtype
    a = convert_dtype(a, compute_dtype)
    if where is not None:
        if identity is None and initial is None:
            raise ValueError(f"jnp.{name}: the reduction has no identity, so a where mask needs "
                             "an initial value (pass initial=...).")
        fill = identity if identity is not None else initial
        mask = broadcast_to_shape(as_array(where), get_aval(a).shape)
        a = select(mask, lax.broadcast_in_dim(_const(compute_dtype, fill), get_aval(a).shape,
                                              ()), a)
    shape = get_aval(a).shape
    if axes and builtins.any(shape[d] == 0 for d in axes) and initial is not None:
        # an empty reduction is its initial value (lax's max/min have no identity to give)
        kept = tuple(d for i, d in enumerate(shape) if i not in axes)
        out = lax.broadcast_in_dim(convert_dtype(as_array(initial), compute_dtype), kept, ())
        initial = None
    else:
        out = lax_reduce(a, axes) if axes else a
    if initial is not None:
        out = combine(out, convert_dtype(as_array(initial), compute_dtype))
    out = convert_dtype(out, result_dtype)
    return _keep_dims(out, axes, ndim) if keepdims else out


def _sum_like(name, lax_name, identity, combine_name):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
           promote_integers=True):
        _check_out(name, out)
        check_arraylike(name, a)
        a = as_array(a)
        dtype = dtypes.check_user_dtype_supported(dtype, name)
        if dtype is None:
            dtype = _promoted_integer_dtype(get_aval(a).dtype, promote_integers)
        combine = getattr(lax, combine_name)
        return _reduce(name, a, axis, keepdims, where, initial, identity,
                       getattr(lax, lax_name), combine, dtype, _upcast_f16(dtype))

    fn.__name__ = fn.__qualname__ = name
    value = {"sum": 6, "prod": 8}[name]
    fn.__doc__ = (
        f"The {name} of array elements over `axis`.\n\nArgs:\n  a: the array.\n"
        "  axis: None (all axes), an int, or a tuple of ints.\n"
        "  dtype: the result dtype (default: integers narrower than the default integer are "
        "promoted to it, booleans too).\n  out: unsupported; must be None.\n"
        "  keepdims: keep the reduced axes with size 1.\n  initial: a value folded into the "
        "result.\n  where: a boolean mask of the elements to include.\n"
        "  promote_integers: whether to promote narrow integer dtypes.\n\n"
        f"Returns:\n  The reduced array.\n\nExample:\n  >>> {name}(np.array([2, 2, 2], np.int8))"
        f"\n  array({value}, dtype=int32)\n")
    return fn


sum = _sum_like("sum", "reduce_sum", 0, "add")  # noqa: A001 (NumPy's name)
prod = _sum_like("prod", "reduce_prod", 1, "mul")


def _extremum(name, lax_name, combine_name, sign):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _check_out(name, out)
        check_arraylike(name, a)
        a = as_array(a)
        dtype = get_aval(a).dtype
        if get_aval(a).size == 0 and initial is None and (axis is None or builtins.any(
                get_aval(a).shape[ax] == 0 for ax in canonicalize_axes(axis, get_aval(a).ndim))):
            raise ValueError(f"jnp.{name}: zero-size array to a reduction operation {name} which "
                             "has no identity; pass initial=... .")
        return _reduce(name, a, axis, keepdims, where, initial, None,
                       getattr(lax, lax_name), getattr(lax, combine_name), dtype)

    fn.__name__ = fn.__qualname__ = name
    value = 3 if sign > 0 else 1
    fn.__doc__ = (
        f"The {name}imum of array elements over `axis` (NaNs propagate).\n\nArgs:\n"
        "  a: the array.\n  axis: None (all axes), an int, or a tuple of ints.\n"
        "  out: unsupported; must be None.\n  keepdims: keep the reduced axes with size 1.\n"
        "  initial: a value folded into the result (required with `where`).\n"
        "  where: a boolean mask of the elements to include.\n\nReturns:\n  The reduced array."
        f"\n\nExample:\n  >>> {name}(np.array([1, 3, 2], np.int32))\n"
        f"  array({value}, dtype=int32)\n")
    return fn


max = _extremum("max", "reduce_max", "max", 1)  # noqa: A001 (NumPy's name)
min = _extremum("min", "reduce_min", "min", -1)  # noqa: A001 (NumPy's name)
amax = max
amin = min


def _boolean(name, lax_name, combine_name, identity):
    def fn(a, axis=None, out=None, keepdims=False, *, where=None):
        _check_out(name, out)
        check_arraylike(name, a)
        a = as_array(a)
        if not _is(a, np.bool_):
            a = lax.ne(a, convert_dtype(np.asarray(0), get_aval(a).dtype))
        return _reduce(name, a, axis, keepdims, where, None, identity,
                       getattr(lax, lax_name), getattr(lax, combine_name), np.dtype(np.bool_))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Whether {'all' if name == 'all' else 'any'} elements over `axis` are true.\n\nArgs:\n"
        "  a: the array (non-booleans test against zero).\n  axis: None, an int, or a tuple.\n"
        "  out: unsupported; must be None.\n  keepdims: keep the reduced axes with size 1.\n"
        "  where: a boolean mask of the elements to include.\n\nReturns:\n  A boolean array."
        f"\n\nExample:\n  >>> {name}(np.array([1, 0]))\n  array({name == 'any'})\n")
    return fn


all = _boolean("all", "reduce_and", "bitwise_and", True)  # noqa: A001 (NumPy's name)
any = _boolean("any", "reduce_or", "bitwise_or", False)  # noqa: A001 (NumPy's name)


def _count(a, axes, where):
    shape = get_aval(a).shape
    if where is None:
        return math.prod([shape[i] for i in axes])
    mask = broadcast_to_shape(as_array(where), shape)
    return lax.reduce_sum(lax.convert_element_type(mask, dtypes.default_int_dtype()), axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """The arithmetic mean over `axis` (integers average in the default float dtype;
    float16/bfloat16 accumulate in float32).

    Args:
      a: the array.
      axis: None (all axes), an int, or a tuple of ints.
      dtype: the result dtype.
      out: unsupported; must be None.
      keepdims: keep the reduced axes with size 1.
      where: a boolean mask of the elements to include.

    Returns:
      The mean.

    Example:
      >>> mean(np.array([1, 2], np.int32))
      array(1.5, dtype=float32)
    """
    _check_out("mean", out)
    check_arraylike("mean", a)
    a = as_array(a)
    dtype = dtypes.check_user_dtype_supported(dtype, "mean")
    result_dtype = dtype or dtypes.to_inexact_dtype(get_aval(a).dtype)
    compute = _upcast_f16(result_dtype)
    axes = canonicalize_axes(axis, get_aval(a).ndim, "jnp.mean")
    total = sum(a, axis=axes, dtype=compute, keepdims=keepdims, where=where)
    count = _count(a, axes, where)
    if not isinstance(count, int | DimExpr):
        count = convert_dtype(count, compute)
        if keepdims:
            count = _keep_dims(count, axes, get_aval(a).ndim)
    else:
        count = _const(compute, count)
    return convert_dtype(lax.div(total, count), result_dtype)


def _var_dtypes(a, dtype):
    a_dtype = get_aval(a).dtype
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(a_dtype)
        if dtypes.issubdtype(dtype, np.complexfloating):
            dtype = dtypes.finfo(dtype).dtype
    compute = _upcast_f16(dtypes.result_type(a_dtype, dtypes.to_inexact_dtype(dtype)))
    return dtype, compute


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """The variance over `axis`: the mean of `|x - mean(x)|**2`, divided by `N - ddof`.

    Args:
      a: the array.
      axis: None (all axes), an int, or a tuple of ints.
      dtype: the result dtype (default: the real inexact dtype of `a`).
      out: unsupported; must be None.
      ddof: delta degrees of freedom.
      keepdims: keep the reduced axes with size 1.
      where: a boolean mask of the elements to include.
      correction: the Array API name of `ddof` (give one of them).

    Returns:
      The variance.

    Example:
      >>> var(np.array([1.0, 3.0], np.float32))
      array(1., dtype=float32)
    """
    _check_out("var", out)
    if correction is not None:
        if ddof != 0:
            raise ValueError("jnp.var: pass ddof or correction, not both.")
        ddof = correction
    check_arraylike("var", a)
    a = as_array(a)
    dtype, compute = _var_dtypes(a, dtypes.check_user_dtype_supported(dtype, "var"))
    a = convert_dtype(a, compute)
    axes = canonicalize_axes(axis, get_aval(a).ndim, "jnp.var")
    centered = lax.sub(a, mean(a, axes, keepdims=True, where=where))  # size-1 dims broadcast
    if _is(centered, np.complexfloating):
        squared = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        squared = lax.square(centered)
    total = sum(squared, axis=axes, keepdims=keepdims, where=where)
    count = _count(a, axes, where)
    real = get_aval(total).dtype
    if isinstance(count, int | DimExpr):
        denominator = _const(real, count - ddof)
    else:
        denominator = lax.sub(convert_dtype(count, real), _const(real, ddof))
        if keepdims:
            denominator = _keep_dims(denominator, axes, get_aval(a).ndim)
    out = lax.div(total, denominator)
    # as in JAX, no degrees of freedom left gives NaN (not inf)
    nan = lax.broadcast_in_dim(_const(real, np.nan), get_aval(out).shape, ())
    positive = lax.gt(denominator, _const(real, 0))
    out = select(broadcast_to_shape(positive, get_aval(out).shape), nan, out)
    return convert_dtype(out, dtype)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """The standard deviation over `axis`: `sqrt(var(...))`.

    Args:
      a, axis, dtype, out, ddof, keepdims, where, correction: as for `var`.

    Returns:
      The standard deviation.

    Example:
      >>> std(np.array([1.0, 3.0], np.float32))
      array(1., dtype=float32)
    """
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def ptp(a, axis=None, out=None, keepdims=False):
    """The range `max - min` over `axis`.

    Example:
      >>> ptp(np.array([4, 9, 1]))
      array(8, dtype=int32)
    """
    return lax.sub(max(a, axis, out, keepdims), min(a, axis, out, keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    """The number of non-zero elements over `axis`, in the default integer dtype.

    Example:
      >>> count_nonzero(np.array([0, 3, 2]))
      array(2, dtype=int32)
    """
    check_arraylike("count_nonzero", a)
    a = as_array(a)
    nonzero = lax.ne(a, convert_dtype(np.asarray(0), get_aval(a).dtype))
    return sum(nonzero, axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The weighted average over `axis` (the mean when `weights` is None).

    Args:
      a: the array.
      axis: None, an int, or a tuple of ints.
      weights: an array of `a`'s shape, or 1-d with the length of the single `axis`.
      returned: also return the sum of the weights.
      keepdims: keep the reduced axes with size 1.

    Returns:
      The average, and the weight sum if `returned`.

    Example:
      >>> average(np.array([1.0, 3.0], np.float32), weights=np.array([3.0, 1.0], np.float32))
      array(1.5, dtype=float32)
    """
    check_arraylike("average", a)
    a = as_array(a)
    ndim = get_aval(a).ndim
    axes = canonicalize_axes(axis, ndim, "jnp.average")
    if weights is None:
        avg = mean(a, axes, keepdims=keepdims)
        count = _count(a, axes, None)
        weight_sum = lax.broadcast_in_dim(_const(get_aval(avg).dtype, count),
                                          get_aval(avg).shape, ())
        return (avg, weight_sum) if returned else avg
    a, weights = promote_dtypes_inexact(a, as_array(weights))
    w_shape = get_aval(weights).shape
    if w_shape != get_aval(a).shape:
        if len(w_shape) != 1 or len(axes) != 1 or w_shape[0] != get_aval(a).shape[axes[0]]:
            raise ValueError(f"jnp.average: weights of shape {w_shape} must have a's shape "
                             f"{get_aval(a).shape}, or be 1-d along a single axis.")
        weights = lax.broadcast_in_dim(weights, get_aval(a).shape, (axes[0],))
    weight_sum = sum(weights, axes, keepdims=keepdims)
    avg = lax.div(sum(lax.mul(a, weights), axes, keepdims=keepdims), weight_sum)
    return (avg, weight_sum) if returned else avg


def _arg_extremum(name, lax_name):
    def fn(a, axis=None, out=None, keepdims=None):
        _check_out(name, out)
        check_arraylike(name, a)
        a = as_array(a)
        shape = get_aval(a).shape
        if get_aval(a).size == 0:
            raise ValueError(f"jnp.{name}: attempt to get {name} of an empty sequence.")
        if axis is None:
            result = getattr(lax, lax_name)(lax.reshape(a, (get_aval(a).size,)), 0,
                                            dtypes.default_int_dtype())
            return lax.reshape(result, (1,) * len(shape)) if keepdims else result
        axis = canonicalize_axis(axis, len(shape), f"jnp.{name}")
        result = getattr(lax, lax_name)(a, axis, dtypes.default_int_dtype())
        return _keep_dims(result, (axis,), len(shape)) if keepdims else result

    fn.__name__ = fn.__qualname__ = name
    index = 1 if name == "argmax" else 2
    fn.__doc__ = (
        f"The index of the {name[3:]}imum along `axis` (the first on ties; NaNs count as "
        "extrema).\n\nArgs:\n  a: the array.\n  axis: an int, or None for the flattened array."
        "\n  out: unsupported; must be None.\n  keepdims: keep the reduced axis with size 1.\n\n"
        f"Returns:\n  Indices in the default integer dtype.\n\nExample:\n"
        f"  >>> {name}(np.array([1, 3, 0]))\n  array({index}, dtype=int32)\n")
    return fn


argmax = _arg_extremum("argmax", "argmax")
argmin = _arg_extremum("argmin", "argmin")


def _cumulative(name, lax_name, promote: bool):
    def fn(a, axis=None, dtype=None, out=None):
        _check_out(name, out)
        a, axis = flatten_or_axis(name, a, axis)
        dtype = dtypes.check_user_dtype_supported(dtype, name)
        if dtype is None:
            dtype = get_aval(a).dtype
            if promote and dtypes.issubdtype(dtype, np.bool_):  # JAX widens only booleans
                dtype = dtypes.default_int_dtype()
        if dtypes.issubdtype(dtype, np.bool_):
            # a boolean result is the cumulative or (sum) / and (product), as in JAX: counted
            # in int32, then compared with zero
            counts = fn(convert_dtype(convert_dtype(a, np.bool_), np.int32), axis)
            return lax.ne(counts, np.int32(0))
        a = convert_dtype(a, dtype)
        if get_aval(a).shape[axis] == 0:
            return a
        return getattr(lax, lax_name)(a, axis=axis, reverse=False)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"The cumulative {name[3:]} along `axis` (of the flattened array if None).\n\n"
        "Args:\n  a: the array.\n  axis: an int or None.\n  dtype: the result dtype (narrow "
        "integers and booleans promote to the default integer).\n  out: unsupported.\n\n"
        f"Returns:\n  An array of `a`'s shape (1-d if axis is None).\n\nExample:\n"
        f"  >>> {name}(np.array([1, 2, 3], np.int32))\n"
        f"  array([1, {2 if name == 'cumprod' else 3}, {6}], dtype=int32)\n")
    return fn


cumsum = _cumulative("cumsum", "cumsum", True)
cumprod = _cumulative("cumprod", "cumprod", True)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """The Array API cumulative sum: `cumsum`, optionally with a leading zero.

    Example:
      >>> cumulative_sum(np.array([1, 2], np.int32), include_initial=True)
      array([0, 1, 3], dtype=int32)
    """
    return _with_initial(cumsum, 0, x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """The Array API cumulative product: `cumprod`, optionally with a leading one.

    Example:
      >>> cumulative_prod(np.array([2, 3], np.int32), include_initial=True)
      array([1, 2, 6], dtype=int32)
    """
    return _with_initial(cumprod, 1, x, axis, dtype, include_initial, "cumulative_prod")


def _with_initial(fn, identity, x, axis, dtype, include_initial, name):
    check_arraylike(name, x)
    x = as_array(x)
    if axis is None:
        if get_aval(x).ndim > 1:
            raise ValueError(f"jnp.{name}: axis is required for arrays of more than one "
                             "dimension.")
        axis = 0
    if dtype is None:  # unlike cumsum, these promote narrow integers as sum does (JAX)
        dtype = _promoted_integer_dtype(get_aval(x).dtype, True)
    out = fn(x, axis=axis, dtype=dtype)
    if not include_initial:
        return out
    axis = canonicalize_axis(axis, get_aval(out).ndim)
    shape = list(get_aval(out).shape)
    shape[axis] = 1
    first = lax.broadcast_in_dim(_const(get_aval(out).dtype, identity), tuple(shape), ())
    return lax.concatenate([first, out], axis)


# ----- the nan* variants --------------------------------------------------------------------


def _nan_filled(name, a, value):
    check_arraylike(name, a)
    a = as_array(a)
    if not _is(a, np.inexact):
        return a
    fill = lax.broadcast_in_dim(_const(get_aval(a).dtype, value), get_aval(a).shape, ())
    return select(_logic.isnan(a), a, fill)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`sum`, treating NaNs as zero.

    Example:
      >>> nansum(np.array([1.0, np.nan], np.float32))
      array(1., dtype=float32)
    """
    return sum(_nan_filled("nansum", a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`prod`, treating NaNs as one.

    Example:
      >>> nanprod(np.array([2.0, np.nan], np.float32))
      array(2., dtype=float32)
    """
    return prod(_nan_filled("nanprod", a, 1), axis, dtype, out, keepdims, initial, where)


def _nan_extremum(name, reducer, fill):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        check_arraylike(name, a)
        a = as_array(a)
        if not _is(a, np.inexact):
            return reducer(a, axis, out, keepdims, initial, where)
        result = reducer(_nan_filled(name, a, fill), axis, out, keepdims, initial, where)
        all_nan = all(_logic.isnan(a), axis=axis, keepdims=keepdims)
        nan = lax.broadcast_in_dim(_const(get_aval(result).dtype, np.nan),
                                   get_aval(result).shape, ())
        return select(all_nan, result, nan)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"`{name[3:]}`, ignoring NaNs (NaN where every element is NaN).\n\n"
        f"Example:\n  >>> {name}(np.array([1.0, np.nan, 3.0], np.float32))\n"
        f"  array({'3.' if name == 'nanmax' else '1.'}, dtype=float32)\n")
    return fn


nanmax = _nan_extremum("nanmax", max, -np.inf)
nanmin = _nan_extremum("nanmin", min, np.inf)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """`mean` of the non-NaN elements (NaN where every element is NaN).

    Example:
      >>> nanmean(np.array([1.0, np.nan, 3.0], np.float32))
      array(2., dtype=float32)
    """
    check_arraylike("nanmean", a)
    a = as_array(a)
    if not _is(a, np.inexact):
        return mean(a, axis, dtype, out, keepdims, where=where)
    mask = _logic.logical_not(_logic.isnan(a))
    if where is not None:
        mask = _logic.logical_and(mask, where)
    return mean(a, axis, dtype, out, keepdims, where=mask)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    """`var` of the non-NaN elements.

    Example:
      >>> nanvar(np.array([1.0, np.nan, 3.0], np.float32))
      array(1., dtype=float32)
    """
    check_arraylike("nanvar", a)
    a = as_array(a)
    if not _is(a, np.inexact):
        return var(a, axis, dtype, out, ddof, keepdims, where=where)
    mask = _logic.logical_not(_logic.isnan(a))
    if where is not None:
        mask = _logic.logical_and(mask, where)
    return var(_nan_filled("nanvar", a, 0), axis, dtype, out, ddof, keepdims, where=mask)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    """`std` of the non-NaN elements.

    Example:
      >>> nanstd(np.array([1.0, np.nan, 3.0], np.float32))
      array(1., dtype=float32)
    """
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where))


def _nan_arg(name, reducer, fill):
    def fn(a, axis=None, out=None, keepdims=None):
        check_arraylike(name, a)
        a = as_array(a)
        if not _is(a, np.inexact):
            return reducer(a, axis, out, keepdims)
        result = reducer(_nan_filled(name, a, fill), axis, out, keepdims)
        all_nan = all(_logic.isnan(a), axis=axis, keepdims=bool(keepdims))
        return select(all_nan, result, lax.broadcast_in_dim(
            _const(get_aval(result).dtype, -1), get_aval(result).shape, ()))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"`{name[3:]}`, ignoring NaNs (-1 where every element is NaN).\n\nExample:\n"
        f"  >>> {name}(np.array([np.nan, 2.0, 1.0], np.float32))\n"
        f"  array({1 if name == 'nanargmax' else 2}, dtype=int32)\n")
    return fn


nanargmax = _nan_arg("nanargmax", argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", argmin, np.inf)


def nancumsum(a, axis=None, dtype=None, out=None):
    """`cumsum`, treating NaNs as zero.

    Example:
      >>> nancumsum(np.array([1.0, np.nan, 2.0], np.float32))
      array([1., 1., 3.], dtype=float32)
    """
    return cumsum(_nan_filled("nancumsum", a, 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """`cumprod`, treating NaNs as one.

    Example:
      >>> nancumprod(np.array([2.0, np.nan, 2.0], np.float32))
      array([2., 2., 4.], dtype=float32)
    """
    return cumprod(_nan_filled("nancumprod", a, 1), axis, dtype, out)
