"""cholesky_update and symmetric_product: two primitives JAX computes on CPU as lax programs
(`cholesky_update_program`, `symmetric_product_program`, which dispatch lowers); as in JAX
neither has a derivative rule, and cholesky_update has no batching rule.
"""

from __future__ import annotations

import numpy as np

from laminax_core._avals import ShapedArray, get_aval
from laminax_core._primitive import NOT_LINEAR, check_dtype, check_same_dtypes, define_primitive
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._control_flow import fori_loop
from laminax_core.lax._dot import dot_general
from laminax_core.lax._products import canonicalize_precision
from laminax_core.lax._slicing import dynamic_slice, dynamic_update_slice
from laminax_core.lax._structural import reshape
from laminax_core.lax.linalg._matrix import T, batch_front, const, tril
from laminax_core.lax.linalg._schur import _no_derivative

__all__ = [
    "cholesky_update", "cholesky_update_program", "symmetric_product",
    "symmetric_product_program",
]  # fmt: skip


# ----- cholesky_update ----------------------------------------------------------------------


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of `R^T R + w w^T`, from the upper factor `R` of `R^T R`, in
    O(n^2) (one Givens rotation per row).

    Example:
      >>> cholesky_update(np.eye(2, dtype=np.float32), np.array([0.0, 1.0], np.float32))
      array([[1.       , 0.       ],
             [0.       , 1.4142135]], dtype=float32)
    """
    return cholesky_update_p.bind(r_matrix, w_vector)


def _cholesky_update_abstract_eval(r, w):
    check_dtype("cholesky_update", r.dtype, (np.floating,))
    check_same_dtypes("cholesky_update", (r, w))
    if r.ndim != 2 or w.ndim != 1 or r.shape[0] != r.shape[1] or w.shape[0] != r.shape[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a "
                         f"vector of the same size as input. Got shapes {r.shape} and "
                         f"{w.shape} instead")
    return ShapedArray(r.shape, r.dtype)


def _rotate_np(r, w):
    r, w = r.copy(), w.copy()
    for k in range(r.shape[0]):
        x, y = r[k, k], w[k]
        radius = np.hypot(x, y)
        c, s = (1.0, 0.0) if radius == 0 else (x / radius, y / radius)
        r[k], w = c * r[k] + s * w, c * w - s * r[k]
    return r


def _cholesky_update_reference(r, w):
    return _rotate_np(r.astype(np.float64), w.astype(np.float64)).astype(r.dtype)


def cholesky_update_program(r, w):
    """The update as a lax loop over rows: row k and `w` turn by the rotation that zeroes
    `w[k]` against `r[k, k]` (scaled by the larger of the two, so it cannot overflow)."""
    n = get_aval(r).shape[0]

    def rotate(k, carry):
        r, w = carry
        row = reshape(dynamic_slice(r, (k, np.int32(0)), (1, n)), (n,))
        x = reshape(dynamic_slice(row, (k,), (1,)), ())
        y = reshape(dynamic_slice(w, (k,), (1,)), ())
        scale = ew.max(ew.abs(x), ew.abs(y))
        safe = ew.select_n(ew.eq(scale, const(0, scale)), scale, const(1, scale))
        xs, ys = ew.div(x, safe), ew.div(y, safe)
        radius = ew.sqrt(ew.add(ew.mul(xs, xs), ew.mul(ys, ys)))
        zero = ew.eq(scale, const(0, scale))
        c = ew.select_n(zero, ew.div(xs, radius), const(1, x))
        s = ew.select_n(zero, ew.div(ys, radius), const(0, x))
        new_row = ew.add(ew.mul(c, row), ew.mul(s, w))
        w = ew.sub(ew.mul(c, w), ew.mul(s, row))
        r = dynamic_update_slice(r, reshape(new_row, (1, n)), (k, np.int32(0)))
        return r, w

    if n == 0:
        return r
    return fori_loop(np.int32(0), np.int32(n), rotate, (r, w))[0]


def _cholesky_update_batch(axis_data, args, dims):
    raise NotImplementedError("Batching rule for 'cholesky_update' not implemented")


cholesky_update_p = define_primitive(
    "cholesky_update",
    abstract_eval=_cholesky_update_abstract_eval,
    reference=_cholesky_update_reference,
    jvp=_no_derivative("cholesky_update"),
    transpose=NOT_LINEAR,
    batch=_cholesky_update_batch,
)


# ----- symmetric_product --------------------------------------------------------------------


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False):
    """`alpha * a @ a^T + beta * c` for `a` (..., m, k) and symmetric `c` (..., m, m).

    Only the lower triangle is promised (a GPU kernel may leave the upper one stale); with
    `symmetrize_output` the upper triangle is the transpose of the lower one.

    Example:
      >>> symmetric_product(np.ones((2, 1), np.float32), np.eye(2, dtype=np.float32), beta=2.0)
      array([[3., 1.],
             [1., 3.]], dtype=float32)
    """
    out = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if not symmetrize_output:
        return out
    return ew.add(tril(out), T(tril(out, -1)))


def _symmetric_product_abstract_eval(a, c, *, alpha, beta):
    check_dtype("symmetric_product", a.dtype, (np.floating,))
    check_same_dtypes("symmetric_product", (a, c))
    if a.ndim < 2 or c.ndim != a.ndim or a.shape[:-2] != c.shape[:-2] \
            or a.shape[-2] != c.shape[-1] or c.shape[-1] != c.shape[-2]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and a "
                         f"square matrix of shape (n, n). Got shapes {a.shape} and {c.shape}.")
    return ShapedArray(c.shape, c.dtype)


def _symmetric_product_reference(a, c, *, alpha, beta):
    wide = a.astype(np.float64)
    out = alpha * wide @ np.swapaxes(wide, -1, -2) + beta * c.astype(np.float64)
    return out.astype(c.dtype)


def symmetric_product_program(a, c, *, alpha, beta):
    nd = get_aval(a).ndim
    batch = tuple(range(nd - 2))
    gram = dot_general(a, a, (((nd - 1,), (nd - 1,)), (batch, batch)), precision=canonicalize_precision("highest"))
    return ew.add(ew.mul(const(alpha, a), gram), ew.mul(const(beta, c), c))


def _symmetric_product_batch(axis_data, args, dims, **params):
    return symmetric_product_p.bind(*batch_front(axis_data, args, dims), **params), 0


symmetric_product_p = define_primitive(
    "symmetric_product",
    abstract_eval=_symmetric_product_abstract_eval,
    reference=_symmetric_product_reference,
    jvp=_no_derivative("symmetric_product"),
    transpose=NOT_LINEAR,
    batch=_symmetric_product_batch,
)
