"""`scipy.cluster.vq.vq`: assign each observation to its nearest code."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes
from laminax_core import numpy as jnp

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """The index of the nearest code (Euclidean distance) for each observation, and that
    distance.

    Args:
      obs: observations, `(M,)` or `(M, D)`.
      code_book: codes, `(K,)` or `(K, D)` (the same rank as `obs`).
      check_finite: ignored, as in JAX.

    Returns:
      `(code, dist)`: int indices `(M,)` and distances `(M,)`.

    Raises:
      ValueError: the ranks differ or exceed 2.
    """
    del check_finite
    obs, code_book = jnp.asarray(obs), jnp.asarray(code_book)
    dtype = dtypes.result_type(obs, code_book)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.default_float_dtype()
    obs, code_book = obs.astype(dtype), code_book.astype(dtype)
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
