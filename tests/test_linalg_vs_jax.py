"""lax.linalg and jnp.linalg under jit against real JAX 0.10.2, in float32 and (x64) float64,
real and complex, single matrices and batches.

Both sides call the same LAPACK kernels (jaxlib's FFI handlers, SciPy's LAPACK) through the
same XLA, and laminax stages the same surrounding operations, so every row of OPS is compared
bit for bit (NaNs equal, dtypes and shapes equal): factors, eigenvectors and singular vectors
included, since LAPACK's sign and phase choices are deterministic for a given input. The one
exception, `trace_np`, is listed in TOLERANT with its reason.

Gradients are the exception (`test_gradients_under_jit_match_jax`): JAX gives det, slogdet and
pinv custom jvp rules and writes some decomposition jvps with other operation orders, so they
agree to float32 rounding (rtol 2e-4), not bit for bit.
"""

import laminax as jax
import laminax.numpy as jnp  # noqa: F401 (the OPS sources use it)
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core.config import enable_x64

# name -> source of a function of one matrix `a`, evaluated as `jax.jit(<source>)(a)` by both
# sides (`jax` and `jnp` are laminax's here, JAX's there)
OPS = {
    "lu": "lambda a: jax.lax.linalg.lu(a)",
    "qr": "lambda a: jax.lax.linalg.qr(a)",
    "qr_reduced": "lambda a: jax.lax.linalg.qr(a, full_matrices=False)",
    "qr_pivoting": "lambda a: jax.lax.linalg.qr(a, pivoting=True)",
    "qr_pivoting_reduced": "lambda a: jax.lax.linalg.qr(a, pivoting=True, full_matrices=False)",
    "eigh": "lambda a: jax.lax.linalg.eigh(a @ jnp.conj(a.mT) + a)",
    "eigh_upper": "lambda a: jax.lax.linalg.eigh(a, lower=False, symmetrize_input=False)",
    "svd": "lambda a: jax.lax.linalg.svd(a)",
    "svd_reduced": "lambda a: jax.lax.linalg.svd(a, full_matrices=False)",
    "svd_values": "lambda a: jax.lax.linalg.svd(a, compute_uv=False)",
    "cholesky": "lambda a: jax.lax.linalg.cholesky(a @ jnp.conj(a.mT) + 8 * jnp.eye(a.shape[-1], "
    "dtype=a.dtype))",
    "cholesky_fails": "lambda a: jax.lax.linalg.cholesky(a - 8 * jnp.eye(a.shape[-1], "
    "dtype=a.dtype))",
    "triangular_solve_left": "lambda a: jax.lax.linalg.triangular_solve(a + 6 * jnp.eye("
    "a.shape[-1], dtype=a.dtype), a, left_side=True, lower=True)",
    "triangular_solve_right_h": "lambda a: jax.lax.linalg.triangular_solve(a + 6 * jnp.eye("
    "a.shape[-1], dtype=a.dtype), a, transpose_a=True, conjugate_a=True, unit_diagonal=True)",
    "triangular_solve_conj": "lambda a: jax.lax.linalg.triangular_solve(a + 6 * jnp.eye("
    "a.shape[-1], dtype=a.dtype), a, left_side=True, conjugate_a=True)",
    "inv": "jnp.linalg.inv",
    "solve": "lambda a: jnp.linalg.solve(a, a[..., :2])",
    "det": "jnp.linalg.det",
    "slogdet": "lambda a: tuple(jnp.linalg.slogdet(a))",
    "cholesky_np": "lambda a: jnp.linalg.cholesky(a @ jnp.conj(a.mT) + 8 * jnp.eye(a.shape[-1], "
    "dtype=a.dtype))",
    "qr_np": "lambda a: tuple(jnp.linalg.qr(a))",
    "qr_np_complete": "lambda a: tuple(jnp.linalg.qr(a, mode='complete'))",
    "eigh_np": "lambda a: tuple(jnp.linalg.eigh(a))",
    "eigvalsh_np": "jnp.linalg.eigvalsh",
    "svd_np": "lambda a: tuple(jnp.linalg.svd(a))",
    "svd_np_hermitian": "lambda a: tuple(jnp.linalg.svd(a + jnp.conj(a.mT), hermitian=True))",
    "svdvals_np": "jnp.linalg.svdvals",
    "pinv": "jnp.linalg.pinv",
    "pinv_hermitian": "lambda a: jnp.linalg.pinv(a + jnp.conj(a.mT), hermitian=True)",
    "pinv_rtol": "lambda a: jnp.linalg.pinv(a, rtol=0.3)",
    "norm_2": "lambda a: jnp.linalg.norm(a, 2, axis=(-2, -1))",
    "norm_nuc": "lambda a: jnp.linalg.norm(a, 'nuc', axis=(-2, -1))",
    "norm_fro": "lambda a: jnp.linalg.norm(a, axis=(-2, -1))",
    "cond": "jnp.linalg.cond",
    "matrix_rank": "jnp.linalg.matrix_rank",
    "lu_pivots_to_permutation": "lambda a: jax.vmap(lambda p: jax.lax.linalg."
    "lu_pivots_to_permutation(p, a.shape[-2] + 1))(jax.lax.linalg.lu(a)[1].reshape(-1, "
    "min(a.shape[-2:])))",
    "tridiagonal_solve": "lambda a: jax.lax.linalg.tridiagonal_solve(a[..., 0, :], "
    "a[..., 1, :] + 4, a[..., 2, :], a[..., :3])",
    "tridiagonal_solve_grad": "lambda a: jax.grad(lambda a: jnp.sum(jnp.abs("
    "jax.lax.linalg.tridiagonal_solve(a[..., 0, :], a[..., 1, :] + 4, a[..., 2, :], "
    "a[..., :3]))))(a)",
    "householder_product": "lambda a: jax.lax.linalg.householder_product(a[..., :, :3], "
    "a[..., 0, :3] / 2)",
    "ormqr": "lambda a: jax.lax.linalg.ormqr(a[..., :, :3], a[..., 0, :3] / 2, a, transpose=True)",
    "ormqr_right": "lambda a: jax.lax.linalg.ormqr(a[..., :, :3], a[..., 0, :3] / 2, a, "
    "left=False)",
    "hessenberg": "jax.lax.linalg.hessenberg",
    "eig": "lambda a: jax.lax.linalg.eig(a)",
    "eig_np": "lambda a: tuple(jnp.linalg.eig(a))",
    "eigvals_np": "jnp.linalg.eigvals",
    "lstsq": "lambda a: jnp.linalg.lstsq(a, a[:, :2])",
    "lstsq_vector": "lambda a: jnp.linalg.lstsq(a, a[:, 0], rcond=0.1)",
    "diagonal_np": "lambda a: jnp.linalg.diagonal(a, offset=1)",
    "trace_np": "lambda a: jnp.linalg.trace(a, offset=-1)",
    "matrix_transpose": "jnp.linalg.matrix_transpose",
    "vecdot": "lambda a: jnp.linalg.vecdot(a, a)",
    "tensordot": "lambda a: jnp.linalg.tensordot(a, a, axes=1)",
    "outer": "lambda a: jnp.linalg.outer(a[0], a[-1])",
    "tensorinv": "lambda a: jnp.linalg.tensorinv(a.reshape(6, 3, 2), ind=1)",
    "tensorsolve": "lambda a: jnp.linalg.tensorsolve(a.reshape(3, 2, 6), a[:3, :2])",
    "cross": "lambda a: jnp.linalg.cross(a[:3, :3], a[3:6, :3])",
}
SQUARE_ONLY = {"inv", "solve", "det", "slogdet", "cond", "eigh", "eigh_upper", "eigh_np",
               "eigvalsh_np", "cholesky", "cholesky_fails", "cholesky_np", "svd_np_hermitian",
               "pinv_hermitian", "triangular_solve_left", "triangular_solve_right_h",
               "triangular_solve_conj", "eig", "eig_np", "eigvals_np", "hessenberg"}  # fmt: skip
# rows compared to float rounding (rtol) instead of bit for bit, and why:
# jnp.trace (core's numpy module) sums the strided diagonal of the flattened matrix, JAX masks
# the matrix and reduces over both axes, so sums of more than two terms can round differently
TOLERANT = {"trace_np": 1e-6}
# rows that need one matrix (no batch), or one particular shape
MATRIX_ONLY = {"lstsq", "lstsq_vector", "outer"}
SIX_BY_SIX_ONLY = {"tensorinv", "tensorsolve", "cross", "tensordot", "tridiagonal_solve",
                   "tridiagonal_solve_grad", "householder_product", "ormqr",
                   "ormqr_right"}  # fmt: skip

# (name, shape): one matrix, a batch, small sizes with closed forms, non-square matrices
SHAPES = {
    "6x6": (6, 6),
    "batch": (2, 3, 4, 4),
    "1x1": (1, 1),
    "2x2": (2, 2),
    "3x3": (3, 3),
    "5x3": (5, 3),
    "3x5": (3, 5),
}
CONFIGS = [("f32", np.float32, False), ("f64", np.float64, True), ("c64", np.complex64, False),
           ("c128", np.complex128, True)]  # fmt: skip


def _matrix(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _ops_for(shape):
    """The OPS rows that apply to matrices of `shape`."""
    square = shape[-1] == shape[-2]
    return [
        name
        for name in OPS
        if (square or name not in SQUARE_ONLY)
        and not (name == "solve" and shape[-1] < 2)
        and not (name in MATRIX_ONLY and len(shape) != 2)
        and not (name in SIX_BY_SIX_ONLY and shape != (6, 6))
        and not (name == "lstsq" and shape[-1] < 2)
    ]


# One program per shape computes every row, so each side compiles once per (dtype, shape).
_SNIPPET = """
fns = {name: eval(ops[name]) for name in names}
out = jax.jit(lambda a: {name: fn(a) for name, fn in fns.items()})(a)
result = {name: [np.asarray(x) for x in jax.tree_util.tree_leaves(v)] for name, v in out.items()}
"""


def _laminax(names, a, x64):
    fns = {name: eval(OPS[name]) for name in names}
    with enable_x64(x64):
        out = jax.jit(lambda a: {name: fn(a) for name, fn in fns.items()})(a)
        return {
            name: [np.asarray(x) for x in jax.tree_util.tree_leaves(v)] for name, v in out.items()
        }


def _agree(got, expected, rtol):
    if (got.dtype, got.shape) != (expected.dtype, expected.shape):
        return False
    if rtol is None:
        return np.array_equal(got, expected, equal_nan=True)
    return np.allclose(got, expected, rtol=rtol, atol=0, equal_nan=True)


# complex dtypes on the square shapes only, to keep the run short
RUNS = [
    (shape_name, config)
    for shape_name in SHAPES
    for config, dtype, _ in CONFIGS
    if shape_name in ("6x6", "batch", "2x2", "3x3") or dtype in (np.float32, np.float64)
]


@requires_jax
@pytest.mark.parametrize(("shape_name", "config"), RUNS, ids=[f"{s}-{c}" for s, c in RUNS])
def test_linalg_under_jit_is_bit_equal_to_jax(shape_name, config):
    _, dtype, x64 = next(c for c in CONFIGS if c[0] == config)
    shape = SHAPES[shape_name]
    names = _ops_for(shape)
    a = _matrix(shape, dtype)
    expected = run_jax(_SNIPPET, x64=x64, ops=OPS, names=names, a=a)
    got = _laminax(names, a, x64)
    mismatched = []
    for name in names:
        pairs = list(zip(got[name], expected[name], strict=True))
        if not all(_agree(g, e, TOLERANT.get(name)) for g, e in pairs):
            mismatched.append(name)
    assert mismatched == [], f"not bit-equal to JAX ({shape_name}, {config}): {mismatched}"


@requires_jax
@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 0)], ids=str)
def test_empty_matrices_match_jax(shape):
    source = (
        "lambda a: (jax.lax.linalg.qr(a), jax.lax.linalg.svd(a), "
        "jax.lax.linalg.svd(a, full_matrices=False), jnp.linalg.pinv(a))"
    )
    a = np.zeros(shape, np.float32)
    expected = run_jax(f"result = jax.tree_util.tree_leaves(jax.jit({source})(a))", a=a)
    got = [np.asarray(x) for x in jax.tree_util.tree_leaves(jax.jit(eval(source))(a))]
    for g, e in zip(got, expected, strict=True):
        assert (g.dtype, g.shape) == (e.dtype, e.shape)
        np.testing.assert_array_equal(g, e)


GRADS = {
    "pinv": "lambda a: jnp.sum(jnp.linalg.pinv(a) * jnp.arange(a.size).reshape(a.shape))",
    "pinv_wide": "lambda a: jnp.sum(jnp.linalg.pinv(a[:2]) * jnp.arange(2 * a.shape[1])"
    ".reshape(a.shape[1], 2))",
    "eigvals": "lambda a: jnp.real(jnp.sum(jnp.linalg.eigvals(a) * jnp.linalg.eigvals(a)))",
    "tridiagonal_solve": "lambda a: jnp.sum(jax.lax.linalg.tridiagonal_solve(a[0], a[1] + 4, "
    "a[2], a[:, :2]))",
    "det": "lambda a: jnp.linalg.det(a)",
    "slogdet": "lambda a: jnp.linalg.slogdet(a)[1]",
    "inv": "lambda a: jnp.sum(jnp.linalg.inv(a) * jnp.arange(a.size).reshape(a.shape))",
    "eigvalsh": "lambda a: jnp.linalg.eigvalsh(a) @ jnp.arange(a.shape[-1], dtype=a.dtype)",
    "svdvals": "lambda a: jnp.linalg.svd(a, compute_uv=False) @ jnp.arange(a.shape[-1], "
    "dtype=a.dtype)",
    "cholesky": "lambda a: jnp.sum(jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(a.shape[-1])))",
    "qr": "lambda a: jnp.sum(jnp.linalg.qr(a)[1] * jnp.arange(a.size).reshape(a.shape))",
    "qr_wide": "lambda a: jnp.sum(jax.lax.linalg.qr(a[:2])[1] * jnp.arange(2 * a.shape[1])"
    ".reshape(2, a.shape[1]))",
    "qr_pivoting": "lambda a: jnp.sum(jax.lax.linalg.qr(a, pivoting=True, full_matrices=False)"
    "[1] * jnp.arange(a.size).reshape(a.shape))",
}


@requires_jax
@pytest.mark.parametrize("name", sorted(GRADS))
@pytest.mark.parametrize("n", [3, 5])
def test_gradients_under_jit_match_jax(name, n):
    # the jvp rules are compositions that may order floating-point operations differently
    # from JAX's, so gradients are compared to float32 rounding, not bit for bit
    a = _matrix((n, n), np.float32)
    expected = run_jax(f"result = jax.jit(jax.grad({GRADS[name]}))(a)", a=a)
    got = np.asarray(jax.jit(jax.grad(eval(GRADS[name])))(a))
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4 * np.abs(expected).max())
