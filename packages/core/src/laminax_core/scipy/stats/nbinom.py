"""The negative binomial distribution: failures before the `n`-th success."""

from __future__ import annotations

from laminax_core import lax
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """Log of `Gamma(y + n) / (Gamma(n) y!) p^n (1 - p)^y`, `y = k - loc`."""
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    one = const(k, 1)
    y = k - loc
    log_comb = special.gammaln(y + n) - special.gammaln(n) - special.gammaln(y + one)
    log_probs = log_comb + special.xlogy(n, p) + special.xlogy(y, one - p)
    return where_neg_inf(k < loc, log_probs)


def pmf(k, n, p, loc=0):
    """The probability mass."""
    return lax.exp(logpmf(k, n, p, loc))
