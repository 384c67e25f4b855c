"""lu (partial pivoting, with LAPACK's pivots and the row permutation, as JAX returns them) and
qr (Householder, with `full_matrices`)."""

from __future__ import annotations

import numpy as np

from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.jvp import Zero, instantiate_zeros
from laminax_core._primitive import NOT_LINEAR, ZERO_TANGENT, define_primitive
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._joining import concatenate
from laminax_core.lax._math import real
from laminax_core.lax._slicing import pad, slice
from laminax_core.lax._structural import broadcast_in_dim, broadcasted_iota
from laminax_core.lax.linalg._matrix import (
    H,
    T,
    batch_leading,
    batched_reference,
    check_matrix,
    eye_like,
    is_complex,
    matmul,
    tril,
    triu,
)
from laminax_core.lax.linalg._triangular import triangular_solve

__all__ = ["lu", "lu_pivots_to_permutation", "qr"]


# ----- lu -----------------------------------------------------------------------------------


def lu(x):
    """LU decomposition with partial pivoting: `x[perm] = L @ U`.

    Returns:
      `(lu, pivots, permutation)`: `lu` holds U on and above the diagonal and the unit-lower L
      below it; `pivots[i]` is the row swapped with row i at step i (int32, min(m, n) of them);
      `permutation` is the resulting row order (int32, m).

    Example:
      >>> lu_, pivots, perm = lu(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
      >>> pivots, perm
      (array([1, 1], dtype=int32), array([1, 0], dtype=int32))
    """
    return tuple(lu_p.bind(x))


def _lu_abstract_eval(x):
    check_matrix("lu", x)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, min(m, n)), np.int32),
            ShapedArray((*batch, m), np.int32)]


def _lu_one(a):
    a = a.copy()
    m, n = a.shape
    pivots = np.zeros(min(m, n), np.int32)
    perm = np.arange(m, dtype=np.int32)
    for k in range(min(m, n)):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        pivots[k] = p
        if p != k:
            a[[k, p]] = a[[p, k]]
            perm[[k, p]] = perm[[p, k]]
        if a[k, k] != 0:
            a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a, pivots, perm


def _lu_reference(x):
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    m, n = x.shape[-2:]
    if x.size == 0:
        batch = x.shape[:-2]
        return [x.copy(), np.zeros((*batch, min(m, n)), np.int32),
                np.broadcast_to(np.arange(m, dtype=np.int32), (*batch, m)).copy()]
    out, pivots, perm = batched_reference(_lu_one, wide)
    return [out.astype(x.dtype), pivots, perm]


def _permute_rows(x, perm):
    """`x[..., perm, :]` as a one-hot matmul (linear in `x`)."""
    shape = get_aval(x).shape
    m = shape[-2]
    cols = broadcasted_iota(np.int32, (*shape[:-2], m, m), len(shape) - 1)
    rows = broadcast_in_dim(perm, (*shape[:-2], m, m), tuple(range(len(shape) - 1)))
    return matmul(ew.convert_element_type(ew.eq(rows, cols), get_aval(x).dtype), x)


def _square(x, size, unit_from):
    """`x` (.., r, c) padded with zeros to (.., size, size), with ones on the diagonal from
    index `unit_from` on."""
    shape = get_aval(x).shape
    config = [(0, 0, 0)] * (len(shape) - 2) + [(0, size - shape[-2], 0),
                                                 (0, size - shape[-1], 0)]
    padded = pad(x, np.zeros((), get_aval(x).dtype), config)
    rows = broadcasted_iota(np.int32, get_aval(padded).shape, len(shape) - 2)
    eye = eye_like(get_aval(padded).shape, get_aval(x).dtype)
    tail = ew.convert_element_type(ew.ge(rows, np.int32(unit_from)), get_aval(x).dtype)
    return ew.add(padded, ew.mul(eye, tail))


def _lu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    lu_, pivots, perm = lu_p.bind(x)
    outs = [lu_, pivots, perm]
    zero_ints = [Zero.from_primal_value(pivots), Zero.from_primal_value(perm)]
    if isinstance(t, Zero):
        return outs, [Zero.from_primal_value(lu_), *zero_ints]
    shape = get_aval(x).shape
    m, n = shape[-2:]
    k = min(m, n)
    nd = len(shape)
    lower_cols = slice(lu_, (0,) * nd, (*shape[:-1], k))
    upper_rows = slice(lu_, (0,) * nd, (*shape[:-2], k, n))
    l_mat = _square(tril(lower_cols, -1), m, 0)  # unit lower, m x m
    u_mat = _square(triu(upper_rows), n, k)  # upper, n x n (identity below row k)
    la = triangular_solve(l_mat, _permute_rows(instantiate_zeros(t), perm), left_side=True,
                          lower=True, unit_diagonal=True)
    lau = triangular_solve(u_mat, la, left_side=False, lower=False)
    l_dot = matmul(l_mat, tril(lau, -1))
    u_dot = matmul(triu(lau), u_mat)
    return outs, [ew.add(l_dot, u_dot), *zero_ints]


lu_p = define_primitive(
    "lu",
    abstract_eval=_lu_abstract_eval,
    reference=_lu_reference,
    jvp=_lu_jvp,
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: lu_p),
    multiple_results=True,
)


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The row permutation that LAPACK-style `pivots` (row swaps) produce.

    Args:
      pivots: int32 (..., k): at step i, row i was swapped with row `pivots[..., i]`.
      permutation_size: the permutation's length m (at least k).

    Returns:
      int32 (..., m): the rows of `arange(m)` in the order the swaps leave them.

    Example:
      >>> lu_pivots_to_permutation(np.array([1, 1], np.int32), 3)
      array([1, 0, 2], dtype=int32)
    """
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def _lu_pivots_to_permutation_abstract_eval(pivots, *, permutation_size):
    if pivots.ndim < 1 or not np.issubdtype(pivots.dtype, np.integer):
        raise TypeError(f"lu_pivots_to_permutation: pivots must be an integer array of at least "
                        f"one dimension, got {pivots.dtype.name}{list(pivots.shape)}.")
    if permutation_size < pivots.shape[-1]:
        raise ValueError(f"lu_pivots_to_permutation: permutation_size {permutation_size} must "
                         f"be at least the number of pivots {pivots.shape[-1]}.")
    return ShapedArray((*pivots.shape[:-1], permutation_size), np.dtype(np.int32))


def _lu_pivots_to_permutation_reference(pivots, *, permutation_size):
    perm = np.broadcast_to(np.arange(permutation_size, dtype=np.int32),
                           (*pivots.shape[:-1], permutation_size)).copy()
    if perm.size == 0 or pivots.shape[-1] == 0:
        return perm
    flat_perm = perm.reshape(-1, permutation_size)
    for row, swaps in zip(flat_perm, pivots.reshape(-1, pivots.shape[-1]), strict=True):
        for i, p in enumerate(swaps):
            row[[i, p]] = row[[p, i]]
    return perm


lu_pivots_to_permutation_p = define_primitive(
    "lu_pivots_to_permutation",
    abstract_eval=_lu_pivots_to_permutation_abstract_eval,
    reference=_lu_pivots_to_permutation_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: lu_pivots_to_permutation_p),
)


# ----- qr -----------------------------------------------------------------------------------


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """QR decomposition `x = q @ r` with orthonormal columns in `q` and upper triangular `r`.

    Args:
      x: (..., m, n).
      pivoting: column pivoting (LAPACK's geqp3): `x[..., p] = q @ r` with the diagonal of `r`
        non-increasing in magnitude, and `p` returned as a third output.
      full_matrices: q is (m, m) and r (m, n); otherwise q is (m, k), r (k, n), k = min(m, n).
      use_magma: accepted for compatibility (GPU only in JAX).

    Returns:
      `(q, r)`, or `(q, r, p)` with `p` int32 (..., n) if `pivoting`.

    Example:
      >>> q, r = qr(np.array([[3.0, 0.0], [4.0, 5.0]], np.float32))
      >>> np.round(np.abs(r), 4)
      array([[5., 4.],
             [0., 3.]], dtype=float32)
    """
    return tuple(qr_p.bind(x, pivoting=bool(pivoting), full_matrices=bool(full_matrices),
                           use_magma=use_magma))


def _qr_abstract_eval(x, *, pivoting, full_matrices, use_magma):
    check_matrix("qr", x)
    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)
    batch = x.shape[:-2]
    outs = [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]
    if pivoting:
        outs.append(ShapedArray((*batch, n), np.dtype(np.int32)))
    return outs


def _column_pivots(a):
    """Businger-Golub column order, as geqp3 makes it: step k swaps column k with the column of
    largest norm orthogonal to the columns already chosen."""
    residual = a.copy()
    perm = np.arange(a.shape[1], dtype=np.int32)
    for k in range(min(a.shape)):
        norms = np.linalg.norm(residual[:, perm[k:]], axis=0)
        j = k + int(np.argmax(norms))
        perm[[k, j]] = perm[[j, k]]
        if norms[j - k] > 0:
            unit = residual[:, perm[k]] / norms[j - k]
            residual = residual - np.outer(unit, np.conj(unit) @ residual)
    return perm


def _qr_reference(x, *, pivoting, full_matrices, use_magma):
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    mode = "complete" if full_matrices else "reduced"
    if not pivoting:
        q, r = np.linalg.qr(wide, mode=mode)
        return [q.astype(x.dtype), r.astype(x.dtype)]
    n = x.shape[-1]
    if x.size == 0:
        perm = np.broadcast_to(np.arange(n, dtype=np.int32), (*x.shape[:-2], n)).copy()
    else:
        (perm,) = batched_reference(lambda a: (_column_pivots(a),), wide)
    q, r = np.linalg.qr(np.take_along_axis(wide, perm[..., None, :], axis=-1), mode=mode)
    return [q.astype(x.dtype), r.astype(x.dtype), perm]


def _thin_qr_jvp(q, r, dx):
    # for m >= n (and the square block of a wide matrix): dq = q (do - q^H dx r^-1) + dx r^-1,
    # dr = (q^H dx r^-1 - do) r, with do skew-Hermitian
    dx_rinv = triangular_solve(r, dx)  # dx r^{-1}
    qt_dx_rinv = matmul(H(q), dx_rinv)
    lower = tril(qt_dx_rinv, -1)
    skew = ew.sub(lower, H(lower))
    if is_complex(dx):  # the diagonal of q^H dq is imaginary for complex inputs
        aval = get_aval(qt_dx_rinv)
        imaginary = ew.sub(qt_dx_rinv, ew.convert_element_type(real(qt_dx_rinv), aval.dtype))
        skew = ew.add(skew, ew.mul(eye_like(aval.shape, aval.dtype), imaginary))
    dq = ew.add(matmul(q, ew.sub(skew, qt_dx_rinv)), dx_rinv)
    dr = matmul(ew.sub(qt_dx_rinv, skew), r)
    return dq, dr


def _columns(x, start, stop):
    shape = get_aval(x).shape
    return slice(x, (0,) * len(shape), (*shape[:-1], stop)) if start == 0 else slice(
        x, (0,) * (len(shape) - 1) + (start,), shape)


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
    (x,), (t,) = primals, tangents
    m, n = get_aval(x).shape[-2:]
    outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    if full_matrices and m > n:
        raise NotImplementedError("qr: the derivative of full_matrices=True is implemented for "
                                  "m <= n only; use full_matrices=False for tall matrices.")
    if isinstance(t, Zero):
        return outs, [Zero.from_primal_value(o) for o in outs]
    q, r = outs[0], outs[1]
    if pivoting:  # differentiate x[..., p] = q r
        x, t = (T(_permute_rows(T(v), outs[2])) for v in (x, t))
    if m < n:  # x = q [r1 r2]: r1 from the square block, r2 = q^H x2
        dq, dr1 = _thin_qr_jvp(q, _columns(r, 0, m), _columns(t, 0, m))
        dr2 = ew.add(matmul(H(dq), _columns(x, m, n)), matmul(H(q), _columns(t, m, n)))
        dr = concatenate([dr1, dr2], get_aval(dr1).ndim - 1)
    else:
        dq, dr = _thin_qr_jvp(q, r, t)
    tangents_out = [dq, dr]
    if pivoting:
        tangents_out.append(Zero.from_primal_value(outs[2]))
    return outs, tangents_out


qr_p = define_primitive(
    "qr",
    abstract_eval=_qr_abstract_eval,
    reference=_qr_reference,
    jvp=_qr_jvp,
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: qr_p),
    multiple_results=True,
)
