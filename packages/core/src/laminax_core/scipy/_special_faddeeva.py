"""The Faddeeva function `w(z) = exp(-z^2) erfc(-i z)` (`scipy.special.wofz`), by Weideman's
(1994) rational approximation with N = 32 terms, valid in the upper half plane and extended
to the lower one by `w(-z) = 2 exp(-z^2) - w(z)`; also the complex branch of `erfcx`,
`erfcx(z) = w(i z)`.
"""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_jvp
from laminax_core.scipy._common import _c, _inexact, _polyval

__all__ = ["wofz", "erfcx_complex"]

# w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)), Z = (L + iz) / (L - iz), for Im z >= 0;
# p's coefficients highest degree first
_WEIDEMAN_L = 4.7568284600108841
_WEIDEMAN = (
    -1.3034426067909105e-12, 3.7411838373738471e-12, 8.030427700497756e-12,
    -2.1543593557490879e-11, -5.5442449963237932e-11, 1.165824698850374e-10,
    4.1537441121999766e-10, -5.2310202114920615e-10, -3.2080151339721323e-09,
    8.1248864216535907e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07,
    4.4015317312832251e-06, 6.8210319443575151e-06, -2.1409619201999998e-05,
    -0.00013075449254579421, -0.00024532980270038237, 0.00039259136070109705,
    0.0045195411053493093, 0.019006155784845501, 0.057304403529837282, 0.14060716226893755,
    0.29544451071508743, 0.54601397206393376, 0.9019254893648001, 1.3455441692345449,
    1.8256696296324815, 2.2635372999002676, 2.5722534081245696,
)


def _complex_constant(re, value):
    return lax.complex(_c(re, value), _c(re, 0.0))


def _wofz_upper(z):
    re = lax.real(z)
    big_l = _complex_constant(re, _WEIDEMAN_L)
    iz = lax.complex(lax.neg(lax.imag(z)), re)
    denominator = lax.sub(big_l, iz)
    moebius = lax.div(lax.add(big_l, iz), denominator)
    p = _polyval(_WEIDEMAN, moebius)
    head = lax.div(lax.mul(_c(p, 2), p), lax.mul(denominator, denominator))
    return lax.add(head, lax.div(_complex_constant(re, 1 / np.sqrt(np.pi)), denominator))


@custom_jvp
def _wofz(z):
    upper = lax.ge(lax.imag(z), _c(lax.real(z), 0.0))
    w = _wofz_upper(lax.select_n(upper, lax.neg(z), z))
    reflected = lax.sub(lax.mul(_c(z, 2), lax.exp(lax.neg(lax.mul(z, z)))), w)
    return lax.select_n(upper, reflected, w)


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (z_dot,) = primals, tangents
    ans = _wofz(z)  # w'(z) = -2 z w(z) + 2i/sqrt(pi)
    slope = lax.add(lax.neg(lax.mul(lax.mul(_c(z, 2), z), ans)),
                    lax.complex(_c(lax.real(z), 0.0), _c(lax.real(z), 2 / np.sqrt(np.pi))))
    return ans, lax.mul(z_dot, slope)


def _to_complex(x):
    dtype = get_aval(x).dtype
    if dtypes.issubdtype(dtype, np.complexfloating):
        return x
    wide = np.result_type(dtype if dtype != dtypes.bfloat16 else np.float32, np.complex64)
    return lax.convert_element_type(x, wide)


def wofz(z):
    """The Faddeeva function `w(z) = exp(-z^2) erfc(-i z)`, for complex (or real, promoted to
    complex) `z`.

    Example:
      >>> w = wofz(np.complex64(1 + 1j))
      >>> round(float(w.real), 5), round(float(w.imag), 5)
      (0.30474, 0.20822)
    """
    return _wofz(_to_complex(_inexact("wofz", z)))


def erfcx_complex(z):
    """`erfcx(z) = exp(z^2) erfc(z) = w(i z)` for complex `z` (the branch `erfcx` uses)."""
    return _wofz(lax.complex(lax.neg(lax.imag(z)), lax.real(z)))
