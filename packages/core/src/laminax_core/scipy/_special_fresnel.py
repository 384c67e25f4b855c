"""The Fresnel integrals `S(x)` and `C(x)` (`scipy.special.fresnel`), from Cephes' `fresnl`:
a polynomial (float32, `fresnlf`) or rational (float64) fit in `x^4` for `x^2 < 2.5625`, the
auxiliary functions f and g in `1/(pi x^2)^2` beyond, and the limits 1/2 past 36974. As in
JAX, float16 and bfloat16 compute in float32, and the phase `pi x^2 / 2` is reduced modulo 2
exactly before the sine and cosine are taken.
"""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_jvp
from laminax_core.scipy._common import _c, _inexact, _polyval

__all__ = ["fresnel"]

# Cephes fresnlf (float32): S = x^3 SN(x^4), C = x CN(x^4); f = 1 - u FN(u), g = t GN(u)
_SINGLE = {
    "sn": (1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6,
           -3.120693124703272e-4, 7.244727626597022e-3, -9.228055941124598e-2,
           5.235987735681432e-1),
    "cn": (1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5,
           -1.604381798862293e-3, 2.818489036795073e-2, -2.467398198317899e-1,
           9.999999760004487e-1),
    "fn": (-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9,
           7.343848463587323e7, -8.732356681548485e5, 8.560515466275470e3,
           -1.032877601091159e2, 2.999401847870011e0),
    "gn": (-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8,
           6.492611570598858e6, -7.787789623358162e4, 8.602931494734327e2,
           -1.493439396592284e1, 9.999841934744914e-1),
}
# Cephes fresnl (float64): the same forms as ratios of polynomials
_DOUBLE = {
    "sn": (-2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7,
           2.54890880573376359104e9, -4.42979518059697779103e10, 3.18016297876567817986e11),
    "sd": (1.0, 2.81376268889994315696e2, 4.55847810806532581675e4, 5.17343888770096400730e6,
           4.19320245898111231129e8, 2.24411795645340920940e10, 6.07366389490084639049e11),
    "cn": (-4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
           1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1),
    "cd": (3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
           1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2,
           1.00000000000000000118e0),
    "fn": (4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2,
           3.45017939782574027900e-4, 4.63613749287867322088e-6, 3.05568983790257605827e-8,
           1.02304514164907233465e-10, 1.72010743268161828879e-13, 1.34283276233062758925e-16,
           3.76329711269987889006e-20),
    "fd": (1.0, 7.51586398353378947175e-1, 1.16888925859191382142e-1, 6.44051526508858611005e-3,
           1.55934409164153020873e-4, 1.84627567348930545870e-6, 1.12699224763999035261e-8,
           3.60140029589371370404e-11, 5.88754533621578410010e-14, 4.52001434074129701496e-17,
           1.25443237090011264384e-20),
    "gn": (5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2,
           6.84079380915393090172e-4, 1.15138826111884280931e-5, 9.82852443688422223854e-8,
           4.45344415861750144738e-10, 1.08268041139020870318e-12, 1.37555460633261799868e-15,
           8.36354435630677421531e-19, 1.86958710162783235106e-22),
    "gd": (1.0, 1.47495759925128324529e0, 3.37748989120019970451e-1, 2.53603741420338795122e-2,
           8.14679107184306179049e-4, 1.27545075667729118702e-5, 1.04314589657571990585e-7,
           4.60680728146520428211e-10, 1.10273215066240270757e-12, 1.38796531259578871258e-15,
           8.39158816283118707363e-19, 1.86958710162783236342e-22),
}


def _where(predicate, on_true, on_false):
    return lax.select_n(predicate, on_false, on_true)


def _sin_cos_of_half_pi_square(x):
    """sin(pi x^2 / 2) and cos(pi x^2 / 2), reducing r = x^2/2 mod 2 without forming x^2:
    with s = x mod 2, r = s (x - s/2) mod 2."""
    x = lax.abs(x)
    two = _c(x, 2.0)
    s = lax.rem(x, two)
    r = lax.rem(lax.mul(s, lax.sub(x, lax.div(s, two))), two)

    def sin_pi(v):
        return lax.sin(lax.mul(_c(x, np.pi), v))

    sin_value = _where(lax.lt(r, _c(x, 0.5)), sin_pi(r),
                       _where(lax.gt(r, _c(x, 1.5)), sin_pi(lax.sub(r, two)),
                              lax.neg(sin_pi(lax.sub(r, _c(x, 1.0))))))
    cos_value = _where(lax.eq(r, _c(x, 0.5)), lax.full_like(x, 0),
                       _where(lax.lt(r, _c(x, 1.0)), lax.neg(sin_pi(lax.sub(r, _c(x, 0.5)))),
                              sin_pi(lax.sub(r, _c(x, 1.5)))))
    return sin_value, cos_value


def _fresnel_real(signed_x):
    single = get_aval(signed_x).dtype == np.float32
    fit = _SINGLE if single else _DOUBLE
    x = lax.abs(signed_x)
    x2 = lax.mul(x, x)
    t = lax.mul(x2, x2)
    if single:
        s_small = lax.mul(lax.mul(x, x2), _polyval(fit["sn"], t))
        c_small = lax.mul(x, _polyval(fit["cn"], t))
    else:
        s_small = lax.div(lax.mul(lax.mul(x, x2), _polyval(fit["sn"], t)), _polyval(fit["sd"], t))
        c_small = lax.div(lax.mul(x, _polyval(fit["cn"], t)), _polyval(fit["cd"], t))
    sin_value, cos_value = _sin_cos_of_half_pi_square(x)
    half = lax.full_like(x, 0.5)
    if single:
        s_large = c_large = half
    else:
        inv_pi_x = lax.div(_c(x, 1.0), lax.mul(_c(x, np.pi), x))
        c_large = lax.add(half, lax.mul(inv_pi_x, sin_value))
        s_large = lax.sub(half, lax.mul(inv_pi_x, cos_value))
    # the auxiliary functions f, g in u = 1/(pi x^2)^2
    pi_x2 = lax.mul(_c(x, np.pi), x2)
    u = lax.div(_c(x, 1.0), lax.mul(pi_x2, pi_x2))
    t = lax.div(_c(x, 1.0), pi_x2)
    f_series = lax.mul(u, _polyval(fit["fn"], u))
    g = lax.mul(t, _polyval(fit["gn"], u))
    if not single:
        f_series = lax.div(f_series, _polyval(fit["fd"], u))
        g = lax.div(g, _polyval(fit["gd"], u))
    f = lax.sub(_c(x, 1.0), f_series)
    pi_x = lax.mul(_c(x, np.pi), x)
    c_other = lax.add(half, lax.div(lax.sub(lax.mul(f, sin_value), lax.mul(g, cos_value)), pi_x))
    s_other = lax.sub(half, lax.div(lax.add(lax.mul(f, cos_value), lax.mul(g, sin_value)), pi_x))
    is_inf = lax.eq(x, _c(x, np.inf))
    small = lax.lt(x2, _c(x, 2.5625))
    large = lax.gt(x, _c(x, 36974.0))
    negative = lax.lt(signed_x, _c(x, 0.0))
    out = []
    for small_v, large_v, other_v in ((s_small, s_large, s_other), (c_small, c_large, c_other)):
        v = _where(is_inf, half, _where(small, small_v, _where(large, large_v, other_v)))
        out.append(_where(negative, lax.neg(v), v))  # S and C are odd
    return tuple(out)


@custom_jvp
def _fresnel(x):
    dtype = get_aval(x).dtype
    if dtype in (np.float32, np.float64):
        return _fresnel_real(x)
    s, c = _fresnel_real(lax.convert_element_type(x, np.float32))
    return lax.convert_element_type(s, dtype), lax.convert_element_type(c, dtype)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    sin_value, cos_value = _sin_cos_of_half_pi_square(x)  # S' = sin(pi x^2/2), C' = cos(...)
    return _fresnel(x), (lax.mul(sin_value, x_dot), lax.mul(cos_value, x_dot))


def fresnel(x):
    """The Fresnel integrals `S(x) = integral_0^x sin(pi t^2/2) dt` and
    `C(x) = integral_0^x cos(pi t^2/2) dt`, accurate on about [-10, 10] as Cephes'.

    Returns:
      the pair `(S(x), C(x))`.

    Example:
      >>> s, c = fresnel(np.float32(1))
      >>> float(s), float(c)  # doctest: +ELLIPSIS
      (0.43825..., 0.77989...)
    """
    x = _inexact("fresnel", x)
    dtype = get_aval(x).dtype
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise NotImplementedError("fresnel: complex-valued inputs are not supported (as in "
                                  "JAX). Pass real arguments.")
    if dtype not in (np.float16, np.float32, np.float64, dtypes.bfloat16):
        raise NotImplementedError(f"fresnel: {dtype} inputs are not supported; pass float16, "
                                  f"bfloat16, float32 or float64.")
    return _fresnel(x)
