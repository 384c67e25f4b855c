"""householder_product and ormqr: Q from the Householder reflectors a QR factorization
leaves below the diagonal (LAPACK's orgqr / ungqr), and Q applied to a matrix without forming it
(ormqr / unmqr). As in JAX, neither has a derivative rule.

Reflector i is `H_i = I - tau_i v_i v_i^H`, where `v_i` is column i of `a` below the diagonal
with a 1 on it and zeros above; `Q = H_0 H_1 ... H_{k-1}`.
"""

from __future__ import annotations

import numpy as np

from laminax_core._avals import ShapedArray
from laminax_core._primitive import NOT_LINEAR, check_same_dtypes, define_primitive
from laminax_core.lax.linalg._matrix import batch_front, batched_reference, check_matrix

__all__ = ["householder_product", "ormqr"]


def _no_derivative(name):
    def rule(primals, tangents, **params):
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented (JAX has "
                                  "none either); differentiate the QR decomposition instead.")

    return rule


def _reflectors_q(a, taus):
    """NumPy: the full m x m product of the reflectors stored in `a` (m, n) with `taus` (k,)."""
    m = a.shape[0]
    q = np.eye(m, dtype=a.dtype)
    for i in reversed(range(taus.shape[0])):
        v = np.concatenate([np.zeros(i, a.dtype), [1], a[i + 1:, i]])
        q = q - taus[i] * np.outer(v, np.conj(v) @ q)
    return q


def _check_reflectors(name, a, taus):
    check_matrix(name, a)
    check_same_dtypes(name, (a, taus))
    m, n = a.shape[-2:]
    if taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2]:
        raise ValueError(f"{name}: taus {taus.shape} must be (..., k) with a's batch "
                         f"dimensions {a.shape[:-2]}.")
    if taus.shape[-1] > min(m, n):
        raise ValueError(f"{name}: taus holds {taus.shape[-1]} reflectors but a {a.shape} has "
                         f"room for at most min(m, n) = {min(m, n)}.")


# ----- householder_product ------------------------------------------------------------------


def householder_product(a, taus):
    """The first n columns of `Q = H_0 ... H_{k-1}` from reflectors `a` (..., m, n), m >= n,
    and `taus` (..., k), as LAPACK's orgqr forms them.

    Example:
      >>> a = np.zeros((2, 2), np.float32)
      >>> householder_product(a, np.array([2.0, 0.0], np.float32))
      array([[-1.,  0.],
             [ 0.,  1.]], dtype=float32)
    """
    return householder_product_p.bind(a, taus)


def _householder_product_abstract_eval(a, taus):
    _check_reflectors("householder_product", a, taus)
    if a.shape[-2] < a.shape[-1]:
        raise ValueError(f"householder_product: a must have at least as many rows as columns, "
                         f"got shape {a.shape}.")
    return ShapedArray(a.shape, a.dtype)


def _householder_product_reference(a, taus):
    if a.size == 0:
        return np.zeros_like(a)
    (q,) = batched_reference(lambda a, t: (_reflectors_q(a, t[0])[:, :a.shape[1]],),
                             a, np.expand_dims(taus, -2))
    return q.astype(a.dtype)


householder_product_p = define_primitive(
    "householder_product",
    abstract_eval=_householder_product_abstract_eval,
    reference=_householder_product_reference,
    jvp=_no_derivative("householder_product"),
    transpose=NOT_LINEAR,
    batch=lambda axis_data, args, dims: (
        householder_product_p.bind(*batch_front(axis_data, args, dims)), 0),
)


# ----- ormqr --------------------------------------------------------------------------------


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """`Q @ c` (or `Q^H @ c`, `c @ Q`, `c @ Q^H`) for the m x m `Q` of the reflectors in `a`
    (..., m, n) and `taus` (..., k), without forming Q (LAPACK's ormqr / unmqr).

    Args:
      a, taus: the reflectors, as a QR factorization (`geqrf`) leaves them.
      c: (..., m, p) if `left`, else (..., p, m).
      left: multiply from the left (`Q c`) or the right (`c Q`).
      transpose: use `Q^H` instead of `Q`.

    Example:
      >>> a = np.zeros((2, 2), np.float32)
      >>> ormqr(a, np.array([2.0, 0.0], np.float32), np.ones((2, 1), np.float32))
      array([[-1.],
             [ 1.]], dtype=float32)
    """
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


def _ormqr_abstract_eval(a, taus, c, *, left, transpose):
    _check_reflectors("ormqr", a, taus)
    check_matrix("ormqr", c)
    check_same_dtypes("ormqr", (a, c))
    m = a.shape[-2]
    side = c.shape[-2] if left else c.shape[-1]
    if side != m or c.shape[:-2] != a.shape[:-2]:
        which = "rows" if left else "columns"
        raise ValueError(f"ormqr: c {c.shape} must have {m} {which} (a's rows, left={left}) "
                         f"and a's batch dimensions {a.shape[:-2]}.")
    return ShapedArray(c.shape, c.dtype)


def _ormqr_one(a, taus, c, left, transpose):
    q = _reflectors_q(a, taus[0])
    q = np.conj(q).T if transpose else q
    return (q @ c if left else c @ q,)


def _ormqr_reference(a, taus, c, *, left, transpose):
    if c.size == 0:
        return np.zeros_like(c)
    (out,) = batched_reference(lambda a, t, c: _ormqr_one(a, t, c, left, transpose),
                               a, np.expand_dims(taus, -2), c)
    return out.astype(c.dtype)


ormqr_p = define_primitive(
    "ormqr",
    abstract_eval=_ormqr_abstract_eval,
    reference=_ormqr_reference,
    jvp=_no_derivative("ormqr"),
    transpose=NOT_LINEAR,
    batch=lambda axis_data, args, dims, **p: (
        ormqr_p.bind(*batch_front(axis_data, args, dims), **p), 0),
)
