"""lax.linalg: decompositions over batches, output shapes and conventions (pivots,
permutation, full/reduced factors, subsets), derivatives (second order), batching, errors."""

import numpy as np
import pytest
from laminax_core import make_jaxpr, vmap
from laminax_core.lax import linalg
from laminax_core.testing import check_grads

RNG = np.random.RandomState(0)
A = RNG.standard_normal((3, 4, 4)).astype(np.float32)
SPD = (A @ np.swapaxes(A, -1, -2) + 4 * np.eye(4)).astype(np.float32)
SYM = (A + np.swapaxes(A, -1, -2)).astype(np.float32)
LOOSE = dict(atol=5e-2, rtol=5e-2)


def test_cholesky_batched_and_not_positive_definite():
    np.testing.assert_allclose(linalg.cholesky(SPD), np.linalg.cholesky(SPD), atol=1e-5)
    out = linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]], np.float32))
    assert np.isnan(out[np.tril_indices(2)]).all() and out[0, 1] == 0  # as JAX: NaNs below


def test_lu_conventions_match_lapack():
    x = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 10]], np.float32)
    lu, pivots, perm = linalg.lu(x)
    np.testing.assert_array_equal(pivots, [2, 2, 2])
    np.testing.assert_array_equal(perm, [2, 0, 1])
    lower = np.tril(lu, -1) + np.eye(3)
    np.testing.assert_allclose(lower @ np.triu(lu), x[perm], rtol=1e-5)
    np.testing.assert_array_equal(linalg.lu_pivots_to_permutation(pivots, 3), perm)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_rectangular_lu(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    lu, pivots, perm = linalg.lu(x)
    m, n = shape
    k = min(m, n)
    lower = np.tril(lu, -1)[:, :k] + np.eye(m, k)
    np.testing.assert_allclose(lower @ np.triu(lu)[:k], x[perm], rtol=1e-4, atol=1e-5)
    assert pivots.shape == (k,) and perm.shape == (m,)


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_qr_shapes_and_reconstruction(full, shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    q, r = linalg.qr(x, full_matrices=full)
    m, n = shape
    k = m if full else min(m, n)
    assert q.shape == (m, k) and r.shape == (k, n)
    np.testing.assert_allclose(q @ r, x, atol=1e-5)
    np.testing.assert_allclose(np.triu(r), r)


def test_eigh_reads_one_triangle_and_subsets():
    x = np.array([[2.0, 100.0], [1.0, 2.0]], np.float32)
    _, w = linalg.eigh(x, symmetrize_input=False)  # lower triangle: [[2, 1], [1, 2]]
    np.testing.assert_allclose(w, [1, 3], rtol=1e-6)
    _, w_upper = linalg.eigh(x, lower=False, symmetrize_input=False)
    np.testing.assert_allclose(w_upper, [-98, 102], rtol=1e-5)
    v, w = linalg.eigh(SYM[0], subset_by_index=(1, 3))
    assert v.shape == (4, 2) and w.shape == (2,)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(SYM[0])[1:3], rtol=1e-5)


def test_svd_shapes():
    x = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    u, s, vt = linalg.svd(x)
    assert (u.shape, s.shape, vt.shape) == ((2, 5, 5), (2, 3), (2, 3, 3))
    u, s, vt = linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose((u * s[:, None, :]) @ vt, x, atol=1e-5)
    assert linalg.svd(x, compute_uv=False).shape == (2, 3)


@pytest.mark.parametrize("name,fun,args", [
    ("cholesky", linalg.cholesky, (SPD,)),
    ("triangular_solve", lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=True),
     (np.tril(A) + 4 * np.eye(4, dtype=np.float32), A[:, :, :2])),
    ("triangular_solve right transposed unit", lambda a, b: linalg.triangular_solve(
        a, b, transpose_a=True, unit_diagonal=True), (np.triu(A), A[:, :2, :])),
    ("lu", lambda x: linalg.lu(x)[0], (A,)),
    ("qr", linalg.qr, (A,)),
    ("qr reduced", lambda x: linalg.qr(x[:, :, :3], full_matrices=False), (A,)),
    ("eigh", linalg.eigh, (SYM,)),
    ("svd", linalg.svd, (A,)),
    ("svd values", lambda x: linalg.svd(x, compute_uv=False), (A,)),
])
def test_second_order_derivatives(name, fun, args):
    check_grads(fun, args, order=2, **LOOSE)


@pytest.mark.parametrize("shape", [(3, 4, 3), (3, 3, 4)])
def test_reduced_svd_derivatives_of_rectangular_matrices(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    check_grads(lambda v: linalg.svd(v, full_matrices=False), (x,), order=1, **LOOSE)


def test_unsupported_derivatives_say_so():
    from laminax_core import jvp

    with pytest.raises(NotImplementedError, match="full matrices"):
        jvp(linalg.svd, (A[0, :, :3],), (A[0, :, :3],))
    with pytest.raises(NotImplementedError, match="use full_matrices=False for tall"):
        jvp(linalg.qr, (A[0, :, :3],), (A[0, :, :3],))


@pytest.mark.parametrize("fun", [linalg.cholesky, lambda x: linalg.lu(x),
                                 lambda x: linalg.qr(x), linalg.eigh,
                                 lambda x: linalg.svd(x, compute_uv=False)])
def test_batching_matches_loop(fun):
    x = np.moveaxis(SPD, 0, 1)  # the batch in the middle: (4, 3, 4)
    got = vmap(fun, in_axes=1)(x)
    for b in range(3):
        expected = fun(SPD[b])
        for g, e in zip(got if isinstance(got, tuple) else (got,),
                        expected if isinstance(expected, tuple) else (expected,), strict=True):
            np.testing.assert_allclose(np.take(g, b, 0), e, rtol=1e-4, atol=1e-4)


def test_triangular_solve_batching_with_one_operand_mapped():
    a = np.tril(A) + 4 * np.eye(4, dtype=np.float32)
    b = A[0, :, :2]
    got = vmap(lambda m: linalg.triangular_solve(m, b, left_side=True, lower=True))(a)
    for k in range(3):
        np.testing.assert_allclose(got[k], np.linalg.solve(a[k], b), rtol=1e-4, atol=1e-5)


def test_jaxprs_match_jax():
    text = str(make_jaxpr(linalg.svd)(A[0]))
    assert "svd[\n      algorithm=None\n      compute_uv=True" in text and "in (c, b, d)" in text
    assert "qr[full_matrices=True pivoting=False use_magma=None]" in str(
        make_jaxpr(linalg.qr)(A[0]))
    assert "lu a in (b, c, d)" in str(make_jaxpr(linalg.lu)(A[0]))


@pytest.mark.parametrize("fun,error,match", [
    (lambda: linalg.cholesky(np.ones((2, 3), np.float32)), ValueError,
     r"cholesky: the input must be a square matrix .* got shape \(2, 3\)"),
    (lambda: linalg.eigh(np.ones(3, np.float32)), ValueError, "at least 2 dimensions"),
    (lambda: linalg.lu(np.ones((2, 2), np.int32)), TypeError, "lu does not accept dtype int32"),
    (lambda: linalg.triangular_solve(np.eye(3, dtype=np.float32),
                                     np.ones((2, 2), np.float32), left_side=True), TypeError,
     "triangular_solve: b .* must have 3 rows"),
])
def test_errors(fun, error, match):
    with pytest.raises(error, match=match):
        fun()


def test_complex_derivatives_through_reconstructions():
    from laminax_core import jvp

    rng = np.random.RandomState(3)
    a = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype(np.complex64)
    t = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype(np.complex64)
    herm = (a @ a.conj().T + 4 * np.eye(4)).astype(np.complex64)
    t_herm = (t @ t.conj().T).astype(np.complex64)
    cases = [
        (lambda v: (lambda w_v, w: (w_v * w[None, :]) @ w_v.conj().T)(*linalg.eigh(v)), herm,
         t_herm),
        (lambda v: (lambda u, s, vt: (u * s[None, :]) @ vt)(*linalg.svd(v, full_matrices=False)),
         a, t),
        (lambda v: (lambda q, r: q @ r)(*linalg.qr(v, full_matrices=False)), a, t),
        (lambda v: (lambda low: low @ low.conj().T)(linalg.cholesky(v)), herm, t_herm),
    ]
    for fun, x, dx in cases:  # each reconstructs its input, so its tangent is the input's
        _, out = jvp(fun, (x,), (dx,))
        np.testing.assert_allclose(out, dx, atol=2e-5 * np.abs(dx).max())
