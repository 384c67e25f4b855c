"""The geometric distribution: the trial of the first success, on {1, 2, ...} + loc."""

from __future__ import annotations

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote, where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """Log of `(1 - p)^(y - 1) p`, `y = k - loc`; `-inf` for `y <= 0`."""
    k, p, loc = promote("geom.logpmf", k, p, loc)
    y = k - loc
    return where_neg_inf(y <= 0, special.xlog1py(y - const(y, 1), -p) + lax.log(p))


def pmf(k, p, loc=0):
    """The probability mass."""
    return jnp.exp(logpmf(k, p, loc))
