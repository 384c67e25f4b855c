"""The Laplace (double exponential) distribution."""

from __future__ import annotations

from laminax_core import lax
from laminax_core.scipy.stats._common import const, promote, scaled

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, loc=0, scale=1):
    """`-|x - loc|/scale - log(2 scale)`."""
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    return -(lax.abs(x - loc) / scale + lax.log(const(x, 2) * scale))


def pdf(x, loc=0, scale=1):
    """The Laplace density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """`e^z / 2` for `z <= 0`, `1 - e^-z / 2` above."""
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    z = scaled(x, loc, scale)
    half = const(x, 0.5)
    return lax.select(z <= 0, half * lax.exp(z), const(x, 1) - half * lax.exp(-z))
