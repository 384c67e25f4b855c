"""lax.linalg on XLA: the LAPACK custom calls give valid factorizations (L U = P A, Q R = A,
V diag(w) V^H = A, U S V^H = A, L L^H = A, orthonormal factors) in every LAPACK dtype, batched,
eagerly and under jit; failures become NaNs as in JAX; gradients under jit match the NumPy
reference interpreter."""

import contextlib
import functools
import itertools

import numpy as np
import pytest
from laminax_core import grad, jvp, lax, vmap
from laminax_core.config import enable_x64
from laminax_core.internal import set_eager_impl
from laminax_dispatch import jit
from laminax_dispatch._lowering import _lapack

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.float32: 2e-5, np.float64: 1e-12, np.complex64: 2e-5, np.complex128: 1e-12}
SHAPES = [(4, 4), (2, 3, 5, 5)]  # one matrix and a (2, 3) batch


@contextlib.contextmanager
def numpy_reference():
    """Runs primitives on core's NumPy reference interpreter instead of XLA."""
    previous = set_eager_impl(None)
    try:
        yield
    finally:
        set_eager_impl(previous)


def _random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _h(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _hpd(shape, dtype):
    """A Hermitian positive definite matrix (batch)."""
    x = _random(shape, dtype)
    return (x @ _h(x) + shape[-1] * np.eye(shape[-1], dtype=dtype)).astype(dtype)


def _close(actual, expected, dtype, scale=1.0):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=0, atol=TOL[dtype] * scale * 10)


def _orthonormal_columns(q, dtype):
    q = np.asarray(q).astype(np.complex128)
    _close(
        _h(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), dtype
    )


@pytest.fixture(params=DTYPES, ids=lambda d: np.dtype(d).name)
def dtype(request):
    with enable_x64(True):
        yield request.param


@pytest.mark.parametrize("shape", SHAPES + [(5, 3), (3, 5)])
@pytest.mark.parametrize("jitted", [True, False], ids=["jit", "eager"])
def test_lu_reconstructs_the_permuted_matrix(dtype, shape, jitted):
    a = _random(shape, dtype)
    lu, pivots, perm = (jit(lax.linalg.lu) if jitted else lax.linalg.lu)(a)
    lu, pivots, perm = map(np.asarray, (lu, pivots, perm))
    m, n = shape[-2:]
    k = min(m, n)
    low = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    up = np.triu(lu)[..., :k, :]
    assert pivots.dtype == np.int32 and perm.dtype == np.int32
    assert pivots.shape == (*shape[:-2], k) and perm.shape == (*shape[:-2], m)
    np.testing.assert_array_equal(perm, lax.linalg.lu_pivots_to_permutation(pivots, m))
    _close(low @ up, np.take_along_axis(a, perm[..., None], axis=-2), dtype, scale=m)


@pytest.mark.parametrize("shape", SHAPES + [(5, 3), (3, 5)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_reconstructs_the_matrix_with_orthonormal_q(dtype, shape, full_matrices):
    a = _random(shape, dtype)
    q, r = jit(lambda x: lax.linalg.qr(x, full_matrices=full_matrices))(a)
    m, n = shape[-2:]
    k = m if full_matrices else min(m, n)
    assert q.shape == (*shape[:-2], m, k) and r.shape == (*shape[:-2], k, n)
    np.testing.assert_array_equal(np.asarray(r), np.triu(np.asarray(r)))
    _orthonormal_columns(q, dtype)
    _close(np.asarray(q) @ np.asarray(r), a, dtype, scale=m)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_diagonalizes_a_hermitian_matrix(dtype, shape, lower):
    a = _hpd(shape, dtype)
    v, w = jit(lambda x: lax.linalg.eigh(x, lower=lower, symmetrize_input=False))(a)
    v, w = np.asarray(v), np.asarray(w)
    assert w.dtype == np.finfo(dtype).dtype and v.dtype == dtype
    assert np.all(np.diff(w, axis=-1) >= 0)  # ascending
    _orthonormal_columns(v, dtype)
    _close((v * w[..., None, :]) @ _h(v), a, dtype, scale=4 * shape[-1])


def test_eigh_reads_only_the_requested_triangle():
    a = _hpd((4, 4), np.float32)
    garbage = a + np.triu(np.full((4, 4), 100.0, np.float32), 1)
    _, w = jit(lambda x: lax.linalg.eigh(x, lower=True, symmetrize_input=False))(garbage)
    _close(w, np.linalg.eigvalsh(a), np.float32, scale=20)


@pytest.mark.parametrize("shape", SHAPES + [(5, 3), (3, 5)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_reconstructs_the_matrix(dtype, shape, full_matrices):
    a = _random(shape, dtype)
    u, s, vt = jit(lambda x: lax.linalg.svd(x, full_matrices=full_matrices))(a)
    u, s, vt = map(np.asarray, (u, s, vt))
    m, n = shape[-2:]
    k = min(m, n)
    assert u.shape[-1] == (m if full_matrices else k) and vt.shape[-2] == (
        n if full_matrices else k
    )
    assert np.all(np.diff(s, axis=-1) <= 0)  # descending
    _orthonormal_columns(u, dtype)
    _orthonormal_columns(_h(vt), dtype)
    _close((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], a, dtype, scale=4 * m)
    s_only = jit(lambda x: lax.linalg.svd(x, compute_uv=False))(a)
    _close(s_only, s, dtype, scale=4 * m)


@pytest.mark.parametrize("shape", SHAPES)
def test_cholesky_factor_reconstructs_the_matrix(dtype, shape):
    a = _hpd(shape, dtype)
    factor = np.asarray(jit(lax.linalg.cholesky)(a))
    np.testing.assert_array_equal(factor, np.tril(factor))
    _close(factor @ _h(factor), a, dtype, scale=4 * shape[-1])


TRIANGULAR_VARIANTS = [
    dict(left_side=left, lower=lower, transpose_a=trans, conjugate_a=conj, unit_diagonal=unit)
    for left, lower, trans, conj, unit in itertools.product([True, False], repeat=5)
]


def _op_a(a, lower, transpose_a, conjugate_a, unit_diagonal, **_):
    op = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        op = op - op * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    op = np.swapaxes(op, -1, -2) if transpose_a else op
    return np.conj(op) if conjugate_a else op


def test_triangular_solve_solves_every_variant(dtype):
    a = _random((2, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    b_left, b_right = _random((2, 4, 3), dtype, seed=1), _random((2, 3, 4), dtype, seed=2)

    def solve_all(a, b_left, b_right):  # one compilation for the 32 variants
        return [
            lax.linalg.triangular_solve(a, b_left if v["left_side"] else b_right, **v)
            for v in TRIANGULAR_VARIANTS
        ]

    for v, x in zip(TRIANGULAR_VARIANTS, jit(solve_all)(a, b_left, b_right), strict=True):
        op, x = _op_a(a, **v), np.asarray(x)
        _close(
            op @ x if v["left_side"] else x @ op,
            b_left if v["left_side"] else b_right,
            dtype,
            scale=4,
        )


def test_cholesky_of_an_indefinite_matrix_is_nan_only_in_that_batch_entry():
    a = np.stack([_hpd((3, 3), np.float32), -np.eye(3, dtype=np.float32)])
    factor = np.asarray(jit(lax.linalg.cholesky)(a))
    assert np.all(np.isfinite(factor[0]))
    lower = np.tril(np.ones((3, 3), bool))
    assert np.all(np.isnan(factor[1][lower])) and not np.any(factor[1][~lower])


def test_lu_of_a_singular_matrix_is_finite():
    # getrf reports a zero pivot with info > 0, which JAX does not treat as a failure
    a = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    lu, _, perm = jit(lax.linalg.lu)(a)
    assert np.all(np.isfinite(np.asarray(lu)))
    np.testing.assert_array_equal(np.asarray(perm), [1, 0])


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3)])
def test_qr_and_svd_of_empty_matrices_follow_jax(shape):
    a = np.zeros(shape, np.float32)
    m, n = shape[-2:]
    q, r = jit(lax.linalg.qr)(a)
    np.testing.assert_array_equal(np.asarray(q), np.broadcast_to(np.eye(m), q.shape))
    assert r.shape == (*shape[:-2], m, n) and not np.any(np.asarray(r))
    u, s, vt = jit(lax.linalg.svd)(a)
    assert s.shape == (*shape[:-2], 0)
    np.testing.assert_array_equal(np.asarray(u), np.broadcast_to(np.eye(m), u.shape))
    np.testing.assert_array_equal(np.asarray(vt), np.broadcast_to(np.eye(n), vt.shape))


def test_subset_by_index_keeps_the_requested_slice():
    a = _hpd((5, 5), np.float32)
    v_all, w_all = jit(lax.linalg.eigh)(a)
    v, w = jit(lambda x: lax.linalg.eigh(x, subset_by_index=(1, 3)))(a)
    np.testing.assert_array_equal(np.asarray(w), np.asarray(w_all)[1:3])
    np.testing.assert_array_equal(np.asarray(v), np.asarray(v_all)[:, 1:3])
    b = _random((4, 6), np.float32)
    u_all, s_all, vt_all = jit(lambda x: lax.linalg.svd(x, full_matrices=False))(b)
    u, s, vt = jit(lambda x: lax.linalg.svd(x, subset_by_index=(0, 2)))(b)
    assert u.shape == (4, 2) and vt.shape == (2, 6)
    np.testing.assert_array_equal(np.asarray(s), np.asarray(s_all)[:2])
    np.testing.assert_array_equal(np.asarray(vt), np.asarray(vt_all)[:2])


def test_svd_algorithm_qr_uses_gesvd_and_jacobi_is_refused():
    a = _random((5, 3), np.float32)
    text = jit(lambda x: lax.linalg.svd(x, algorithm="QR")).lower(a).as_text()
    assert "lapack_sgesvd_ffi" in text
    s = jit(lambda x: lax.linalg.svd(x, compute_uv=False, algorithm="QR"))(a)
    _close(s, np.linalg.svd(a, compute_uv=False), np.float32, scale=4)
    with pytest.raises(NotImplementedError, match="svd: algorithm 'JACOBI' is not implemented"):
        jit(lambda x: lax.linalg.svd(x, algorithm="JACOBI"))(a)


def test_half_precision_is_refused_with_a_conversion_hint():
    a = np.eye(3, dtype=np.float16)
    with pytest.raises(TypeError, match="lu: LAPACK on CPU supports float32.*got float16"):
        jit(lax.linalg.lu)(a)


def test_lowering_calls_lapack_with_column_major_layouts():
    text = jit(lax.linalg.lu).lower(np.eye(3, dtype=np.float32)).as_text()
    assert "stablehlo.custom_call @lapack_sgetrf_ffi" in text
    assert "operand_layouts = [dense<[0, 1]> : tensor<2xindex>]" in text
    batched = jit(lax.linalg.cholesky).lower(np.ones((2, 3, 3), np.float32)).as_text()
    assert "@lapack_spotrf_ffi" in batched and "dense<[1, 2, 0]>" in batched
    assert _lapack._registered


# ----- gradients under jit against the reference interpreter --------------------------------

GRAD_CASES = {
    "lu": lambda x: lax.linalg.lu(x)[0],
    "qr": lambda x: lax.linalg.qr(x, full_matrices=False)[1],
    "eigh": lambda x: lax.linalg.eigh(x)[1],
    "svd": lambda x: lax.linalg.svd(x, compute_uv=False),
    "cholesky": lambda x: lax.linalg.cholesky(
        lax.add(
            lax.dot_general(x, x, (((1,), (1,)), ((), ()))),
            np.float32(4) * np.eye(4, dtype=np.float32),
        )
    ),
    "triangular_solve": lambda x: lax.linalg.triangular_solve(
        lax.add(x, np.float32(4) * np.eye(4, dtype=np.float32)), x, left_side=True, lower=True
    ),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_under_jit_match_the_reference(name):
    fun = GRAD_CASES[name]
    a = _random((4, 4), np.float32)
    weights = _random(
        (4, 4) if name in ("lu", "qr", "cholesky", "triangular_solve") else (4,), np.float32, seed=2
    )

    def loss(x):
        return lax.reduce_sum(lax.mul(fun(x), weights), tuple(range(len(weights.shape))))

    got = jit(grad(loss))(a)
    tangent = _random((4, 4), np.float32, seed=3)
    got_jvp = jit(lambda x, t: jvp(fun, (x,), (t,))[1])(a, tangent)
    with numpy_reference():
        expected = grad(loss)(a)
        expected_jvp = jvp(fun, (a,), (tangent,))[1]
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(np.asarray(got_jvp), np.asarray(expected_jvp), rtol=2e-3, atol=2e-3)


# ----- eig ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_eig_left_and_right_eigenvectors_satisfy_their_equations(dtype, shape):
    a = _random(shape, dtype)
    w, vl, vr = map(np.asarray, jit(lax.linalg.eig)(a))
    complex_dtype = np.result_type(dtype, np.complex64).type
    assert w.dtype == vl.dtype == vr.dtype == complex_dtype
    n = shape[-1]
    _close(a @ vr, vr * w[..., None, :], complex_dtype, scale=4 * n)
    _close(_h(vl) @ a, w[..., :, None] * _h(vl), complex_dtype, scale=4 * n)
    norms = np.linalg.norm(vr, axis=-2)
    _close(norms, np.ones_like(norms), complex_dtype)


def test_eig_matches_the_reference_eigenvalues():
    a = _random((2, 4, 4), np.float32)
    w = np.asarray(
        jit(
            lambda x: lax.linalg.eig(
                x, compute_left_eigenvectors=False, compute_right_eigenvectors=False
            )[0]
        )(a)
    )
    with numpy_reference():
        expected = np.asarray(
            lax.linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]
        )
    key = lambda z: np.sort_complex(np.round(z, 4))  # noqa: E731 (same set, any order)
    np.testing.assert_allclose(key(w), key(expected), atol=1e-4)


def test_eig_eigenvalue_derivatives_and_the_eigenvector_opt_in():
    a = _random((4, 4), np.float32)
    t = _random((4, 4), np.float32, seed=5)

    def eigvals(x):
        return lax.linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[
            0
        ]

    w_dot = np.asarray(jit(lambda x, t: jvp(eigvals, (x,), (t,))[1])(a, t))
    eps = 1e-3
    a64, t64 = a.astype(np.float64), t.astype(np.float64)
    numeric = (np.linalg.eigvals(a64 + eps * t64) - np.linalg.eigvals(a64 - eps * t64)) / (2 * eps)
    w = np.linalg.eigvals(a64)
    laminax_w = np.asarray(jit(eigvals)(a))
    order = [int(np.argmin(np.abs(w - z))) for z in laminax_w]
    np.testing.assert_allclose(w_dot, numeric[order], rtol=1e-2, atol=1e-2)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
        jit(lambda x, t: jvp(lambda y: lax.linalg.eig(y)[2], (x,), (t,)))(a, t)
    _, vr_dot = jit(
        lambda x, t: jvp(
            lambda y: lax.linalg.eig(y, compute_left_eigenvectors=False, enable_eigvec_derivs=True),
            (x,),
            (t,),
        )
    )(a, t)
    assert np.all(np.isfinite(np.asarray(vr_dot[1])))


def test_eig_of_a_float16_matrix_names_the_supported_dtypes():
    with pytest.raises(TypeError, match="eig: LAPACK on CPU supports float32"):
        jit(lax.linalg.eig)(np.eye(2, dtype=np.float16))


@pytest.mark.parametrize("jitted", [True, False], ids=["jit", "eager"])
def test_lu_pivots_to_permutation_is_traceable_and_batches(jitted):
    pivots = np.array([[2, 2, 3], [0, 3, 3]], np.int32)
    fun = functools.partial(lax.linalg.lu_pivots_to_permutation, permutation_size=5)
    out = np.asarray((jit(fun) if jitted else fun)(pivots))
    np.testing.assert_array_equal(out, [[2, 0, 3, 1, 4], [0, 3, 1, 2, 4]])  # as JAX gives
    batched = jit(vmap(fun))(pivots)
    np.testing.assert_array_equal(np.asarray(batched), out)
    with numpy_reference():
        np.testing.assert_array_equal(np.asarray(fun(pivots)), out)
    with pytest.raises(ValueError, match="permutation_size 2 must be at least the number of"):
        lax.linalg.lu_pivots_to_permutation(pivots, 2)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_with_pivoting_factors_the_permuted_matrix(dtype, shape, full_matrices):
    a = _random(shape, dtype)
    q, r, p = map(
        np.asarray, jit(lambda x: lax.linalg.qr(x, pivoting=True, full_matrices=full_matrices))(a)
    )
    assert p.dtype == np.int32 and p.shape == shape[:-2] + shape[-1:]
    _orthonormal_columns(q, dtype)
    diag = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    assert np.all(np.diff(diag, axis=-1) <= TOL[dtype] * 10)  # non-increasing
    _close(q @ r, np.take_along_axis(a, p[..., None, :], axis=-1), dtype, scale=shape[-2])
    with numpy_reference():
        reference_p = np.asarray(lax.linalg.qr(a, pivoting=True)[2])
    np.testing.assert_array_equal(p, reference_p)


@pytest.mark.parametrize("pivoting", [False, True])
def test_qr_derivative_of_wide_and_pivoted_matrices_matches_the_reference(pivoting):
    a = _random((3, 5), np.float32)
    t = _random((3, 5), np.float32, seed=7)

    def fun(x):
        return lax.linalg.qr(x, pivoting=pivoting, full_matrices=False)[:2]

    got = jit(lambda x, t: jvp(fun, (x,), (t,))[1])(a, t)
    with numpy_reference():
        expected = jvp(fun, (a,), (t,))[1]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-3, atol=1e-3)
    eps = 1e-3  # and against central differences of the decomposition itself
    q_plus, r_plus = (np.asarray(o) for o in jit(fun)(a + eps * t))
    q_minus, r_minus = (np.asarray(o) for o in jit(fun)(a - eps * t))
    np.testing.assert_allclose(np.asarray(got[1]), (r_plus - r_minus) / (2 * eps), atol=2e-2)


def test_qr_derivative_of_a_tall_full_q_says_what_to_use():
    with pytest.raises(NotImplementedError, match="use full_matrices=False for tall"):
        jit(lambda x, t: jvp(lax.linalg.qr, (x,), (t,)))(
            np.ones((4, 2), np.float32), np.ones((4, 2), np.float32)
        )


# ----- tridiagonal_solve --------------------------------------------------------------------


def _tridiagonal(shape, dtype):
    dl, d, du = (_random(shape, dtype, seed=s) for s in (11, 12, 13))
    return dl, d + 4 * np.ones(shape, dtype), du


def _dense(dl, d, du):
    m = d.shape[-1]
    rows = np.arange(m)
    a = np.zeros((*d.shape, m), d.dtype)
    a[..., rows, rows] = d
    a[..., rows[1:], rows[:-1]] = dl[..., 1:]
    a[..., rows[:-1], rows[1:]] = du[..., :-1]
    return a


@pytest.mark.parametrize("batch", [(), (2, 3)])
def test_tridiagonal_solve_solves_the_dense_system(dtype, batch):
    dl, d, du = _tridiagonal((*batch, 5), dtype)
    b = _random((*batch, 5, 2), dtype, seed=14)
    x = np.asarray(jit(lax.linalg.tridiagonal_solve)(dl, d, du, b))
    _close(_dense(dl, d, du) @ x, b, dtype, scale=5)
    with numpy_reference():
        expected = np.asarray(lax.linalg.tridiagonal_solve(dl, d, du, b))
    _close(x, expected, dtype, scale=5)


def test_tridiagonal_solve_singular_systems_give_nan_or_a_perturbed_solution():
    dl, d, du = (np.zeros(3, np.float32) for _ in range(3))
    b = np.ones((3, 1), np.float32)
    assert np.all(np.isnan(np.asarray(jit(lax.linalg.tridiagonal_solve)(dl, d, du, b))))
    perturbed = jit(lambda *a: lax.linalg.tridiagonal_solve(*a, perturb_singular=True))
    assert not np.any(
        np.isnan(np.asarray(perturbed(dl, d + np.array([1, 0, 1], np.float32), du, b)))
    )


def test_tridiagonal_solve_gradients_and_transpose_match_the_reference():
    dl, d, du = _tridiagonal((4,), np.float32)
    b = _random((4, 2), np.float32, seed=15)
    weights = _random((4, 2), np.float32, seed=16)

    def loss(dl, d, du, b):
        return lax.reduce_sum(lax.mul(lax.linalg.tridiagonal_solve(dl, d, du, b), weights), (0, 1))

    got = jit(grad(loss, argnums=(0, 1, 2, 3)))(dl, d, du, b)
    with numpy_reference():
        expected = grad(loss, argnums=(0, 1, 2, 3))(dl, d, du, b)
    for g, e in zip(got[1:], expected[1:], strict=True):  # dl[0] is unused; both say 0
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-5)
    a = _dense(dl, d, du).astype(np.float64)
    np.testing.assert_allclose(
        np.asarray(got[3]), np.linalg.solve(a.T, weights), rtol=1e-4, atol=1e-5
    )
    batched = jit(vmap(lax.linalg.tridiagonal_solve, in_axes=(None, None, None, 0)))(
        dl, d, du, np.stack([b, 2 * b])
    )
    _close(np.asarray(batched)[1], 2 * np.asarray(batched)[0], np.float32, scale=4)


def test_tridiagonal_solve_checks_shapes():
    one = np.ones(3, np.float32)
    with pytest.raises(TypeError, match=r"b \(3,\) must be the diagonals' shape"):
        lax.linalg.tridiagonal_solve(one, one, one, one)
    with pytest.raises(TypeError, match="must have the same shape"):
        lax.linalg.tridiagonal_solve(one[:2], one, one, np.ones((3, 1), np.float32))


# ----- householder_product, ormqr -----------------------------------------------------------


def _reflectors(dtype, batch=(2,)):
    a = _random((*batch, 5, 3), dtype, seed=21)
    taus = (0.5 * _random((*batch, 3), dtype, seed=22)).astype(dtype)
    return a, taus


def test_householder_product_and_ormqr_match_the_reference(dtype):
    a, taus = _reflectors(dtype)
    c_left, c_right = _random((2, 5, 4), dtype, seed=23), _random((2, 4, 5), dtype, seed=24)

    def all_products(a, taus, c_left, c_right):
        return [lax.linalg.householder_product(a, taus),
                lax.linalg.householder_product(a, taus[..., :2]),
                lax.linalg.ormqr(a, taus, c_left),
                lax.linalg.ormqr(a, taus, c_left, transpose=True),
                lax.linalg.ormqr(a, taus, c_right, left=False),
                lax.linalg.ormqr(a, taus, c_right, left=False, transpose=True)]  # fmt: skip

    got = jit(all_products)(a, taus, c_left, c_right)
    with numpy_reference():
        expected = all_products(a, taus, c_left, c_right)
    for g, e in zip(got, expected, strict=True):
        _close(g, np.asarray(e), dtype, scale=5)


def test_householder_product_of_a_qr_factorization_is_its_q():
    a = _random((5, 3), np.float32)
    q, _ = jit(lambda x: lax.linalg.qr(x, full_matrices=False))(a)
    with pytest.raises(NotImplementedError, match="'householder_product' not implemented"):
        jvp(lambda x: lax.linalg.householder_product(x, np.ones(3, np.float32)), (a,), (a,))
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        lax.linalg.householder_product(a.T, np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"ormqr: c \(4, 2\) must have 5 rows"):
        lax.linalg.ormqr(a, np.ones(3, np.float32), np.ones((4, 2), np.float32))
    _orthonormal_columns(q, np.float32)


# ----- hessenberg ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_hessenberg_is_similar_to_the_matrix_and_matches_the_reference(dtype, shape):
    a = _random(shape, dtype)
    h_full, taus = map(np.asarray, jit(lax.linalg.hessenberg)(a))
    n = shape[-1]
    assert taus.shape == (*shape[:-2], n - 1)
    # reflector i sits below the subdiagonal of column i: Q = 1 (+) householder_product of the
    # trailing (n - 1) x (n - 1) block
    q_tail = np.asarray(jit(lax.linalg.householder_product)(h_full[..., 1:, :-1], taus))
    q = np.zeros_like(h_full)
    q[..., 0, 0] = 1
    q[..., 1:, 1:] = q_tail
    _orthonormal_columns(q, dtype)
    _close(q @ np.triu(h_full, -1) @ _h(q), a, dtype, scale=4 * n)
    with numpy_reference():
        expected = [np.asarray(x) for x in lax.linalg.hessenberg(a)]
    _close(h_full, expected[0], dtype, scale=4 * n)
    _close(taus, expected[1], dtype, scale=4 * n)
