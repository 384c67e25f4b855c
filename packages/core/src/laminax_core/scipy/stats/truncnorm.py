"""The normal distribution truncated to [a, b] (in standardized units)."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats import norm
from laminax_core.scipy.stats._common import const, promote, scaled, where_nan, where_neg_inf

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_sub_exp(log_x, log_y):
    """`log(e^log_x - e^log_y)` for `log_x >= log_y`."""
    return log_x + jnp.log1p(-jnp.exp(log_y - log_x))


def _log_gauss_mass(a, b):
    """`log(ndtr(b) - ndtr(a))`, accurate in both tails and in the middle."""
    a, b = jnp.broadcast_arrays(a, b)
    left, right = b <= 0, a > 0
    # a tail interval is mapped into the left tail, where log_ndtr is accurate
    lo, hi = jnp.where(right, -b, a), jnp.where(right, -a, b)
    tail = _log_sub_exp(special.log_ndtr(hi), special.log_ndtr(lo))
    central = jnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return jnp.where(left | right, tail, central)


def logpdf(x, a, b, loc=0, scale=1):
    """The normal log density minus the log mass of [a, b]; `-inf` outside; NaN if a >= b."""
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    value = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = scaled(x, loc, scale)
    return where_nan(a >= b, where_neg_inf((z < a) | (z > b), value))


def pdf(x, a, b, loc=0, scale=1):
    """The truncated normal density."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """Log of the CDF `mass(a, z) / mass(a, b)`, from the survival side where it is near 1."""
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    z = scaled(x, loc, scale)
    log_total = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, z) - log_total
    log_sf = _log_gauss_mass(z, b) - log_total
    value = jnp.select([z >= b, z <= a, log_cdf > -0.1, z > a],
                       [const(z, 0), const(z, -np.inf), jnp.log1p(-jnp.exp(log_sf)), log_cdf])
    return where_nan(a >= b, value)


def cdf(x, a, b, loc=0, scale=1):
    """The CDF."""
    return lax.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """Log of the survival function: the log CDF of the reflected distribution."""
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    """The survival function."""
    return lax.exp(logsf(x, a, b, loc, scale))
