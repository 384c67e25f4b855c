"""The multinomial distribution: counts of `n` draws over categories of probabilities `p`."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import get_aval
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import promote, where_neg_inf

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    """Log of `n! prod p_i^x_i / x_i!` (last axis: categories); `-inf` unless `sum x == n`.

    Raises:
      ValueError: `x` and `n` are not integers.
    """
    (p,) = promote("multinomial.logpmf", p)
    x, n = jnp.asarray(x), jnp.asarray(n)
    dtype = dtypes.result_type(x, n)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(
            f"x and n must be of integer type; got x.dtype={get_aval(x).dtype}, "
            f"n.dtype={get_aval(n).dtype}"
        )
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    log_probs = special.gammaln(n + 1) + jnp.sum(special.xlogy(x, p) - special.gammaln(x + 1),
                                                 axis=-1)
    return where_neg_inf(jnp.sum(x) != n, log_probs)


def pmf(x, n, p):
    """The probability mass."""
    return lax.exp(logpmf(x, n, p))
