"""Polynomial fitting, division and roots: `polyfit` (least squares on a column-scaled
Vandermonde matrix, solved through the SVD with a relative cutoff `rcond`), `polydiv`
(synthetic division, one static step per quotient coefficient) and `roots` (the eigenvalues
of the companion matrix). Coefficients run from the highest power down, as in NumPy."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core.lax import dot_general
from laminax_core.lax._products import Precision
from laminax_core.lax.linalg import svd
from laminax_core.numpy._indexing import IndexUpdateHelper
from laminax_core.numpy._operands import (
    as_array,
    check_arraylike,
    concrete_array,
    promote_dtypes_inexact,
    select,
)
from laminax_core.numpy._reductions import all as all_
from laminax_core.numpy._reductions import argmin
from laminax_core.numpy._selection import where
from laminax_core.numpy._signal import vander
from laminax_core.numpy.linalg import eigvals, inv

__all__ = ["polydiv", "polyfit", "roots"]


def _matmul(a, b):
    return dot_general(a, b, (((1,), (0,)), ((), ())), (Precision.HIGHEST, Precision.HIGHEST))


def _lstsq(a, b, rcond: float):
    """Least squares `min |a x - b|` for 2-D `a` and 2-D `b`: `(x, residuals, rank, s)`, with
    singular values below `rcond * s[0]` treated as zero."""
    u, s, vh = svd(a, full_matrices=False)
    dtype = get_aval(s).dtype
    largest = lax.slice(s, (0,), (1,))
    kept = lax.ge(s, lax.mul(np.asarray(rcond, dtype), largest))
    rank = lax.reduce_sum(lax.convert_element_type(kept, dtypes.default_int_dtype()), (0,))
    safe = select(kept, lax.full_like(s, 1), s)
    inverse = select(kept, lax.full_like(s, 0), lax.div(lax.full_like(s, 1), safe))
    u_t_b = _matmul(lax.transpose(u, (1, 0)), b)
    scaled = lax.mul(lax.broadcast_in_dim(inverse, get_aval(u_t_b).shape, (0,)), u_t_b)
    x = _matmul(lax.transpose(vh, (1, 0)), scaled)
    error = lax.sub(b, _matmul(a, x))
    residuals = lax.reduce_sum(lax.mul(error, error), (0,))
    return x, residuals, rank, s


def _check_fit_args(x, y, deg):
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError(f"jnp.polyfit: expected deg >= 0, got {deg}.")
    if get_aval(x).ndim != 1:
        raise TypeError(f"jnp.polyfit: expected a 1-D vector for x, got shape {get_aval(x).shape}.")
    if get_aval(x).size == 0:
        raise TypeError("jnp.polyfit: expected a non-empty vector for x.")
    if not 1 <= get_aval(y).ndim <= 2:
        raise TypeError(f"jnp.polyfit: expected a 1-D or 2-D array for y, got shape "
                        f"{get_aval(y).shape}.")
    if get_aval(x).shape[0] != get_aval(y).shape[0]:
        raise TypeError("jnp.polyfit: expected x and y to have the same length, got "
                        f"{get_aval(x).shape[0]} and {get_aval(y).shape[0]}.")
    return deg


def _weighted(lhs, rhs, w, n: int):
    (w,) = promote_dtypes_inexact(as_array(w))
    if get_aval(w).ndim != 1 or get_aval(w).shape[0] != n:
        raise TypeError(f"jnp.polyfit: expected 1-D weights of length {n}, got shape "
                        f"{get_aval(w).shape}.")
    w = lax.convert_element_type(w, get_aval(lhs).dtype)
    lhs = lax.mul(lhs, lax.broadcast_in_dim(w, get_aval(lhs).shape, (0,)))
    rhs = lax.mul(rhs, lax.broadcast_in_dim(w, get_aval(rhs).shape, (0,)))
    return lhs, rhs


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through the points `(x, y)`.

    Args:
      x: sample positions, 1-D.
      y: values, 1-D or 2-D (one fit per column).
      deg: the degree (static).
      rcond: relative cutoff for small singular values (default `len(x) * eps`).
      full: also return `(residuals, rank, singular_values, rcond)`.
      w: optional weights applied to the residuals (1-D, like `x`).
      cov: also return the coefficients' covariance (`"unscaled"` to skip the residual
        scaling).

    Returns:
      The coefficients, highest power first (one column per column of `y`), plus the extras
      `full` or `cov` ask for.

    Example:
      >>> polyfit(np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 5.0]), 1).round(4)
      array([2., 1.], dtype=float32)
    """
    check_arraylike("polyfit", x, y)
    x, y = promote_dtypes_inexact(as_array(x), as_array(y))
    deg = _check_fit_args(x, y, deg)
    order, n = deg + 1, get_aval(x).shape[0]
    if rcond is None:
        rcond = n * float(np.finfo(get_aval(x).dtype).eps)
    rhs = y if get_aval(y).ndim == 2 else lax.reshape(y, (n, 1))
    lhs = vander(x, order).astype(get_aval(rhs).dtype)
    if w is not None:
        lhs, rhs = _weighted(lhs, rhs, w, n)
    # scale the columns to unit norm (better conditioned), and the solution back
    scale = lax.sqrt(lax.reduce_sum(lax.mul(lhs, lhs), (0,)))
    lhs = lax.div(lhs, lax.broadcast_in_dim(scale, get_aval(lhs).shape, (1,)))
    c, residuals, rank, s = _lstsq(lhs, rhs, float(rcond))
    c = lax.div(c, lax.broadcast_in_dim(scale, get_aval(c).shape, (0,)))
    if get_aval(y).ndim == 1:
        c = lax.reshape(c, (order,))
    if full:
        return c, residuals, rank, s, np.asarray(rcond, dtypes.default_float_dtype())
    if cov:
        return c, _covariance(lhs, scale, residuals, n, order, cov, get_aval(y).ndim)
    return c


def _covariance(lhs, scale, residuals, n: int, order: int, cov, y_ndim: int):
    base = inv(_matmul(lax.transpose(lhs, (1, 0)), lhs))
    outer = lax.mul(lax.broadcast_in_dim(scale, (order, order), (0,)),
                    lax.broadcast_in_dim(scale, (order, order), (1,)))
    base = lax.div(base, outer)
    if cov == "unscaled":
        factor = lax.full_like(residuals, 1)
    else:
        if n <= order:
            raise ValueError("jnp.polyfit: the number of data points must exceed order to "
                             "scale the covariance matrix.")
        factor = lax.div(residuals, np.asarray(n - order, get_aval(residuals).dtype))
    k = get_aval(factor).shape[0]
    if y_ndim == 1:
        return lax.mul(base, lax.broadcast_in_dim(lax.reshape(factor, ()), (order, order), ()))
    return lax.mul(lax.broadcast_in_dim(base, (order, order, k), (0, 1)),
                   lax.broadcast_in_dim(factor, (order, order, k), (2,)))


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """Polynomial division `u / v`: the quotient and remainder coefficient arrays (highest
    power first). The remainder keeps `u`'s length (leading zeros) unless
    `trim_leading_zeros`, which needs concrete values.

    Example:
      >>> q, r = polydiv(np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0]))
      >>> q
      array([ 1., -2.], dtype=float32)
    """
    check_arraylike("polydiv", u, v)
    u, v = promote_dtypes_inexact(as_array(u), as_array(v))
    m, n = get_aval(u).shape[0] - 1, get_aval(v).shape[0] - 1
    dtype = get_aval(u).dtype
    scale = lax.div(np.ones((), dtype), lax.reshape(lax.slice(v, (0,), (1,)), ()))
    q = lax.full((max(m - n + 1, 1),), 0, dtype)
    for k in range(m - n + 1):
        d = lax.mul(scale, lax.reshape(lax.slice(u, (k,), (k + 1,)), ()))
        q = IndexUpdateHelper(q)[k].set(d)
        u = IndexUpdateHelper(u)[k:k + n + 1].add(lax.neg(lax.mul(d, v)))
    if trim_leading_zeros:
        u = _trim_leading(u)
    return q, u


def _trim_leading(u):
    # leading entries within sqrt(eps) of zero are dropped; the length depends on the values,
    # so `u` must be concrete (as in JAX)

    values = concrete_array("polydiv(trim_leading_zeros=True)", u)
    small = np.abs(values) < np.sqrt(np.finfo(get_aval(u).dtype).eps)
    keep = int(np.argmin(small)) if not small.all() else get_aval(u).shape[0]
    return lax.slice(u, (keep,), (get_aval(u).shape[0],))


def _companion_roots(p):
    """The eigenvalues of `p`'s companion matrix: its roots (complex)."""
    n = get_aval(p).shape[0]
    dtype = get_aval(p).dtype
    if n < 2:
        return np.zeros((0,), dtypes.to_complex_dtype(dtype))
    below = lax.broadcast_in_dim(np.eye(n - 1, n - 1, -1, dtype=dtype), (n - 1, n - 1), (0, 1))
    lead = lax.slice(p, (0,), (1,))
    first_row = lax.neg(lax.div(lax.slice(p, (1,), (n,)),
                                lax.broadcast_in_dim(lax.reshape(lead, ()), (n - 1,), ())))
    companion = lax.concatenate([lax.reshape(first_row, (1, n - 1)),
                                 lax.slice(below, (1, 0), (n - 1, n - 1))], 0)
    return eigvals(companion)


def roots(p, *, strip_zeros: bool = True):
    """The roots of the polynomial with coefficients `p` (highest power first), as complex
    numbers.

    Args:
      p: 1-D coefficients.
      strip_zeros: drop leading zero coefficients first (needs concrete values). With False
        (usable under jit), each leading zero gives a NaN root at the end instead.

    Returns:
      The roots, complex.

    Example:
      >>> np.sort_complex(np.asarray(roots(np.array([1.0, -3.0, 2.0], np.float32)))).real
      array([1., 2.], dtype=float32)
    """
    check_arraylike("roots", p)
    (p,) = promote_dtypes_inexact(as_array(p))
    if get_aval(p).ndim == 0:
        p = lax.reshape(p, (1,))
    if get_aval(p).ndim != 1:
        raise ValueError("jnp.roots: input must be a rank-1 array.")
    n = get_aval(p).shape[0]
    if n < 2:
        return np.zeros((0,), dtypes.to_complex_dtype(get_aval(p).dtype))
    if strip_zeros:
        values = concrete_array("roots (pass strip_zeros=False under jit)", p)
        nonzero = np.flatnonzero(values != 0)
        start = int(nonzero[0]) if nonzero.size else n
        return _companion_roots(lax.slice(p, (start,), (n,)))
    return _roots_with_leading_zeros(p)


def _roots_with_leading_zeros(p):
    # as JAX: roll the leading zeros to the end, solve, sort zero roots last, and report the
    # roots that the leading zeros stand for as NaN

    n = get_aval(p).shape[0]
    is_zero = lax.eq(p, lax.full_like(p, 0))
    n_leading = where(all_(is_zero), n, argmin(is_zero)).astype(np.int32)
    p = where(lax.eq(n_leading, np.int32(n)), lax.full_like(p, 1), p)
    # roll left by the traced count: a window of the doubled coefficients
    doubled = lax.concatenate([p, p], 0)
    found = _companion_roots(lax.dynamic_slice(doubled, (n_leading,), (n,)))
    zero_root = lax.eq(found, lax.full_like(found, 0))
    _, found = lax.sort_key_val(zero_root, found)
    keep = lax.lt(lax.iota(np.int32, n - 1), lax.sub(np.int32(n - 1), n_leading))
    nan = lax.full_like(found, complex(np.nan, np.nan))
    return select(keep, nan, found)
