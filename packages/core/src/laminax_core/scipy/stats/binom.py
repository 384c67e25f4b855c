"""The binomial distribution: successes in `n` trials of probability `p`."""

from __future__ import annotations

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """Log of `C(n, y) p^y (1 - p)^(n - y)` at `y = k - loc`; `-inf` outside [0, n]."""
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    y = k - loc
    one = const(y, 1)
    log_comb = special.gammaln(n + one) - (special.gammaln(y + one) + special.gammaln(n - y + one))
    log_kernel = special.xlogy(y, p) + special.xlog1py(n - y, -p)
    log_probs = log_comb + log_kernel
    # certain outcomes (n = 0, or p at 0 or 1 with the matching y) have probability exactly 1
    log_probs = jnp.where(((y == 0) & (n == 0)) | (log_kernel == 0), const(y, 0), log_probs)
    return where_neg_inf(~((k >= loc) & (k < loc + n + one)), log_probs)


def pmf(k, n, p, loc=0):
    """The probability mass."""
    return lax.exp(logpmf(k, n, p, loc))
