"""The uniform distribution on [loc, loc + scale]."""

from __future__ import annotations


from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy.stats._common import const, promote, scaled, where_nan, where_neg_inf

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """`-log(scale)` inside the interval, `-inf` outside."""
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    return where_neg_inf((x > loc + scale) | (x < loc), -lax.log(scale) + jnp.zeros_like(x))


def pdf(x, loc=0, scale=1):
    """The uniform density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """0 below, `(x - loc)/scale` inside, 1 above the interval (0 for NaN)."""
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    zero, one = const(x, 0), const(x, 1)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.select([x < loc, x > loc + scale, inside], [zero, one, scaled(x, loc, scale)])


def ppf(q, loc=0, scale=1):
    """`loc + scale q`; NaN outside [0, 1]."""
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return where_nan(jnp.isnan(q) | (q < 0) | (q > 1), loc + scale * q)


