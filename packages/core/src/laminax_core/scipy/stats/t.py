"""Student's t distribution with `df` degrees of freedom."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core.scipy.stats._common import const, promote, scaled

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    """Log of `Gamma((df+1)/2) / (Gamma(df/2) sqrt(pi df) scale) (1 + z^2/df)^(-(df+1)/2)`."""
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    z = scaled(x, loc, scale)
    half_df = df / const(x, 2)
    half_df_plus = half_df + const(x, 0.5)
    log_norm = (lax.lgamma(half_df) + lax.log(scale * scale * const(x, np.pi) * df)
                / const(x, 2) - lax.lgamma(half_df_plus))
    return -(log_norm + half_df_plus * lax.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    """Student's t density."""
    return lax.exp(logpdf(x, df, loc, scale))
