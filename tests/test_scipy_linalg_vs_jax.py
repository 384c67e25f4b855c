"""`scipy.linalg` against real JAX 0.10.2 (values eagerly and under jit, errors, gradients)
and SciPy. Factors that are unique only up to signs or phases (QR, SVD, eigenvectors, Schur
vectors) are compared through what is unique: reconstructions, |entries|, projections."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
A = R.randn(4, 4).astype(np.float32)
RECT = R.randn(5, 3).astype(np.float32)
WIDE = R.randn(3, 5).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = R.randn(4, 2).astype(np.float32)
V = R.randn(4).astype(np.float32)
C = (R.randn(3, 3) + 1j * R.randn(3, 3)).astype(np.complex64)
BATCH = R.randn(2, 3, 3).astype(np.float32)
INPUTS = dict(A=A, RECT=RECT, WIDE=WIDE, SPD=SPD, B=B, V=V, C=C, BATCH=BATCH)

S = "jax.scipy.linalg"
EXPRS = [
    f"{S}.cholesky(SPD)", f"{S}.cholesky(SPD, lower=True)",
    f"{S}.cho_solve({S}.cho_factor(SPD), B)", f"{S}.cho_solve({S}.cho_factor(SPD, lower=True), V)",
    f"{S}.lu(A)", f"{S}.lu(A, permute_l=True)", f"{S}.lu(RECT)", f"{S}.lu(WIDE)",
    f"{S}.lu_factor(A)", f"{S}.lu_solve({S}.lu_factor(A), B)",
    f"{S}.lu_solve({S}.lu_factor(A), V, trans=1)", f"{S}.lu_solve({S}.lu_factor(C), C[:, 0], trans=2)",
    f"jnp.abs({S}.qr(RECT)[1])", f"jnp.abs({S}.qr(RECT, mode='economic')[0])",
    f"jnp.abs({S}.qr(RECT, mode='r')[0])",
    f"(lambda q, r: q @ r)(*{S}.qr(A))", f"{S}.qr(A, pivoting=True)[2]",
    f"{S}.svd(A, compute_uv=False)", f"(lambda u, s, vh: (u * s) @ vh)(*{S}.svd(RECT, full_matrices=False))",
    f"{S}.svd(RECT)[0].shape", f"{S}.eigh(SPD)[0]", f"{S}.eigh(SPD, eigvals_only=True)",
    f"(lambda w, v: v @ jnp.diag(w) @ v.T)(*{S}.eigh(SPD, lower=False))",
    f"{S}.det(A)", f"{S}.det(BATCH)", f"{S}.inv(A)", f"{S}.solve(A, B)", f"{S}.solve(SPD, V, assume_a='pos')",
    f"{S}.solve(SPD, B, assume_a='sym')",
    f"{S}.solve_triangular(jnp.triu(A) + 4 * jnp.eye(4), B)",
    f"{S}.solve_triangular(jnp.tril(A) + 4 * jnp.eye(4), V, lower=True, trans='T')",
    f"{S}.solve_triangular(jnp.tril(C) + 4 * jnp.eye(3), C, lower=True, trans=2, unit_diagonal=True)",
    f"{S}.hessenberg(A)", f"(lambda h, q: (jnp.abs(q), q @ h @ q.T))(*{S}.hessenberg(A, calc_q=True))",
    f"{S}.polar(A)", f"{S}.polar(A, side='left')", f"{S}.polar(RECT, method='svd')",
    f"{S}.expm(A)", f"{S}.expm(3 * A)", f"{S}.expm(BATCH)", f"{S}.expm(C)",
    f"{S}.expm(jnp.zeros((3, 3)))", f"{S}.expm(1e4 * A)",
    f"{S}.expm_frechet(A, B @ B[:, :1].T @ jnp.ones((1, 4)))",
    f"{S}.expm_frechet(2 * A, A.T, compute_expm=False)",
    f"{S}.block_diag(A, V, 2.0, RECT)", f"{S}.block_diag()", f"{S}.block_diag(jnp.ones((2, 2), jnp.int32), V)",
    f"{S}.toeplitz(V)", f"{S}.toeplitz(V, V[:3] * 2)", f"{S}.toeplitz(C[0])", f"{S}.toeplitz(BATCH[:, 0], BATCH[:, 1])",
    f"{S}.hankel(V)", f"{S}.hankel(V, V[::-1][:3])", f"{S}.circulant(V)", f"{S}.circulant(BATCH[:, 0])",
    f"{S}.companion(V)", f"{S}.companion(np.array([1, 2, 3]))",
    f"{S}.fiedler(V)", f"{S}.fiedler_companion(np.array([1.0, -6.0, 11.0, -6.0, 2.0]))",
    f"{S}.fiedler_companion(np.array([2.0, 3.0]))",
    f"{S}.leslie(V, V[:3])", f"{S}.hilbert(4)", f"{S}.invhilbert(4)", f"{S}.pascal(4)",
    f"{S}.pascal(5, 'lower')", f"{S}.invpascal(4, 'upper')", f"{S}.invpascal(4)",
    f"{S}.helmert(5)", f"{S}.helmert(4, full=True)", f"{S}.dft(4)", f"{S}.dft(3, 'sqrtn')",
    f"{S}.hadamard(4)", f"{S}.hadamard(8, np.float32)",
    # errors
    f"{S}.qr(A, mode='raw')", f"{S}.eigh(SPD, SPD)", f"{S}.solve(A, B, assume_a='banded')",
    f"{S}.solve_triangular(A, B, trans=3)", f"{S}.lu_solve({S}.lu_factor(A), B, trans=5)",
    f"{S}.expm(RECT)", f"{S}.expm_frechet(A, RECT)", f"{S}.expm_frechet(A, A, method='x')",
    f"{S}.polar(A, side='up')", f"{S}.companion(V[:1])", f"{S}.hadamard(6)",
    f"{S}.leslie(V, V)", f"{S}.pascal(3, 'diag')", f"{S}.dft(3, 'half')",
    f"{S}.cholesky([[1.0]])",
]


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("import jax.scipy.linalg\n" + JAX_SNIPPET, exprs=EXPRS, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(jax_outcomes, index, jit):
    expr = EXPRS[index]
    loose = "expm" in expr or "hilbert" in expr or "polar" in expr
    tol = 2e-3 if loose else 2e-4
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index][jit], rtol=tol, atol=tol)


def test_against_scipy_in_float64():
    import laminax.scipy.linalg as L  # noqa: N812
    from laminax import enable_x64

    a, e = R.randn(5, 5), R.randn(5, 5)
    with enable_x64(True):
        for scale in (0.01, 1.0, 7.0):
            np.testing.assert_allclose(L.expm(scale * a), sl.expm(scale * a), rtol=1e-11)
            got = L.expm_frechet(scale * a, e)
            want = sl.expm_frechet(scale * a, e)
            np.testing.assert_allclose(got[1], want[1], rtol=1e-9, atol=1e-12)
        p, l, u = L.lu(a)
        np.testing.assert_allclose(p @ l @ u, a, atol=1e-12)
        np.testing.assert_allclose(np.abs(l), np.abs(sl.lu(a)[1]), atol=1e-12)
        spd = a @ a.T + np.eye(5)
        np.testing.assert_allclose(L.cholesky(spd), sl.cholesky(spd), atol=1e-12)
        unitary, pos = L.polar(a)
        want_u, want_p = sl.polar(a)
        np.testing.assert_allclose(unitary, want_u, atol=1e-10)
        np.testing.assert_allclose(pos, want_p, atol=1e-10)
        for name in ("hilbert", "invhilbert", "pascal", "invpascal", "helmert", "dft"):
            np.testing.assert_allclose(getattr(L, name)(5), getattr(sl, name)(5), rtol=1e-12,
                                       err_msg=name)
        np.testing.assert_allclose(L.toeplitz(a[0], a[1]), sl.toeplitz(a[0], a[1]))
        np.testing.assert_allclose(L.fiedler_companion(a[0]), sl.fiedler_companion(a[0]))


GRADS = [
    "jax.grad(lambda a: jax.scipy.linalg.expm(a).sum())(A)",
    "jax.grad(lambda a: jnp.sum(jax.scipy.linalg.expm(3 * a) ** 2))(A)",
    "jax.jacfwd(lambda a: jax.scipy.linalg.expm(a))(A[:2, :2])",
    "jax.grad(lambda s: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(s), B).sum())(SPD)",
    "jax.grad(lambda a: jax.scipy.linalg.lu_solve(jax.scipy.linalg.lu_factor(a), V).sum())(A)",
    "jax.grad(lambda a: jax.scipy.linalg.solve_triangular(a, B, lower=True).sum())(jnp.tril(A) + 4 * jnp.eye(4))",
    "jax.grad(lambda a: jax.scipy.linalg.det(a))(A)",
    "jax.grad(lambda c: jax.scipy.linalg.toeplitz(c, c[::-1]).sum() * c[0])(V)",
    "jax.vmap(jax.scipy.linalg.expm)(BATCH)",
]


@requires_jax
def test_gradients_match_jax():
    import laminax as jax
    import laminax.numpy as jnp

    expected = run_jax("import jax.scipy.linalg\n"
                       "result = [jax.tree_util.tree_leaves(eval(e)) for e in exprs]",
                       exprs=GRADS, **INPUTS)
    for expr, want in zip(GRADS, expected, strict=True):
        got = jax.tree_util.tree_leaves(eval(expr, dict(jax=jax, jnp=jnp, np=np, **INPUTS)))  # noqa: S307
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), w, rtol=2e-3, atol=2e-3, err_msg=expr)
