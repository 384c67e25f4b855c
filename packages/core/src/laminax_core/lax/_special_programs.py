"""The special functions XLA has no op for, written as lax programs.

`igamma`, `igammac`, `igamma_grad_a`, `random_gamma_grad`, `bessel_i0e` and
`regularized_incomplete_beta` have no StableHLO or CHLO operation. JAX lowers each one by
tracing a lax program (series and continued fractions in `while_loop`s, Chebyshev
polynomials); dispatch lowers laminax's primitives by tracing these functions
(`lower_fun`), so a jitted program runs the same algorithm as JAX's and agrees with it to a
few ulps. The algorithms follow XLA's `xla/client/lib/math.cc` and Cephes:

- P(a, x) by its power series for `x < max(a, 1)`, Q(a, x) by Legendre's continued fraction
  otherwise; the same loops carry the derivative with respect to `a`.
- I_x(a, b) by the continued fraction DLMF 8.17.22, evaluated with the modified Lentz
  (Thompson-Barnett) algorithm, after the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) (DLMF
  8.17.4) where the fraction converges slowly.
- exp(-|x|) I0(x) by Cephes' Chebyshev expansions on [0, 8] and (8, inf).

float16 and bfloat16 operands compute in float32.
"""

from __future__ import annotations

import enum
import functools

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import get_aval
# the lax families these programs are written in, by short names (the lines read as lax's)
from laminax_core.lax import _bitwise as bw
from laminax_core.lax import _elementwise as ew
from laminax_core.lax import _math as mt
from laminax_core.lax import _reductions as red
from laminax_core.lax import _special as sp
from laminax_core.lax import _structural as st
from laminax_core.lax._helpers import as_operands
from laminax_core.lax._control_flow.while_loop import while_loop

__all__ = [
    "betainc_program", "bessel_i0e_program", "igamma_grad_a_program", "igamma_program",
    "igammac_program", "random_gamma_grad", "random_gamma_grad_program",
]  # fmt: skip


def _shape_and_upcast(program):
    """Broadcasts the operands to one shape and computes float16/bfloat16 in float32."""

    @functools.wraps(program)
    def wrapped(*args):
        shape = np.broadcast_shapes(*(get_aval(a).shape for a in args))
        args = [a if get_aval(a).shape == shape else _broadcast(a, shape) for a in args]
        dtype = np.dtype(get_aval(args[0]).dtype)
        if dtype in (np.float32, np.float64):
            return program(*args, dtype=dtype)
        args = [ew.convert_element_type(a, np.float32) for a in args]
        return ew.convert_element_type(program(*args, dtype=np.dtype(np.float32)), dtype)

    return wrapped


def _broadcast(x, shape):
    rank = len(get_aval(x).shape)
    return st.broadcast_in_dim(x, shape, tuple(range(len(shape) - rank, len(shape))))


def _full(x, value):
    return st.full_like(x, value)


def _any(predicate):
    return red.reduce_or(predicate, tuple(range(get_aval(predicate).ndim)))


def _any_of(*predicates):
    return functools.reduce(bw.bitwise_or, predicates)


def _isnan(x):
    return ew.ne(x, x)


def _where(predicate, on_true, on_false):
    return ew.select_n(predicate, on_false, on_true)


def _eps(dtype):
    return np.asarray(dtypes.finfo(dtype).eps, dtype)


# ----- igamma, igammac, igamma_grad_a, random_gamma_grad --------------------------------------


class _Mode(enum.Enum):
    VALUE = "value"  # P(a, x) or Q(a, x)
    DERIVATIVE = "derivative"  # d/da of P or Q
    SAMPLE_DERIVATIVE = "sample derivative"  # dx/da along P(a, x) = const


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a)), and whether its exponential underflows."""
    log_ax = ew.sub(ew.sub(ew.mul(a, ew.log(x)), x), sp.lgamma(a))
    limit = -np.log(np.asarray(dtypes.finfo(get_aval(a).dtype).max))
    return log_ax, ew.lt(log_ax, np.asarray(limit, get_aval(a).dtype))


def _igamma_series(ax, x, a, enabled, dtype, mode):
    """P(a, x) = ax / a * sum_n x^n / ((a+1)...(a+n)) and its derivative in `a`, summed until
    the last term (of the value or of the derivative) drops below eps relative."""
    eps = _eps(dtype)

    def body(state):
        active, r, c, ans, x_, dc_da, dans_da = state
        r_new = ew.add(r, 1.0)
        x_over_r = ew.div(x_, r_new)
        dc_da_new = ew.sub(ew.mul(dc_da, x_over_r),
                            ew.div(ew.mul(c, x_), ew.mul(r_new, r_new)))
        dans_da_new = ew.add(dans_da, dc_da_new)
        c_new = ew.mul(c, x_over_r)
        ans_new = ew.add(ans, c_new)
        if mode is _Mode.VALUE:
            unconverged = ew.gt(ew.div(c_new, ans_new), eps)
        else:
            unconverged = ew.gt(ew.abs(ew.div(dc_da_new, dans_da_new)), eps)
        new = (r_new, c_new, ans_new, x_, dc_da_new, dans_da_new)
        kept = tuple(_where(active, n, o) for n, o in zip(new, state[1:], strict=True))
        return (bw.bitwise_and(active, unconverged), *kept)

    init = (enabled, a, _full(a, 1), _full(a, 1), x, _full(a, 0), _full(a, 0))
    _, _, _, ans, _, _, dans_da = while_loop(lambda s: _any(s[0]), body, init)
    if mode is _Mode.VALUE:
        return ew.div(ew.mul(ans, ax), a)
    dlogax_da = ew.sub(ew.log(x), sp.digamma(ew.add(a, 1.0)))
    if mode is _Mode.DERIVATIVE:
        return ew.div(ew.mul(ax, ew.add(ew.mul(ans, dlogax_da), dans_da)), a)
    return ew.div(ew.mul(ew.neg(ew.add(dans_da, ew.mul(ans, dlogax_da))), x), a)


def _fraction_step(state, eps, mode):
    """One step of the continued fraction for Q(a, x): the next convergent p_k / q_k from the
    three-term recurrences (and their derivatives in `a`), rescaled by eps when large."""
    (active, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
     dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = state  # fmt: skip
    c = ew.add(c, 1.0)
    y = ew.add(y, 1.0)
    z = ew.add(z, 2.0)
    yc = ew.mul(y, c)
    pk = ew.sub(ew.mul(pkm1, z), ew.mul(pkm2, yc))
    qk = ew.sub(ew.mul(qkm1, z), ew.mul(qkm2, yc))
    qk_nonzero = ew.ne(qk, 0.0)
    r = ew.div(pk, qk)
    t_new = _where(qk_nonzero, ew.abs(ew.div(ew.sub(ans, r), r)), _full(r, 1))
    ans_new = _where(qk_nonzero, r, ans)
    dpk_da = ew.add(ew.sub(ew.sub(ew.mul(dpkm1_da, z), pkm1), ew.mul(dpkm2_da, yc)),
                     ew.mul(pkm2, c))
    dqk_da = ew.add(ew.sub(ew.sub(ew.mul(dqkm1_da, z), qkm1), ew.mul(dqkm2_da, yc)),
                     ew.mul(qkm2, c))
    dans_da_new = _where(qk_nonzero, ew.div(ew.sub(dpk_da, ew.mul(ans_new, dqk_da)), qk),
                         dans_da)
    grad_change = _where(qk_nonzero, ew.abs(ew.sub(dans_da_new, dans_da)), _full(dans_da, 1))
    rescale = ew.gt(ew.abs(pk), ew.div(1.0, eps))
    history = [pk, qk, pkm1, qkm1, dpk_da, dqk_da, dpkm1_da, dqkm1_da]
    history = [_where(rescale, ew.mul(v, eps), v) for v in history]
    pkm1, qkm1, pkm2, qkm2, dpkm1_da, dqkm1_da, dpkm2_da, dqkm2_da = history
    if mode is _Mode.VALUE:
        unconverged = ew.gt(t_new, eps)
    else:
        unconverged = ew.gt(grad_change, eps)
    new = (ans_new, t_new, y, z, c, pkm1, qkm1, pkm2, qkm2,
           dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)  # fmt: skip
    # the step counter `c` advances for every element; the rest only where still active
    kept = [n if i == 4 else _where(active, n, o)
            for i, (n, o) in enumerate(zip(new, state[1:], strict=True))]
    return (bw.bitwise_and(active, unconverged), *kept)


def _igammac_fraction(ax, x, a, enabled, dtype, mode):
    """Q(a, x) = ax * (continued fraction), at most 2000 steps, and its derivative in `a`."""
    eps = _eps(dtype)
    y = ew.sub(1.0, a)
    z = ew.add(ew.add(x, y), 1.0)
    pkm1 = ew.add(x, 1.0)
    qkm1 = ew.mul(z, x)
    ans = ew.div(pkm1, qkm1)
    dqkm1_da = ew.neg(x)
    dans_da = ew.div(ew.sub(_full(x, 0), ew.mul(ans, dqkm1_da)), qkm1)
    zero = _full(x, 0)
    init = (enabled, ans, _full(x, 1), y, z, np.asarray(0, dtype), pkm1, qkm1, _full(x, 1), x,
            zero, zero, zero, dqkm1_da, dans_da)

    def keep_going(state):
        return bw.bitwise_and(ew.lt(state[5], np.asarray(2000, dtype)), _any(state[0]))

    out = while_loop(keep_going, lambda s: _fraction_step(s, eps, mode), init)
    ans, dans_da = out[1], out[14]
    if mode is _Mode.VALUE:
        return ew.mul(ans, ax)
    dlogax_da = ew.sub(ew.log(x), sp.digamma(a))
    slope = ew.add(ew.mul(ans, dlogax_da), dans_da)
    if mode is _Mode.DERIVATIVE:
        return ew.mul(ax, slope)
    return ew.neg(ew.mul(slope, x))


@_shape_and_upcast
def igamma_program(a, x, *, dtype):
    """The regularized lower incomplete gamma function P(a, x) as a lax program.

    Args:
      a: positive shapes, a float array.
      x: non-negative points, broadcast-compatible with `a`.

    Returns:
      P(a, x); NaN for `a < 0`, `x < 0`, `a == x == 0` or NaN operands.

    Example:
      >>> igamma_program(np.float32(2), np.float32(2.5))
      array(0.7127025, dtype=float32)
    """
    x_is_zero = ew.eq(x, 0.0)
    x_is_inf = ew.eq(x, np.inf)
    domain_error = _any_of(ew.lt(x, 0.0), ew.lt(a, 0.0),
                           bw.bitwise_and(ew.eq(a, 0.0), x_is_zero), _isnan(a), _isnan(x))
    use_fraction = bw.bitwise_and(ew.ge(x, 1.0), ew.gt(x, a))
    log_ax, underflow = _log_prefactor(a, x)
    ax = ew.exp(log_ax)
    enabled = bw.bitwise_not(_any_of(x_is_zero, domain_error, underflow, x_is_inf))
    upper = _igammac_fraction(ax, x, a, bw.bitwise_and(enabled, use_fraction), dtype,
                              _Mode.VALUE)
    lower = _igamma_series(ax, x, a, bw.bitwise_and(enabled, bw.bitwise_not(use_fraction)),
                           dtype, _Mode.VALUE)
    out = _where(use_fraction, ew.sub(1.0, upper), lower)
    out = _where(x_is_zero, _full(a, 0), out)
    out = _where(x_is_inf, _full(a, 1), out)
    return _where(domain_error, _full(a, np.nan), out)


@_shape_and_upcast
def igammac_program(a, x, *, dtype):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) as a lax program.

    Example:
      >>> igammac_program(np.float32(2), np.float32(2.5))
      array(0.28729752, dtype=float32)
    """
    a_is_zero = ew.eq(a, 0.0)
    x_is_inf = ew.eq(x, np.inf)
    domain_error = _any_of(ew.lt(x, 0.0), ew.lt(a, 0.0),
                           bw.bitwise_and(a_is_zero, ew.eq(x, 0.0)), _isnan(a), _isnan(x))
    use_series = bw.bitwise_or(ew.lt(x, 1.0), ew.lt(x, a))
    log_ax, underflow = _log_prefactor(a, x)
    enabled = bw.bitwise_not(_any_of(domain_error, underflow, x_is_inf, a_is_zero))
    ax = ew.exp(log_ax)
    lower = _igamma_series(ax, x, a, bw.bitwise_and(enabled, use_series), dtype, _Mode.VALUE)
    upper = _igammac_fraction(ax, x, a, bw.bitwise_and(enabled, bw.bitwise_not(use_series)),
                              dtype, _Mode.VALUE)
    out = _where(use_series, ew.sub(1.0, lower), upper)
    out = _where(bw.bitwise_or(x_is_inf, a_is_zero), _full(out, 0), out)
    return _where(domain_error, _full(a, np.nan), out)


def _igamma_derivative(a, x, dtype, mode):
    is_nan = bw.bitwise_or(_isnan(a), _isnan(x))
    x_is_zero = ew.eq(x, 0.0)
    domain_error = bw.bitwise_or(ew.lt(x, 0.0), ew.le(a, 0.0))
    use_fraction = bw.bitwise_and(ew.gt(x, 1.0), ew.gt(x, a))
    log_ax, underflow = _log_prefactor(a, x)
    ax = ew.exp(log_ax)
    enabled = bw.bitwise_not(_any_of(x_is_zero, domain_error, underflow, is_nan))
    upper = _igammac_fraction(ax, x, a, bw.bitwise_and(enabled, use_fraction), dtype, mode)
    lower = _igamma_series(ax, x, a, bw.bitwise_and(enabled, bw.bitwise_not(use_fraction)),
                           dtype, mode)
    out = _where(use_fraction, ew.neg(upper), lower)
    out = _where(x_is_zero, _full(out, 0), out)
    return _where(bw.bitwise_or(domain_error, is_nan), _full(a, np.nan), out)


@_shape_and_upcast
def igamma_grad_a_program(a, x, *, dtype):
    """d P(a, x) / da as a lax program (series or continued fraction, differentiated).

    Example:
      >>> igamma_grad_a_program(np.float32(2), np.float32(2.5))  # doctest: +ELLIPSIS
      array(-0.2...)
    """
    return _igamma_derivative(a, x, dtype, _Mode.DERIVATIVE)


@_shape_and_upcast
def random_gamma_grad_program(a, x, *, dtype):
    """dx/da along P(a, x) = u: the derivative of a Gamma(a, 1) sample `x` with respect to `a`.

    Example:
      >>> random_gamma_grad_program(np.float32(2), np.float32(2.5))  # doctest: +ELLIPSIS
      array(1.2...)
    """
    return _igamma_derivative(a, x, dtype, _Mode.SAMPLE_DERIVATIVE)


# ----- bessel_i0e -----------------------------------------------------------------------------

# Cephes' Chebyshev coefficients of exp(-x) I0(x): in x/2 - 2 on [0, 8], and of
# sqrt(x) exp(-x) I0(x) in 32/x - 2 on (8, inf). float32 uses the tails of the float64 lists.
_I0E_SMALL = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
_I0E_LARGE = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)
_I0E_TERMS = {np.dtype(np.float32): (18, 7), np.dtype(np.float64): (30, 25)}


def _chebyshev(x, coefficients):
    """Clenshaw's recurrence for sum' c_k T_k(x/2) (Cephes' `chbevl`)."""
    b0 = _full(x, 0)
    b1 = _full(x, 0)
    b2 = b1
    for c in coefficients:
        b2 = b1
        b1 = b0
        b0 = ew.add(ew.sub(ew.mul(x, b1), b2), _full(x, c))
    return ew.mul(0.5, ew.sub(b0, b2))


def random_gamma_grad(a, x):
    """The derivative of a Gamma(a, 1) sample `x` with respect to `a` (implicit
    differentiation of P(a, x) = u: -(dP/da) / (dP/dx)), a lax program as in JAX (not a
    primitive): the incomplete gamma series or continued fraction, differentiated.

    Example:
      >>> float(random_gamma_grad(np.float32(2), np.float32(2.5)))  # doctest: +ELLIPSIS
      1.21...
    """
    return random_gamma_grad_program(*as_operands(a, x))


def bessel_i0e_program(x):
    """exp(-|x|) I0(x) as a lax program (Cephes' Chebyshev expansions).

    Example:
      >>> bessel_i0e_program(np.float32(1))
      array(0.46575963, dtype=float32)
    """
    dtype = np.dtype(get_aval(x).dtype)
    if dtype not in _I0E_TERMS:
        return ew.convert_element_type(
            bessel_i0e_program(ew.convert_element_type(x, np.float32)), dtype)
    small_terms, large_terms = _I0E_TERMS[dtype]
    x = ew.abs(x)
    near = _chebyshev(ew.sub(ew.mul(0.5, x), 2.0), _I0E_SMALL[-small_terms:])
    far = ew.div(_chebyshev(ew.sub(ew.div(32.0, x), 2.0), _I0E_LARGE[-large_terms:]),
                  ew.sqrt(x))
    return _where(ew.le(x, 8.0), near, far)


# ----- regularized_incomplete_beta ------------------------------------------------------------


def _lentz(numerator, denominator, operands, steps, small, threshold):
    """The continued fraction b0 + a1/(b1 + a2/(b2 + ...)) by the modified Lentz algorithm,
    until every element's last factor is within `threshold` of 1 or after `steps` steps."""
    b0 = denominator(np.int32(0), *operands)
    h = _where(ew.lt(ew.abs(b0), small), _full(b0, small), b0)

    def body(state):
        i, _, c, d, h = state
        a_i = numerator(i, *operands)
        b_i = denominator(i, *operands)
        c = ew.add(b_i, ew.div(a_i, c))
        c = _where(ew.lt(ew.abs(c), small), _full(c, small), c)
        d = ew.add(b_i, ew.mul(a_i, d))
        d = _where(ew.lt(ew.abs(d), small), _full(d, small), d)
        d = ew.div(1.0, d)
        delta = ew.mul(c, d)
        unconverged = _any(ew.ge(ew.abs(ew.sub(delta, 1.0)), threshold))
        return ew.add(i, np.int32(1)), unconverged, c, d, ew.mul(h, delta)

    def keep_going(state):
        return bw.bitwise_and(ew.lt(state[0], np.int32(steps)), state[1])

    init = (np.int32(1), np.bool_(True), h, _full(h, 0), h)
    return while_loop(keep_going, body, init)[4]


def _betainc_numerator(i, a, b, x):
    """The partial numerators of DLMF 8.17.22: 1, then d_1, d_2, ... alternating odd/even."""
    dtype = get_aval(x).dtype
    step = st.broadcast_in_dim(i, get_aval(a).shape, ())
    m_int = ew.div(ew.sub(step, np.int32(1)), np.int32(2))
    m = ew.convert_element_type(m_int, dtype)
    two_m = ew.mul(2.0, m)
    odd = ew.div(ew.mul(ew.mul(m, ew.sub(b, m)), x),
                  ew.mul(ew.sub(ew.add(a, two_m), 1.0), ew.add(a, two_m)))
    even = ew.div(ew.mul(ew.mul(ew.neg(ew.add(a, m)), ew.add(ew.add(a, b), m)), x),
                   ew.mul(ew.add(a, two_m), ew.add(ew.add(a, two_m), 1.0)))
    # the first even term, -(a+b) x / (a+1), written apart for accuracy when a is tiny
    first = ew.div(ew.mul(ew.neg(ew.add(a, b)), x), ew.add(a, 1.0))
    even = _where(ew.eq(m_int, np.int32(0)), first, even)
    is_even = ew.eq(mt.rem(step, np.int32(2)), np.int32(0))
    out = _where(is_even, even, odd)
    return _where(ew.eq(step, np.int32(1)), _full(x, 1), out)


def _betainc_denominator(i, a, b, x):
    step = st.broadcast_in_dim(i, get_aval(a).shape, ())
    return _where(ew.eq(step, np.int32(0)), _full(x, 0), _full(x, 1))


def _betainc_special_values(a, b, x):
    """Masks of the arguments where I_x(a, b) is 0, 1 or NaN by definition."""
    a_is_zero = bw.bitwise_or(ew.eq(a, 0.0), ew.eq(b, np.inf))
    b_is_zero = bw.bitwise_or(ew.eq(b, 0.0), ew.eq(a, np.inf))
    x_is_zero = ew.eq(x, 0.0)
    x_is_one = ew.eq(x, 1.0)
    is_zero = bw.bitwise_or(bw.bitwise_and(b_is_zero, bw.bitwise_not(x_is_one)),
                             bw.bitwise_and(a_is_zero, x_is_zero))
    is_one = bw.bitwise_or(bw.bitwise_and(a_is_zero, bw.bitwise_not(x_is_zero)),
                            bw.bitwise_and(b_is_zero, x_is_one))
    is_nan = _any_of(ew.lt(a, 0.0), ew.lt(b, 0.0), ew.lt(x, 0.0), ew.gt(x, 1.0),
                     bw.bitwise_and(a_is_zero, b_is_zero), _isnan(a), _isnan(b), _isnan(x))
    return is_zero, is_one, is_nan


@_shape_and_upcast
def betainc_program(a, b, x, *, dtype):
    """The regularized incomplete beta function I_x(a, b) as a lax program.

    Example:
      >>> betainc_program(np.float32(2), np.float32(3), np.float32(0.5))
      array(0.6875, dtype=float32)
    """
    is_zero, is_one, is_nan = _betainc_special_values(a, b, x)
    # the fraction converges fast for x < (a+1)/(a+b+2); elsewhere use I_{1-x}(b, a)
    direct = ew.lt(x, ew.div(ew.add(a, 1.0), ew.add(ew.add(a, b), 2.0)))
    a, b = _where(direct, a, b), _where(direct, b, a)
    x = _where(direct, x, ew.sub(1.0, x))
    half_eps = np.asarray(dtypes.finfo(dtype).eps / 2, dtype)
    fraction = _lentz(_betainc_numerator, _betainc_denominator, (a, b, x),
                      200 if dtype == np.float32 else 600, half_eps, half_eps)
    # x^a (1-x)^b / (a B(a, b)); for tiny a, a Gamma(a) -> 1 replaces the division by a
    tiny = np.asarray(dtypes.finfo(dtype).tiny * 2, dtype)
    log_beta_without_a = ew.sub(sp.lgamma(b), sp.lgamma(ew.add(a, b)))
    log_beta = ew.add(sp.lgamma(a), log_beta_without_a)
    log1m_x_b = ew.mul(mt.log1p(ew.neg(x)), b)
    factor = _where(ew.lt(a, tiny), ew.exp(ew.sub(log1m_x_b, log_beta_without_a)),
                    ew.div(ew.exp(ew.sub(ew.add(ew.mul(ew.log(x), a), log1m_x_b),
                                            log_beta)), a))
    out = ew.mul(fraction, factor)
    out = _where(direct, out, ew.sub(1.0, out))
    out = _where(is_zero, _full(a, 0), out)
    out = _where(is_one, _full(a, 1), out)
    return _where(is_nan, _full(a, np.nan), out)
