"""The gamma distribution with shape `a`."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, scaled, where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    """Log of `y^(a-1) e^(-y) / (Gamma(a) scale)`, `y = (x - loc)/scale`; `-inf` below `loc`."""
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    inside = x >= loc
    y = jnp.where(inside, scaled(x, loc, scale), const(x, 1))  # keeps xlogy finite outside
    log_probs = special.xlogy(a - const(x, 1), y) - y - (special.gammaln(a) + lax.log(scale))
    return where_neg_inf(~inside, log_probs)


def pdf(x, a, loc=0, scale=1):
    """The gamma density."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """The regularized lower incomplete gamma `P(a, y)`."""
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    return special.gammainc(a, lax.clamp(const(x, 0), scaled(x, loc, scale), const(x, np.inf)))


def logcdf(x, a, loc=0, scale=1):
    """Log of the CDF."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """The regularized upper incomplete gamma `Q(a, y)`; 1 below `loc`."""
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    y = scaled(x, loc, scale)
    return jnp.where(y < 0, const(y, 1), special.gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    """Log of the survival function."""
    return lax.log(sf(x, a, loc, scale))
