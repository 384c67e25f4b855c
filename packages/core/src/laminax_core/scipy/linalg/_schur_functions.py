"""What the Schur decomposition `a = Z T Z^H` gives: `schur`, the conversion of a real Schur
form to a complex one (`rsf2csf`), matrix functions through the triangular factor (`sqrtm`,
`funm`) and the Sylvester equation (`solve_sylvester`, Bartels-Stewart).

The triangular recurrences (the square root, Parlett's recurrence for `funm`, the triangular
Sylvester equation) fill the unknown triangle one wavefront at a time: every entry of a
wavefront depends only on earlier ones, and the sum it needs is a full matrix product of the
partly filled factor (the terms of unfilled entries are zero), so each wavefront costs one
masked matmul in a `fori_loop` instead of a scalar loop per entry.
"""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core.lax import linalg as lax_linalg
from laminax_core.numpy._vectorize import vectorize
from laminax_core.scipy.linalg._decompositions import _inexact

__all__ = ["funm", "rsf2csf", "schur", "solve_sylvester", "sqrtm"]


def _mm(x, y):
    return jnp.matmul(x, y, precision=lax.Precision.HIGHEST)


def _adjoint(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _complex(x):
    return x.astype(dtypes.result_type(x, np.complex64))


def schur(a, output: str = "real"):
    """The Schur decomposition `a = Z T Z^H`: `(T, Z)`, `T` quasi upper triangular (2x2
    blocks for complex eigenvalue pairs) for `output="real"` on real input, upper triangular
    for `output="complex"`."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    a = _inexact("schur", a)
    if output == "complex":
        a = _complex(a)
    t, z = lax_linalg.schur(a)
    return t, z


# ----- rsf2csf ------------------------------------------------------------------------------


def _rsf2csf_2d(t, z):
    n = t.shape[0]
    if n == 1:
        return t, z
    eps = np.finfo(t.dtype).eps
    index = jnp.arange(n)

    def rotate(m, t, z):
        # the rotation that makes the 2x2 block at (m - 1, m) upper triangular, built from
        # the block's eigenvalue with positive imaginary part, shifted by t[m, m]
        block = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
        half_trace = (block[0, 0] + block[1, 1]) / 2
        gap = (block[0, 0] - block[1, 1]) / 2
        root = jnp.sqrt(gap * gap + block[0, 1] * block[1, 0])
        root = jnp.where(root.imag < 0, -root, root)  # a signed zero must not flip it
        mu = half_trace + root - block[1, 1]
        sub = block[1, 0]
        radius = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(sub) ** 2).astype(t.dtype)
        c, s = mu / radius, sub / radius
        g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
        rows = lax.dynamic_slice_in_dim(t, m - 1, 2, 0)
        turned = _mm(g, rows)
        rows = jnp.where(index >= m - 1, turned, rows)
        t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, 0)
        cols = lax.dynamic_slice_in_dim(t, m - 1, 2, 1)
        turned = _mm(cols, _adjoint(g))
        cols = jnp.where(index[:, None] <= m, turned, cols)
        t = lax.dynamic_update_slice_in_dim(t, cols, m - 1, 1)
        zcols = _mm(lax.dynamic_slice_in_dim(z, m - 1, 2, 1), _adjoint(g))
        return t, lax.dynamic_update_slice_in_dim(z, zcols, m - 1, 1)

    def step(i, carry):
        t, z = carry
        m = n - i
        coupled = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = lax.cond(coupled, rotate, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0), z

    return lax.fori_loop(1, n, step, (t, z))


def rsf2csf(T, Z, check_finite: bool = True):  # noqa: N803 (SciPy's names)
    """The complex Schur form `(T, Z)` of a real one: each 2x2 block of `T` (a complex
    eigenvalue pair) is made upper triangular by a unitary rotation, which `Z` absorbs."""
    del check_finite
    t, z = jnp.asarray(T), jnp.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    dtype = dtypes.result_type(t, z, np.complex64)
    return vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(
        t.astype(dtype), z.astype(dtype))


# ----- triangular recurrences ---------------------------------------------------------------


def _by_superdiagonal(n, fill, init):
    """Fills superdiagonals 1 .. n - 1 of `init` in order: `fill(p, u)` gives the values of
    superdiagonal `p` (elsewhere ignored) from `u`, whose later superdiagonals are zero."""
    rows, cols = np.arange(n)[:, None], np.arange(n)[None, :]

    def step(p, u):
        return jnp.where(cols - rows == p, fill(u), u)

    return lax.fori_loop(1, n, step, init) if n > 1 else init


def _sqrtm_triangular(t):
    n = t.shape[0]
    root = jnp.sqrt(jnp.diag(t))
    sums = root[:, None] + root[None, :]

    def fill(u):
        # u_ij (u_ii + u_jj) = t_ij - sum_{i<k<j} u_ik u_kj; 0 where both sides vanish
        residual = t - _mm(u, u)
        return jnp.where(residual == 0, 0, residual / sums)

    return _by_superdiagonal(n, fill, jnp.diag(root))


def sqrtm(A, blocksize: int = 1):  # noqa: N803 (SciPy's name)
    """The principal square root of a square matrix (one, not a batch), complex: `Z sqrt(T) Z^H` from the
    complex Schur form, the triangular root by the Björck-Hammarling recurrence."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    a = _inexact("sqrtm", A)
    if a.ndim < 2:
        raise TypeError(f"Input 0 to schur must have rank at least 2, but got shape={a.shape}")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:  # as in JAX: one matrix, no batch
        raise ValueError(f"sqrtm: expected a square matrix, got shape {a.shape}.")
    t, z = schur(a, output="complex")
    root = _sqrtm_triangular(t)
    return _mm(_mm(z, root), _adjoint(z))


def _parlett(t, f_diag):
    """`f(T)` for upper triangular `T` from `f` on its diagonal (Parlett's recurrence), and
    the smallest gap between diagonal entries it divided by."""
    n = t.shape[0]
    d = jnp.diag(t)
    gaps = d[None, :] - d[:, None]

    def fill(f):
        # f_ij (t_jj - t_ii) = t_ij (f_jj - f_ii) + sum_{i<k<j} (t_ik f_kj - f_ik t_kj);
        # a zero gap leaves the right-hand side undivided, as JAX does (exact when it is 0)
        numerator = _mm(t, f) - _mm(f, t)
        return jnp.where(gaps != 0, numerator / jnp.where(gaps != 0, gaps, 1), numerator)

    f = _by_superdiagonal(n, fill, jnp.diag(f_diag))
    upper = np.triu(np.ones((n, n), bool), 1)
    smallest = jnp.min(jnp.where(upper, jnp.abs(gaps), jnp.inf)) if n > 1 else jnp.inf
    return f, jnp.minimum(jnp.abs(d[0]), smallest)  # JAX's bound starts from |t_00|


def funm(A, func, disp: bool = True):  # noqa: N803 (SciPy's name)
    """`func` applied to a square matrix through its complex Schur form (Parlett's
    recurrence; accurate when the eigenvalues are well separated). `func` maps an array of
    eigenvalues elementwise. With `disp=False`, also an estimate of the relative error."""
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = rsf2csf(*schur(_inexact("funm", a)))
    f_diag = jnp.asarray(func(jnp.diag(t))).astype(t.dtype)
    f, smallest = _parlett(t, f_diag)
    f = _mm(_mm(z, f), _adjoint(z))
    if disp:
        return f
    tol = np.finfo(np.finfo(t.dtype).dtype).eps
    smallest = jnp.where(smallest == 0, tol, smallest)
    upper_norm = jnp.max(jnp.sum(jnp.abs(jnp.triu(t, 1)), axis=0))
    err = jnp.minimum(1, jnp.maximum(tol, tol / smallest * upper_norm))
    return f, jnp.where(jnp.any(jnp.isinf(f)), np.inf, err)


# ----- solve_sylvester ----------------------------------------------------------------------


def _sylvester_triangular(r, s, f):
    """`Y` with `R Y + Y S = F`, `R` (m, m) and `S` (n, n) upper triangular: entry (i, j)
    needs the entries below it and left of it, so wavefront `q = (m - 1 - i) + j` is filled
    after the ones before it."""
    m, n = f.shape
    level = (m - 1 - np.arange(m))[:, None] + np.arange(n)[None, :]
    sums = jnp.diag(r)[:, None] + jnp.diag(s)[None, :]

    def step(q, y):
        value = (f - _mm(r, y) - _mm(y, s)) / sums
        return jnp.where(level == q, value, y)

    return lax.fori_loop(0, m + n - 1, step, jnp.zeros_like(f))


def _solve_sylvester_2d(a, b, c, *, method, tol):
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(b, output="complex")
        y = _sylvester_triangular(r, s, _mm(_mm(_adjoint(u), c.astype(r.dtype)), v))
        x = _mm(_mm(u, y), _adjoint(v))
    elif method == "eigen":
        wa, ua = jnp.linalg.eig(a)
        wb, ub = jnp.linalg.eig(b)
        y = jnp.linalg.solve(ua, _mm(c.astype(wa.dtype), ub)) / (wa[:, None] + wb[None, :])
        x = _mm(_mm(ua, y), jnp.linalg.inv(ub))
    else:
        raise ValueError(f"Unrecognized method {method}. The two valid methods are either "
                         '"schur" or "eigen".')
    if not dtypes.issubdtype(c.dtype, np.complexfloating):
        x = x.real
    sums = jnp.linalg.eigvals(a)[:, None] + jnp.linalg.eigvals(b)[None, :]
    return jnp.where(jnp.any(jnp.abs(sums) < tol), jnp.nan, x).astype(x.dtype)


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):  # noqa: N803
    """`X` with `A X + X B = C` (batched over leading dimensions). `method="schur"`
    (Bartels-Stewart through complex Schur forms, robust) or `"eigen"` (through
    eigendecompositions: faster, needs diagonalizable `A` and `B`). NaNs where an eigenvalue
    of `A` plus one of `B` is within `tol` of zero (no unique solution)."""
    a, b, c = _inexact("solve_sylvester", A, B, C)
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\n"
                         f"B: {b.shape}\nC: {c.shape}")
    solve = lambda a, b, c: _solve_sylvester_2d(a, b, c, method=method, tol=tol)  # noqa: E731
    return vectorize(solve, signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
