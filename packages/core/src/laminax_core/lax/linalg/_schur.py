"""schur and tridiagonal: two reductions LAPACK computes on CPU (gees, sytrd / hetrd) that, as
in JAX, have no derivative rule; both batch over leading dimensions.

The NumPy references build a valid decomposition, not LAPACK's particular one: the Schur
reference orthonormalizes eigenvectors (exact for diagonalizable matrices), the tridiagonal
one applies LAPACK's reflectors (larfg) column by column.
"""

from __future__ import annotations

import numpy as np

from laminax_core._avals import ShapedArray
from laminax_core._primitive import NOT_LINEAR, define_primitive
from laminax_core.lax.linalg._hessenberg import _hessenberg_one
from laminax_core.lax.linalg._matrix import batch_leading, batched_reference, check_matrix

__all__ = ["schur", "tridiagonal"]


def _no_derivative(name):
    def rule(primals, tangents, **params):
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")

    return rule


# ----- schur --------------------------------------------------------------------------------


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    """The Schur decomposition `x = Q U Q^H` of a square matrix (or batch).

    Args:
      x: (..., n, n) float or complex.
      compute_schur_vectors: also return the unitary `Q`.
      sort_eig_vals, select_callable: kept for JAX's signature; as in JAX on CPU, sorting
        is refused when the program is compiled.

    Returns:
      `[U]` or `[U, Q]`: `U` upper triangular (complex input) or quasi upper triangular
      with 2x2 blocks for complex-conjugate eigenvalue pairs (real input).

    Example:
      >>> u, q = schur(np.diag(np.array([1.0, 2.0], np.float32)))
      >>> u
      array([[1., 0.],
             [0., 2.]], dtype=float32)
    """
    return schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors),
                        sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable)


def _schur_abstract_eval(x, *, compute_schur_vectors, **_):
    check_matrix("schur", x, square=True)
    return [ShapedArray(x.shape, x.dtype)] * (2 if compute_schur_vectors else 1)


def _real_basis(w, v):
    """Real columns spanning the same invariant subspaces as `v`: an eigenvector for a real
    eigenvalue, its real and imaginary parts for a complex-conjugate pair (taken once)."""
    columns, blocks, skip = [], [], False
    for j in range(len(w)):
        if skip:
            skip = False
            continue
        if abs(w[j].imag) <= 1e-12 * max(1.0, abs(w[j])):
            columns.append(v[:, j].real)
            blocks.append(1)
        else:
            columns += [v[:, j].real, v[:, j].imag]
            blocks.append(2)
            skip = True  # NumPy lists a conjugate pair next to each other
    return np.stack(columns, axis=1), blocks


def _schur_one(a, vectors):
    w, v = np.linalg.eig(a)
    if np.iscomplexobj(a):
        q, _ = np.linalg.qr(v)
        u = np.triu(q.conj().T @ a @ q)
    else:
        basis, blocks = _real_basis(w, v)
        q, _ = np.linalg.qr(basis)
        u = q.T @ a @ q
        keep = np.zeros(a.shape, bool)  # the quasi-triangular pattern of the blocks
        start = 0
        for size in blocks:
            keep[start:start + size, start:] = True
            start += size
        u = np.where(keep, u, 0)
    return (u, q) if vectors else (u,)


def _schur_reference(x, *, compute_schur_vectors, **_):
    if x.size == 0:
        return [x.copy()] * (2 if compute_schur_vectors else 1)
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    outs = batched_reference(lambda a: _schur_one(a, compute_schur_vectors), wide)
    return [o.astype(x.dtype) for o in outs]


schur_p = define_primitive(
    "schur",
    abstract_eval=_schur_abstract_eval,
    reference=_schur_reference,
    jvp=_no_derivative("schur"),
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: schur_p),
    multiple_results=True,
)


# ----- tridiagonal --------------------------------------------------------------------------


def tridiagonal(a, *, lower: bool = True):
    """Reduces a Hermitian matrix (or batch) to real symmetric tridiagonal form, in LAPACK's
    sytrd / hetrd storage.

    Args:
      a: (..., n, n) float or complex, n >= 1; only the triangle `lower` names is read.
      lower: use (and overwrite) the lower triangle; else the upper one.

    Returns:
      `(a, d, e, taus)`: `a` with the tridiagonal matrix on its diagonal and first sub-
      (super-) diagonal and the Householder vectors beyond it, the other triangle as given;
      the real diagonal `d` (..., n), the real off-diagonal `e` (..., n - 1), and the
      reflectors' scalars `taus` (..., n - 1).

    Example:
      >>> _, d, e, _ = tridiagonal(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32))
      >>> d, e
      (array([2., 3.], dtype=float32), array([1.], dtype=float32))
    """
    return tuple(tridiagonal_p.bind(a, lower=bool(lower)))


def _tridiagonal_abstract_eval(a, *, lower):
    check_matrix("tridiagonal", a, square=True)
    n = a.shape[-1]
    if n == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape "
                         f"{a.shape}.")
    real = np.empty((), a.dtype).real.dtype
    batch = a.shape[:-2]
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*batch, n), real),
            ShapedArray((*batch, n - 1), real), ShapedArray((*batch, n - 1), a.dtype)]


def _tridiagonal_one(a, lower):
    n = a.shape[0]
    if not lower:  # the upper reduction is the lower one of the matrix read backwards
        flipped, d, e, taus = _tridiagonal_one(a[::-1, ::-1], True)
        return flipped[::-1, ::-1], d[::-1], e[::-1], taus[::-1]
    low = np.tril(a, -1)
    hermitian = low + low.conj().T + np.diag(a.diagonal().real)
    h, taus = _hessenberg_one(hermitian)
    out = np.where(np.tril(np.ones((n, n), bool)), h, a)
    d, e = h.diagonal().real, h.diagonal(-1).real
    out[np.diag_indices(n)] = d
    return out, d, e, taus


def _tridiagonal_reference(a, *, lower):
    wide = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    real = np.empty((), a.dtype).real.dtype
    if a.size == 0:  # an empty batch
        avals = _tridiagonal_abstract_eval(ShapedArray(a.shape, a.dtype), lower=lower)
        return [np.zeros(v.shape, v.dtype) for v in avals]
    outs = batched_reference(lambda m: _tridiagonal_one(m, lower), wide)
    return [outs[0].astype(a.dtype), outs[1].astype(real), outs[2].astype(real),
            outs[3].astype(a.dtype)]


tridiagonal_p = define_primitive(
    "tridiagonal",
    abstract_eval=_tridiagonal_abstract_eval,
    reference=_tridiagonal_reference,
    jvp=_no_derivative("tridiagonal"),
    transpose=NOT_LINEAR,
    batch=batch_leading(lambda: tridiagonal_p),
    multiple_results=True,
)
