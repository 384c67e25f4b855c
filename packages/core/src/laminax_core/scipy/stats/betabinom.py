"""The beta-binomial distribution: `n` trials whose success probability is Beta(a, b)."""

from __future__ import annotations

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, where_nan, where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    """Log of `C(n, y) B(y + a, n - y + b) / B(a, b)` at `y = floor(k) - loc`."""
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    y = lax.floor(k) - loc
    one = const(y, 1)
    log_comb = -(lax.log1p(n) + special.betaln(n - y + one, y + one))
    log_probs = log_comb + special.betaln(y + a, n - y + b) - special.betaln(a, b)
    log_probs = jnp.where((y == 0) & (n == 0), const(y, 0), log_probs)
    log_probs = where_neg_inf((y < -loc) | (y > n) | (y + a <= 0), log_probs)
    return where_nan((n < 0) | (a <= 0) | (b <= 0), log_probs)


def pmf(k, n, a, b, loc=0):
    """The probability mass."""
    return lax.exp(logpmf(k, n, a, b, loc))
