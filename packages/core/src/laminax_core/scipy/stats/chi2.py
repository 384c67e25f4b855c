"""The chi-squared distribution with `df` degrees of freedom."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, scaled, where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, df, loc=0, scale=1):
    """Log of `y^(df/2 - 1) e^(-y/2) / (2^(df/2) Gamma(df/2) scale)`; `-inf` below `loc`."""
    x, df, loc, scale = promote("chi2.logpdf", x, df, loc, scale)
    y = scaled(x, loc, scale)
    half_df = df / const(x, 2)
    kernel = (half_df - const(x, 1)) * lax.log(y) - y / const(x, 2)
    log_norm = lax.lgamma(half_df) + const(x, np.log(2)) * df / const(x, 2)
    return where_neg_inf(x < loc, kernel - log_norm - lax.log(scale))


def pdf(x, df, loc=0, scale=1):
    """The chi-squared density."""
    return lax.exp(logpdf(x, df, loc, scale))


def _half_point(x, loc, scale):
    return lax.clamp(const(x, 0), (x - loc) / (scale * const(x, 2)), const(x, np.inf))


def cdf(x, df, loc=0, scale=1):
    """The regularized lower incomplete gamma `P(df/2, y/2)`."""
    x, df, loc, scale = promote("chi2.cdf", x, df, loc, scale)
    return special.gammainc(df / const(x, 2), _half_point(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    """Log of the CDF."""
    return lax.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    """The regularized upper incomplete gamma `Q(df/2, y/2)`."""
    x, df, loc, scale = promote("chi2.sf", x, df, loc, scale)
    return special.gammaincc(df / const(x, 2), _half_point(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
    """Log of the survival function."""
    return lax.log(sf(x, df, loc, scale))
