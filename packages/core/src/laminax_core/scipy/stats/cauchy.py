"""The Cauchy distribution with location `loc` and scale `scale`."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy.stats._common import const, promote, scaled

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log of `1 / (pi scale (1 + z^2))`, `z = (x - loc) / scale`."""
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    z = scaled(x, loc, scale)
    return -(lax.log(const(x, np.pi) * scale) + lax.log1p(z * z))


def pdf(x, loc=0, scale=1):
    """The Cauchy density."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """`1/2 + arctan(z) / pi`."""
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    return const(x, 0.5) + jnp.arctan(scaled(x, loc, scale)) / const(x, np.pi)


def logcdf(x, loc=0, scale=1):
    """Log of the CDF."""
    return lax.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function, the CDF of the reflected point."""
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    x, loc, scale = promote("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """The quantile function `loc + scale tan(pi (q - 1/2))`."""
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    return lax.tan(const(q, np.pi) * q - const(q, np.pi / 2)) * scale + loc


def isf(q, loc=0, scale=1):
    """The inverse survival function `loc + scale tan(pi (1/2 - q))`."""
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return lax.tan(const(q, np.pi / 2) - const(q, np.pi) * q) * scale + loc
