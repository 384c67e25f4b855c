"""The generalized normal distribution with shape `beta` (`beta = 2`: normal, 1: Laplace)."""

from __future__ import annotations

from laminax_core import lax
from laminax_core.scipy.stats._common import const, promote

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, beta):
    """Log of `beta / (2 Gamma(1/beta)) exp(-|x|^beta)`."""
    x, beta = promote("gennorm.logpdf", x, beta)
    return lax.log(const(x, 0.5) * beta) - lax.lgamma(const(x, 1) / beta) - lax.abs(x) ** beta


def pdf(x, beta):
    """The generalized normal density."""
    return lax.exp(logpdf(x, beta))


def cdf(x, beta):
    """`(1 + sign(x) P(1/beta, |x|^beta)) / 2`."""
    x, beta = promote("gennorm.cdf", x, beta)
    tail = lax.igamma(const(x, 1) / beta, lax.abs(x) ** beta)
    return const(x, 0.5) * (const(x, 1) + lax.sign(x) * tail)
