"""The Pareto distribution with shape `b`, supported on [loc + scale, inf)."""

from __future__ import annotations

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy.stats._common import const, promote, scaled, where_nan, where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, b, loc=0, scale=1):
    """Log of `b / (scale y^(b + 1))`, `y = (x - loc)/scale`; `-inf` below the support."""
    x, b, loc, scale = promote("pareto.logpdf", x, b, loc, scale)
    y = scaled(x, loc, scale)
    log_probs = -(lax.log(scale / b) + (b + const(x, 1)) * lax.log(y))
    return where_neg_inf(x < loc + scale, log_probs)


def pdf(x, b, loc=0, scale=1):
    """The Pareto density."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """`1 - y^-b`; 0 below the support."""
    x, b, loc, scale = promote("pareto.cdf", x, b, loc, scale)
    value = const(x, 1) - lax.pow(scaled(x, loc, scale), -b)
    return jnp.where(x < loc + scale, const(x, 0), value)


def logcdf(x, b, loc=0, scale=1):
    """`log1p(-y^-b)`; `-inf` below the support."""
    x, b, loc, scale = promote("pareto.logcdf", x, b, loc, scale)
    return where_neg_inf(x < loc + scale, lax.log1p(-lax.pow(scaled(x, loc, scale), -b)))


def logsf(x, b, loc=0, scale=1):
    """`-b log(y)`; 0 below the support."""
    x, b, loc, scale = promote("pareto.logsf", x, b, loc, scale)
    return jnp.where(x < loc + scale, const(x, 0), -(b * lax.log(scaled(x, loc, scale))))


def sf(x, b, loc=0, scale=1):
    """The survival function `y^-b`."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    """`loc + scale (1 - q)^(-1/b)`; NaN outside [0, 1]."""
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    one = const(q, 1)
    value = loc + scale * lax.pow(one - q, -(one / b))
    return where_nan(jnp.isnan(q) | (q < 0) | (q > 1), value)
