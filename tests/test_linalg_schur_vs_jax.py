"""The Schur-based and tridiagonal parts of `scipy.linalg` and `lax.linalg` (schur, rsf2csf,
sqrtm, funm, solve_sylvester, eigh_tridiagonal, qr_multiply, convolution_matrix, polar through
qdwh; lax's schur, tridiagonal, qdwh, cholesky_update, symmetric_product) against real JAX 0.10.2, eagerly and
under jit, and against SciPy in float64.

schur and tridiagonal call the same LAPACK kernels as JAX (gees, sytrd / hetrd) through the
same XLA, so they are compared bit for bit; the rest are compositions that may round
differently and are compared to float32 rounding. Eigenvectors from inverse iteration are
unique up to sign, so their absolute values are compared.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(7)
A = R.randn(4, 4).astype(np.float32)
SPIN = np.array([[0, -2, 1], [1, 0, 3], [0.5, 1, 1]], np.float32)  # a complex eigenvalue pair
B3 = R.randn(3, 3).astype(np.float32)
C43 = R.randn(4, 3).astype(np.float32)
CPLX = (R.randn(3, 3) + 1j * R.randn(3, 3)).astype(np.complex64)
BATCH = R.randn(2, 3, 3).astype(np.float32)
RECT = R.randn(5, 3).astype(np.float32)
ROWS = R.randn(2, 5).astype(np.float32)
D = R.randn(6).astype(np.float32)
E = R.randn(5).astype(np.float32)
V = R.randn(4).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
UPPER = np.linalg.cholesky(SPD).T.astype(np.float32)
INPUTS = dict(A=A, SPIN=SPIN, B3=B3, C43=C43, CPLX=CPLX, BATCH=BATCH, RECT=RECT, ROWS=ROWS, D=D,
              E=E, V=V, SPD=SPD, UPPER=UPPER)

S, LL = "jax.scipy.linalg", "jax.lax.linalg"
EXACT = [
    f"{S}.schur(A)", f"{S}.schur(SPIN)", f"{S}.schur(SPIN, output='complex')", f"{S}.schur(CPLX)",
    f"{S}.schur(BATCH)",
    f"{LL}.schur(A, compute_schur_vectors=False)", f"{LL}.tridiagonal(SPD)",
    f"{LL}.tridiagonal(SPD, lower=False)", f"{LL}.tridiagonal(CPLX + CPLX.conj().T)",
    f"{LL}.tridiagonal(BATCH)", f"{S}.convolution_matrix(V, 3)",
    f"{S}.convolution_matrix(V, 6, 'same')", f"{S}.convolution_matrix(V, 3, 'valid')",
    f"{S}.convolution_matrix(V, 2, 'same')", f"{S}.convolution_matrix(BATCH[:, 0], 4)",
    f"{S}.convolution_matrix(np.array([1, 2]), 3)",
    f"{S}.eigh_tridiagonal(D, E, eigvals_only=True)",
    f"{S}.eigh_tridiagonal(D, E, eigvals_only=True, select='i', select_range=(1, 3))",
    # errors
    f"{S}.schur(A, output='x')", f"{S}.rsf2csf(A, RECT)", f"{S}.sqrtm(A, blocksize=2)",
    f"{S}.funm(BATCH, jnp.exp)", f"{S}.sqrtm(BATCH)", f"{S}.sqrtm(V)", f"{S}.solve_sylvester(A, B3, B3)",
    f"{S}.solve_sylvester(A, B3, C43, method='x')", f"{S}.eigh_tridiagonal(D, E, select='v')",
    f"{S}.eigh_tridiagonal(D, E, select='i')", f"{S}.eigh_tridiagonal(D, E.astype(np.float64), eigvals_only=True)",
    f"{S}.qr_multiply(RECT, ROWS, mode='up')", f"{S}.qr_multiply(RECT, RECT)",
    f"{S}.convolution_matrix(V, 0)", f"{S}.convolution_matrix(V, 2, 'wide')",
    f"{LL}.schur(RECT)", f"{LL}.tridiagonal(RECT)", f"{LL}.cholesky_update(UPPER, V[:3])",
    f"{LL}.symmetric_product(RECT, B3)", f"{LL}.qdwh(RECT.T)",
]
CLOSE = [
    f"{S}.rsf2csf(*{S}.schur(SPIN))", f"{S}.rsf2csf(*{S}.schur(BATCH))",
    f"{S}.sqrtm(A)", f"{S}.sqrtm(SPD)", f"{S}.sqrtm(CPLX)",
    f"{S}.funm(A, jnp.exp)", f"{S}.funm(SPIN, lambda x: jnp.sin(x) + 2 * jnp.cos(x))",
    f"{S}.funm(SPIN, jnp.sqrt, disp=False)", f"{S}.funm(jnp.eye(3), jnp.exp)",
    f"{S}.funm(jnp.diag(jnp.array([1., 1., 2.])) + jnp.triu(jnp.ones((3, 3)), 1), jnp.exp, "
    "disp=False)", f"{S}.sqrtm(jnp.zeros((3, 3)))", f"{S}.eigh_tridiagonal(jnp.ones(3), "
    "jnp.zeros(2))[0]", f"{S}.solve_sylvester(A, B3, C43)",
    f"{S}.solve_sylvester(A, B3, C43, method='eigen')", f"{S}.solve_sylvester(CPLX, SPIN, CPLX)",
    f"{S}.solve_sylvester(A, -A, A)",
    f"{S}.solve_sylvester(jnp.stack([A, A]), B3, jnp.stack([C43, 2 * C43]))",
    f"jnp.abs({S}.eigh_tridiagonal(D, E)[1])", f"{S}.eigh_tridiagonal(D, E)[0]",
    f"{S}.eigh_tridiagonal(D.astype(np.complex64), E * (1 + 1j))[0]",
    f"jnp.abs({S}.eigh_tridiagonal(D, E, select='i', select_range=(2, 4))[1])",
    f"{S}.eigh_tridiagonal(D, E, eigvals_only=True, tol=0.1)",
    f"{S}.qr_multiply(RECT, ROWS)", f"{S}.qr_multiply(RECT, C43[:3], mode='left')",
    f"{S}.qr_multiply(RECT, ROWS[0])", f"{S}.qr_multiply(RECT, C43[:3, 0], mode='left')",
    f"{S}.qr_multiply(RECT, ROWS, pivoting=True)", f"{S}.qr_multiply(RECT.T, ROWS[:, :3])",
    f"{S}.qr_multiply(RECT + 1j * RECT[::-1], ROWS, conjugate=True)",
    f"{LL}.cholesky_update(UPPER, V)", f"{LL}.symmetric_product(RECT, jnp.eye(5))",
    f"{LL}.symmetric_product(BATCH, BATCH, alpha=2.0, beta=-1.0, symmetrize_output=True)",
    f"{LL}.qdwh(A)", f"{LL}.qdwh(RECT)", f"{LL}.qdwh(RECT, max_iterations=2)",
    f"{LL}.qdwh(CPLX)", f"{LL}.qdwh(jnp.pad(A, ((0, 1), (0, 1))), dynamic_shape=(4, 4))",
    # scipy.linalg.polar's default method iterates with qdwh
    f"{S}.polar(jnp.stack([RECT, 2 * RECT]))", f"{S}.polar(RECT.T, side='left')",
    f"{S}.polar(RECT + 1j * RECT[::-1])",
]
EXPRS = EXACT + CLOSE
# the compositions run under jit only (eagerly they compile op by op: slow, and no different)
CASES = [(e, jit) for e in EXACT for jit in (False, True)] + [(e, True) for e in CLOSE]


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("import jax.scipy.linalg\n" + JAX_SNIPPET
                   + "result = [_run(e, jit) for e, jit in cases]",
                   exprs=[], cases=CASES, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("index", range(len(CASES)),
                         ids=[f"{'jit' if j else 'eager'}-{e}" for e, j in CASES])
def test_matches_jax(jax_outcomes, index):
    expr, jit = CASES[index]
    tol = 0.0 if expr in EXACT else 1e-4 if "qdwh" not in expr else 2e-3
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index], rtol=tol, atol=tol)


GRADS = [
    f"jax.grad(lambda v: ({S}.convolution_matrix(v, 3) ** 2).sum())(V)",
    f"jax.jacfwd(lambda d: {S}.eigh_tridiagonal(d, E, eigvals_only=True))(D)",
    f"jax.grad(lambda a: {S}.schur(a)[0].sum())(A)",
    f"jax.grad(lambda a: {LL}.tridiagonal(a)[1].sum())(SPD)",
    f"jax.grad(lambda r: {LL}.cholesky_update(r, V).sum())(UPPER)",
    f"jax.grad(lambda a: {LL}.symmetric_product(a, SPD).sum())(A)",
    f"jax.vmap(lambda r: {LL}.cholesky_update(r, V))(jnp.stack([UPPER, UPPER]))",
    f"jax.vmap(lambda a: {LL}.symmetric_product(a, SPD))(jnp.stack([A, 2 * A]))",
    f"jax.vmap({LL}.schur)(BATCH)", f"jax.vmap({LL}.tridiagonal)(BATCH)",
    f"jax.vmap(lambda a: {LL}.qdwh(a)[:2])(BATCH)",
]


def _outcome(fn):
    try:
        return ("ok", [np.asarray(x) for x in fn()])
    except Exception as err:  # noqa: BLE001 (the error type is what is compared)
        return ("error", type(err).__name__, str(err))


@requires_jax
def test_derivatives_and_batching_match_jax():
    """Values where JAX has a rule (jvp, vjp, vmap), the same error type where it has none.
    (laminax differentiates qr_multiply, which JAX cannot: its geqrf has no jvp.)"""
    import laminax as jax
    import laminax.numpy as jnp

    expected = run_jax(
        "import jax.scipy.linalg\n"
        "def outcome(e):\n"
        "    try:\n"
        "        return ('ok', [np.asarray(x) for x in jax.tree_util.tree_leaves(eval(e))])\n"
        "    except Exception as err:\n"
        "        return ('error', type(err).__name__, str(err))\n"
        "result = [outcome(e) for e in exprs]", exprs=GRADS, **INPUTS)
    scope = dict(jax=jax, jnp=jnp, np=np, **INPUTS)
    for expr, want in zip(GRADS, expected, strict=True):
        got = _outcome(lambda: jax.tree_util.tree_leaves(eval(expr, scope)))  # noqa: S307,B023
        assert got[:2] == want[:2] if want[0] == "error" else got[0] == "ok", (expr, got, want)
        if want[0] == "ok":
            for g, w in zip(got[1], want[1], strict=True):
                np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3, err_msg=expr)


def test_against_scipy_in_float64():
    import laminax as jax
    import laminax.numpy as jnp
    import laminax.scipy.linalg as L  # noqa: N812
    from laminax import enable_x64
    from laminax import lax

    rng = np.random.default_rng(3)
    a, b, c = rng.standard_normal((5, 5)), rng.standard_normal((3, 3)), rng.standard_normal((5, 3))
    d, e = rng.standard_normal(7), rng.standard_normal(6)
    d2, e2 = np.array([1.0, 1.0, 1.0, 2.0]), np.array([1e-9, 0.0, 1.0])  # a tight cluster

    def ours(a, b, c, d, e, d2, e2):  # one program (eagerly each loop would compile alone)
        t, z = L.schur(a)
        return dict(schur=(t, z), csf=L.rsf2csf(t, z), sqrtm_spd=L.sqrtm(a @ a.T),
                    sqrtm=L.sqrtm(a), funm=L.funm(a, jnp.exp), sylvester=L.solve_sylvester(a, b, c),
                    tridiagonal=L.eigh_tridiagonal(d, e), cluster=L.eigh_tridiagonal(d2, e2),
                    qr=L.qr_multiply(a, c.T), conv=L.convolution_matrix(d, 4, "same"),
                    qdwh=lax.linalg.qdwh(a))

    with enable_x64(True):
        got = jax.tree_util.tree_map(np.asarray, jax.jit(ours)(a, b, c, d, e, d2, e2))
    t, z = got["schur"]
    np.testing.assert_allclose(z @ t @ z.T, a, atol=1e-12)
    np.testing.assert_allclose(np.tril(t, -2), 0)
    np.testing.assert_allclose(np.diag(got["csf"][0]), np.diag(sl.rsf2csf(*sl.schur(a))[0]),
                               atol=1e-12)
    np.testing.assert_allclose(got["sqrtm_spd"], sl.sqrtm(a @ a.T), atol=1e-10)
    np.testing.assert_allclose(got["sqrtm"], sl.sqrtm(a.astype(complex)), atol=1e-10)
    np.testing.assert_allclose(got["funm"], sl.expm(a), atol=1e-10)
    np.testing.assert_allclose(got["sylvester"], sl.solve_sylvester(a, b, c), atol=1e-10)
    w, v = got["tridiagonal"]
    want_w, want_v = sl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(w, want_w, atol=1e-12)
    np.testing.assert_allclose(np.abs(v), np.abs(want_v), atol=1e-8)
    # eigenvectors of a cluster are not unique, but orthonormal and eigen
    w, v = got["cluster"]
    t2 = np.diag(d2) + np.diag(e2, 1) + np.diag(e2, -1)
    np.testing.assert_allclose(v.T @ v, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(t2 @ v, v * w, atol=1e-8)
    want_q_c, want_r = sl.qr_multiply(a, c.T)
    np.testing.assert_allclose(np.abs(got["qr"][0]), np.abs(want_q_c), atol=1e-12)
    np.testing.assert_allclose(np.abs(got["qr"][1]), np.abs(want_r), atol=1e-12)
    np.testing.assert_allclose(got["conv"], sl.convolution_matrix(d, 4, "same"))
    u, h, _, converged = got["qdwh"]
    want_u, want_h = sl.polar(a)
    assert converged
    np.testing.assert_allclose(u, want_u, atol=1e-10)
    np.testing.assert_allclose(h, want_h, atol=1e-10)
