"""Structured matrices of `scipy.linalg`: built from a vector (Toeplitz, Hankel, circulant,
companion ...) or from their size alone (Hilbert, Pascal, Helmert, DFT, Hadamard)."""

from __future__ import annotations

import math
import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp

__all__ = [
    "block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler", "fiedler_companion", "hadamard",
    "hankel", "helmert", "hilbert", "invhilbert", "invpascal", "leslie", "pascal", "toeplitz",
]  # fmt: skip


def block_diag(*arrs):
    """The block-diagonal matrix of the given matrices (vectors are rows, scalars 1x1).

    Example:
      >>> block_diag(np.ones((1, 2)), np.float32(3)).shape
      (2, 3)
    """
    if not arrs:
        return jnp.zeros((1, 0))
    blocks = [jnp.atleast_2d(a) for a in arrs]
    for b in blocks:
        if b.ndim > 2:
            raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                             "dimensions.")
    dtype = dtypes.result_type(*blocks)
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    out = jnp.zeros((rows, cols), dtype)
    r = c = 0
    for b in blocks:
        out = lax.dynamic_update_slice(out, b.astype(dtype), (r, c))
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column `c` and first row `r` (`r[0]` is ignored);
    `r = conj(c)` by default (Hermitian). Leading dimensions batch."""
    if r is None:
        c = jnp.asarray(c)
        r = jnp.conj(c)
    else:
        c, r = jnp.asarray(c), jnp.asarray(r)
    c, r = jnp.atleast_1d(c), jnp.atleast_1d(r)
    dtype = dtypes.result_type(c, r)
    c, r = c.astype(dtype), r.astype(dtype)
    m, n = c.shape[-1], r.shape[-1]
    # entry (i, j) is c[i - j] below the diagonal and r[j - i] above: one vector, one gather
    values = jnp.concatenate([jnp.flip(r[..., 1:], -1), c], axis=-1)
    index = (n - 1) + np.arange(m)[:, None] - np.arange(n)[None, :]
    return values[..., index]


def convolution_matrix(a, n: int, mode: str = "full"):
    """The Toeplitz matrix `A` (..., k, n) with `A @ v == convolve(a, v, mode)` for `v` of
    length `n`: k = m + n - 1 (`"full"`), max(m, n) (`"same"`), max(m, n) - min(m, n) + 1
    (`"valid"`), for `a` of length m."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    a = jnp.asarray(a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    # the full matrix has m + n - 1 rows; "same" keeps the middle max(m, n), "valid" the rows
    # where every product lands inside `a`
    overlap = min(m, n) - 1
    first = {"full": 0, "same": overlap // 2, "valid": overlap}[mode]
    rows = {"full": m + n - 1, "same": max(m, n), "valid": max(m, n) - overlap}[mode]
    padded = jnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(n - 1, n - 1)])
    # entry (i, j) of the full matrix is a[i - j]: the padded a read backwards from i + n - 1
    index = (first + np.arange(rows))[:, None] - np.arange(n)[None, :] + (n - 1)
    return padded[..., index]


def hankel(c, r=None):
    """The Hankel matrix with first column `c` and last row `r` (`r[0]` ignored); zeros below
    the anti-diagonal by default."""
    c = jnp.ravel(jnp.asarray(c))
    r = jnp.zeros_like(c) if r is None else jnp.ravel(jnp.asarray(r))
    dtype = dtypes.result_type(c, r)
    values = jnp.concatenate([c.astype(dtype), r[1:].astype(dtype)])
    m, n = c.shape[0], r.shape[0]
    return values[np.arange(m)[:, None] + np.arange(n)[None, :]]


def circulant(c):
    """The circulant matrix with first column `c` (leading dimensions batch)."""
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def companion(a):
    """The companion matrix of the polynomial with coefficients `a` (highest first)."""
    a = jnp.atleast_1d(jnp.asarray(a))
    if a.ndim != 1:
        raise ValueError("Incorrect shape for `a`.  `a` must be one-dimensional.")
    if a.shape[0] < 2:
        raise ValueError("The length of `a` must be at least 2.")
    dtype = dtypes.result_type(a, dtypes.default_float_dtype() if
                               dtypes.issubdtype(a.dtype, np.integer) else a.dtype)
    first_row = (-a[1:] / a[0]).astype(dtype)
    n = a.shape[0] - 1
    below = jnp.eye(n - 1, n, dtype=dtype)
    return jnp.concatenate([first_row[None, :], below], axis=0)


def fiedler(a):
    """The symmetric Fiedler matrix `|a_i - a_j|`."""
    a = jnp.atleast_1d(jnp.asarray(a))
    if a.ndim != 1:
        raise ValueError("Input 'a' must be a 1D array.")
    return jnp.abs(a[:, None] - a[None, :])


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial `a` (highest coefficient first): a
    pentadiagonal matrix with the same eigenvalues as `companion(a)`."""
    a = jnp.atleast_1d(jnp.asarray(a))
    if a.ndim != 1:
        raise ValueError("Input 'a' must be a 1-D array.")
    if a.shape[0] < 3:
        # degree 0 or 1: an empty matrix or the single root -a1/a0
        return (-a[1:] / a[0]).reshape(a.shape[0] - 1, a.shape[0] - 1) if a.shape[0] == 2 \
            else jnp.zeros((0, 0), a.dtype)
    a = a / a[0]
    n = a.shape[0] - 1
    c = jnp.zeros((n, n), a.dtype)
    c = c.at[np.arange(3, n, 2), np.arange(1, n - 2, 2)].set(1.0)
    c = c.at[np.arange(2, n, 2), np.arange(1, n - 1, 2)].set(-a[3::2])
    c = c.at[np.arange(0, n - 2, 2), np.arange(2, n, 2)].set(1.0)
    c = c.at[np.arange(0, n - 1, 2), np.arange(1, n, 2)].set(-a[2::2])
    c = c.at[0, 0].set(-a[1])
    c = c.at[1, 0].set(1.0)
    return c


def leslie(f, s):
    """The Leslie matrix: fecundities `f` in the first row, survival rates `s` below the
    diagonal."""
    f, s = jnp.atleast_1d(jnp.asarray(f)), jnp.atleast_1d(jnp.asarray(s))
    if f.ndim != 1 or s.ndim != 1:
        raise ValueError("Incorrect shape for f or s. f and s must be one-dimensional")
    if f.shape[0] != s.shape[0] + 1:
        raise ValueError("Incorrect lengths for f and s. The length of s must be one less "
                         "than the length of f.")
    n = f.shape[0]
    dtype = dtypes.result_type(f, s)
    out = jnp.zeros((n, n), dtype).at[0, :].set(f.astype(dtype))
    return out.at[np.arange(1, n), np.arange(n - 1)].set(s.astype(dtype))


def hilbert(n: int):
    """The `n x n` Hilbert matrix `1 / (i + j + 1)`."""
    i = lax.iota(dtypes.default_float_dtype(), n)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


def invhilbert(n: int):
    """The exact inverse of the `n x n` Hilbert matrix (in the default float dtype)."""
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            s = i + j
            out[i, j] = ((-1) ** s * (s + 1) * math.comb(n + i, n - j - 1)
                         * math.comb(n + j, n - i - 1) * math.comb(s, i) ** 2)
    return jnp.asarray(out, dtypes.default_float_dtype())


def pascal(n: int, kind: str | None = None):
    """The `n x n` Pascal matrix: "symmetric" (default), "lower" or "upper" triangular."""
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be 'symmetric', 'lower', or 'upper'; got {kind}")
    i = np.arange(n)
    lower = np.array([[math.comb(int(r), int(c)) for c in i] for r in i], np.float64)
    out = {"lower": lower, "upper": lower.T, "symmetric": lower @ lower.T}[kind]
    return jnp.asarray(out, dtypes.default_float_dtype())


def invpascal(n: int, kind: str | None = None):
    """The inverse of `pascal(n, kind)` (exact: an integer matrix)."""
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be 'symmetric', 'lower', or 'upper'; got {kind}")
    i = np.arange(n)
    lower = np.array([[(-1) ** (int(r) - int(c)) * math.comb(int(r), int(c)) for c in i]
                      for r in i], np.float64)
    out = {"lower": lower, "upper": lower.T, "symmetric": lower.T @ lower}[kind]
    return jnp.asarray(out, dtypes.default_float_dtype())


def helmert(n: int, full: bool = False):
    """The Helmert matrix of order `n`: orthonormal rows, the first (kept with `full`)
    constant."""
    out = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    out[0] = 1
    d[0] = n
    out = out / np.sqrt(d)[:, None]
    out = out if full else out[1:]
    return jnp.asarray(out, dtypes.default_float_dtype())


def dft(n: int, scale: str | None = None, *, dtype=None):
    """The `n x n` discrete Fourier transform matrix `exp(-2 pi i jk / n)`; `scale` is None,
    "sqrtn" or "n"."""
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; {scale!r} is not valid.")
    dtype = dtypes.canonicalize_dtype(np.complex128 if dtype is None else dtype)
    k = np.arange(n)
    out = np.exp(-2j * np.pi * np.outer(k, k) / n)
    if scale == "sqrtn":
        out = out / math.sqrt(n)
    elif scale == "n":
        out = out / n
    return jnp.asarray(out, dtype)


def hadamard(n: int, dtype=int):
    """The `n x n` Hadamard matrix (Sylvester's construction; `n` a power of 2)."""
    if n < 1 or n & (n - 1):
        raise ValueError("n must be a positive integer, and n must be a power of 2")
    out = np.ones((1, 1))
    while out.shape[0] < n:
        out = np.block([[out, out], [out, -out]])
    return jnp.asarray(out, dtypes.canonicalize_dtype(np.dtype(dtype)))


