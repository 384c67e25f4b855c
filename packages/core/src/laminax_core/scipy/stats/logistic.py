"""The logistic distribution."""

from __future__ import annotations

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, scaled

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """`-2 log(e^(z/2) + e^(-z/2)) - log(scale)`, stable for large `|z|`."""
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    half_z = scaled(x, loc, scale) / const(x, 2)
    return const(x, -2) * jnp.logaddexp(half_z, -half_z) - lax.log(scale)


def pdf(x, loc=0, scale=1):
    """The logistic density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """`expit(z)`."""
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return special.expit(scaled(x, loc, scale))


def sf(x, loc=0, scale=1):
    """`expit(-z)`."""
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return special.expit(-scaled(x, loc, scale))


def ppf(x, loc=0, scale=1):
    """`loc + scale logit(q)`."""
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    """`loc - scale logit(q)`."""
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return -special.logit(x) * scale + loc
