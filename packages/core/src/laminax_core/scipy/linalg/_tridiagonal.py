"""`eigh_tridiagonal`: eigenvalues of a Hermitian tridiagonal matrix by bisection on Sturm
counts (every wanted eigenvalue bisected at once), eigenvectors by inverse iteration.

The Sturm count of `x` (how many eigenvalues lie below it) is the number of negative pivots of
the LDL^T factorization of `T - x I`, `q_i = d_i - x - |e_(i-1)|^2 / q_(i-1)`; pivots are kept
away from zero by `pivmin` as LAPACK's stebz does. Inverse iteration solves
`(T - w_k I) v = v` for all eigenvalues together (tridiagonal_solve with tiny pivots
perturbed), re-orthonormalizing the vectors by QR after each step so that eigenvectors of
close eigenvalues stay independent.
"""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax, random
from laminax_core import numpy as jnp
from laminax_core.lax import linalg as lax_linalg

__all__ = ["eigh_tridiagonal"]

_INVERSE_ITERATIONS = 5  # LAPACK's stein stops after five steps as well


def _sturm_counts(d, e_sq, pivmin, x):
    """How many eigenvalues lie below each entry of `x`."""
    n = d.shape[0]

    def pivot(q, count):
        negative = q <= pivmin
        return jnp.where(negative, jnp.minimum(q, -pivmin), q), count + negative

    def step(i, carry):
        q, count = carry
        # dynamic_index_in_dim, not d[i]: d may be a NumPy constant, which a tracer cannot index
        d_i = lax.dynamic_index_in_dim(d, i, keepdims=False)
        e_sq_i = lax.dynamic_index_in_dim(e_sq, i - 1, keepdims=False)
        return pivot(d_i - x - e_sq_i / q, count)

    q, count = pivot(d[0] - x, jnp.zeros(x.shape, np.int32))
    return lax.fori_loop(1, n, step, (q, count))[1] if n > 1 else count


def _bisect(d, e_sq, targets, tol):
    finfo = np.finfo(d.dtype)
    e_abs = jnp.sqrt(e_sq)
    radius = jnp.concatenate([e_abs[:1], e_abs[:-1] + e_abs[1:], e_abs[-1:]])
    low, high = jnp.min(d - radius), jnp.max(d + radius)  # Gershgorin's interval
    norm = jnp.maximum(jnp.abs(low), jnp.abs(high))
    safemin = max(1 / float(finfo.max), (1 + float(finfo.eps)) * float(finfo.tiny))
    pivmin = safemin * jnp.maximum(1, jnp.max(e_sq))
    slack = 2.1 * d.shape[0] * finfo.eps * norm + 4.2 * pivmin
    abs_tol = finfo.eps * norm if tol is None else jnp.maximum(tol, finfo.eps * norm)
    low = jnp.full(targets.shape, low - slack, d.dtype)
    high = jnp.full(targets.shape, high + slack, d.dtype)

    def keep_going(state):
        i, low, high = state
        return (i < finfo.nmant + 1) & (jnp.max(high - low) > abs_tol)

    def halve(state):
        i, low, high = state
        mid = (low + high) / 2
        above = _sturm_counts(d, e_sq, pivmin, mid) > targets
        return i + 1, jnp.where(above, low, mid), jnp.where(above, mid, high)

    _, low, high = lax.while_loop(keep_going, halve, (0, low, high))
    return (low + high) / 2


def _inverse_iteration(d, e, w, key):
    n, k = d.shape[0], w.shape[0]
    dtype = e.dtype
    lower = jnp.broadcast_to(jnp.pad(jnp.conj(e), (1, 0)), (k, n)).astype(dtype)
    upper = jnp.broadcast_to(jnp.pad(e, (0, 1)), (k, n)).astype(dtype)
    shifted = (d[None, :] - w[:, None]).astype(dtype)
    v = random.normal(key, (k, n), dtypes.finfo(dtype).dtype).astype(dtype)

    def step(_, v):
        v = lax_linalg.tridiagonal_solve(lower, shifted, upper, v[:, :, None],
                                         perturb_singular=True)[:, :, 0]
        v = v / jnp.linalg.norm(v, axis=-1, keepdims=True).astype(dtype)
        q, r = jnp.linalg.qr(v.T)
        return (q * jnp.sign(jnp.diag(r)).astype(dtype)).T  # keep each vector's direction

    return lax.fori_loop(0, _INVERSE_ITERATIONS, step, v).T


def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol=None, key=None):
    """Eigenvalues (ascending) and, unless `eigvals_only`, eigenvectors (columns) of the
    Hermitian tridiagonal matrix with diagonal `d` (n) and off-diagonal `e` (n - 1).

    Args:
      d, e: float or complex vectors of one dtype (`d`'s imaginary part is ignored).
      eigvals_only: return the eigenvalues alone.
      select: `"a"` (all) or `"i"` (indices `select_range[0] .. select_range[1]`, inclusive).
      select_range: the index range for `select="i"`.
      tol: the absolute tolerance of the eigenvalues (at least eps times the matrix norm).
      key: the PRNG key of the inverse iteration's starting vectors (default `key(42)`).

    Example:
      >>> eigh_tridiagonal(np.array([2.0, 2.0], np.float32), np.array([1.0], np.float32),
      ...                  eigvals_only=True)
      Array([1., 3.], dtype=float32)
    """
    d, e = jnp.asarray(d), jnp.asarray(e)
    if d.dtype != e.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, got "
                        f"{d.dtype} and {e.dtype}")
    if d.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {d.dtype} and {e.dtype}")
    n = d.shape[0]
    if select == "a":
        targets = jnp.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        targets = jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    real_d = jnp.real(d)
    if n <= 1:
        return real_d if eigvals_only else (real_d, jnp.eye(n, dtype=d.dtype))
    e_sq = jnp.real(e * jnp.conj(e))
    w = _bisect(real_d, e_sq, targets, tol)
    if eigvals_only:
        return w
    key = random.key(42) if key is None else key
    return w, _inverse_iteration(real_d, e, w, key)
