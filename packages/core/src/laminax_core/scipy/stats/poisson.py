"""The Poisson distribution with mean `mu`."""

from __future__ import annotations

import numpy as np

from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, where_neg_inf

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    """`y log(mu) - log(y!) - mu` at `y = k - loc`; `-inf` off the non-negative integers."""
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    y = k - loc
    log_probs = special.xlogy(y, mu) - special.gammaln(y + 1) - mu
    return where_neg_inf((y < 0) | (jnp.round(k) != k), log_probs)


def pmf(k, mu, loc=0):
    """The probability mass."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """`Q(floor(y) + 1, mu)` (regularized upper incomplete gamma); 0 below `loc`."""
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    y = k - loc
    return jnp.where(y < 0, const(y, 0), special.gammaincc(jnp.floor(y + 1), mu))


def _entropy_by_sum(mu, terms: int, upper):
    """`-sum p log p` over k < `upper` (the tail beyond is negligible), `terms` >= max upper."""
    k = jnp.arange(terms, dtype=mu.dtype)[:, None]
    probs = jnp.where(k < upper[None, :], pmf(k, mu, 0), const(mu, 0))
    return jnp.sum(special.entr(probs), axis=0)


def entropy(mu, loc=0):
    """The entropy `-sum_k p_k log p_k`.

    Summed over the support's bulk for `mu < 100` (35 terms below 10, 250 below 100); the
    asymptotic `log(2 pi e mu)/2 - 1/(12 mu)` above. `loc` only broadcasts the result.
    """
    mu, loc = promote("poisson.entropy", mu, loc)
    flat = jnp.ravel(mu)
    small = _entropy_by_sum(flat, 35, jnp.ceil(flat + 20))
    medium = _entropy_by_sum(flat, 250, jnp.ceil(flat + 10 * jnp.sqrt(flat) + 20))
    safe = jnp.where(flat == 0, jnp.ones_like(flat), flat)  # the mu = 0 case is 0 below
    large = 0.5 * jnp.log(2 * np.pi * np.e * safe) - 1.0 / (12 * safe)
    result = jnp.where(flat == 0, jnp.zeros_like(flat),
                       jnp.where(flat < 10, small, jnp.where(flat < 100, medium, large)))
    return jnp.reshape(result, mu.shape)


