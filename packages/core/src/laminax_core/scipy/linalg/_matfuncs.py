"""Matrix functions: the exponential `expm` (scaling and squaring with a degree-13 Padé
approximant) and its Fréchet derivative `expm_frechet` (the same steps, differentiated)."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_jvp

__all__ = ["expm", "expm_frechet"]

# Padé [13/13] coefficients of exp and the 1-norm below which it is accurate to double
# precision without scaling (Higham, "The scaling and squaring method for the matrix
# exponential revisited", 2005).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _mm(x, y):
    return jnp.matmul(x, y, precision=lax.Precision.HIGHEST)


def _pade13(a, e=None):
    """`(u, v)` of the [13/13] Padé approximant `(v - u)^-1 (v + u)` of `exp(a)`, and with `e`
    also their directional derivatives `(lu, lv)` along `e` (product rule: linear in `e`)."""
    b = _PADE13
    eye = jnp.eye(a.shape[-1], dtype=a.dtype)
    a2 = _mm(a, a)
    a4 = _mm(a2, a2)
    a6 = _mm(a4, a2)
    w1 = b[13] * a6 + b[11] * a4 + b[9] * a2
    w2 = b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
    z1 = b[12] * a6 + b[10] * a4 + b[8] * a2
    z2 = b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    w = _mm(a6, w1) + w2
    u, v = _mm(a, w), _mm(a6, z1) + z2
    if e is None:
        return u, v
    m2 = _mm(a, e) + _mm(e, a)
    m4 = _mm(a2, m2) + _mm(m2, a2)
    m6 = _mm(a4, m2) + _mm(m4, a2)
    lw1 = b[13] * m6 + b[11] * m4 + b[9] * m2
    lw2 = b[7] * m6 + b[5] * m4 + b[3] * m2
    lz1 = b[12] * m6 + b[10] * m4 + b[8] * m2
    lz2 = b[6] * m6 + b[4] * m4 + b[2] * m2
    lw = _mm(a6, lw1) + _mm(m6, w1) + lw2
    lu = _mm(a, lw) + _mm(e, w)
    lv = _mm(a6, lz1) + _mm(m6, z1) + lz2
    return u, v, lu, lv


def _squarings(a, max_squarings: int):
    norm = jnp.max(jnp.sum(jnp.abs(a), axis=-2), axis=-1)
    needed = jnp.maximum(0, jnp.ceil(jnp.log2(norm / _THETA13)))
    needed = jnp.where(jnp.isfinite(needed), needed, 0).astype(np.int32)
    bad = (needed > max_squarings) | ~jnp.isfinite(norm)
    return needed, bad, jnp.exp2(needed.astype(get_aval(norm).dtype)).astype(a.dtype)


def _step_mask(i, squarings, like):
    return jnp.broadcast_to((i < squarings)[..., None, None], like.shape)


def _expm_impl(a, max_squarings: int, e=None):
    squarings, bad, scale = _squarings(a, max_squarings)
    a = a / scale[..., None, None]
    if e is None:
        u, v = _pade13(a)
        r = jnp.linalg.solve(v - u, v + u)
        lr = jnp.zeros_like(r)
    else:
        e = e / scale[..., None, None]
        u, v, lu, lv = _pade13(a, e)
        r = jnp.linalg.solve(v - u, v + u)
        lr = jnp.linalg.solve(v - u, lu + lv + _mm(lu - lv, r))

    # a static number of steps, each squaring only while below the needed count: a loop that
    # reverse mode can transpose (the tangent of expm runs through it)
    def square(i, carry):
        r, lr = carry
        keep = _step_mask(i, squarings, r)
        return jnp.where(keep, _mm(r, r), r), jnp.where(keep, _mm(r, lr) + _mm(lr, r), lr)

    r, lr = lax.fori_loop(0, max_squarings, square, (r, lr))
    nan = jnp.full_like(r, np.nan)
    bad = jnp.broadcast_to(bad[..., None, None], r.shape)
    return jnp.where(bad, nan, r), jnp.where(bad, nan, lr)


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):  # noqa: N803
    """The matrix exponential `sum_k A^k / k!` of a square matrix (or a batch).

    Scaling and squaring: `A` is divided by `2^s` so that its 1-norm is small, the Padé
    approximant is evaluated there and squared `s` times. Its derivative is the Fréchet
    derivative (`expm_frechet`).

    Args:
      A: `(..., n, n)`.
      upper_triangular: accepted for compatibility (the general algorithm is used).
      max_squarings: the result is NaN where more squarings would be needed (an enormous
        norm).
    """
    del upper_triangular
    a = jnp.asarray(A)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if not dtypes.issubdtype(a.dtype, np.inexact):
        a = a.astype(dtypes.default_float_dtype())
    return _expm_fn(max_squarings)(a)


_EXPM_BY_SQUARINGS: dict = {}


def _expm_fn(max_squarings: int):
    fn = _EXPM_BY_SQUARINGS.get(max_squarings)
    if fn is None:
        fn = custom_jvp(lambda a: _expm_impl(a, max_squarings)[0])
        fn.defjvp(lambda primals, tangents: _expm_impl(primals[0], max_squarings, tangents[0]))
        _EXPM_BY_SQUARINGS[max_squarings] = fn
    return fn


def expm_frechet(A, E, *, method: str | None = None, compute_expm: bool = True):  # noqa: N803
    """The Fréchet derivative of `expm` at `A` in the direction `E`: `L(A, E)`, the
    first-order change of `expm(A + E)`.

    Computed alongside `expm(A)` by differentiating the Padé approximant and the squarings
    (Al-Mohy and Higham's scheme); linear in `E`.

    Returns:
      `(expm(A), L)` if `compute_expm`, else `L`.

    Raises:
      ValueError: `A` and `E` are not square matrices of one shape.
    """
    del method  # one algorithm serves every method name, as in JAX
    a, e = jnp.asarray(A), jnp.asarray(E)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected A to be a square matrix")
    if e.shape != a.shape:
        raise ValueError("expected E to be the same shape as A")
    dtype = dtypes.result_type(a, e)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.default_float_dtype()
    a, e = a.astype(dtype), e.astype(dtype)
    expm_a, frechet = _expm_impl(a, 16, e)
    return (expm_a, frechet) if compute_expm else frechet

