"""`scipy.special` functions (`laminax_core.scipy.special`) as compositions of lax operations.

Inputs are promoted as JAX promotes them: integer and bool arrays become the default float
dtype, Python scalars are weakly typed. Values agree with JAX 0.10.2's to float tolerance.

Differs from JAX: `ndtri` refines Acklam's rational approximation with a Newton step on `ndtr`
instead of evaluating Cephes' piecewise rational approximations; the result is the same function
to within a few ulps.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_jvp
from laminax_core.nn._functions import log_softmax as _log_softmax
from laminax_core.nn._functions import logsumexp as _logsumexp
from laminax_core.nn._functions import softmax as _softmax
from laminax_core.scipy._common import _broadcast, _c, _inexact
from laminax_core.scipy._special_complex_gamma import complex_loggamma
from laminax_core.scipy._special_faddeeva import wofz
from laminax_core.scipy._special_fresnel import fresnel
from laminax_core.scipy._special_gamma import digamma, gamma, gammasgn
from laminax_core.scipy._special_harmonics import sph_harm_y
from laminax_core.scipy._special_integrals import (
    bernoulli,
    dawsn,
    erfcx,
    exp1,
    expi,
    expn,
    owens_t,
    sici,
    spence,
)
from laminax_core.scipy._special_series import bessel_jn, hyp1f1, hyp2f1

__all__ = [
    "bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "dawsn",
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit", "expn",
    "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn", "hyp1f1",
    "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "loggamma", "logit",
    "logsumexp", "multigammaln", "ndtr", "ndtri", "owens_t", "poch", "polygamma", "rel_entr",
    "sici", "softmax", "spence", "sph_harm_y", "wofz", "xlog1py", "xlogy", "zeta",
]  # fmt: skip


def erf(x):
    """The error function `2/sqrt(pi) * integral_0^x exp(-t^2) dt`.

    Example:
      >>> erf(np.float32(0.5))
      array(0.5204999, dtype=float32)
    """
    return lax.erf(_inexact("erf", x))


def erfc(x):
    """The complementary error function `1 - erf(x)`.

    Example:
      >>> erfc(np.float32(0.5))
      array(0.47950011, dtype=float32)
    """
    return lax.erfc(_inexact("erfc", x))


def erfinv(x):
    """The inverse error function on (-1, 1).

    Example:
      >>> erfinv(np.float32(0.5))
      array(0.47693628, dtype=float32)
    """
    return lax.erf_inv(_inexact("erfinv", x))


def gammaln(x):
    """`log |Gamma(x)|`.

    Example:
      >>> gammaln(np.float32(5))
      array(3.1780539, dtype=float32)
    """
    return lax.lgamma(_inexact("gammaln", x))


def expit(x):
    """The logistic sigmoid `1 / (1 + exp(-x))`.

    Example:
      >>> expit(np.float32(0))
      array(0.5, dtype=float32)
    """
    return lax.logistic(_inexact("expit", x))


def logit(x):
    """`log(x / (1 - x))`, the inverse of `expit`.

    Example:
      >>> logit(np.float32(0.5))
      array(0., dtype=float32)
    """
    x = _inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
    """`log(sum(b * exp(a), axis))` without overflow; see `laminax_core.nn.logsumexp`.

    Example:
      >>> logsumexp(np.array([0.0, 0.0], np.float32), b=np.array([1.0, -2.0], np.float32),
      ...           return_sign=True)
      (array(0., dtype=float32), array(-1., dtype=float32))
    """
    return _logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign,
                      where=where)


def _x_times(log_fn, x, y):
    # x * log_fn(y), defined as 0 where x == 0 (even where log_fn(y) is infinite)
    x_nonzero = lax.ne(x, _c(x, 0))
    one = lax.add(lax.mul(x, _c(x, 0)), _c(x, 1))
    safe_x = lax.select_n(x_nonzero, one, x)
    safe_y = lax.select_n(x_nonzero, one, y)
    return lax.select_n(x_nonzero, lax.mul(x, _c(x, 0)), lax.mul(safe_x, log_fn(safe_y)))


def _xlogy_jvp(primals, tangents):
    # JAX's rule: x_dot log y + y_dot x / y (not masked at x == 0)
    (x, y), (x_dot, y_dot) = primals, tangents
    out = _xlogy(x, y)
    return out, lax.add(lax.mul(x_dot, lax.log(y)), lax.div(lax.mul(y_dot, x), y))


def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = _xlog1py(x, y)
    return out, lax.add(lax.mul(x_dot, lax.log1p(y)),
                        lax.div(lax.mul(y_dot, x), lax.add(_c(y, 1), y)))


_xlogy = custom_jvp(lambda x, y: _x_times(lax.log, x, y))
_xlogy.defjvp(_xlogy_jvp)
_xlog1py = custom_jvp(lambda x, y: _x_times(lax.log1p, x, y))
_xlog1py.defjvp(_xlog1py_jvp)


def xlogy(x, y):
    """`x * log(y)`, 0 where `x == 0`; its jvp is JAX's `x_dot log(y) + y_dot x / y`.

    Example:
      >>> xlogy(np.float32(0), np.float32(0)), xlogy(np.float32(2), np.float32(np.e))
      (array(0., dtype=float32), array(2., dtype=float32))
    """
    return _xlogy(*_inexact("xlogy", x, y))


def xlog1py(x, y):
    """`x * log1p(y)`, 0 where `x == 0`.

    Example:
      >>> xlog1py(np.float32(0), np.float32(-1))
      array(0., dtype=float32)
    """
    return _xlog1py(*_inexact("xlog1py", x, y))


def ndtr(x):
    """The standard normal CDF `Phi(x) = (1 + erf(x / sqrt(2))) / 2`.

    Example:
      >>> ndtr(np.float32(0))
      array(0.5, dtype=float32)
    """
    return _ndtr(_inexact("ndtr", x))


def _ndtr(x):
    # erf near 0, erfc in the tails, where 1 + erf(x) would cancel
    half_sqrt_2 = _c(x, 0.5 * np.sqrt(2.0))
    w = lax.mul(x, half_sqrt_2)
    z = lax.abs(w)
    upper = lax.sub(_c(x, 2), lax.erfc(z))
    tails = lax.select_n(lax.gt(w, _c(x, 0)), lax.erfc(z), upper)
    y = lax.select_n(lax.lt(z, half_sqrt_2), tails, lax.add(_c(x, 1), lax.erf(w)))
    return lax.mul(_c(x, 0.5), y)


# Acklam's rational approximation of the normal quantile (relative error < 1.2e-9)
_ACKLAM_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
             1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
_ACKLAM_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
             6.680131188771972e01, -1.328068155288572e01, 1.0)
_ACKLAM_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
             -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
_ACKLAM_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
             3.754408661907416e00, 1.0)
_ACKLAM_SPLIT = 0.02425


def _horner(coefficients, x):
    out = _c(x, coefficients[0])
    for c in coefficients[1:]:
        out = lax.add(lax.mul(out, x), _c(x, c))
    return out


def ndtri(p):
    """The standard normal quantile: `x` with `ndtr(x) == p` (-inf at 0, inf at 1, NaN
    outside [0, 1]).

    Example:
      >>> ndtri(np.float32(0.975))
      array(1.9599644, dtype=float32)
    """
    p = _inexact("ndtri", p)
    # Acklam's approximation, in float64 precision within the dtype: central part and tails
    q = lax.sub(p, _c(p, 0.5))
    r = lax.mul(q, q)
    central = lax.div(lax.mul(_horner(_ACKLAM_A, r), q), _horner(_ACKLAM_B, r))
    tail_p = lax.min(p, lax.sub(_c(p, 1), p))
    safe_tail = lax.max(tail_p, _c(p, np.finfo(get_aval(p).dtype).tiny))
    t = lax.sqrt(lax.mul(_c(p, -2), lax.log(safe_tail)))
    tail = lax.div(_horner(_ACKLAM_C, t), _horner(_ACKLAM_D, t))
    tail = lax.select_n(lax.gt(p, _c(p, 0.5)), tail, lax.neg(tail))
    x = lax.select_n(lax.lt(tail_p, _c(p, _ACKLAM_SPLIT)), central, tail)
    # one Newton step on ndtr(x) = p: x -= (ndtr(x) - p) / pdf(x)
    pdf = lax.mul(_c(p, 1 / np.sqrt(2 * np.pi)), lax.exp(lax.mul(_c(p, -0.5), lax.mul(x, x))))
    x = lax.sub(x, lax.div(lax.sub(_ndtr(x), p), pdf))
    inf = lax.add(lax.mul(p, _c(p, 0)), _c(p, np.inf))
    x = lax.select_n(lax.eq(p, _c(p, 0)), x, lax.neg(inf))
    x = lax.select_n(lax.eq(p, _c(p, 1)), x, inf)
    outside = lax.bitwise_or(lax.lt(p, _c(p, 0)), lax.gt(p, _c(p, 1)))
    return lax.select_n(outside, x, lax.add(x, _c(p, np.nan)))


def log_ndtr(x, series_order: int = 3):
    """`log(ndtr(x))`, accurate far into both tails (an asymptotic series below -20, or -10
    in float32, and `-ndtr(-x)` above 8, or 5 in float32).

    Example:
      >>> log_ndtr(np.float32(0))
      array(-0.6931472, dtype=float32)
    """
    if not isinstance(series_order, int) or series_order < 0 or series_order > 30:
        raise ValueError(f"log_ndtr: series_order must be an int in [0, 30], got "
                         f"{series_order!r}.")
    x = _inexact("log_ndtr", x)
    dtype = get_aval(x).dtype
    if dtype == np.float64:
        lower, upper = -20.0, 8.0
    elif dtype == np.float32:
        lower, upper = -10.0, 5.0
    else:
        raise TypeError(f"log_ndtr: x.dtype={dtype} is not supported; use float32 or float64.")
    above = lax.gt(x, _c(x, upper))
    ndtr_arg = lax.select_n(above, lax.max(x, _c(x, lower)), lax.neg(x))
    ndtr_value = _ndtr(ndtr_arg)
    lower_tail = _log_ndtr_lower(lax.min(x, _c(x, lower)), series_order)
    middle = lax.select_n(lax.gt(x, _c(x, lower)), lower_tail, lax.log(ndtr_value))
    return lax.select_n(above, middle, lax.neg(ndtr_value))


def _log_ndtr_lower(x, series_order):
    # log Phi(x) ~ -x^2/2 - log(-x) - log(2 pi)/2 + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n))
    x_2 = lax.mul(x, x)
    log_scale = lax.sub(lax.sub(lax.mul(_c(x, -0.5), x_2), lax.log(lax.neg(x))),
                        _c(x, 0.5 * np.log(2 * np.pi)))
    series = _c(x, 1)
    even = odd = lax.full_like(x, 0)  # not x * 0: NaN at x = -inf
    x_2n = x_2
    for n in range(1, series_order + 1):
        term = lax.div(_c(x, float(np.prod(np.arange(2 * n - 1, 1, -2)))), x_2n)
        if n % 2:
            odd = lax.add(odd, term)
        else:
            even = lax.add(even, term)
        x_2n = lax.mul(x_2n, x_2)
    series = lax.add(lax.sub(_c(x, 1), odd), even)
    return lax.add(log_scale, lax.log(series))


# ----- gamma-function family ----------------------------------------------------------------


def factorial(n, exact: bool = False):
    """`n!` as `Gamma(n + 1)` (0 for negative `n`); only `exact=False` is supported.

    Example:
      >>> factorial(np.float32(4))
      array(24., dtype=float32)
    """
    if exact:
        raise NotImplementedError("factorial with exact=True: laminax, like JAX, computes "
                                  "factorials in floating point only.")
    n = _inexact("factorial", n)
    value = lax.exp(lax.lgamma(lax.add(n, _c(n, 1))))
    return lax.select_n(lax.lt(n, _c(n, 0)), value, lax.mul(n, _c(n, 0)))


def poch(z, m):
    """The Pochhammer symbol (rising factorial) `Gamma(z + m) / Gamma(z)`.

    Example:
      >>> poch(np.float32(3), np.float32(2))
      array(12., dtype=float32)
    """
    z, m = _inexact("poch", z, m)
    ratio = lax.div(gamma(lax.add(z, m)), gamma(z))
    return lax.select_n(lax.eq(m, _c(m, 0)), ratio, lax.add(lax.mul(z, _c(z, 0)), _c(z, 1)))


def _algdiv(a, b):
    """log Gamma(b) - log Gamma(a + b) for b >= 8 (and a <= b), from the asymptotic series of
    log Gamma's remainder (cdflib's ALGDIV): keeps betaln accurate when b dwarfs a."""
    c = lax.div(lax.div(a, b), lax.add(_c(a, 1), lax.div(a, b)))
    x = c
    x2 = lax.mul(x, x)
    s = [_c(a, 1)]  # s_n = (1 - x^n) / (1 - x) for n = 1, 3, ..., 11
    for _ in range(5):
        s.append(lax.add(_c(a, 1), lax.add(x, lax.mul(x2, s[-1]))))
    t = lax.integer_pow(lax.div(_c(b, 1), b), 2)
    w = lax.mul(lax.mul(_c(a, _ALGDIV[5]), s[5]), t)
    for k in range(4, 0, -1):
        w = lax.mul(lax.add(w, lax.mul(_c(a, _ALGDIV[k]), s[k])), t)
    w = lax.mul(lax.add(w, _c(a, _ALGDIV[0])), lax.div(c, b))
    u = lax.mul(lax.add(b, lax.sub(a, _c(a, 0.5))), lax.log1p(lax.div(a, b)))
    v = lax.mul(a, lax.sub(lax.log(b), _c(b, 1)))
    return lax.select_n(lax.le(u, v), lax.sub(lax.sub(w, u), v), lax.sub(lax.sub(w, v), u))


# the coefficients of log Gamma's remainder series in ALGDIV (B_2k / (2k (2k-1)), fitted)
_ALGDIV = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
           -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def betaln(a, b):
    """`log |B(a, b)|`, the log of the beta function.

    For `max(a, b) >= 8` the difference `log Gamma(b) - log Gamma(a + b)` comes from an
    asymptotic series (cdflib's algorithm, as JAX), which stays accurate when `b` is large.

    Example:
      >>> betaln(np.float32(2), np.float32(3))
      array(-2.4849067, dtype=float32)
    """
    a, b = _inexact("betaln", a, b)
    a, b = lax.min(a, b), lax.max(a, b)
    small_b = lax.add(lax.lgamma(a), lax.sub(lax.lgamma(b), lax.lgamma(lax.add(a, b))))
    large_b = lax.add(lax.lgamma(a), _algdiv(a, b))
    return lax.select_n(lax.lt(b, _c(b, 8)), large_b, small_b)


def beta(a, b):
    """The beta function `B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)`.

    Example:
      >>> beta(np.float32(2), np.float32(3))
      array(0.08333334, dtype=float32)
    """
    a, b = _inexact("beta", a, b)
    _reject_complex("beta", a)
    sign = lax.mul(lax.mul(gammasgn(a), gammasgn(b)), gammasgn(lax.add(a, b)))
    return lax.mul(sign, lax.exp(betaln(a, b)))


def betainc(a, b, x):
    """The regularized incomplete beta function `I_x(a, b)`.

    Differentiable in `x` only (as in JAX).

    Example:
      >>> betainc(np.float32(2), np.float32(3), np.float32(0.5))
      array(0.6875, dtype=float32)
    """
    a, b, x = _inexact("betainc", a, b, x)
    _reject_complex("betainc", x)
    return lax.betainc(a, b, x)


def gammainc(a, x):
    """The regularized lower incomplete gamma function `P(a, x)`.

    Example:
      >>> gammainc(np.float32(1), np.float32(2))
      array(0.86466473, dtype=float32)
    """
    return lax.igamma(*_inexact("gammainc", a, x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function `Q(a, x) = 1 - P(a, x)`.

    Example:
      >>> gammaincc(np.float32(1), np.float32(2))
      array(0.13533528, dtype=float32)
    """
    return lax.igammac(*_inexact("gammaincc", a, x))


def loggamma(x):
    """The principal branch of `log Gamma(x)`: `gammaln(x)` for real `x > 0` (NaN for other
    real `x`), SciPy's branch for complex `x`.

    Example:
      >>> loggamma(np.array([5.0, -0.5], np.float32))
      array([3.1780539,       nan], dtype=float32)
    """
    x = _inexact("loggamma", x)
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        return complex_loggamma(x)
    nan = lax.add(lax.mul(x, _c(x, 0)), _c(x, np.nan))
    return lax.select_n(lax.gt(x, _c(x, 0)), nan, lax.lgamma(x))


def comb(N, k, *, repetition: bool = False):
    """The binomial coefficient "N choose k" as a float, `exp(gammaln(N + 1) - gammaln(k + 1)
    - gammaln(N - k + 1))`; 0 where `k > N`, `N < 0` or `k < 0`.

    Args:
      N: the number of things.
      k: the number of elements taken.
      repetition: count combinations with repetition, `comb(N + k - 1, k)`.

    Example:
      >>> comb(np.float32(5), np.float32(2))
      array(10.00000..., dtype=float32)
    """
    N, k = _inexact("comb", N, k)
    zero = lax.full_like(N, 0)
    if repetition:
        result = comb(lax.sub(lax.add(N, k), _c(N, 1)), k)
        exact_one = lax.bitwise_and(lax.eq(k, _c(k, 0)), lax.ge(N, _c(N, 0)))
        return lax.select_n(exact_one, result, lax.add(zero, _c(N, 1)))
    valid = lax.bitwise_and(lax.bitwise_and(lax.le(k, N), lax.ge(N, _c(N, 0))),
                            lax.ge(k, _c(k, 0)))
    safe_n = lax.select_n(valid, zero, N)
    safe_k = lax.select_n(valid, zero, k)
    n_plus_1 = lax.add(safe_n, _c(N, 1))
    log_comb = lax.sub(lax.sub(lax.lgamma(n_plus_1), lax.lgamma(lax.add(safe_k, _c(k, 1)))),
                       lax.lgamma(lax.sub(n_plus_1, safe_k)))
    return lax.select_n(valid, zero, lax.exp(log_comb))


def _reject_complex(name, x, why="does not support complex-valued inputs"):
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        raise ValueError(f"{name} {why}: got {get_aval(x).dtype}. Pass real arguments.")


def multigammaln(a, d: int):
    """The log of the multivariate gamma function of dimension `d` (static).

    Example:
      >>> multigammaln(np.float32(3), 2)
      array(1.550195, dtype=float32)
    """
    d = operator.index(d)
    a = _inexact("multigammaln", a)
    dtype = get_aval(a).dtype
    constant = 0.25 * d * (d - 1) * np.log(np.pi)
    shape = get_aval(a).shape
    halves = np.arange(d, dtype=dtype) / np.asarray(2, dtype)
    terms = lax.lgamma(lax.sub(lax.broadcast_in_dim(a, (*shape, d), tuple(range(len(shape)))),
                               lax.broadcast_in_dim(halves, (*shape, d), (len(shape),))))
    return lax.add(lax.reduce_sum(terms, (len(shape),)), _c(a, constant))


def polygamma(n, x):
    """The polygamma function: the `n`-th derivative of `digamma`.

    Args:
      n: the (integer-typed) derivative order.
      x: the argument.

    Example:
      >>> polygamma(1, np.float32(1))
      array(1.644934, dtype=float32)
    """
    n_dtype = dtypes.dtype(n, canonicalize=True)
    if not dtypes.issubdtype(n_dtype, np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{n_dtype}.")
    x = _inexact("polygamma", x)
    n = lax.convert_element_type(n, get_aval(x).dtype)
    n, x = _broadcast([n, x])
    return lax.polygamma(n, x)


def zeta(x, q=None):
    """The Hurwitz zeta function `sum_k (k + q) ** -x` (`q` is required, as in JAX).

    Example:
      >>> zeta(np.float32(2), np.float32(1))
      array(1.644934, dtype=float32)
    """
    if q is None:
        raise NotImplementedError("zeta: the Riemann zeta function (q=None) is not "
                                  "implemented; pass q=1.")
    x, q = _inexact("zeta", x, q)
    return lax.zeta(x, q)


# ----- modified Bessel functions of order 0 and 1 ------------------------------------------


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, `exp(-|x|) I0(x)`.

    Example:
      >>> i0e(np.float32(1))
      array(0.465759..., dtype=float32)
    """
    return lax.bessel_i0e(_inexact("i0e", x))


def i0(x):
    """The modified Bessel function of order 0, `I0(x) = exp(|x|) i0e(x)`.

    Example:
      >>> i0(np.float32(1))
      array(1.26606..., dtype=float32)
    """
    x = _inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, `exp(-|x|) I1(x)`.

    Example:
      >>> i1e(np.float32(1))
      array(0.20791042, dtype=float32)
    """
    return lax.bessel_i1e(_inexact("i1e", x))


def i1(x):
    """The modified Bessel function of order 1, `I1(x) = exp(|x|) i1e(x)`.

    Example:
      >>> i1(np.float32(1))
      array(0.565159..., dtype=float32)
    """
    x = _inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


# ----- entropies, Box-Cox, softmax aliases --------------------------------------------------


def entr(x):
    """The elementwise entropy `-x log x` (0 at 0, -inf for negative `x`).

    Example:
      >>> entr(np.array([0.0, 0.5, -1.0], np.float32))
      array([-0.       ,  0.3465736,       -inf], dtype=float32)
    """
    x = _inexact("entr", x)
    return lax.select_n(lax.lt(x, _c(x, 0)), lax.neg(_xlogy(x, x)),
                        lax.add(lax.mul(x, _c(x, 0)), _c(x, -np.inf)))


def rel_entr(p, q):
    """The relative entropy term `p log(p / q)` (0 where `p == 0 <= q`, inf otherwise
    outside `p, q > 0`).

    Example:
      >>> rel_entr(np.float32(0.5), np.float32(0.25))
      array(0.3465736, dtype=float32)
    """
    p, q = _inexact("rel_entr", p, q)
    zero = _c(p, 0)
    both_positive = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    p_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    ones = lax.add(lax.mul(p, zero), _c(p, 1))
    safe_p = lax.select_n(both_positive, ones, p)
    safe_q = lax.select_n(both_positive, ones, q)
    value = lax.sub(_xlogy(safe_p, safe_p), _xlogy(safe_p, safe_q))
    inf = lax.add(lax.mul(p, zero), _c(p, np.inf))
    return lax.select_n(both_positive, lax.select_n(p_zero, inf, lax.mul(p, zero)), value)


def kl_div(p, q):
    """The Kullback-Leibler divergence term `p log(p / q) - p + q`.

    Example:
      >>> kl_div(np.float32(0.5), np.float32(0.25))
      array(0.09657359, dtype=float32)
    """
    p, q = _inexact("kl_div", p, q)
    return lax.add(lax.sub(rel_entr(p, q), p), q)


def _boxcox(name, x, lmbda, log_fn):
    x, lmbda = _inexact(name, x, lmbda)
    is_zero = lax.eq(lmbda, _c(lmbda, 0))
    safe = lax.select_n(is_zero, lmbda, lax.add(lax.mul(lmbda, _c(lmbda, 0)), _c(lmbda, 1)))
    log_x = log_fn(x)
    power = lax.div(lax.expm1(lax.mul(safe, log_x)), safe)
    return lax.select_n(is_zero, power, log_x)


def boxcox(x, lmbda):
    """The Box-Cox transform `(x ** lmbda - 1) / lmbda` (`log x` at `lmbda == 0`).

    Example:
      >>> boxcox(np.float32(4), np.float32(0.5))
      array(2., dtype=float32)
    """
    return _boxcox("boxcox", x, lmbda, lax.log)


def boxcox1p(x, lmbda):
    """`boxcox(1 + x, lmbda)`, accurate for small `x`.

    Example:
      >>> boxcox1p(np.float32(3), np.float32(0.5))
      array(2., dtype=float32)
    """
    return _boxcox("boxcox1p", x, lmbda, lax.log1p)


def softmax(x, axis=-1):
    """The softmax along `axis`; see `laminax_core.nn.softmax`.

    Example:
      >>> softmax(np.zeros(2, np.float32))
      array([0.5, 0.5], dtype=float32)
    """
    return _softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """The log-softmax along `axis`; see `laminax_core.nn.log_softmax`.

    Example:
      >>> log_softmax(np.zeros(2, np.float32))
      array([-0.6931472, -0.6931472], dtype=float32)
    """
    return _log_softmax(x, axis=axis)
