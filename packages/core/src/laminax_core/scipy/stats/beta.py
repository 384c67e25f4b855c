"""The beta distribution with shapes `a`, `b` on [loc, loc + scale]."""

from __future__ import annotations

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, scaled, where_nan, where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    """Log of the beta density `y^(a-1) (1-y)^(b-1) / B(a, b) / scale`, `y = (x-loc)/scale`."""
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    one = const(x, 1)
    y = scaled(x, loc, scale)
    log_kernel = special.xlogy(a - one, y) + special.xlog1py(b - one, -y)
    log_probs = log_kernel - special.betaln(a, b) - lax.log(scale)
    log_probs = where_neg_inf((x > loc + scale) | (x < loc), log_probs)
    return where_nan((a <= 0) | (b <= 0) | (scale <= 0), log_probs)


def pdf(x, a, b, loc=0, scale=1):
    """The beta density."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def _unit(x, loc, scale):
    return lax.clamp(const(x, 0), scaled(x, loc, scale), const(x, 1))


def cdf(x, a, b, loc=0, scale=1):
    """The regularized incomplete beta function at the standardized point."""
    x, a, b, loc, scale = promote("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, _unit(x, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """Log of the CDF."""
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """The survival function, `I_{1-y}(b, a)` (accurate where the CDF is near 1)."""
    x, a, b, loc, scale = promote("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, const(x, 1) - _unit(x, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """Log of the survival function."""
    return lax.log(sf(x, a, b, loc, scale))
