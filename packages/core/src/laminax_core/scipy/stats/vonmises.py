"""The von Mises distribution (a normal distribution on the circle) with concentration
`kappa`."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy.stats._common import promote, where_nan

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    """`kappa (cos x - 1) - log(2 pi i0e(kappa))` (scaled Bessel: no overflow); NaN for
    `kappa <= 0`."""
    x, kappa = promote("vonmises.logpdf", x, kappa)
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return where_nan(kappa <= 0, value)


def pdf(x, kappa):
    """The von Mises density."""
    return lax.exp(logpdf(x, kappa))
