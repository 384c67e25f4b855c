"""The wrapped Cauchy distribution on [0, 2 pi] with shape `c` in (0, 1)."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy.stats._common import promote, where_nan, where_neg_inf

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    """Log of `(1 - c^2) / (2 pi (1 + c^2 - 2 c cos x))`; `-inf` outside [0, 2 pi], NaN for
    `c` outside (0, 1)."""
    x, c = promote("wrapcauchy.logpdf", x, c)
    value = (jnp.log(1 - c * c) - jnp.log(2 * np.pi)
             - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
    value = where_neg_inf(~((x >= 0) & (x <= 2 * np.pi)), value)  # NaN x: -inf, as in JAX
    return where_nan((c <= 0) | (c >= 1), value)


def pdf(x, c):
    """The wrapped Cauchy density."""
    return lax.exp(logpdf(x, c))
