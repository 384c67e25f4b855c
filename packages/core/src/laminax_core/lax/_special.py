"""Special functions: erf, erfc, erf_inv, lgamma, digamma, polygamma and the Hurwitz zeta.

The NumPy references compute in float64 with NumPy-only algorithms (`math.erf`/`math.lgamma`
applied elementwise, series with argument shifting for the rest), accurate well beyond
float32 and to about 1e-12 relative in float64."""

from __future__ import annotations

import math

import numpy as np

from laminax_core._avals import get_aval
from laminax_core._interpreters.jvp import Zero
from laminax_core._primitive import (
    FLOATING,
    NOT_LINEAR,
    batch_elementwise,
    define_primitive,
    jvp_from,
    same_shape,
)
from laminax_core.lax._elementwise import (
    _like_ans,
    add,
    div,
    exp,
    gt,
    log,
    mul,
    neg,
    select_n,
    sign,
)
from laminax_core.lax._elementwise import abs as abs_
from laminax_core.lax._elementwise import sub as ew_sub
from laminax_core.lax._helpers import as_operands, broadcast_to_shape
from laminax_core.lax._math import log1p, square

__all__ = [
    "bessel_i0e", "bessel_i1e", "betainc", "digamma", "erf", "erf_inv", "erfc", "igamma",
    "igamma_grad_a", "igammac", "lgamma", "polygamma", "zeta",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "bessel_i0e_p", "bessel_i1e_p", "digamma_p", "erf_inv_p", "erf_p", "erfc_p", "igamma_grad_a_p",
    "igamma_p", "igammac_p", "lgamma_p", "polygamma_p", "regularized_incomplete_beta_p", "zeta_p",
]  # fmt: skip


def _no_jvp_rule(name):
    def rule(primals, tangents, **params):
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")

    return rule


def _in_float64(fn):
    """A reference computing `fn` on float64 values and casting back to the input dtype."""

    def reference(*args):
        wide = [np.asarray(a, np.float64) for a in np.broadcast_arrays(*args)]
        return np.asarray(fn(*wide)).astype(args[0].dtype)

    return reference


def _elementwise(scalar_fn):
    return np.vectorize(scalar_fn, otypes=[np.float64])


def _special(name, reference, jvp):
    return define_primitive(
        name,
        abstract_eval=same_shape(dtypes=FLOATING),
        reference=_in_float64(reference),
        jvp=jvp,
        transpose=NOT_LINEAR,
        batch=batch_elementwise,
    )


# ----- erf, erfc ----------------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def erf(x):
    """Elementwise error function `2/sqrt(pi) * integral_0^x exp(-t^2) dt`.

    Example:
      >>> erf(np.float32(0.5))
      array(0.5204999, dtype=float32)
    """
    return erf_p.bind(x)


def _gaussian(x):
    return exp(neg(square(x)))


# d erf x = 2/sqrt(pi) exp(-x^2)
erf_p = _special("erf", _elementwise(math.erf),
                 jvp_from(lambda t, ans, x: mul(_TWO_OVER_SQRT_PI, mul(t, _gaussian(x)))))


def erfc(x):
    """Elementwise complementary error function `1 - erf(x)`, accurate for large `x`."""
    return erfc_p.bind(x)


erfc_p = _special("erfc", _elementwise(math.erfc),
                  jvp_from(lambda t, ans, x: mul(-_TWO_OVER_SQRT_PI, mul(t, _gaussian(x)))))


# ----- erf_inv ------------------------------------------------------------------------------

_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _polynomial(coefficients, w):
    p = np.zeros_like(w)
    for c in coefficients:
        p = p * w + c
    return p


def _erf_inv_reference(y):
    # a single-precision rational start (Giles), then Newton steps on erf in float64
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1 - y) * (1 + y))
        central = _polynomial(_CENTRAL, w - 2.5)
        tail = _polynomial(_TAIL, np.sqrt(np.maximum(w, 0)) - 3)
        x = np.where(w < 5, central, tail) * y
        interior = np.abs(y) < 1
        x = np.where(interior, x, 0.0)
        erf_, erfc_ = _elementwise(math.erf), _elementwise(math.erfc)
        # near +-1, erf(x) - y cancels: there Newton solves log erfc(|x|) = log(1 - |y|)
        # instead (1 - |y| is exact, and the log makes the steep tail nearly linear)
        ay, far = np.abs(y), np.abs(y) > 0.5
        for _ in range(6):
            slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)
            near_step = (erf_(x) - y) / slope
            tail = erfc_(np.abs(x))
            tail_step = np.sign(y) * np.log(tail / (1 - ay)) * tail / -slope
            x = x - np.where(far, tail_step, near_step)
        edge = np.where(np.abs(y) == 1, np.copysign(np.inf, y), np.nan)
        return np.where(interior, x, edge)


def erf_inv(x):
    """Elementwise inverse of `erf` on (-1, 1) (+-inf at +-1, NaN outside).

    Example:
      >>> erf_inv(np.float32(0.5))
      array(0.47693628, dtype=float32)
    """
    return erf_inv_p.bind(x)


# d erf_inv y = sqrt(pi)/2 exp(erf_inv(y)^2)
erf_inv_p = _special("erf_inv", _erf_inv_reference,
                     jvp_from(lambda t, ans, x: mul(1 / _TWO_OVER_SQRT_PI,
                                                    mul(t, exp(square(ans))))))


# ----- lgamma, digamma ----------------------------------------------------------------------


def _lgamma_scalar(x: float) -> float:
    try:
        return math.lgamma(x)
    except ValueError:  # the poles at 0, -1, -2, ...
        return math.inf


def lgamma(x):
    """Elementwise `log |Gamma(x)|`.

    Example:
      >>> lgamma(np.float32(5))
      array(3.1780539, dtype=float32)
    """
    return lgamma_p.bind(x)


lgamma_p = _special("lgamma", _elementwise(_lgamma_scalar),
                    jvp_from(lambda t, ans, x: mul(t, digamma(x))))  # d lgamma x = digamma x


def _shift_up(x, bound, term):
    """Sums `term(x)` while moving `x` up by one until it reaches `bound`; returns both."""
    total = np.zeros_like(x)
    finite = np.where(np.isfinite(x), x, bound)  # NaN and inf need no shifting
    steps = int(np.clip(np.ceil(bound - np.min(finite, initial=bound)), 0, 100000))
    for _ in range(steps):
        below = x < bound
        total = total + np.where(below, term(np.where(below, x, 1.0)), 0.0)
        x = np.where(below, x + 1, x)
    return x, total


def _digamma_reference(x):
    # reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 1/2, then recurrence
    # psi(y) = psi(y + 1) - 1/y up to y >= 10, then the asymptotic series
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = x < 0.5
        y, shifted = _shift_up(np.where(reflect, 1 - x, x), 10.0, lambda v: -1 / v)
        inv2 = 1 / (y * y)
        series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
            1 / 240 - inv2 / 132))))
        out = np.log(y) - 0.5 / y - series + shifted
        out = np.where(reflect, out - np.pi / np.tan(np.pi * x), out)
        return np.where((x <= 0) & (x == np.floor(x)), np.nan, out)


def digamma(x):
    """Elementwise digamma function `d/dx log Gamma(x)` (NaN at the poles).

    Example:
      >>> digamma(np.float32(1))
      array(-0.5772157, dtype=float32)
    """
    return digamma_p.bind(x)


digamma_p = _special("digamma", _digamma_reference,
                     jvp_from(lambda t, ans, x: mul(t, polygamma(_one_like(x), x))))


def _one_like(x):
    return np.ones((), get_aval(x).dtype)


# ----- zeta, polygamma ----------------------------------------------------------------------

# Euler-Maclaurin coefficients B_2j / (2j)!
_EULER_MACLAURIN = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                    -691 / 1307674368000)


def _hurwitz_zeta(s, q):
    """sum_k (q + k)^-s, for s > 1 (any q when s is an integer, q > 0 otherwise)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x, head = _shift_up(q, 12.0, lambda v: v ** -s)
        out = head + x ** (1 - s) / (s - 1) + 0.5 * x ** -s
        rising = s * x ** (-s - 1)  # s (s+1) ... (s+2j-2) x^(-s-2j+1)
        for j, coefficient in enumerate(_EULER_MACLAURIN):
            out = out + coefficient * rising
            rising = rising * (s + 2 * j + 1) * (s + 2 * j + 2) / (x * x)
        integer_s = s == np.floor(s)
        pole = (q <= 0) & (q == np.floor(q))
        out = np.where(pole & integer_s, np.inf, out)
        out = np.where((q <= 0) & ~integer_s, np.nan, out)
        return np.where(s == 1, np.inf, np.where(s < 1, np.nan, out))


def zeta(x, q):
    """Elementwise Hurwitz zeta function `sum_k (q + k) ** -x`.

    Example:
      >>> zeta(np.float32(2), np.float32(1))
      array(1.644934, dtype=float32)
    """
    return zeta_p.bind(*as_operands(x, q))


def _zeta_jvp(primals, tangents):
    x, q = primals
    ans = zeta(x, q)
    if not isinstance(tangents[0], Zero):
        raise NotImplementedError("Differentiation rule for 'zeta' with respect to its first "
                                  "argument (the exponent) not implemented")
    if isinstance(tangents[1], Zero):
        return ans, Zero.from_primal_value(ans)
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    return ans, _like_ans(mul(tangents[1], mul(neg(x), zeta(add(x, 1.0), q))), ans)


zeta_p = _special("zeta", _hurwitz_zeta, _zeta_jvp)


def _polygamma_reference(m, x):
    integer_m = (m == np.floor(m)) & (m >= 0)
    factorial = _elementwise(lambda v: math.gamma(v + 1) if v < 171 else math.inf)(
        np.where(integer_m, m, 0))
    with np.errstate(invalid="ignore", over="ignore"):
        higher = (-1) ** (m + 1) * factorial * _hurwitz_zeta(m + 1, x)
    out = np.where(m == 0, _digamma_reference(x), higher)
    return np.where(integer_m, out, np.nan)


def polygamma(m, x):
    """Elementwise `m`-th derivative of digamma at `x` (`m` a non-negative integer value).

    Example:
      >>> polygamma(np.float32(1), np.float32(1))
      array(1.644934, dtype=float32)
    """
    return polygamma_p.bind(*as_operands(m, x))


def _polygamma_jvp(primals, tangents):
    m, x = primals
    ans = polygamma(m, x)
    if not isinstance(tangents[0], Zero):
        raise NotImplementedError("Differentiation rule for 'polygamma' with respect to its "
                                  "order m not implemented")
    if isinstance(tangents[1], Zero):
        return ans, Zero.from_primal_value(ans)
    return ans, _like_ans(mul(tangents[1], polygamma(add(m, 1.0), x)), ans)


polygamma_p = _special("polygamma", _polygamma_reference, _polygamma_jvp)


# ----- igamma, igammac, igamma_grad_a --------------------------------------------------------


def _igamma_series(a, x):
    """P(a, x) by its power series (converges fast for x < a + 1)."""
    term = np.ones_like(x) / np.where(a > 0, a, 1.0)
    total = term.copy()
    for n in range(1, 400):
        term = term * x / (a + n)
        total = total + term
    log_prefactor = a * np.log(np.where(x > 0, x, 1.0)) - x - _elementwise(_lgamma_scalar)(a)
    return total * np.exp(log_prefactor)


def _igammac_fraction(a, x):
    """Q(a, x) by its continued fraction (modified Lentz; for x >= a + 1)."""
    tiny = 1e-300
    b = x + 1 - a
    c = np.full_like(x, 1 / tiny)
    d = 1 / np.where(b == 0, tiny, b)
    h = d.copy()
    for i in range(1, 400):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / np.where(d == 0, tiny, d)
        c = b + an / np.where(c == 0, tiny, c)
        h = h * d * c
    log_prefactor = a * np.log(np.where(x > 0, x, 1.0)) - x - _elementwise(_lgamma_scalar)(a)
    return np.exp(log_prefactor) * h


def _igamma_reference(a, x):
    with np.errstate(all="ignore"):
        use_series = x < a + 1
        lower = np.where(use_series, _igamma_series(a, np.where(use_series, x, 0.0)),
                         1 - _igammac_fraction(a, np.where(use_series, a + 1, x)))
        lower = np.where(x == 0, 0.0, lower)
        lower = np.where(np.isinf(x) & (x > 0), 1.0, lower)
        lower = np.where((a == 0) & (x > 0), 1.0, lower)
        return np.where((a < 0) | (x < 0) | np.isnan(a) | np.isnan(x), np.nan, lower)


def _igamma_density(a, x):
    """d P(a, x) / dx = x^(a-1) exp(-x) / Gamma(a)."""
    return exp(ew_sub(ew_sub(mul(ew_sub(a, 1.0), log(x)), x), lgamma(a)))


def igamma(a, x):
    """Elementwise regularized lower incomplete gamma function P(a, x).

    Example:
      >>> igamma(np.float32(2), np.float32(2.5))
      array(0.7127025, dtype=float32)
    """
    return igamma_p.bind(*as_operands(a, x))


igamma_p = _special("igamma", _igamma_reference, jvp_from(
    lambda t, ans, a, x: mul(t, igamma_grad_a(a, x)),
    lambda t, ans, a, x: mul(t, _igamma_density(a, x))))


def igammac(a, x):
    """Elementwise regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return igammac_p.bind(*as_operands(a, x))


def _igammac_reference(a, x):
    # Q from its continued fraction where that converges (1 - P would cancel there)
    with np.errstate(all="ignore"):
        use_fraction = (x >= a + 1) & np.isfinite(x) & (a > 0)
        fraction = _igammac_fraction(a, np.where(use_fraction, x, a + 1))
        return np.where(use_fraction, fraction, 1 - _igamma_reference(a, x))


igammac_p = _special("igammac", _igammac_reference, jvp_from(
    lambda t, ans, a, x: neg(mul(t, igamma_grad_a(a, x))),
    lambda t, ans, a, x: neg(mul(t, _igamma_density(a, x)))))


def _igamma_grad_a_reference(a, x):
    # Richardson-extrapolated central differences of P in float64
    h = 1e-3 * np.maximum(np.abs(a), 1.0)

    def central(step):
        return (_igamma_reference(a + step, x) - _igamma_reference(a - step, x)) / (2 * step)

    return (4 * central(h / 2) - central(h)) / 3


def igamma_grad_a(a, x):
    """Elementwise derivative of `igamma(a, x)` with respect to `a`."""
    return igamma_grad_a_p.bind(*as_operands(a, x))


igamma_grad_a_p = _special("igamma_grad_a", _igamma_grad_a_reference,
                           _no_jvp_rule("igamma_grad_a"))


# ----- bessel_i0e, bessel_i1e ---------------------------------------------------------------


def _bessel_series(x, order):
    """exp(-|x|) I_order(x) by the power series (|x| <= 30)."""
    half = x / 2
    term = half ** order / math.factorial(order)
    total = term.copy()
    for k in range(1, 120):
        term = term * half * half / (k * (k + order))
        total = total + term
    return total * np.exp(-np.abs(x))


def _bessel_asymptotic(x, order):
    """exp(-|x|) I_order(x) by the large-argument expansion (|x| > 30)."""
    ax = np.abs(x)
    mu = 4.0 * order * order
    term = np.ones_like(ax)
    total = term.copy()
    for k in range(1, 12):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8 * ax)
        total = total + term
    out = total / np.sqrt(2 * np.pi * ax)
    return out * np.sign(x) if order % 2 else out


def _bessel_reference(order):
    def reference(x):
        with np.errstate(all="ignore"):
            small = np.abs(x) <= 30
            return np.where(small, _bessel_series(np.where(small, x, 0.0), order),
                            _bessel_asymptotic(np.where(small, 31.0, x), order))

    return reference


def bessel_i0e(x):
    """Elementwise exponentially scaled modified Bessel function `exp(-|x|) I0(x)`.

    Example:
      >>> bessel_i0e(np.float32(1))
      array(0.4657596, dtype=float32)
    """
    return bessel_i0e_p.bind(x)


bessel_i0e_p = _special("bessel_i0e", _bessel_reference(0), jvp_from(
    lambda t, ans, x: mul(t, ew_sub(bessel_i1e(x), mul(sign(x), ans)))))


def bessel_i1e(x):
    """Elementwise exponentially scaled modified Bessel function `exp(-|x|) I1(x)`."""
    return bessel_i1e_p.bind(x)


def _bessel_i1e_jvp(t, ans, x):
    # d i1e = i0e - i1e (sign(x) + 1/x), which tends to 1/2 at 0
    dtype = get_aval(x).dtype
    eps = np.asarray(np.finfo(dtype).eps, dtype)
    not_tiny = gt(abs_(x), eps)
    safe = select_n(not_tiny, broadcast_to_shape(eps, get_aval(x).shape), x)
    slope = ew_sub(bessel_i0e(safe), mul(ans, add(sign(safe), div(1.0, safe))))
    half = broadcast_to_shape(np.asarray(0.5, dtype), get_aval(x).shape)
    return mul(t, select_n(not_tiny, half, slope))


bessel_i1e_p = _special("bessel_i1e", _bessel_reference(1), jvp_from(_bessel_i1e_jvp))


# ----- regularized_incomplete_beta ----------------------------------------------------------


def _betainc_fraction(a, b, x):
    """The continued fraction of I_x(a, b) (modified Lentz), accurate for x < (a+1)/(a+b+2)."""
    tiny = 1e-300
    c = np.ones_like(x)
    d = 1 - (a + b) * x / (a + 1)
    d = 1 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    for m in range(1, 400):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1 + numerator / np.where(np.abs(c) < tiny, tiny, c)
            h = h * d * c
    return h


def _log_beta(a, b):
    lg = _elementwise(_lgamma_scalar)
    return lg(a) + lg(b) - lg(a + b)


def _betainc_reference(a, b, x):
    with np.errstate(all="ignore"):
        log_front = a * np.log(x) + b * np.log1p(-x) - _log_beta(a, b)
        direct = np.exp(log_front) * _betainc_fraction(a, b, x) / a
        log_front_swapped = b * np.log1p(-x) + a * np.log(x) - _log_beta(a, b)
        swapped = 1 - np.exp(log_front_swapped) * _betainc_fraction(b, a, 1 - x) / b
        out = np.where(x < (a + 1) / (a + b + 2), direct, swapped)
        out = np.where(x == 0, 0.0, np.where(x == 1, 1.0, out))
        return np.where((x < 0) | (x > 1) | (a <= 0) | (b <= 0), np.nan, out)


def betainc(a, b, x):
    """Elementwise regularized incomplete beta function I_x(a, b).

    Example:
      >>> betainc(np.float32(2), np.float32(3), np.float32(0.5))
      array(0.6875, dtype=float32)
    """
    return regularized_incomplete_beta_p.bind(*as_operands(a, b, x))


def _betainc_jvp_x(t, ans, a, b, x):
    # d I_x(a, b) / dx = x^(a-1) (1-x)^(b-1) / B(a, b)
    log_density = ew_sub(add(mul(ew_sub(a, 1.0), log(x)), mul(ew_sub(b, 1.0), log1p(neg(x)))),
                         ew_sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b))))
    return mul(t, exp(log_density))


def _betainc_no_ab(t, ans, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


regularized_incomplete_beta_p = _special(
    "regularized_incomplete_beta", _betainc_reference,
    jvp_from(_betainc_no_ab, _betainc_no_ab, _betainc_jvp_x))
