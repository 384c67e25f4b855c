"""Samplers built on matrix factorizations: `multivariate_normal` and `orthogonal`.

Both transform standard normal draws with the factorization JAX uses (Cholesky, SVD or eigh of
the covariance; QR of a Gaussian matrix with the signs of R's diagonal folded into Q, which
makes Q Haar-distributed), through `laminax_core.numpy`'s linear algebra.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import canonicalize_shape, get_aval
from laminax_core.random._keys import check_key
from laminax_core.random._samplers import _shape, normal_raw

__all__ = ["multivariate_normal", "orthogonal"]


def _shape_of(x) -> tuple[int, ...]:
    return tuple(get_aval(x).shape)


def _promote_inexact(*args):
    arrays = [jnp.asarray(a) for a in args]
    dtype = dtypes.result_type(*arrays)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.default_float_dtype()
    return [lax.convert_element_type(a, dtype) if get_aval(a).dtype != dtype else a
            for a in arrays]


def _factor(cov, method: str):
    """A matrix `F` with `F @ F.T == cov` (batched over leading dims)."""
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        return lax.mul(u, jnp.sqrt(jnp.expand_dims(s, -2)))
    if method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        return lax.mul(v, jnp.sqrt(jnp.expand_dims(w, -2)))
    return jnp.linalg.cholesky(cov)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky"):
    """Multivariate normal random vectors with mean `mean` and covariance `cov`.

    Args:
      key: a single PRNG key.
      mean: means, shape `(..., n)`.
      cov: covariances, shape `(..., n, n)`.
      shape: the batch shape (default: the broadcast of the batch dims of `mean` and `cov`).
      dtype: a float dtype (default: `mean`'s dtype after promotion).
      method: how to factor `cov`: "cholesky" (default), "svd" or "eigh".

    Returns:
      An array of shape `shape + (n,)`.

    Example:
      >>> x = multivariate_normal(PRNGKey(0), np.zeros(2, np.float32), np.eye(2, dtype=np.float32))
      >>> x.shape
      (2,)
    """
    raw, _ = check_key("multivariate_normal", key)
    mean, cov = _promote_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = get_aval(mean).dtype if dtype is None else (
        dtypes.check_and_canonicalize_user_dtype(dtype, "multivariate_normal"))
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got "
                         f"{dtype}")
    mean_shape, cov_shape = _shape_of(mean), _shape_of(cov)
    if len(mean_shape) < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{len(mean_shape)}")
    if len(cov_shape) < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{len(cov_shape)}")
    n = mean_shape[-1]
    if cov_shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov_shape}.")
    if shape is None:
        shape = np.broadcast_shapes(mean_shape[:-1], cov_shape[:-2])
    else:
        shape = _shape("normal", shape, mean_shape[:-1], cov_shape[:-2])
    factor = _factor(cov, method)
    samples = normal_raw(raw, (*shape, n), dtype)
    return jnp.add(mean, jnp.einsum("...ij,...j->...i", factor, samples))


def orthogonal(key, n: int, shape=(), dtype=None, m: int | None = None):
    """Random matrices with orthonormal columns or rows, uniformly (Haar) distributed.

    Args:
      key: a single PRNG key.
      n: the number of rows.
      shape: the batch shape.
      dtype: a float dtype.
      m: the number of columns (default `n`).

    Returns:
      An array of shape `shape + (n, m)`.

    Example:
      >>> q = orthogonal(PRNGKey(0), 3)
      >>> bool(np.allclose(np.asarray(q) @ np.asarray(q).T, np.eye(3), atol=1e-5))
      True
    """
    raw, _ = check_key("orthogonal", key)
    shape = canonicalize_shape(shape, "orthogonal")
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype,
                                                     "orthogonal")
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    z = normal_raw(raw, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    diagonal = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = lax.mul(q, jnp.expand_dims(lax.sign(diagonal), -2))
    return jnp.swapaxes(x, -1, -2) if n < m else x
