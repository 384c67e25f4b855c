"""lax.linalg's schur, tridiagonal, cholesky_update, symmetric_product and qdwh on the NumPy
reference interpreter: decompositions that reconstruct their input, batching, the missing
derivative and batching rules JAX also lacks, and errors."""

import numpy as np
import pytest
from laminax_core import grad, make_jaxpr, vmap
from laminax_core.lax import linalg

RNG = np.random.RandomState(1)
A = RNG.standard_normal((4, 4)).astype(np.float32)
BATCH = RNG.standard_normal((2, 3, 3)).astype(np.float32)
SPIN = np.array([[0, -2, 1], [1, 0, 3], [0.5, 1, 1]], np.float32)
CPLX = (RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))).astype(np.complex64)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)


@pytest.mark.parametrize("x", [A, SPIN, CPLX, BATCH], ids=["real", "pair", "complex", "batch"])
def test_schur_reconstructs_with_a_quasi_triangular_factor(x):
    u, q = linalg.schur(x)
    qh = np.conj(np.swapaxes(q, -1, -2))
    np.testing.assert_allclose(q @ u @ qh, x, atol=1e-4)
    np.testing.assert_allclose(qh @ q, np.broadcast_to(np.eye(x.shape[-1]), x.shape), atol=1e-5)
    assert np.all(np.tril(u, -2) == 0)
    if np.iscomplexobj(x):
        assert np.all(np.tril(u, -1) == 0)
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(u).ravel()),
                               np.sort_complex(np.linalg.eigvals(x).ravel()), atol=1e-4)
    (alone,) = linalg.schur(x, compute_schur_vectors=False)
    np.testing.assert_allclose(alone, u)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("x", [SPD, CPLX + CPLX.conj().T], ids=["real", "hermitian"])
def test_tridiagonal_keeps_the_eigenvalues_and_the_other_triangle(x, lower):
    arr, d, e, taus = linalg.tridiagonal(x, lower=lower)
    assert (d.dtype, e.dtype, taus.dtype) == (np.float32, np.float32, x.dtype)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(x), atol=1e-4)
    other = np.triu(np.ones(x.shape, bool), 2) if lower else np.tril(np.ones(x.shape, bool), -2)
    np.testing.assert_array_equal(arr[other], x[other])
    np.testing.assert_allclose(np.diagonal(arr).real, d)
    empty = linalg.tridiagonal(np.zeros((0, 3, 3), np.float32), lower=lower)
    assert [x.shape for x in empty] == [(0, 3, 3), (0, 3), (0, 2), (0, 2)]


def test_cholesky_update_and_symmetric_product_match_numpy():
    upper = np.linalg.cholesky(SPD).T.astype(np.float32)
    w = A[0]
    np.testing.assert_allclose(linalg.cholesky_update(upper, w),
                               np.linalg.cholesky(SPD + np.outer(w, w)).T, atol=1e-5)
    np.testing.assert_allclose(linalg.cholesky_update(upper, np.zeros(4, np.float32)),
                               upper, atol=1e-6)
    out = linalg.symmetric_product(BATCH, BATCH, alpha=2.0, beta=-1.0)
    np.testing.assert_allclose(out, 2 * BATCH @ np.swapaxes(BATCH, -1, -2) - BATCH, atol=1e-5)
    sym = linalg.symmetric_product(A, A, symmetrize_output=True)
    np.testing.assert_allclose(sym, np.tril(A @ A.T + 0) + np.tril(A @ A.T, -1).T, atol=1e-5)
    np.testing.assert_allclose(vmap(lambda a: linalg.symmetric_product(a, a))(BATCH),
                               BATCH @ np.swapaxes(BATCH, -1, -2), atol=1e-5)
    assert "symmetric_product[alpha=2.0 beta=3.0]" in str(
        make_jaxpr(lambda a: linalg.symmetric_product(a, a, alpha=2.0, beta=3.0))(A))


@pytest.mark.parametrize("x", [A, RNG.standard_normal((5, 3)).astype(np.float32), CPLX],
                         ids=["square", "tall", "complex"])
def test_qdwh_is_a_polar_decomposition(x):
    u, h, iterations, converged = linalg.qdwh(x)
    assert bool(converged) and 0 < int(iterations) <= 10
    np.testing.assert_allclose(u @ h, x, atol=1e-4)
    np.testing.assert_allclose(np.conj(u.T) @ u, np.eye(x.shape[1]), atol=1e-5)
    np.testing.assert_allclose(h, np.conj(h.T), atol=1e-6)
    assert np.linalg.eigvalsh(h).min() > 0
    u_svd, _, vh = np.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(u, u_svd @ vh, atol=1e-4)


def test_missing_rules_and_errors_are_jaxs():
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        grad(lambda a: linalg.schur(a)[0].sum())(A)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'tridiagonal'"):
        grad(lambda a: linalg.tridiagonal(a)[1].sum())(SPD)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'symmetric_prod"):
        grad(lambda a: linalg.symmetric_product(a, a).sum())(A)
    with pytest.raises(NotImplementedError, match="Batching rule for 'cholesky_update'"):
        vmap(linalg.cholesky_update)(BATCH, BATCH[:, 0])
    with pytest.raises(ValueError, match="square matrix"):
        linalg.schur(A[:3])
    with pytest.raises(ValueError, match="square matrix"):
        linalg.tridiagonal(np.zeros((0, 0), np.float32))
    with pytest.raises(ValueError, match="Rank-1 update"):
        linalg.cholesky_update(A, A[0, :3])
    with pytest.raises(ValueError, match="symmetric_update expects"):
        linalg.symmetric_product(A[:3], A[:3])
    with pytest.raises(ValueError, match="M >= N"):
        linalg.qdwh(A[:3])
    with pytest.raises(TypeError):
        linalg.cholesky_update(A.astype(np.int32), A[0].astype(np.int32))
