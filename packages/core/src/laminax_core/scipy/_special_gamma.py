"""The gamma function and its relatives that other special functions build on (the series
of `_special_series.py` use them): `gamma`, `gammasgn`, `digamma`."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_core.scipy._common import _c, _inexact
from laminax_core.scipy._special_complex_gamma import complex_gamma

__all__ = ["digamma", "gamma", "gammasgn"]


def digamma(x):
    """The digamma function `d/dx log Gamma(x)`.

    Example:
      >>> digamma(np.float32(1))
      array(-0.5772157, dtype=float32)
    """
    return lax.digamma(_inexact("digamma", x))


def gammasgn(x):
    """The sign of the gamma function: -1, 1, or NaN at the poles (and for NaN).

    Example:
      >>> gammasgn(np.array([-1.5, -0.5, 0.5], np.float32))
      array([ 1., -1.,  1.], dtype=float32)
    """
    x = _inexact("gammasgn", x)
    floor_x = lax.floor(x)
    negative = lax.lt(x, _c(x, 0))
    pole = lax.bitwise_or(lax.bitwise_and(negative, lax.eq(x, floor_x)), lax.ne(x, x))
    odd_floor = lax.ne(lax.rem(floor_x, _c(x, 2)), _c(x, 0))
    negative_zero = lax.bitwise_and(lax.eq(x, _c(x, 0)), lax.lt(lax.div(_c(x, 1), x),
                                                                _c(x, 0)))
    minus = lax.bitwise_or(lax.bitwise_and(negative, odd_floor), negative_zero)
    ones = lax.add(lax.mul(x, _c(x, 0)), _c(x, 1))
    out = lax.select_n(minus, ones, lax.neg(ones))
    return lax.select_n(pole, out, lax.add(ones, _c(x, np.nan)))


def gamma(x):
    """The gamma function `Gamma(x) = sign * exp(gammaln(x))` (NaN at the poles).

    Example:
      >>> gamma(np.float32(5))
      array(24., dtype=float32)
    """
    x = _inexact("gamma", x)
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        return complex_gamma(x)
    return lax.mul(gammasgn(x), lax.exp(lax.lgamma(x)))
