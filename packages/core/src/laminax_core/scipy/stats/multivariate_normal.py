"""The multivariate normal distribution `N(mean, cov)`."""

from __future__ import annotations

import functools

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.scipy.stats._common import promote_dtypes

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov, allow_singular=None):
    """Log of the multivariate normal density, by a Cholesky factor of `cov`.

    Args:
      x: points, shape `(..., n)` (or scalars with a scalar `mean`).
      mean: the mean, shape `(..., n)` or a scalar.
      cov: the covariance, `(..., n, n)`, or a scalar (a multiple of the identity).
      allow_singular: not supported (as in JAX); must be None.

    Raises:
      NotImplementedError: `allow_singular` is given.
      ValueError: `cov`'s shape does not fit `mean`'s.
    """
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes("multivariate_normal.logpdf", x, mean, cov)
    log_2pi = np.log(2 * np.pi)
    if not mean.shape:
        return -0.5 * jnp.square(x - mean) / cov - 0.5 * (log_2pi + jnp.log(cov))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return -0.5 * jnp.einsum("...i,...i->...", y, y) / cov - n / 2 * (log_2pi + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax.linalg.cholesky(cov)
    solve = functools.partial(lax.linalg.triangular_solve, lower=True, transpose_a=True)
    y = jnp.vectorize(solve, signature="(n,n),(n)->(n)")(chol, x - mean)
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-1, axis2=-2)), axis=-1)
    return -0.5 * jnp.einsum("...i,...i->...", y, y) - n / 2 * log_2pi - log_det


def pdf(x, mean, cov):
    """The multivariate normal density."""
    return lax.exp(logpdf(x, mean, cov))
