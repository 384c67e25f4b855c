"""eigh (Hermitian eigendecomposition, ascending eigenvalues) and svd.

Eigenvectors and singular vectors are unique only up to sign (phase); derivatives assume
distinct eigenvalues / singular values, as JAX's do."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.jvp import Zero
from laminax_core._primitive import NOT_LINEAR, define_primitive
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._structural import broadcast_in_dim, expand_dims
from laminax_core.lax.linalg._matrix import (
    H,
    T,
    as_dtype,
    batch_leading,
    check_matrix,
    const,
    diagonal,
    eye_like,
    matmul,
    real_dtype,
    real_part,
)

__all__ = ["eigh", "svd"]


# ----- eigh ---------------------------------------------------------------------------------


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):
    """Eigenvectors `v` and ascending eigenvalues `w` of a Hermitian `x` (`x v = v diag(w)`).

    Args:
      x: (..., n, n); only the `lower` (or upper) triangle is read unless symmetrized.
      symmetrize_input: use `(x + x^H) / 2`.
      sort_eigenvalues: eigenvalues ascending (always true of the reference).
      subset_by_index: `(lo, hi)` keeps eigenpairs lo..hi-1.
      implementation: accepted for compatibility; the backend chooses.

    Returns:
      `(v, w)`.

    Example:
      >>> v, w = eigh(np.array([[2.0, 1.0], [1.0, 2.0]], np.float32))
      >>> w
      array([1., 3.], dtype=float32)
    """
    check_matrix("eigh", get_aval(x), square=True)
    if symmetrize_input:
        x = ew.div(ew.add(x, H(x)), const(2, x))
    subset = None if subset_by_index is None else tuple(operator.index(i) for i in
                                                        subset_by_index)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=subset, algorithm=implementation)
    return v, w


def _subset_size(n, subset_by_index):
    if subset_by_index is None:
        return n
    lo, hi = subset_by_index
    if not 0 <= lo <= hi <= n:
        raise ValueError(f"eigh: subset_by_index {subset_by_index} must satisfy 0 <= lo <= hi "
                         f"<= {n}.")
    return hi - lo


def _eigh_abstract_eval(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    check_matrix("eigh", x, square=True)
    n = x.shape[-1]
    k = _subset_size(n, subset_by_index)
    batch = x.shape[:-2]
    return [ShapedArray((*batch, n, k), x.dtype), ShapedArray((*batch, k), real_dtype(x.dtype))]


def _eigh_reference(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    w, v = np.linalg.eigh(wide, UPLO="L" if lower else "U")
    if subset_by_index is not None:
        lo, hi = subset_by_index
        w, v = w[..., lo:hi], v[..., lo:hi]
    return [v.astype(x.dtype), w.astype(real_dtype(x.dtype))]


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    (x,), (t,) = primals, tangents
    params = dict(lower=lower, sort_eigenvalues=sort_eigenvalues,
                  subset_by_index=subset_by_index, algorithm=algorithm)
    v, w_real = eigh_p.bind(x, **params)
    if subset_by_index is not None:
        raise NotImplementedError("Derivatives of eigh are only implemented when "
                                  "subset_by_index is None.")
    if isinstance(t, Zero):
        return [v, w_real], [Zero.from_primal_value(v), Zero.from_primal_value(w_real)]
    dtype = get_aval(x).dtype
    w = as_dtype(w_real, dtype)
    shape = get_aval(v).shape
    eye = eye_like(shape, dtype)
    nd = len(shape)
    rows = broadcast_in_dim(w, shape, (*range(nd - 2), nd - 1))  # w_j at (i, j)
    cols = broadcast_in_dim(w, shape, (*range(nd - 2), nd - 2))  # w_i at (i, j)
    f_mat = ew.sub(ew.div(const(1, eye), ew.add(eye, ew.sub(rows, cols))), eye)  # 1/(w_j-w_i)
    vdag_t_v = matmul(matmul(H(v), t), v)
    dv = matmul(v, ew.mul(f_mat, vdag_t_v))
    dw = real_part(diagonal(vdag_t_v))
    return [v, w_real], [dv, dw]


eigh_p = define_primitive(
    "eigh",
    abstract_eval=_eigh_abstract_eval,
    reference=_eigh_reference,
    jvp=_eigh_jvp,
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: eigh_p),
    multiple_results=True,
)


# ----- svd ----------------------------------------------------------------------------------


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """Singular value decomposition `x = u @ diag(s) @ vt`, singular values descending.

    Returns:
      `(u, s, vt)`, or `s` alone if not `compute_uv`.

    Example:
      >>> svd(np.array([[3.0, 0.0], [0.0, -4.0]], np.float32), compute_uv=False)
      array([4., 3.], dtype=float32)
    """
    subset = None if subset_by_index is None else tuple(operator.index(i) for i in
                                                        subset_by_index)
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                      subset_by_index=subset, algorithm=algorithm)
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


def _svd_abstract_eval(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    check_matrix("svd", x)
    m, n = x.shape[-2:]
    k = min(m, n)
    batch = x.shape[:-2]
    r = _subset_size(k, subset_by_index) if subset_by_index is not None else k
    s = ShapedArray((*batch, r), real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    u_cols = m if full_matrices and subset_by_index is None else r
    vt_rows = n if full_matrices and subset_by_index is None else r
    return [s, ShapedArray((*batch, m, u_cols), x.dtype),
            ShapedArray((*batch, vt_rows, n), x.dtype)]


def _svd_reference(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    lo, hi = subset_by_index if subset_by_index is not None else (0, min(x.shape[-2:]))
    if not compute_uv:
        s = np.linalg.svd(wide, compute_uv=False)[..., lo:hi]
        return [s.astype(real_dtype(x.dtype))]
    full = full_matrices and subset_by_index is None
    u, s, vt = np.linalg.svd(wide, full_matrices=full)
    if subset_by_index is not None:
        u, s, vt = u[..., lo:hi], s[..., lo:hi], vt[..., lo:hi, :]
    return [s.astype(real_dtype(x.dtype)), u.astype(x.dtype), vt.astype(x.dtype)]


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (x,), (t,) = primals, tangents
    params = dict(full_matrices=full_matrices, compute_uv=compute_uv,
                  subset_by_index=subset_by_index, algorithm=algorithm)
    outs = svd_p.bind(x, **params)
    m, n = get_aval(x).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full "
                                  "matrices")
    if subset_by_index is not None:
        raise NotImplementedError("svd derivatives with subset_by_index are not implemented.")
    if isinstance(t, Zero):
        return outs, [Zero.from_primal_value(o) for o in outs]
    s, u, vt = svd_p.bind(x, full_matrices=False, compute_uv=True, subset_by_index=None,
                          algorithm=algorithm)
    ds_mat = matmul(matmul(H(u), t), H(vt))
    ds = real_part(diagonal(ds_mat))
    if not compute_uv:
        return outs, [ds]
    return outs, [ds, *_singular_vector_tangents(x, t, s, u, vt, ds_mat)]


def _singular_vector_tangents(x, t, s, u, vt, ds_mat):
    dtype = get_aval(x).dtype
    m, n = get_aval(x).shape[-2:]
    v = H(vt)
    shape = get_aval(ds_mat).shape  # (..., k, k)
    nd = len(shape)
    s_row = broadcast_in_dim(as_dtype(s, dtype), shape, (*range(nd - 2), nd - 1))  # s_j
    s_col = T(s_row)  # s_i
    eye = eye_like(shape, dtype)
    diffs = ew.mul(ew.add(s_row, s_col), ew.sub(s_row, s_col))  # s_j^2 - s_i^2
    f_mat = ew.sub(ew.div(const(1, eye), ew.add(diffs, eye)), eye)
    ds_s = ew.mul(s_row, ds_mat)  # dS diag(s)
    s_ds = ew.mul(s_col, ds_mat)  # diag(s) dS
    zero_s = ew.convert_element_type(ew.eq(s, 0.0), get_aval(s).dtype)
    s_inv = ew.sub(ew.div(1.0, ew.add(s, zero_s)), zero_s)
    s_inv_mat = ew.mul(eye, broadcast_in_dim(as_dtype(s_inv, dtype), shape,
                                             (*range(nd - 2), nd - 1)))
    du_dv_diag = ew.mul(ew.mul(const(0.5, ds_mat), ew.sub(ds_mat, H(ds_mat))), s_inv_mat)
    du = matmul(u, ew.add(ew.mul(f_mat, ew.add(ds_s, H(ds_s))), du_dv_diag))
    dv = matmul(v, ew.mul(f_mat, ew.add(s_ds, H(s_ds))))
    s_dim = expand_dims(as_dtype(s, dtype), (nd - 2,))
    if m > n:
        dav = matmul(t, v)
        du = ew.add(du, ew.div(ew.sub(dav, matmul(u, matmul(H(u), dav))), s_dim))
    if n > m:
        dahu = matmul(H(t), u)
        dv = ew.add(dv, ew.div(ew.sub(dahu, matmul(v, matmul(vt, dahu))), s_dim))
    return [du, H(dv)]


svd_p = define_primitive(
    "svd",
    abstract_eval=_svd_abstract_eval,
    reference=_svd_reference,
    jvp=_svd_jvp,
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: svd_p),
    multiple_results=True,
)
