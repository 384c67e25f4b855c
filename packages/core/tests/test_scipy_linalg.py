"""`laminax_core.scipy.linalg` on the reference interpreter, against SciPy."""

import numpy as np
import scipy.linalg as sl
from laminax_core import grad
from laminax_core.scipy import linalg

R = np.random.RandomState(0)
A = R.randn(4, 4).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = R.randn(4, 2).astype(np.float32)


def test_factorizations_reconstruct():
    p, l, u = linalg.lu(A)
    np.testing.assert_allclose(np.asarray(p) @ l @ u, A, atol=1e-5)
    np.testing.assert_allclose(linalg.cho_solve(linalg.cho_factor(SPD), B),
                               np.linalg.solve(SPD, B), rtol=1e-4)
    np.testing.assert_allclose(linalg.lu_solve(linalg.lu_factor(A), B), np.linalg.solve(A, B),
                               rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(linalg.cholesky(SPD), sl.cholesky(SPD), rtol=1e-4, atol=1e-5)


def test_expm_and_its_derivative():
    np.testing.assert_allclose(linalg.expm(A), sl.expm(A.astype(np.float64)), rtol=1e-4)
    e = R.randn(4, 4).astype(np.float32)
    np.testing.assert_allclose(linalg.expm_frechet(A, e, compute_expm=False),
                               sl.expm_frechet(A.astype(np.float64), e)[1], rtol=1e-3,
                               atol=1e-4)
    g = grad(lambda a: linalg.expm(a)[0, 1])(A)
    eps = 1e-3
    bump = np.zeros_like(A)
    bump[2, 3] = eps
    numeric = (sl.expm(A + bump)[0, 1] - sl.expm(A - bump)[0, 1]) / (2 * eps)
    np.testing.assert_allclose(g[2, 3], numeric, rtol=1e-2)


def test_structured_matrices():
    v = np.arange(1.0, 5.0, dtype=np.float32)
    np.testing.assert_array_equal(linalg.toeplitz(v), sl.toeplitz(v))
    np.testing.assert_array_equal(linalg.hankel(v), sl.hankel(v))
    np.testing.assert_array_equal(linalg.circulant(v), sl.circulant(v))
    np.testing.assert_array_equal(linalg.block_diag(A[:2, :2], v), sl.block_diag(A[:2, :2], v))
    np.testing.assert_allclose(linalg.companion(v), sl.companion(v))
