"""The right-skewed Gumbel distribution (the maximum of many samples)."""

from __future__ import annotations

from laminax_core import lax
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, scaled, where_nan

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """`-(z + e^-z) - log(scale)`, `z = (x - loc)/scale`; NaN for `scale <= 0`."""
    x, loc, scale = promote("gumbel_r.logpdf", x, loc, scale)
    z = scaled(x, loc, scale)
    return where_nan(scale <= 0, special.xlogy(const(x, -1), scale) - (z + lax.exp(-z)))


def pdf(x, loc=0, scale=1):
    """The density."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """`-e^-z`."""
    x, loc, scale = promote("gumbel_r.logcdf", x, loc, scale)
    return where_nan(scale <= 0, -lax.exp(-scaled(x, loc, scale)))


def cdf(x, loc=0, scale=1):
    """The CDF `exp(-e^-z)`."""
    return lax.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """`1 - exp(-e^-z)`."""
    x, loc, scale = promote("gumbel_r.sf", x, loc, scale)
    return where_nan(scale <= 0, const(x, 1) - lax.exp(-lax.exp(scaled(loc, x, scale))))


def logsf(x, loc=0, scale=1):
    """`log(1 - exp(-e^-z))`, by `expm1` so that it stays accurate in the right tail."""
    x, loc, scale = promote("gumbel_r.logsf", x, loc, scale)
    return where_nan(scale <= 0, lax.log(-lax.expm1(-lax.exp(scaled(loc, x, scale)))))


def ppf(p, loc=0, scale=1):
    """`loc - scale log(-log p)`; NaN outside (0, 1)."""
    p, loc, scale = promote("gumbel_r.ppf", p, loc, scale)
    inside = (p > 0) & (p < 1)
    return where_nan(~inside, loc - scale * lax.log(special.xlogy(const(p, -1), p)))
