"""`scipy.special` functions summed as series or recurrences in lax loops: the confluent
hypergeometric function `hyp1f1` (Kummer's series, or its large-|x| asymptotic series) and the
Bessel functions of the first kind `bessel_jn` (Miller's backward recurrence).

Both follow JAX's algorithms and loop structure (per-element loops via `vectorize`, the same
stopping rules), so values agree with JAX's to a few ulps.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_jvp
from laminax_core.scipy._common import _c, _inexact

__all__ = ["bessel_jn", "hyp1f1"]

_MAX_TERMS = 250


def _as(x, k):
    """The integer counter `k` as a float of `x`'s dtype (JAX promotes it implicitly)."""
    return lax.convert_element_type(k, get_aval(x).dtype)


def _sum_series(first, ratio, weight=None, start=1.0):
    """start + sum_k weight(k) t_k with t_1 = `first`, t_{k+1} = t_k ratio(k), summed until a
    term falls below eps relative to the sum or after 250 terms (JAX's rule)."""
    eps = _c(first, dtypes.finfo(get_aval(first).dtype).eps)

    def body(state):
        total, k, term = state
        total = lax.add(total, term if weight is None else lax.mul(term, weight(k)))
        return total, lax.add(k, np.int32(1)), lax.mul(term, ratio(k))

    def keep_going(state):
        total, k, term = state
        return lax.bitwise_and(lax.lt(k, np.int32(_MAX_TERMS)),
                               lax.gt(lax.div(lax.abs(term), lax.abs(total)), eps))

    init = (lax.full_like(first, start), np.int32(1), first)
    return lax.while_loop(keep_going, body, init)[0]


# ----- hyp1f1 ---------------------------------------------------------------------------------


def _kummer_ratio(a, b, x):
    # t_{k+1} / t_k = (a + k) / (b + k) * x / (k + 1)
    return lambda k: lax.div(lax.mul(lax.div(lax.add(a, _as(a, k)), lax.add(b, _as(b, k))), x),
                             _as(x, lax.add(k, np.int32(1))))


def _hyp1f1_series(a, b, x):
    return _sum_series(lax.mul(lax.div(a, b), x), _kummer_ratio(a, b, x))


def _hyp1f1_asymptotic(a, b, x):
    # M(a, b, x) ~ Gamma(b)/Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / k! x^-k
    def ratio(k):
        kf = _as(x, k)
        grown = lax.mul(lax.add(lax.sub(b, a), kf), lax.add(lax.sub(_c(a, 1), a), kf))
        return lax.div(lax.div(grown, _as(x, lax.add(k, np.int32(1)))), x)

    first = lax.div(lax.mul(lax.sub(b, a), lax.sub(_c(a, 1), a)), x)
    total = _sum_series(first, ratio)
    from laminax_core.scipy.special import gamma

    scale = lax.mul(lax.mul(lax.div(gamma(b), gamma(a)), lax.exp(x)), lax.pow(x, lax.sub(a, b)))
    return lax.mul(scale, total)


def _hyp1f1_scalar(a, b, x):
    value = lax.cond(lax.lt(lax.abs(x), _c(x, 100)), _hyp1f1_series, _hyp1f1_asymptotic, a, b, x)
    # M(0, b, x) = 1, M(a, a, x) = e^x, M(a, 0, x) = inf
    a_zero = lax.eq(a, _c(a, 0))
    index = lax.add(lax.add(lax.convert_element_type(a_zero, np.int32),
                            lax.mul(lax.convert_element_type(
                                lax.bitwise_and(lax.eq(a, b), lax.bitwise_not(a_zero)),
                                np.int32), np.int32(2))),
                    lax.mul(lax.convert_element_type(
                        lax.bitwise_and(lax.eq(b, _c(b, 0)), lax.bitwise_not(a_zero)),
                        np.int32), np.int32(3)))
    return lax.select_n(index, value, _c(x, 1), lax.exp(x), _c(x, np.inf))


def _hyp1f1_a_derivative_scalar(a, b, x):
    from laminax_core.scipy.special import digamma

    weight = lambda k: lax.sub(digamma(lax.add(a, _as(a, k))), digamma(a))  # noqa: E731
    return _sum_series(lax.mul(lax.div(a, b), x), _kummer_ratio(a, b, x), weight, start=0.0)


def _hyp1f1_b_derivative_scalar(a, b, x):
    from laminax_core.scipy.special import digamma

    weight = lambda k: lax.sub(digamma(b), digamma(lax.add(b, _as(b, k))))  # noqa: E731
    return _sum_series(lax.mul(lax.div(a, b), x), _kummer_ratio(a, b, x), weight, start=0.0)


@custom_jvp
def _hyp1f1(a, b, x):
    return jnp.vectorize(_hyp1f1_scalar)(a, b, x)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    (a, b, x), (a_dot, b_dot, x_dot) = primals, tangents
    # dM/da and dM/db as series of digamma differences; dM/dx = a/b M(a+1, b+1, x)
    d_a = jnp.vectorize(_hyp1f1_a_derivative_scalar)(a, b, x)
    d_b = jnp.vectorize(_hyp1f1_b_derivative_scalar)(a, b, x)
    d_x = lax.mul(lax.div(a, b), _hyp1f1(lax.add(a, _c(a, 1)), lax.add(b, _c(b, 1)), x))
    tangent = lax.add(lax.add(lax.mul(d_a, a_dot), lax.mul(d_b, b_dot)), lax.mul(d_x, x_dot))
    return _hyp1f1(a, b, x), tangent


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function `M(a, b, x) = sum_k (a)_k / (b)_k x^k / k!`.

    Summed as the power series for `|x| < 100` and as the asymptotic series beyond (as JAX;
    accuracy drops when `a` or `b` exceed about 60). Differentiable in all three arguments.

    Example:
      >>> hyp1f1(np.float32(1), np.float32(2), np.float32(1))  # doctest: +ELLIPSIS
      array(1.71828..., dtype=float32)
    """
    a, b, x = _inexact("hyp1f1", a, b, x)
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    return _hyp1f1(a, b, x)


# ----- bessel_jn ------------------------------------------------------------------------------


def bessel_jn(z, *, v: int, n_iter: int = 50):
    """The Bessel functions of the first kind `J_0(z) .. J_v(z)`, by Miller's backward
    recurrence from order `n_iter` normalized with `J_0 + 2 sum_k J_2k = 1`.

    Args:
      z: real arguments.
      v: the highest order (a concrete non-negative integer).
      n_iter: the starting order of the recurrence (static; larger is more accurate for
        large `|z|`).

    Returns:
      an array of shape `(v + 1, *z.shape)`.

    In float32 the recurrence overflows (NaN) unless `n_iter` is small, as in JAX.

    Example:
      >>> bessel_jn(np.float32(1), v=1, n_iter=20)  # doctest: +ELLIPSIS
      array([0.765197..., 0.440050...], dtype=float32)
    """
    z = _inexact("bessel_jn", jnp.asarray(z))
    if dtypes.issubdtype(get_aval(z).dtype, np.complexfloating):
        raise ValueError("bessel_jn: complex input not supported. Pass real arguments.")
    try:
        v, n_iter = operator.index(v), operator.index(n_iter)
    except TypeError as err:
        raise TypeError("bessel_jn: v and n_iter must be concrete Python integers.") from err

    def step(carry, k):
        f0, f1, total = carry
        # J_k = 2 (k + 1) J_{k+1} / z - J_{k+2}; the even orders sum to (1 - J_0) / 2
        f = lax.sub(lax.div(lax.mul(lax.mul(_c(k, 2.0), lax.add(k, _c(k, 1.0))), f1), z), f0)
        even = lax.eq(lax.rem(k, _c(k, 2)), _c(k, 0))
        total = lax.select_n(lax.broadcast_in_dim(even, get_aval(total).shape, ()), total,
                             lax.add(total, lax.mul(_c(f, 2.0), f)))
        return (f1, f, total), f

    dtype = get_aval(z).dtype
    init = (lax.full_like(z, 0.0), lax.full_like(z, 1e-16), lax.full_like(z, 0.0))
    orders = lax.iota(dtype, n_iter + 1)
    (_, _, total), values = lax.scan(step, init, orders, reverse=True)
    shape = get_aval(z).shape
    norm = lax.sub(total, lax.reshape(lax.slice_in_dim(values, 0, 1), shape))
    norm = lax.broadcast_in_dim(norm, (v + 1, *shape), tuple(range(1, len(shape) + 1)))
    return lax.div(lax.slice_in_dim(values, 0, v + 1), norm)
