"""The Bernoulli distribution on {loc, loc + 1} with success probability `p`."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, where_neg_inf

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    """Log of the probability mass: `log p` at 1, `log(1 - p)` at 0, `-inf` elsewhere."""
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = special.xlogy(x, p) + special.xlog1py(lax.sub(const(x, 1), x), -p)
    return where_neg_inf((x < 0) | (x > 1), log_probs)


def pmf(k, p, loc=0):
    """The probability mass."""
    return jnp.exp(logpmf(k, p, loc))


def _invalid(p):
    return jnp.isnan(p) | (p < 0) | (p > 1)


def cdf(k, p):
    """P(K <= k): 0 below 0, `1 - p` on [0, 1), 1 from 1 on; NaN for NaN or invalid `p`."""
    k, p = promote("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)
    return jnp.select([jnp.isnan(k) | _invalid(p), k < zero, k < one, k >= one],
                      [const(k, np.nan), zero, one - p, one])


def ppf(q, p):
    """The smallest k with `cdf(k) >= q`; NaN outside [0, 1]."""
    q, p = promote("bernoulli.ppf", q, p)
    zero, one = const(q, 0), const(q, 1)
    bad = jnp.isnan(q) | _invalid(p) | (q < zero) | (q > one)
    return jnp.where(bad, const(q, np.nan), jnp.where(q <= one - p, zero, one))
