"""Reductions over axes: reduce_sum, reduce_max, argmax."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.jvp import Zero
from laminax_core._primitive import (
    NOT_LINEAR,
    NUMERIC,
    ZERO_TANGENT,
    check_dtype,
    define_primitive,
    linear,
)
from laminax_core.lax._structural import broadcast_in_dim, reshape

__all__ = ["argmax", "reduce_max", "reduce_sum"]


def _normalize_axes(axes, ndim: int, name: str) -> tuple[int, ...]:
    if isinstance(axes, int | np.integer):
        axes = (axes,)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{name}: axis {a} is out of bounds for an array of rank {ndim}.")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: duplicate axes in {tuple(axes)}.")
    return tuple(sorted(out))


def _reduced_aval(x, axes, name, dtype=None):
    for a in axes:
        if not 0 <= a < x.ndim:
            raise TypeError(f"{name}: axis {a} is out of bounds for shape {x.shape}.")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype if dtype is None else dtype,
                       x.weak_type if dtype is None else False)


def _batch_reduction(bind):
    """Batching rule of a reduction over `axes`: keep the batch dim where it is."""

    def rule(axis_data, args, dims, axes, **params):
        (x,), (bdim,) = args, dims
        # reduced axes at or past the batch dim shift up by one; the batch dim moves down by
        # the number of reduced axes before it
        new_axes = tuple(_shift_past(a, bdim) for a in axes)
        out_bdim = bdim - sum(a < bdim for a in new_axes)
        return bind(x, axes=new_axes, **params), out_bdim

    return rule


def _shift_past(axis: int, bdim: int) -> int:
    return axis + 1 if axis >= bdim else axis


# ----- reduce_sum ---------------------------------------------------------------------------


def reduce_sum(operand, axes):
    """Sums `operand` over `axes`.

    Example:
      >>> reduce_sum(np.ones((2, 3), np.float32), (0,))
      array([2., 2., 2.], dtype=float32)
    """
    axes = _normalize_axes(axes, get_aval(operand).ndim, "reduce_sum")
    return reduce_sum_p.bind(operand, axes=axes, out_sharding=None)


def _reduce_sum_abstract_eval(x, axes, out_sharding):
    check_dtype("reduce_sum", x.dtype, NUMERIC)
    return _reduced_aval(x, axes, "reduce_sum")


def _reduce_sum_transpose(ct, x, axes, out_sharding):
    kept = tuple(i for i in range(x.aval.ndim) if i not in axes)
    return [broadcast_in_dim(ct, x.aval.shape, kept)]


reduce_sum_p = define_primitive(
    "reduce_sum",
    abstract_eval=_reduce_sum_abstract_eval,
    reference=lambda x, axes, out_sharding: np.sum(x, axis=axes, dtype=x.dtype),
    jvp=linear,
    transpose=_reduce_sum_transpose,
    batch=_batch_reduction(lambda x, **p: reduce_sum_p.bind(x, **p)),
)


# ----- reduce_max ---------------------------------------------------------------------------


def reduce_max(operand, axes):
    """The maximum of `operand` over `axes`."""
    axes = _normalize_axes(axes, get_aval(operand).ndim, "reduce_max")
    return reduce_max_p.bind(operand, axes=axes)


def _reduce_max_jvp(primals, tangents, axes):
    # the tangent is the mean of the tangents at the locations of the maximum
    from laminax_core.lax._elementwise import convert_element_type, div, eq, mul

    (x,), (t,) = primals, tangents
    ans = reduce_max(x, axes)
    if isinstance(t, Zero):
        return ans, Zero.from_primal_value(ans)
    aval = get_aval(x)
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    at_max = convert_element_type(eq(x, broadcast_in_dim(ans, aval.shape, kept)), aval.dtype)
    counts = reduce_sum(at_max, axes)
    return ans, div(reduce_sum(mul(t, at_max), axes), counts)


def _reduce_max_abstract_eval(x, axes):
    check_dtype("reduce_max", x.dtype, (np.number, np.bool_))
    return _reduced_aval(x, axes, "reduce_max")


reduce_max_p = define_primitive(
    "reduce_max",
    abstract_eval=_reduce_max_abstract_eval,
    reference=lambda x, axes: np.max(x, axis=axes),
    jvp=_reduce_max_jvp,
    transpose=NOT_LINEAR,
    batch=_batch_reduction(lambda x, **p: reduce_max_p.bind(x, **p)),
)


# ----- argmax -------------------------------------------------------------------------------


def argmax(operand, axis: int, index_dtype):
    """The index of the maximum of `operand` along `axis` (the first one on ties and NaNs)."""
    (axis,) = _normalize_axes((axis,), get_aval(operand).ndim, "argmax")
    index_dtype = dtypes.canonicalize_dtype(index_dtype)
    return argmax_p.bind(operand, axes=(axis,), index_dtype=index_dtype)


def _argmax_abstract_eval(x, axes, index_dtype):
    if not dtypes.issubdtype(index_dtype, np.integer):
        raise TypeError(f"argmax: index_dtype must be an integer dtype, got {index_dtype}.")
    if len(axes) != 1:
        raise TypeError(f"argmax reduces exactly one axis, got axes={axes}.")
    return _reduced_aval(x, axes, "argmax", dtype=index_dtype)


argmax_p = define_primitive(
    "argmax",
    abstract_eval=_argmax_abstract_eval,
    reference=lambda x, axes, index_dtype: np.argmax(x, axis=axes[0]).astype(index_dtype),
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=_batch_reduction(lambda x, **p: argmax_p.bind(x, **p)),
)

