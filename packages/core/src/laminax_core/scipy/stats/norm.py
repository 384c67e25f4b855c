"""The normal distribution `N(loc, scale^2)` (`scipy.stats.norm`)."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, scaled

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log of the normal density, `-((x - loc)/scale)^2 / 2 - log(scale * sqrt(2 pi))`."""
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    variance = lax.square(scale)
    log_norm = lax.log(lax.mul(const(x, 2 * np.pi), variance))
    return lax.mul(lax.add(log_norm, lax.div(lax.square(lax.sub(x, loc)), variance)),
                   const(x, -0.5))


def pdf(x, loc=0, scale=1):
    """The normal density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The normal cumulative distribution function `ndtr((x - loc) / scale)`."""
    x, loc, scale = promote("norm.cdf", x, loc, scale)
    return special.ndtr(scaled(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Log of the normal CDF, accurate in the far left tail (`log_ndtr`)."""
    x, loc, scale = promote("norm.logcdf", x, loc, scale)
    return special.log_ndtr(scaled(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function `1 - cdf`, computed as the CDF of the reflected point."""
    x, loc, scale = promote("norm.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    x, loc, scale = promote("norm.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def ppf(q, loc=0, scale=1):
    """The quantile function (inverse CDF); the result has the default float dtype."""
    value = special.ndtri(q) * scale + loc
    return lax.convert_element_type(value, dtypes.default_float_dtype())


def isf(q, loc=0, scale=1):
    """The inverse survival function, `ppf(1 - q)`."""
    return ppf(lax.sub(const(q, 1), q), loc, scale)
