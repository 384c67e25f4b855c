"""eig: eigenvalues and (left and right) eigenvectors of a general square matrix, complex
always, as LAPACK's geev returns them (each eigenvector of unit 2-norm, its largest component
real); and the implementation / algorithm enums of JAX's `lax.linalg`.

The jvp is first-order perturbation theory for distinct eigenvalues; eigenvector derivatives
differentiate through geev's normalisation and, as in JAX, need `enable_eigvec_derivs=True`.
"""

from __future__ import annotations

import enum

import numpy as np

from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.jvp import Zero, instantiate_zeros
from laminax_core._primitive import NOT_LINEAR, define_primitive
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._math import complex as make_complex
from laminax_core.lax._math import conj, imag, real
from laminax_core.lax._reductions import argmax, reduce_sum
from laminax_core.lax._structural import broadcast_in_dim, broadcasted_iota, expand_dims
from laminax_core.lax.linalg._lu_qr import _permute_rows, lu_p
from laminax_core.lax.linalg._matrix import (
    H,
    T,
    as_dtype,
    batch_leading,
    batched_reference,
    check_matrix,
    const,
    diagonal,
    eye_like,
    matmul,
)
from laminax_core.lax.linalg._triangular import triangular_solve

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "eig"]


class EigImplementation(enum.Enum):
    """Which library computes `eig` (laminax runs LAPACK on CPU)."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Which algorithm computes `eigh` (LAPACK's syevd / heevd on CPU)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which algorithm computes `svd`: on CPU, DEFAULT and DIVIDE_AND_CONQUER call LAPACK's
    gesdd and QR its gesvd; JACOBI and POLAR are not available."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation=None, use_magma=None):
    """Eigenvalues `w` and eigenvectors of a general square matrix `x` (..., n, n).

    Args:
      x: a float or complex matrix (or batch of them).
      compute_left_eigenvectors: also return `vl` (`vl[:, j]^H x = w[j] vl[:, j]^H`).
      compute_right_eigenvectors: also return `vr` (`x vr[:, j] = w[j] vr[:, j]`).
      enable_eigvec_derivs: allow derivatives of the eigenvectors (valid only for distinct
        eigenvalues and a unique largest component per eigenvector).
      implementation: an `EigImplementation`; only LAPACK runs on CPU.
      use_magma: accepted for compatibility (GPU only in JAX).

    Returns:
      `[w]`, then `vl` and `vr` if requested: complex arrays.

    Example:
      >>> w, vr = eig(np.array([[2.0, 0.0], [0.0, 3.0]], np.float32),
      ...             compute_left_eigenvectors=False)
      >>> w
      array([2.+0.j, 3.+0.j], dtype=complex64)
    """
    del use_magma
    return list(eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                           compute_right_eigenvectors=bool(compute_right_eigenvectors),
                           enable_eigvec_derivs=bool(enable_eigvec_derivs),
                           implementation=implementation))


def _eig_abstract_eval(x, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    check_matrix("eig", x, square=True)
    dtype = _complex_dtype(x.dtype)
    count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    return [ShapedArray(x.shape[:-1], dtype)] + [ShapedArray(x.shape, dtype)] * count


def _geev_normalize(v):
    """Columns of unit 2-norm whose largest-magnitude component is real and positive."""
    norms = np.linalg.norm(v, axis=0)
    v = v / np.where(norms == 0, 1, norms)
    largest = v[np.argmax(np.abs(v), axis=0), np.arange(v.shape[1])]
    phase = np.where(largest == 0, 1, np.conj(largest) / np.maximum(np.abs(largest), 1e-300))
    return v * phase


def _eig_one(a, left, right):
    w, vr = np.linalg.eig(a)
    outs = [w]
    if left:  # rows of vr^{-1} are the left eigenvectors (conjugated)
        outs.append(_geev_normalize(np.conj(np.linalg.inv(vr)).T))
    if right:
        outs.append(_geev_normalize(vr))
    return tuple(outs)


def _eig_reference(x, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    dtype = _complex_dtype(x.dtype)
    count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    if x.size == 0:
        return [np.zeros(x.shape[:-1], dtype)] + [np.zeros(x.shape, dtype)] * count
    outs = batched_reference(
        lambda a: _eig_one(a, compute_left_eigenvectors, compute_right_eigenvectors),
        x.astype(np.complex128))
    return [o.astype(dtype) for o in outs]


def _solve(a, b):
    """`a^{-1} b` for square `a` (LU with partial pivoting)."""
    lu, _, perm = lu_p.bind(a)
    y = triangular_solve(lu, _permute_rows(b, perm), left_side=True, lower=True,
                         unit_diagonal=True)
    return triangular_solve(lu, y, left_side=True, lower=False)


def _eigvec_jvp(w, v, da):
    # dv_j = u_j + c_j v_j; c_j keeps geev's normalisation (unit norm, real largest component)
    shape = get_aval(v).shape
    nd = len(shape)
    eye = eye_like(shape, get_aval(v).dtype)
    w_row = broadcast_in_dim(w, shape, (*range(nd - 2), nd - 1))  # w_j at (i, j)
    w_col = broadcast_in_dim(w, shape, (*range(nd - 2), nd - 2))  # w_i at (i, j)
    f_mat = ew.sub(ew.div(const(1, eye), ew.add(eye, ew.sub(w_row, w_col))), eye)
    p_mat = matmul(_solve(v, da), v)
    u = matmul(v, ew.mul(f_mat, p_mat))
    k = argmax(ew.abs(v), nd - 2, np.int32)
    rows = broadcasted_iota(np.int32, shape, nd - 2)
    mask = as_dtype(ew.eq(rows, expand_dims(k, (nd - 2,))), get_aval(v).dtype)
    c_re = ew.neg(real(reduce_sum(ew.mul(conj(v), u), (nd - 2,))))
    c_im = ew.div(ew.neg(imag(reduce_sum(ew.mul(mask, u), (nd - 2,)))),
                  real(reduce_sum(ew.mul(mask, v), (nd - 2,))))
    c = expand_dims(make_complex(c_re, c_im), (nd - 2,))
    return diagonal(p_mat), ew.add(u, ew.mul(v, c))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):
    (x,), (t,) = primals, tangents
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "eig: derivatives of eigenvectors are valid only for distinct eigenvalues and a "
            "unique largest component per eigenvector, which laminax cannot check; pass "
            "enable_eigvec_derivs=True to opt in, or differentiate the eigenvalues alone "
            "(compute_left_eigenvectors=False, compute_right_eigenvectors=False).")
    params = dict(compute_left_eigenvectors=compute_left_eigenvectors,
                  compute_right_eigenvectors=compute_right_eigenvectors,
                  enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation)
    outs = eig_p.bind(x, **params)
    if isinstance(t, Zero):
        return outs, [Zero.from_primal_value(o) for o in outs]
    full = eig_p.bind(x, **{**params, "compute_right_eigenvectors": True})
    w, vr = full[0], full[-1]
    da = as_dtype(instantiate_zeros(t), get_aval(vr).dtype)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        return outs, [reduce_sum(ew.mul(_solve(vr, da), T(vr)), (get_aval(vr).ndim - 1,))]
    dw, dvr = _eigvec_jvp(w, vr, da)
    tangents_out = [dw]
    if compute_left_eigenvectors:
        tangents_out.append(_eigvec_jvp(conj(w), full[1], H(da))[1])
    if compute_right_eigenvectors:
        tangents_out.append(dvr)
    return outs, tangents_out


eig_p = define_primitive(
    "eig",
    abstract_eval=_eig_abstract_eval,
    reference=_eig_reference,
    jvp=_eig_jvp,
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: eig_p),
    multiple_results=True,
)
