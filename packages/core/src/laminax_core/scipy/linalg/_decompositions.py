"""`scipy.linalg`'s factorizations and solvers, over `lax.linalg`'s primitives.

SciPy's `overwrite_*`, `check_finite`, `lwork` and `lapack_driver` arguments are accepted and
ignored (arrays are immutable and nothing is checked for finiteness), as in JAX.
"""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import get_aval
from laminax_core.lax import linalg as lax_linalg

__all__ = [
    "cho_factor", "cho_solve", "cholesky", "det", "eigh", "hessenberg", "inv", "lu",
    "lu_factor", "lu_solve", "polar", "qr", "qr_multiply", "solve", "solve_triangular", "svd",
]  # fmt: skip


def _inexact(name: str, *arrays):
    del name
    arrays = [jnp.asarray(a) for a in arrays]  # SciPy's functions take nested lists too
    dtype = dtypes.result_type(*arrays)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.default_float_dtype()
    out = [lax.convert_element_type(a, dtype) for a in arrays]
    return out if len(out) > 1 else out[0]


def _adjoint(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor of a Hermitian positive-definite matrix: upper `U` with
    `a = U^H U` (default, from `a`'s upper triangle), or lower `L` with `a = L L^H` (from the
    lower triangle). NaN where `a` is not positive definite."""
    del overwrite_a, check_finite
    a = _inexact("cholesky", a)
    # only the triangle named by `lower` is read (so gradients land in that triangle)
    factor = lax_linalg.cholesky(a if lower else _adjoint(a), symmetrize_input=False)
    return factor if lower else _adjoint(factor)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """`(c, lower)` for `cho_solve`: the Cholesky factor and which triangle holds it."""
    return cholesky(a, lower, overwrite_a, check_finite), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solves `a x = b` given `cho_factor(a)`'s `(c, lower)`."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c, b = _inexact("cho_solve", c, b)
    vector = get_aval(b).ndim == get_aval(c).ndim - 1
    if vector:
        b = b[..., None]
    # a = L L^H: solve L y = b, then L^H x = y (for the upper factor U = L^H likewise)
    y = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower,
                                    transpose_a=not lower, conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower,
                                    transpose_a=lower, conjugate_a=lower)
    return x[..., 0] if vector else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The LU decomposition `a = P L U`: `(p, l, u)`, or `(p @ l, u)` with `permute_l`.

    `p` is a permutation matrix, `l` unit lower triangular (m x k), `u` upper (k x n),
    `k = min(m, n)`.
    """
    del overwrite_a, check_finite
    a = _inexact("lu", a)
    packed, _, perm = lax_linalg.lu(a)
    m, n = get_aval(a).shape[-2:]
    k = min(m, n)
    l_factor = jnp.tril(packed[..., :, :k], -1) + jnp.eye(m, k, dtype=packed.dtype)
    u_factor = jnp.triu(packed[..., :k, :])
    # P's column j is the unit vector of the row that went to position j
    p = jnp.swapaxes(jnp.eye(m, dtype=packed.dtype)[perm], -1, -2)
    if permute_l:
        return jnp.matmul(p, l_factor, precision=lax.Precision.HIGHEST), u_factor
    return p, l_factor, u_factor


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """`(lu, piv)`: L and U packed in one matrix, and LAPACK-style pivot indices."""
    del overwrite_a, check_finite
    a = _inexact("lu_factor", a)
    packed, pivots, _ = lax_linalg.lu(a)
    return packed, pivots


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """Solves `a x = b` (`trans=0`), `a^T x = b` (1) or `a^H x = b` (2) from `lu_factor`."""
    del overwrite_b, check_finite
    packed, pivots = lu_and_piv
    packed, b = _inexact("lu_solve", packed, b)
    m = get_aval(packed).shape[-1]
    perm = lax_linalg.lu_pivots_to_permutation(jnp.asarray(pivots, np.int32), m)
    vector = get_aval(b).ndim == 1
    if vector:
        b = b[:, None]
    if trans == 0:
        x = jnp.take(b, perm, axis=-2)
        x = lax_linalg.triangular_solve(packed, x, left_side=True, lower=True,
                                        unit_diagonal=True)
        return_x = lax_linalg.triangular_solve(packed, x, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        x = lax_linalg.triangular_solve(packed, b, left_side=True, lower=False,
                                        transpose_a=True, conjugate_a=conj)
        x = lax_linalg.triangular_solve(packed, x, left_side=True, lower=True,
                                        transpose_a=True, conjugate_a=conj, unit_diagonal=True)
        inverse = jnp.argsort(perm)
        return_x = jnp.take(x, inverse, axis=-2)
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return return_x[:, 0] if vector else return_x


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """The QR decomposition; `mode` is "full", "economic", "r" (R only, as a 1-tuple) or
    "raw" (not supported, as in JAX); `pivoting` adds the column permutation."""
    del overwrite_a, lwork, check_finite
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decompositon mode '{mode}'")
    a = _inexact("qr", a)
    out = lax_linalg.qr(a, pivoting=pivoting, full_matrices=mode != "economic")
    if pivoting:
        q, r, p = out
        return (r, p) if mode == "r" else (q, r, p)
    q, r = out
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """The singular value decomposition `a = U diag(s) V^H`: `(U, s, Vh)`, or `s` alone."""
    del overwrite_a, check_finite, lapack_driver
    a = _inexact("svd", a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,  # noqa: A002
         check_finite: bool = True):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, read from its `lower`
    (default) or upper triangle. The generalized problem (`b`) and `eigvals` subsets are not
    supported, as in JAX."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    a = _inexact("eigh", a)
    vectors, values = lax_linalg.eigh(a, lower=lower)
    return values if eigvals_only else (values, vectors)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """The determinant."""
    del overwrite_a, check_finite
    return jnp.linalg.det(a)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """The inverse of a square matrix."""
    del overwrite_a, check_finite
    return jnp.linalg.inv(a)


_ASSUME_A = ("gen", "sym", "her", "pos")


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """Solves `a x = b`; `assume_a="pos"` uses a Cholesky factorization (of the `lower` or
    upper triangle), the other kinds an LU factorization."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a not in _ASSUME_A:
        raise ValueError(f"Expected assume_a to be one of {_ASSUME_A}; got {assume_a!r}")
    if assume_a != "pos":
        return jnp.linalg.solve(a, b)
    a, b = _inexact("solve", a, b)
    b_vector = get_aval(b).ndim == 1
    x = cho_solve(cho_factor(a, lower=lower), b[:, None] if b_vector else b)
    return x[:, 0] if b_vector else x


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """Solves `op(a) x = b` for triangular `a`; `trans` is 0/"N", 1/"T" or 2/"C" (op is
    identity, transpose, conjugate transpose)."""
    del overwrite_b, debug, check_finite
    modes = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
             2: (True, True), "C": (True, True)}
    if trans not in modes:
        raise ValueError(f"Invalid 'trans' value {trans!r}")
    transpose_a, conjugate_a = modes[trans]
    a, b = _inexact("solve_triangular", a, b)
    vector = get_aval(b).ndim == get_aval(a).ndim - 1
    if vector:
        b = b[..., None]
    out = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a,
                                      unit_diagonal=unit_diagonal)
    return out[..., 0] if vector else out


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True):
    """The upper Hessenberg form `H` of a square matrix, `a = Q H Q^H`; `(H, Q)` with
    `calc_q`."""
    del overwrite_a, check_finite
    a = _inexact("hessenberg", a)
    n = get_aval(a).shape[-1]
    packed, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    # the reflectors live below the first subdiagonal; Q = diag(1, householder_product)
    vectors = jnp.tril(packed[..., 1:, :-1], -1) if n > 1 else packed[..., :0, :0]
    if n <= 1:
        return h, jnp.ones_like(a)
    q_inner = lax_linalg.householder_product(vectors + jnp.eye(n - 1, dtype=a.dtype), taus)
    q = jnp.zeros_like(a).at[..., 0, 0].set(1).at[..., 1:, 1:].set(q_inner)
    return h, q


def polar(a, side: str = "right", *, method: str = "qdwh", eps=None, max_iterations=None):
    """The polar decomposition `a = U P` (`side="right"`) or `a = P U` ("left"), with `U`
    unitary (isometric) and `P` Hermitian positive semi-definite.

    `method="qdwh"` iterates (`lax.linalg.qdwh`, to `eps`; `max_iterations` is ignored, as
    in JAX); `"svd"` builds both factors from an SVD.
    """
    del max_iterations
    if side not in ("right", "left"):
        raise ValueError(f"side={side!r} was invalid.")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    a = _inexact("polar", a)
    m, n = get_aval(a).shape[-2:]
    if method == "qdwh":
        if m < n if side == "right" else m >= n:
            raise NotImplementedError(
                "method='qdwh' only supports mxn matrices where m < n where side='right' and "
                f"m >= n side='left', got {(m, n)} with side={side!r}; use method='svd'.")

        def one(x):  # the left decomposition is the right one of the adjoint
            u, p, _, _ = lax_linalg.qdwh(x if side == "right" else _adjoint(x), eps=eps)
            return (u, p) if side == "right" else (_adjoint(u), _adjoint(p))

        signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
        return jnp.vectorize(one, signature=signature)(a)
    u_svd, s, vh = lax_linalg.svd(a, full_matrices=False)
    unitary = jnp.matmul(u_svd, vh, precision=lax.Precision.HIGHEST)
    s = s.astype(a.dtype)
    if side == "right":
        p = jnp.matmul(_adjoint(vh) * s[..., None, :], vh, precision=lax.Precision.HIGHEST)
    else:
        p = jnp.matmul(u_svd * s[..., None, :], _adjoint(u_svd),
                       precision=lax.Precision.HIGHEST)
    return unitary, p


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """The QR factorization of `a` (..., m, n) with its `Q` (economic, k = min(m, n)
    columns) applied to `c`: `(Q @ c, R)` for `mode="left"` (`c` (..., k, p)), `(c @ Q, R)`
    for `mode="right"` (`c` (..., p, m)); `conj(Q)` with `conjugate`; the column permutation
    third with `pivoting`. A vector `c` is a column (left) or a row (right), and stays 1-D."""
    del overwrite_a, overwrite_c
    a, c = _inexact("qr_multiply", a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    vector = get_aval(c).ndim == 1
    if vector:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = get_aval(a).shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} "
                         f"rows (expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} columns "
                         f"(expected {m}).")
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    q, r, *perm = lax_linalg.qr(a, pivoting=pivoting, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    product = jnp.matmul(q, c, precision=lax.Precision.HIGHEST) if mode == "left" else \
        jnp.matmul(c, q, precision=lax.Precision.HIGHEST)
    if vector:
        product = product.ravel()
    return (product, r, *perm)
