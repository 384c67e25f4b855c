"""Sample summaries: `mode`, `rankdata` and `sem` (the standard error of the mean)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from laminax_core import _api, dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import get_aval
from laminax_core.numpy._operands import canonicalize_axis
from laminax_core.scipy.stats._common import promote

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_NAN_POLICIES = ("propagate", "omit", "raise")


def _check_nan_policy(name: str, nan_policy: str) -> None:
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"{name}: nan_policy='omit' is not supported (as in JAX); "
                                  "drop NaNs before calling.")
    if nan_policy == "raise":
        raise NotImplementedError(f"{name}: nan_policy='raise' cannot be decided under jit (as "
                                  "in JAX); check for NaNs outside the function.")


def _check_array(name: str, a):
    try:
        get_aval(a)
    except TypeError as err:
        raise TypeError(f"{name} requires ndarray or scalar arguments, got "
                        f"{type(a).__name__}.") from err


class ModeResult(NamedTuple):
    """`mode`'s result: the most frequent values and how often they occur."""

    mode: object
    count: object


def _mode_of_column(x):
    if x.size == 0:
        nan = jnp.array(np.nan, dtypes.default_float_dtype())
        return nan, jnp.array(0, dtypes.default_float_dtype())
    values, counts = jnp.unique(x, return_counts=True, size=x.size)
    return values[jnp.argmax(counts)], counts.max()


def mode(a, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False):
    """The most frequent value along `axis` (the smallest one on ties) and its count.

    Args:
      a: the data.
      axis: the axis to reduce, or None for the flattened array.
      nan_policy: only "propagate" is supported (as in JAX).
      keepdims: keep the reduced axis with length 1.

    Returns:
      `ModeResult(mode, count)`.
    """
    _check_array("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy("mode", nan_policy)
    if axis is not None:
        axis = canonicalize_axis(axis, x.ndim)
    shape = x.shape
    if axis is None:
        out_shape = (1,) * len(shape) if keepdims else ()
        x, axis = jnp.ravel(x), 0
    else:
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(shape)) if keepdims \
            else tuple(s for i, s in enumerate(shape) if i != axis)
    x = jnp.moveaxis(x, axis, 0)
    x = jnp.reshape(x, (x.shape[0], math.prod(x.shape[1:])))
    values, counts = _api.vmap(_mode_of_column, in_axes=1)(x)
    return ModeResult(jnp.reshape(values, out_shape), jnp.reshape(counts, out_shape))


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _ranks(a, method: str):
    out_dtype = dtypes.default_float_dtype()
    n = a.size
    ordered, order = lax.sort_key_val(a, jnp.arange(n))
    inverse = jnp.zeros_like(order).at[order].set(jnp.arange(n, dtype=order.dtype))
    if method == "ordinal":
        return (inverse + 1).astype(out_dtype)
    starts = jnp.concatenate([jnp.array([True]), ordered[1:] != ordered[:-1]])
    dense = jnp.cumsum(starts)[inverse]
    if method == "dense":
        return dense.astype(out_dtype)
    # positions where each tie group starts, then n (the end of the last group)
    bounds = jnp.nonzero(starts, size=n + 1, fill_value=n)[0].astype(out_dtype)
    if method == "max":
        return bounds[dense]
    if method == "min":
        return bounds[dense - 1] + 1
    return 0.5 * (bounds[dense] + bounds[dense - 1] + 1)


def rankdata(a, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate"):
    """Ranks of the data, 1 for the smallest; ties share a rank chosen by `method`.

    Args:
      a: the data.
      method: "average", "min", "max", "dense" or "ordinal" (SciPy's meanings).
      axis: rank along this axis; None ranks the flattened array.
      nan_policy: only "propagate" (any NaN makes every rank NaN).

    Returns:
      The ranks, in the default float dtype.
    """
    _check_array("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(rankdata, axis, a, method)
    a = jnp.ravel(a)
    out_dtype = dtypes.default_float_dtype()
    return lax.cond(jnp.any(jnp.isnan(a)), lambda v: jnp.full_like(v, jnp.nan, out_dtype),
                    lambda v: _ranks(v, method), a)


def sem(a, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False):
    """The standard error of the mean, `std(a, ddof) / sqrt(n)`, along `axis`.

    Args:
      a: the data.
      axis: the axis, or None for all elements.
      ddof: delta degrees of freedom of the standard deviation.
      nan_policy: "propagate", or "omit" to ignore NaNs.
      keepdims: keep the reduced axis with length 1.

    Raises:
      ValueError: another `nan_policy`.
    """
    (b,) = promote("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return jnp.std(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims)
        return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
