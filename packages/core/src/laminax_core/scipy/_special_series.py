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
from laminax_core.scipy._special_gamma import digamma, gamma

__all__ = ["bessel_jn", "hyp1f1", "hyp2f1"]

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
    weight = lambda k: lax.sub(digamma(lax.add(a, _as(a, k))), digamma(a))  # noqa: E731
    return _sum_series(lax.mul(lax.div(a, b), x), _kummer_ratio(a, b, x), weight, start=0.0)


def _hyp1f1_b_derivative_scalar(a, b, x):
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


# ----- hyp2f1 ---------------------------------------------------------------------------------


def _f(x, value):
    return _c(x, value)


def _is_integer(v):
    return lax.eq(lax.rem(v, _f(v, 1)), _f(v, 0))


def _hyp2f1_terminal(a, b, c, x, selected):
    """The terminating sum when a (or b) is a non-positive integer: |a| + 1 terms."""
    eps = _f(x, dtypes.finfo(get_aval(x).dtype).eps * 50)
    near_int_b = lax.lt(lax.abs(lax.sub(b, jnp.round(b))), eps)
    c_pole_first = lax.bitwise_and(_is_integer(c), lax.bitwise_and(lax.le(c, _f(c, 0)),
                                                                   lax.gt(c, b)))
    swap = lax.bitwise_and(lax.lt(b, a),
                           lax.bitwise_and(near_int_b, lax.bitwise_not(c_pole_first)))
    a, b = lax.select_n(swap, a, b), lax.select_n(swap, b, a)
    a = lax.abs(a)
    # only where the branch is taken: elsewhere |a| may be huge or inf (JAX would loop on)
    stop = lax.select_n(selected, _f(a, 1), lax.add(a, _f(a, 1)))

    def body(state):
        i, total, term = state
        one = _f(i, 1)
        factor = lax.div(lax.neg(lax.add(lax.sub(a, i), one)), lax.sub(lax.add(c, i), one))
        factor = lax.mul(lax.div(lax.mul(factor, lax.sub(lax.add(b, i), one)), i), x)
        term = lax.mul(term, factor)
        return lax.add(i, one), lax.add(total, term), term

    init = (_f(a, 1), _f(x, 1), _f(x, 1))
    return lax.while_loop(lambda s: lax.lt(s[0], stop), body, init)[1]


def _hyp2f1_power_series(a, b, c, x):
    eps = _f(x, dtypes.finfo(get_aval(x).dtype).eps)

    def body(state):
        total, k, term = state
        one = _f(k, 1)
        # t_{k+1} / t_k = (a+k-1)(b+k-1) / (c+k-1) / k * x
        grown = lax.mul(lax.sub(lax.add(a, k), one), lax.sub(lax.add(b, k), one))
        ratio = lax.mul(lax.div(lax.div(grown, lax.sub(lax.add(c, k), one)), k), x)
        return lax.add(total, term), lax.add(k, one), lax.mul(term, ratio)

    def keep_going(state):
        total, k, term = state
        return lax.bitwise_and(lax.lt(k, _f(k, 250)),
                               lax.gt(lax.abs(term), lax.mul(eps, lax.abs(total))))

    return lax.while_loop(keep_going, body, (_f(x, 0), _f(x, 1), _f(x, 1)))[0]


def _digamma_sum(a, b, d1, e, ax, t):
    one = _f(t, 1)
    return lax.sub(lax.sub(lax.sub(lax.add(digamma(lax.add(one, t)),
                                           digamma(lax.add(lax.add(one, t), e))),
                                   digamma(lax.add(lax.add(a, t), d1))),
                           digamma(lax.add(lax.add(b, t), d1))), ax)


def _hyp2f1_near_one(a, b, c, x, selected):
    """F(a, b; c; x) for x near 1 with c - a - b near an integer m (Abramowitz and Stegun
    15.3.10-12): a series in 1 - x with digamma terms, plus the finite sum of |m| - 1 terms."""
    eps = _f(x, dtypes.finfo(get_aval(x).dtype).eps)
    d = lax.sub(lax.sub(c, a), b)
    s = lax.sub(_f(x, 1), x)
    rd = jnp.round(d)
    nonnegative = lax.ge(rd, _f(rd, 0))
    e = lax.select_n(nonnegative, lax.neg(d), d)
    d1 = lax.select_n(nonnegative, _f(d, 0), d)
    d2 = lax.select_n(nonnegative, d, _f(d, 0))
    ard = lax.convert_element_type(lax.select_n(nonnegative, lax.neg(rd), rd), np.int32)
    ard = lax.select_n(selected, np.int32(0), ard)  # the finite sum runs only where used
    ax = lax.log(s)
    y = lax.div(_digamma_sum(a, b, d1, e, ax, _f(x, 0)), gamma(lax.add(e, _f(e, 1))))
    p = lax.div(lax.mul(lax.mul(lax.add(a, d1), lax.add(b, d1)), s),
                gamma(lax.add(e, _f(e, 2))))

    def body(state):
        p, q, t, y = state
        q = lax.mul(p, _digamma_sum(a, b, d1, e, ax, t))
        y = lax.add(y, q)
        t1 = lax.add(t, _f(t, 1))
        p = lax.mul(p, lax.div(lax.mul(s, lax.add(lax.add(a, t), d1)), t1))
        p = lax.mul(p, lax.div(lax.add(lax.add(b, t), d1), lax.add(t1, e)))
        return p, q, t1, y

    def keep_going(state):
        _, q, t, y = state
        return lax.bitwise_and(lax.lt(t, _f(t, 250)),
                               lax.ge(lax.abs(q), lax.mul(eps, lax.abs(y))))

    _, _, _, y = lax.while_loop(keep_going, body, (p, y, _f(x, 1), y))
    return _where(lax.eq(rd, _f(rd, 0)),
                  lax.div(lax.mul(y, gamma(c)), lax.mul(gamma(a), gamma(b))),
                  _hyp2f1_finite_part(a, b, c, d1, d2, e, s, rd, ard, y))


def _hyp2f1_finite_part(a, b, c, d1, d2, e, s, rd, ard, y):
    def body(state):
        i, p, t, y1 = state
        r = lax.add(lax.sub(_f(e, 1), e), t)
        p = lax.mul(p, lax.div(lax.mul(lax.mul(s, lax.add(lax.add(a, t), d2)),
                                       lax.add(lax.add(b, t), d2)), r))
        t = lax.add(t, _f(t, 1))
        p = lax.div(p, t)
        return lax.add(i, np.int32(1)), p, t, lax.add(y1, p)

    init = (np.int32(1), _f(s, 1), _f(s, 0), _f(s, 1))
    y1 = lax.while_loop(lambda st: lax.lt(st[0], ard), body, init)[3]
    gamma_c = gamma(c)
    y1 = lax.mul(y1, lax.div(lax.mul(gamma(e), gamma_c),
                             lax.mul(gamma(lax.add(a, d1)), gamma(lax.add(b, d1)))))
    y = lax.mul(y, lax.div(gamma_c, lax.mul(gamma(lax.add(a, d2)), gamma(lax.add(b, d2)))))
    odd = lax.ne(lax.bitwise_and(ard, np.int32(1)), np.int32(0))
    y = _where(odd, lax.neg(y), y)
    q = lax.pow(s, rd)
    return _where(lax.gt(rd, _f(rd, 0)), lax.add(lax.mul(y, q), y1),
                  lax.add(y, lax.mul(y1, q)))


def _where(predicate, on_true, on_false):
    return lax.select_n(predicate, on_false, on_true)


def _hyp2f1_terminal_or_series(a, b, c, x):
    eps = _f(x, dtypes.finfo(get_aval(x).dtype).eps * 50)
    d = lax.sub(lax.sub(c, a), b)

    def negative_integer(v):
        return lax.bitwise_and(lax.le(v, _f(v, 0)),
                               lax.lt(lax.abs(lax.sub(v, jnp.round(v))), eps))

    terminates = lax.bitwise_or(negative_integer(a), negative_integer(b))
    near_one = lax.bitwise_and(lax.gt(x, _f(x, 0.9)), lax.bitwise_not(terminates))
    d_integer = lax.lt(lax.abs(lax.sub(d, jnp.round(d))), eps)
    use_near_one = lax.bitwise_and(near_one, d_integer)
    index = _where(near_one, lax.convert_element_type(d_integer, np.int32),
                   _where(terminates, np.int32(2), np.int32(0)))
    return lax.select_n(index, _hyp2f1_power_series(a, b, c, x),
                        _hyp2f1_near_one(a, b, c, x, use_near_one),
                        _hyp2f1_terminal(a, b, c, x, lax.eq(index, np.int32(2))))


def _hyp2f1_scalar(a, b, c, x):
    eps = _f(x, dtypes.finfo(get_aval(x).dtype).eps * 50)
    d = lax.sub(lax.sub(c, a), b)
    s = lax.sub(_f(x, 1), x)
    ca, cb = lax.sub(c, a), lax.sub(c, b)
    off_integer_d = lax.ge(lax.abs(lax.sub(d, jnp.round(d))), eps)
    below_one = lax.lt(x, _f(x, 1))
    # in order: trivial 1, poles (inf), Euler's transformation, a or b equal to c, x == 1
    # (Gauss's theorem), else the series
    cases = [
        (lax.bitwise_or(lax.eq(x, _f(x, 0)), lax.bitwise_and(
            lax.bitwise_or(lax.eq(a, _f(a, 0)), lax.eq(b, _f(b, 0))), lax.ne(c, _f(c, 0)))), 0),
        (lax.bitwise_or(lax.eq(c, _f(c, 0)),
                        lax.bitwise_and(lax.lt(c, _f(c, 0)), _is_integer(c))), 1),
        (lax.bitwise_and(lax.le(d, _f(d, -1)), lax.bitwise_not(
            lax.bitwise_and(off_integer_d, lax.lt(s, _f(s, 0))))), 2),
        (lax.bitwise_and(lax.le(d, _f(d, 0)), lax.eq(x, _f(x, 1))), 1),
        (lax.bitwise_and(below_one, lax.eq(b, c)), 3),
        (lax.bitwise_and(below_one, lax.eq(a, c)), 4),
        (lax.gt(x, _f(x, 1)), 1),
        (lax.eq(x, _f(x, 1)), 5),
    ]
    index = np.int32(6)
    for condition, value in reversed(cases):  # the first condition that holds wins
        index = _where(condition, np.int32(value), index)
    return lax.select_n(
        index, _f(x, 1), _f(x, np.inf),
        lax.mul(lax.pow(s, d), _hyp2f1_terminal_or_series(ca, cb, c, x)),
        lax.pow(s, lax.neg(a)), lax.pow(s, lax.neg(b)),
        lax.div(lax.mul(gamma(c), gamma(d)), lax.mul(gamma(ca), gamma(cb))),
        _hyp2f1_terminal_or_series(a, b, c, x))


def _hyp2f1_parameter_derivative(weight):
    """d F / d(parameter) as the series sum_k weight(k) t_k of digamma differences."""

    def scalar(a, b, c, x):
        def ratio(k):
            kf = _as(x, k)
            grown = lax.mul(lax.add(a, kf), lax.add(b, kf))
            return lax.mul(lax.div(lax.div(grown, lax.add(c, kf)),
                                   _as(x, lax.add(k, np.int32(1)))), x)

        first = lax.mul(lax.div(lax.mul(a, b), c), x)
        return _sum_series(first, ratio, lambda k: weight(a, b, c, _as(x, k)), start=0.0)

    return jnp.vectorize(scalar)


def _digamma(v):
    return digamma(v)


_HYP2F1_D_A = _hyp2f1_parameter_derivative(
    lambda a, b, c, k: lax.sub(_digamma(lax.add(a, k)), _digamma(a)))
_HYP2F1_D_B = _hyp2f1_parameter_derivative(
    lambda a, b, c, k: lax.sub(_digamma(lax.add(b, k)), _digamma(b)))
_HYP2F1_D_C = _hyp2f1_parameter_derivative(
    lambda a, b, c, k: lax.sub(_digamma(c), _digamma(lax.add(c, k))))


@custom_jvp
def _hyp2f1(a, b, c, x):
    return jnp.vectorize(_hyp2f1_scalar)(a, b, c, x)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = primals
    a_dot, b_dot, c_dot, x_dot = tangents
    one = _f(a, 1)
    # dF/dx = a b / c F(a+1, b+1; c+1; x)
    d_x = lax.mul(lax.div(lax.mul(a, b), c),
                  _hyp2f1(lax.add(a, one), lax.add(b, one), lax.add(c, one), x))
    tangent = lax.mul(_HYP2F1_D_A(a, b, c, x), a_dot)
    for derivative, dot in ((_HYP2F1_D_B(a, b, c, x), b_dot),
                            (_HYP2F1_D_C(a, b, c, x), c_dot), (d_x, x_dot)):
        tangent = lax.add(tangent, lax.mul(derivative, dot))
    return _hyp2f1(a, b, c, x), tangent


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function `2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k/k!`
    for `x <= 1` (inf beyond), with Cephes' transformations near `x = 1` (as JAX).

    Example:
      >>> hyp2f1(np.float32(1), np.float32(1), np.float32(2), np.float32(0.5))  # -log(1-x)/x
      array(1.386294..., dtype=float32)
    """
    a, b, c, x = _inexact("hyp2f1", a, b, c, x)
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        raise ValueError("hyp2f1 does not support complex-valued inputs.")
    return _hyp2f1(a, b, c, x)
