"""The Dirichlet distribution on the probability simplex."""

from __future__ import annotations

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy import special
from laminax_core.scipy.stats._common import const, promote_dtypes, where_neg_inf

__all__ = ["logpdf", "pdf"]


def _on_simplex(x):
    return jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)


def logpdf(x, alpha):
    """Log of the Dirichlet density; `-inf` off the simplex.

    Args:
      x: points along axis 0: `K` coordinates, or `K - 1` (the last is then `1 - sum`).
      alpha: the `K` concentration parameters (1-d).

    Raises:
      ValueError: `alpha` is not 1-d, or `x`'s first axis is neither `K` nor `K - 1` long.
    """
    x, alpha = promote_dtypes("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry fewer; "
            f"got x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    one = const(x, 1)
    if x.shape[0] != k:
        x = jnp.concatenate([x, one - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    log_norm = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = jnp.sum(special.xlogy(alpha - one, x), axis=0) - log_norm
    return where_neg_inf(~_on_simplex(x), log_probs)


def pdf(x, alpha):
    """The Dirichlet density."""
    return lax.exp(logpdf(x, alpha))
