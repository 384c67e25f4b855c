"""Cumulative reductions along an axis: cumsum, cumprod, cummax, cummin, cumlogsumexp (JAX's
`cumsum_p` ... with params `axis` and `reverse`).

cumsum is linear. The others differentiate through a prefix scan written with lax primitives
(log2(n) shifted combines), so their derivatives come from the combine's own jvp rules: ties of
cummax/cummin share the tangent as `max` does.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import move_bdim
from laminax_core._interpreters.jvp import instantiate_zeros, jvp_flat
from laminax_core._sharding_rules import unsplit_axis_sharding
from laminax_core._primitive import (
    FLOATING,
    NOT_LINEAR,
    NUMERIC,
    check_dtype,
    define_primitive,
    linear,
)
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._helpers import highest, lowest
from laminax_core.lax._math import log1p
from laminax_core.lax._slicing import pad

__all__ = ["cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum"]
# the primitives, which lax exports beside their functions
__all__ += [
    "cumlogsumexp_p", "cummax_p", "cummin_p", "cumprod_p", "cumsum_p",
]  # fmt: skip


def _canonical_axis(x, axis: int, name: str) -> int:
    ndim = get_aval(x).ndim
    axis = operator.index(axis)
    if not 0 <= axis < ndim:  # lax takes XLA's axes: no negative ones (as JAX's lax)
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim} "
                         "(lax takes no negative axes).")
    return axis


def _abstract_eval(name, accepted):
    def rule(x, axis, reverse):
        check_dtype(name, x.dtype, accepted)
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: axis {axis} is out of bounds for shape {x.shape}.")
        sharding = unsplit_axis_sharding(
            x, axis, name, "Input should be unsharded over the axis being reduced. Got input "
            f"type={x.str_short()} and axis={axis}; reshard it first.")
        return ShapedArray(x.shape, x.dtype, x.weak_type, sharding)

    return rule


def _reference(accumulate):
    def reference(x, axis, reverse):
        if reverse:
            return np.flip(accumulate(np.flip(x, axis), axis), axis).astype(x.dtype)
        return np.asarray(accumulate(x, axis)).astype(x.dtype)

    return reference


def _batch(primitive_of):
    def rule(axis_data, args, dims, axis, reverse):
        x = move_bdim(args[0], dims[0], 0)
        return primitive_of().bind(x, axis=axis + 1, reverse=reverse), 0

    return rule


def _in_float32(accumulate):
    def wide(x, axis):
        if dtypes.issubdtype(x.dtype, np.floating) and x.dtype.itemsize < 4:
            return accumulate(x.astype(np.float32), axis).astype(x.dtype)
        return accumulate(x, axis)

    return wide


# ----- the prefix scan the non-linear jvps differentiate ----------------------------------


def _shifted(x, offset, axis, reverse, identity):
    """`x` moved `offset` places along `axis` (toward the end unless `reverse`), filled with
    `identity`."""
    config = [(0, 0, 0)] * get_aval(x).ndim
    config[axis] = (-offset, offset, 0) if reverse else (offset, -offset, 0)
    return pad(x, np.asarray(identity, get_aval(x).dtype), config)


def _prefix_scan(combine, identity, x, axis, reverse):
    """The inclusive scan of `combine` along `axis` (Hillis-Steele: log2(n) combines)."""
    n, offset = get_aval(x).shape[axis], 1
    while offset < n:
        x = combine(_shifted(x, offset, axis, reverse, identity), x)
        offset *= 2
    return x


def _scan_jvp(primitive_of, combine, identity_of):
    def rule(primals, tangents, axis, reverse):
        (x,), (t,) = primals, tangents
        ans = primitive_of().bind(x, axis=axis, reverse=reverse)
        identity = identity_of(get_aval(x).dtype)
        scan = lambda v: [_prefix_scan(combine, identity, v, axis, reverse)]  # noqa: E731
        _, (t_out,) = jvp_flat(scan, [x], [instantiate_zeros(t)])
        return ans, t_out

    return rule


def _logaddexp(a, b):
    # log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); where a - b is NaN (both -inf, or a
    # NaN operand) the result is the max
    top = ew.max(a, b)
    delta = ew.sub(a, b)
    finite = ew.add(top, log1p(ew.exp(ew.neg(ew.abs(delta)))))
    return ew.select_n(ew.ne(delta, delta), finite, top)


# ----- cumsum -------------------------------------------------------------------------------


def cumsum(operand, axis: int = 0, reverse: bool = False):
    """Running sums along `axis` (from the end if `reverse`).

    Example:
      >>> cumsum(np.array([1, 2, 3], np.int32))
      array([1, 3, 6], dtype=int32)
    """
    axis = _canonical_axis(operand, axis, "cumsum")
    return cumsum_p.bind(operand, axis=axis, reverse=bool(reverse))


cumsum_p = define_primitive(
    "cumsum",
    abstract_eval=_abstract_eval("cumsum", NUMERIC),
    reference=_reference(lambda x, axis: np.cumsum(x, axis, dtype=x.dtype)),
    jvp=linear,
    transpose=lambda ct, x, axis, reverse: [cumsum(ct, axis, not reverse)],
    batch=_batch(lambda: cumsum_p),
)


# ----- cumprod ------------------------------------------------------------------------------


def cumprod(operand, axis: int = 0, reverse: bool = False):
    """Running products along `axis` (from the end if `reverse`)."""
    axis = _canonical_axis(operand, axis, "cumprod")
    return cumprod_p.bind(operand, axis=axis, reverse=bool(reverse))


cumprod_p = define_primitive(
    "cumprod",
    abstract_eval=_abstract_eval("cumprod", NUMERIC),
    reference=_reference(lambda x, axis: np.cumprod(x, axis, dtype=x.dtype)),
    jvp=_scan_jvp(lambda: cumprod_p, ew.mul, lambda dtype: 1),
    transpose=NOT_LINEAR,
    batch=_batch(lambda: cumprod_p),
)


# ----- cummax, cummin -----------------------------------------------------------------------


def cummax(operand, axis: int = 0, reverse: bool = False):
    """Running maxima along `axis` (from the end if `reverse`).

    Example:
      >>> cummax(np.array([1, 3, 2], np.float32))
      array([1., 3., 3.], dtype=float32)
    """
    axis = _canonical_axis(operand, axis, "cummax")
    return cummax_p.bind(operand, axis=axis, reverse=bool(reverse))


cummax_p = define_primitive(
    "cummax",
    abstract_eval=_abstract_eval("cummax", NUMERIC),
    reference=_reference(_in_float32(np.maximum.accumulate)),
    jvp=_scan_jvp(lambda: cummax_p, ew.max, lowest),
    transpose=NOT_LINEAR,
    batch=_batch(lambda: cummax_p),
)


def cummin(operand, axis: int = 0, reverse: bool = False):
    """Running minima along `axis` (from the end if `reverse`)."""
    axis = _canonical_axis(operand, axis, "cummin")
    return cummin_p.bind(operand, axis=axis, reverse=bool(reverse))


cummin_p = define_primitive(
    "cummin",
    abstract_eval=_abstract_eval("cummin", NUMERIC),
    reference=_reference(_in_float32(np.minimum.accumulate)),
    jvp=_scan_jvp(lambda: cummin_p, ew.min, highest),
    transpose=NOT_LINEAR,
    batch=_batch(lambda: cummin_p),
)


# ----- cumlogsumexp -------------------------------------------------------------------------


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """Running `log(sum(exp(x)))` along `axis`, computed stably.

    Example:
      >>> cumlogsumexp(np.zeros(2, np.float32))
      array([0.       , 0.6931472], dtype=float32)
    """
    axis = _canonical_axis(operand, axis, "cumlogsumexp")
    return cumlogsumexp_p.bind(operand, axis=axis, reverse=bool(reverse))


cumlogsumexp_p = define_primitive(
    "cumlogsumexp",
    abstract_eval=_abstract_eval("cumlogsumexp", FLOATING),
    reference=_reference(_in_float32(np.logaddexp.accumulate)),
    jvp=_scan_jvp(lambda: cumlogsumexp_p, _logaddexp, lowest),
    transpose=NOT_LINEAR,
    batch=_batch(lambda: cumlogsumexp_p),
)
