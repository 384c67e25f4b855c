"""The exponential distribution with location `loc` and scale `scale` (rate `1/scale`)."""

from __future__ import annotations


from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy.stats._common import const, promote, scaled, where_nan, where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """`-(x - loc)/scale - log(scale)`; `-inf` below `loc`."""
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    return where_neg_inf(x < loc, -(scaled(x, loc, scale) + lax.log(scale)))


def pdf(x, loc=0, scale=1):
    """The exponential density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """`1 - exp(-(x - loc)/scale)` (by `expm1`); 0 below `loc`."""
    x, loc, scale = promote("expon.cdf", x, loc, scale)
    neg_z = scaled(loc, x, scale)
    return jnp.where(x < loc, jnp.zeros_like(neg_z), -lax.expm1(neg_z))


def logsf(x, loc=0, scale=1):
    """`-(x - loc)/scale`; 0 below `loc`."""
    x, loc, scale = promote("expon.logsf", x, loc, scale)
    neg_z = scaled(loc, x, scale)
    return jnp.where(x < loc, jnp.zeros_like(neg_z), neg_z)


def sf(x, loc=0, scale=1):
    """The survival function."""
    return lax.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Log of the CDF, `log1p(-sf)`."""
    return lax.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """`loc - scale log(1 - q)`; NaN outside [0, 1]."""
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return where_nan(jnp.isnan(q) | (q < 0) | (q > 1), loc - scale * lax.log1p(-q))


