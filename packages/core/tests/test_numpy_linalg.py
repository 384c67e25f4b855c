"""laminax_core.numpy.linalg against NumPy: decompositions (through their defining
identities), solves, determinants, norms, pseudo-inverses, batching, gradients and errors."""

import laminax_core.numpy as jnp
import numpy as np
import pytest
from laminax_core import config, vmap
from laminax_core.testing import check_grads

RNG = np.random.RandomState(0)
M = RNG.randn(4, 4).astype(np.float32)
SPD = (M @ M.T + 4 * np.eye(4)).astype(np.float32)
BATCH = RNG.randn(3, 4, 4).astype(np.float32)
RECT = RNG.randn(5, 3).astype(np.float32)


def _close(a, b, tol=1e-4):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=tol,
                               atol=tol)


def test_cholesky_reconstructs_and_matches_numpy():
    low = jnp.linalg.cholesky(SPD)
    _close(low, np.linalg.cholesky(SPD))
    _close(jnp.linalg.cholesky(SPD, upper=True), np.linalg.cholesky(SPD).T)


@pytest.mark.parametrize("mode", ["reduced", "complete"])
@pytest.mark.parametrize("a", [RECT, RECT.T, M], ids=["tall", "wide", "square"])
def test_qr_reconstructs(mode, a):
    q, r = jnp.linalg.qr(a, mode=mode)
    e_q, e_r = np.linalg.qr(a, mode=mode)
    assert q.shape == e_q.shape and r.shape == e_r.shape
    _close(np.asarray(q) @ np.asarray(r), a)
    _close(np.abs(np.asarray(r)), np.abs(e_r))
    assert jnp.linalg.qr(a, mode="r").shape == np.linalg.qr(a, mode="r").shape


def test_eigh_matches_numpy():
    w, v = jnp.linalg.eigh(SPD)
    _close(w, np.linalg.eigvalsh(SPD))
    _close(np.asarray(v) @ np.diag(np.asarray(w)) @ np.asarray(v).T, SPD, tol=1e-3)
    _close(jnp.linalg.eigvalsh(SPD), np.linalg.eigvalsh(SPD))


@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_matches_numpy(full_matrices):
    u, s, vh = jnp.linalg.svd(RECT, full_matrices=full_matrices)
    e_u, e_s, e_vh = np.linalg.svd(RECT, full_matrices=full_matrices)
    assert (u.shape, s.shape, vh.shape) == (e_u.shape, e_s.shape, e_vh.shape)
    _close(s, e_s)
    k = min(RECT.shape)
    _close(np.asarray(u)[:, :k] * np.asarray(s) @ np.asarray(vh)[:k], RECT)
    _close(jnp.linalg.svdvals(RECT), e_s)


def test_det_slogdet_inv_solve_match_numpy():
    _close(jnp.linalg.det(M), np.linalg.det(M), tol=1e-3)
    _close(jnp.linalg.det(BATCH), np.linalg.det(BATCH), tol=1e-3)
    sign, logdet = jnp.linalg.slogdet(M)
    e_sign, e_logdet = np.linalg.slogdet(M)
    _close(sign, e_sign)
    _close(logdet, e_logdet)
    _close(jnp.linalg.inv(M), np.linalg.inv(M), tol=1e-3)
    b = RNG.randn(4).astype(np.float32)
    _close(jnp.linalg.solve(M, b), np.linalg.solve(M, b), tol=1e-3)
    bm = RNG.randn(3, 4, 2).astype(np.float32)
    _close(jnp.linalg.solve(BATCH, bm), np.linalg.solve(BATCH, bm), tol=1e-3)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    assert float(jnp.linalg.slogdet(singular).logabsdet) == -np.inf
    assert float(jnp.linalg.det(singular)) == 0.0


def test_pinv_matrix_rank_matrix_power_multi_dot_cond():
    _close(jnp.linalg.pinv(RECT), np.linalg.pinv(RECT), tol=1e-3)
    low_rank = RECT[:, :2] @ RNG.randn(2, 3).astype(np.float32)
    assert int(jnp.linalg.matrix_rank(low_rank)) == np.linalg.matrix_rank(low_rank) == 2
    for n in (0, 1, 3, -2):
        _close(jnp.linalg.matrix_power(M, n), np.linalg.matrix_power(M, n), tol=1e-2)
    mats = [RNG.randn(2, 30).astype(np.float32), RNG.randn(30, 3).astype(np.float32),
            RNG.randn(3).astype(np.float32)]
    _close(jnp.linalg.multi_dot(mats), np.linalg.multi_dot(mats), tol=1e-3)
    _close(jnp.linalg.cond(SPD), np.linalg.cond(SPD), tol=1e-3)
    _close(jnp.linalg.cond(SPD, 1), np.linalg.cond(SPD, 1), tol=1e-3)


NORM_CASES = [
    (RNG.randn(6).astype(np.float32), {}), (RNG.randn(6).astype(np.float32), {"ord": 1}),
    (RNG.randn(6).astype(np.float32), {"ord": np.inf}), (RNG.randn(6).astype(np.float32),
                                                        {"ord": -np.inf}),
    (RNG.randn(6).astype(np.float32), {"ord": 0}), (RNG.randn(6).astype(np.float32), {"ord": 3}),
    (M, {}), (M, {"ord": "fro"}), (M, {"ord": "nuc"}), (M, {"ord": 1}), (M, {"ord": -1}),
    (M, {"ord": 2}), (M, {"ord": -2}), (M, {"ord": np.inf}), (M, {"ord": -np.inf}),
    (BATCH, {"axis": (1, 2)}), (BATCH, {"axis": 0, "ord": 1}), (BATCH, {"axis": -1,
                                                                       "keepdims": True}),
    (BATCH, {"axis": (0, 2), "ord": np.inf, "keepdims": True}), (BATCH, {"keepdims": True}),
]


@pytest.mark.parametrize("x,kwargs", NORM_CASES, ids=[str(c[1]) for c in NORM_CASES])
def test_norm_matches_numpy(x, kwargs):
    expected = np.linalg.norm(x, **kwargs)
    actual = jnp.linalg.norm(x, **kwargs)
    assert np.shape(actual) == np.shape(expected)
    _close(actual, expected, tol=1e-4)


def test_vector_and_matrix_norm():
    _close(jnp.linalg.vector_norm(BATCH, axis=(1, 2)), np.linalg.norm(BATCH.reshape(3, -1),
                                                                      axis=1))
    _close(jnp.linalg.matrix_norm(BATCH, ord=1), np.linalg.norm(BATCH, ord=1, axis=(1, 2)))


def test_linalg_batches_under_vmap():
    out = vmap(jnp.linalg.inv)(BATCH)
    _close(out, np.linalg.inv(BATCH), tol=1e-3)
    out = vmap(jnp.linalg.slogdet)(BATCH)
    _close(out[1], np.linalg.slogdet(BATCH)[1], tol=1e-3)


def test_linalg_gradients_match_finite_differences():
    with config.enable_x64(True):
        a = M.astype(np.float64)
        spd = SPD.astype(np.float64)
        check_grads(jnp.linalg.det, (a,), order=1, atol=1e-4, rtol=1e-4, eps=1e-6)
        check_grads(lambda x: jnp.linalg.solve(x, np.ones(4)), (a,), order=1, atol=1e-4,
                    rtol=1e-4, eps=1e-6)
        check_grads(lambda x: jnp.linalg.inv(x), (a,), order=1, atol=1e-4, rtol=1e-4,
                    eps=1e-6)
        check_grads(lambda x: jnp.linalg.norm(x), (a,), order=2, atol=1e-4, rtol=1e-4,
                    eps=1e-6)
        check_grads(lambda x: jnp.linalg.cholesky((x + x.T) / 2 + 8 * np.eye(4)), (spd,),
                    order=1, atol=1e-4, rtol=1e-4, eps=1e-6)
        check_grads(lambda x: jnp.linalg.slogdet(x).logabsdet, (spd,), order=1, atol=1e-4,
                    rtol=1e-4, eps=1e-6)


def test_linalg_errors_are_clear():
    with pytest.raises(ValueError, match=r"linalg.inv: the argument must be a stack of square"):
        jnp.linalg.inv(RECT)
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        jnp.linalg.solve(M, np.ones(3))
    with pytest.raises(ValueError, match="mode must be 'reduced', 'complete' or 'r'"):
        jnp.linalg.qr(M, mode="economic")
    with pytest.raises(ValueError, match="improper number of axes"):
        jnp.linalg.norm(BATCH, axis=(0, 1, 2), ord=2)
    with pytest.raises(ValueError, match="invalid ord"):
        jnp.linalg.norm(M, ord=3)
    with pytest.raises(TypeError, match="linalg.det requires ndarray"):
        jnp.linalg.det([[1.0]])
