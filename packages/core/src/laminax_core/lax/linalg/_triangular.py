"""cholesky and triangular_solve.

`cholesky` (the public function) symmetrizes its input and masks the strict upper triangle of
the `cholesky` primitive's result, as JAX does; a matrix that is not positive definite gives
NaNs. `triangular_solve` solves op(a) x = b (or x op(a) = b) reading only one triangle of `a`.
"""

from __future__ import annotations

import numpy as np

from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.jvp import Zero
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._primitive import NOT_LINEAR, check_same_dtypes, define_primitive
from laminax_core.lax import _elementwise as ew
from laminax_core.lax import _structural as st
from laminax_core.lax._math import conj
from laminax_core.lax.linalg._matrix import (
    H,
    T,
    batch_front,
    batch_leading,
    batched_reference,
    check_matrix,
    const,
    eye_like,
    is_complex,
    matmul,
    tril,
    triu,
)

__all__ = ["cholesky", "triangular_solve"]


# ----- cholesky -----------------------------------------------------------------------------


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor `L` of a Hermitian positive definite `x` (`x = L L^H`).

    Args:
      x: a matrix or a batch of matrices (..., n, n).
      symmetrize_input: use `(x + x^H) / 2`, which makes the derivative symmetric too.

    Returns:
      `L`, lower triangular; NaNs if `x` is not positive definite.

    Example:
      >>> cholesky(np.array([[4.0, 2.0], [2.0, 5.0]], np.float32))
      array([[2., 0.],
             [1., 2.]], dtype=float32)
    """
    check_matrix("cholesky", get_aval(x), square=True)
    if symmetrize_input:
        x = ew.div(ew.add(x, H(x)), const(2, x))
    return tril(cholesky_p.bind(x))


def _cholesky_abstract_eval(x):
    check_matrix("cholesky", x, square=True)
    return ShapedArray(x.shape, x.dtype)


def _cholesky_one(a):
    try:
        return (np.linalg.cholesky(a),)
    except np.linalg.LinAlgError:
        return (np.full(a.shape, np.nan, a.dtype),)


def _cholesky_reference(x):
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    if x.size == 0:
        return np.zeros_like(x)
    (out,) = batched_reference(_cholesky_one, wide)
    return out.astype(x.dtype)


def _phi(x):
    """The lower triangle with the diagonal halved."""
    aval = get_aval(x)
    eye = eye_like(aval.shape, aval.dtype)
    return ew.mul(tril(x), ew.sub(const(1, x), ew.mul(const(0.5, x), eye)))


def _cholesky_jvp(primals, tangents):
    # L^{-1} dA L^{-H} = L^{-1} L_dot + (L^{-1} L_dot)^H, whose lower part gives L_dot
    (x,), (t,) = primals, tangents
    factor = tril(cholesky_p.bind(x))
    if isinstance(t, Zero):
        return factor, Zero.from_primal_value(factor)
    right = triangular_solve(factor, t, left_side=False, lower=True, transpose_a=True,
                             conjugate_a=True)
    inner = triangular_solve(factor, right, left_side=True, lower=True)
    return factor, matmul(factor, _phi(inner))


cholesky_p = define_primitive(
    "cholesky",
    abstract_eval=_cholesky_abstract_eval,
    reference=_cholesky_reference,
    jvp=_cholesky_jvp,
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: cholesky_p),
)


# ----- triangular_solve ---------------------------------------------------------------------


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solves `op(a) @ x = b` (`left_side`) or `x @ op(a) = b` for triangular `a`.

    Args:
      a: (..., m, m), of which only the lower (`lower=True`) or upper triangle is read.
      b: (..., m, n) if `left_side`, else (..., n, m).
      left_side, lower, transpose_a, conjugate_a, unit_diagonal: as in LAPACK's trsm;
        op(a) is a, its transpose, or its conjugate transpose.

    Returns:
      `x`, shaped like `b`.

    Example:
      >>> a = np.array([[2.0, 0.0], [1.0, 1.0]], np.float32)
      >>> triangular_solve(a, np.array([[2.0], [3.0]], np.float32), left_side=True, lower=True)
      array([[1.],
             [2.]], dtype=float32)
    """
    # a `b` with one dimension fewer than `a` is one vector per matrix (a column if
    # `left_side`, else a row)
    singleton = get_aval(b).ndim == get_aval(a).ndim - 1
    if singleton:
        b_shape = get_aval(b).shape
        b = st.reshape(b, (*b_shape, 1) if left_side else (*b_shape[:-1], 1, b_shape[-1]))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a),
                                  conjugate_a=bool(conjugate_a),
                                  unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = st.reshape(out, b_shape)
    return out


def _triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a, conjugate_a,
                                    unit_diagonal):
    check_matrix("triangular_solve", a, square=True)
    check_matrix("triangular_solve", b)
    check_same_dtypes("triangular_solve", (a, b))
    if a.shape[:-2] != b.shape[:-2]:
        raise TypeError(f"triangular_solve: a {a.shape} and b {b.shape} must have the same "
                        "batch dimensions.")
    side = b.shape[-2] if left_side else b.shape[-1]
    if side != a.shape[-1]:
        which = "rows" if left_side else "columns"
        raise TypeError(f"triangular_solve: b {b.shape} must have {a.shape[-1]} {which} to "
                        f"match a {a.shape} (left_side={left_side}).")
    return ShapedArray(b.shape, b.dtype)


def _op_a(a, lower, transpose_a, conjugate_a, unit_diagonal):
    """NumPy: the triangle of `a` that is read, as op(a)."""
    tri = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        tri = tri * (1 - np.eye(n)) + np.eye(n)
    if transpose_a:
        tri = np.swapaxes(tri, -1, -2)
    return np.conj(tri) if conjugate_a else tri


def _triangular_solve_reference(a, b, *, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
    wide = np.complex128 if np.iscomplexobj(a) else np.float64
    op = _op_a(a.astype(wide), lower, transpose_a, conjugate_a, unit_diagonal)
    b = b.astype(wide)
    if b.size == 0:
        return b.astype(a.dtype)
    with np.errstate(all="ignore"):
        if left_side:
            out = np.linalg.solve(op, b)
        else:  # x op = b  <=>  op^T x^T = b^T
            out = np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)),
                              -1, -2)
    return out.astype(a.dtype)


def _triangular_solve_jvp(primals, tangents, **params):
    a, b = primals
    t_a, t_b = tangents
    ans = triangular_solve_p.bind(a, b, **params)
    total = Zero.from_primal_value(ans)
    if not isinstance(t_b, Zero):
        total = triangular_solve_p.bind(a, t_b, **params)
    if not isinstance(t_a, Zero):
        # d op(a)^{-1} = -op(a)^{-1} op(da) op(a)^{-1}, with da masked to the read triangle
        da = tril(t_a, -1 if params["unit_diagonal"] else 0) if params["lower"] else triu(
            t_a, 1 if params["unit_diagonal"] else 0)
        da = T(da) if params["transpose_a"] else da
        da = conj(da) if params["conjugate_a"] and is_complex(da) else da
        product = matmul(da, ans) if params["left_side"] else matmul(ans, da)
        part = ew.neg(triangular_solve_p.bind(a, product, **params))
        total = part if isinstance(total, Zero) else ew.add(total, part)
    return ans, total


def _triangular_solve_transpose(ct, a, b, *, transpose_a, **params):
    if undefined(a):
        raise TypeError("triangular_solve is not linear in a (a bug in a jvp rule).")
    if isinstance(ct, Zero):
        return [None, None]
    return [None, triangular_solve_p.bind(a, ct, transpose_a=not transpose_a, **params)]


def _triangular_solve_batch(axis_data, args, dims, **params):
    a, b = batch_front(axis_data, args, dims)
    return triangular_solve_p.bind(a, b, **params), 0


triangular_solve_p = define_primitive(
    "triangular_solve",
    abstract_eval=_triangular_solve_abstract_eval,
    reference=_triangular_solve_reference,
    jvp=_triangular_solve_jvp,
    transpose=_triangular_solve_transpose,
    batch=_triangular_solve_batch,
)
