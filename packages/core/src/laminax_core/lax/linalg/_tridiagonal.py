"""tridiagonal_solve: `A x = b` for a tridiagonal `A` given by its three diagonals (LAPACK's
gtsv on CPU), with JAX's jvp (differentiating A and b), transpose (linear in b) and batching."""

from __future__ import annotations

import numpy as np

from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.jvp import Zero, instantiate_zeros
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._primitive import check_dtype, check_same_dtypes, define_primitive
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._joining import concatenate
from laminax_core.lax._slicing import pad, slice
from laminax_core.lax._structural import expand_dims
from laminax_core.lax.linalg._matrix import batch_front, batched_reference

__all__ = ["tridiagonal_solve"]


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """Solves `A x = b` for the tridiagonal `A` with diagonals `dl`, `d`, `du`.

    Args:
      dl: (..., m): the subdiagonal, `dl[i] = A[i, i - 1]` (`dl[0]` is ignored).
      d: (..., m): the diagonal, `d[i] = A[i, i]`.
      du: (..., m): the superdiagonal, `du[i] = A[i, i + 1]` (`du[m - 1]` is ignored).
      b: (..., m, n): the right-hand sides.
      perturb_singular: perturb tiny pivots (of order eps * max |U|) so that singular systems
        give finite results, as in inverse iteration; otherwise a singular `A` gives NaNs.

    Returns:
      `x`, shaped like `b`.

    Example:
      >>> one = np.ones(3, np.float32)
      >>> tridiagonal_solve(0 * one, 2 * one, 0 * one, np.ones((3, 1), np.float32))
      array([[0.5],
             [0.5],
             [0.5]], dtype=float32)
    """
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


def _tridiagonal_solve_abstract_eval(dl, d, du, b, *, perturb_singular):
    check_dtype("tridiagonal_solve", b.dtype, (np.floating, np.complexfloating))
    check_same_dtypes("tridiagonal_solve", (dl, d, du, b))
    if not dl.shape == d.shape == du.shape:
        raise TypeError(f"tridiagonal_solve: dl {dl.shape}, d {d.shape} and du {du.shape} must "
                        "have the same shape.")
    if b.ndim < 2 or b.shape[:-1] != d.shape:
        raise TypeError(f"tridiagonal_solve: b {b.shape} must be the diagonals' shape {d.shape} "
                        "plus one trailing dimension (the right-hand sides).")
    return ShapedArray(b.shape, b.dtype)


def _solve_one(dl, d, du, b):
    m = d.shape[0]
    a = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    with np.errstate(all="ignore"):
        try:
            return (np.linalg.solve(a, b),)
        except np.linalg.LinAlgError:
            return (np.full((m, b.shape[1]), np.nan, a.dtype),)


def _tridiagonal_solve_reference(dl, d, du, b, *, perturb_singular):
    # perturb_singular only changes singular systems, which the reference leaves as NaNs
    wide = np.complex128 if np.iscomplexobj(b) else np.float64
    if b.size == 0:
        return np.zeros_like(b)
    matrices = [np.expand_dims(v.astype(wide), -1) for v in (dl, d, du)] + [b.astype(wide)]
    (out,) = batched_reference(lambda dl, d, du, b: _solve_one(dl[:, 0], d[:, 0], du[:, 0], b),
                               *matrices)
    return out.astype(b.dtype)


def _tridiagonal_product(dl, d, du, x):
    """`A @ x` for the tridiagonal `A` (..., m, m) and x (..., m, n)."""
    shape = get_aval(x).shape
    nd, m = len(shape), shape[-2]
    zero = np.zeros((), get_aval(x).dtype)
    y = ew.mul(expand_dims(d, (nd - 1,)), x)
    if m < 2:
        return y
    starts, lead = (0,) * nd, shape[:-2]
    below = ew.mul(expand_dims(slice(dl, (0,) * (nd - 2) + (1,), (*lead, m)), (nd - 1,)),
                   slice(x, starts, (*lead, m - 1, shape[-1])))
    above = ew.mul(expand_dims(slice(du, (0,) * (nd - 1), (*lead, m - 1)), (nd - 1,)),
                   slice(x, (0,) * (nd - 2) + (1, 0), shape))
    rows = [(0, 0, 0)] * (nd - 2)
    y = ew.add(y, pad(below, zero, [*rows, (1, 0, 0), (0, 0, 0)]))
    return ew.add(y, pad(above, zero, [*rows, (0, 1, 0), (0, 0, 0)]))


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    # d(A^-1 b) = A^-1 (db - dA x)
    *diags, _ = primals
    *diags_dot, b_dot = tangents
    x = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(isinstance(t, Zero) for t in tangents):
        return x, Zero.from_primal_value(x)
    rhs = instantiate_zeros(b_dot) if not isinstance(b_dot, Zero) else None
    if not all(isinstance(t, Zero) for t in diags_dot):
        a_dot_x = _tridiagonal_product(*(instantiate_zeros(t) for t in diags_dot), x)
        rhs = ew.neg(a_dot_x) if rhs is None else ew.sub(rhs, a_dot_x)
    return x, tridiagonal_solve_p.bind(*diags, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    # A^T has subdiagonal du shifted down by one and superdiagonal dl shifted up by one
    if any(undefined(v) for v in (dl, d, du)) or not undefined(b):
        raise TypeError("tridiagonal_solve is linear in b only (a bug in a jvp rule).")
    if isinstance(ct, Zero):
        return [None, None, None, None]
    shape = get_aval(du).shape
    nd, m = len(shape), shape[-1]
    if m == 0:
        return [None, None, None, ct]
    zero = np.zeros((*shape[:-1], 1), get_aval(du).dtype)
    dl_t = concatenate([zero, slice(du, (0,) * nd, (*shape[:-1], m - 1))], nd - 1)
    du_t = concatenate([slice(dl, (0,) * (nd - 1) + (1,), shape), zero], nd - 1)
    return [None, None, None,
            tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


def _tridiagonal_solve_batch(axis_data, args, dims, **params):
    return tridiagonal_solve_p.bind(*batch_front(axis_data, args, dims), **params), 0


tridiagonal_solve_p = define_primitive(
    "tridiagonal_solve",
    abstract_eval=_tridiagonal_solve_abstract_eval,
    reference=_tridiagonal_solve_reference,
    jvp=_tridiagonal_solve_jvp,
    transpose=_tridiagonal_solve_transpose,
    batch=_tridiagonal_solve_batch,
)
