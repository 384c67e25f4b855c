"""`scipy.sparse.linalg.cg` and `bicgstab` against real JAX 0.10.2 (values eagerly and under
jit, pytrees, preconditioners, implicit gradients, errors) and NumPy's direct solve."""

from __future__ import annotations

import numpy as np
import pytest
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
_Q = R.randn(6, 6)
SPD = (_Q @ _Q.T + 6 * np.eye(6)).astype(np.float32)
GEN = (R.randn(6, 6) + 6 * np.eye(6)).astype(np.float32)
B = R.randn(6).astype(np.float32)
D = np.diag(1 / np.diag(SPD)).astype(np.float32)
HERM = (SPD + 1j * (np.triu(SPD, 1) - np.tril(SPD, -1)) * 0.1).astype(np.complex64)
BC = (R.randn(6) + 1j * R.randn(6)).astype(np.complex64)
INPUTS = dict(SPD=SPD, GEN=GEN, B=B, D=D, HERM=HERM, BC=BC)
L = "jax.scipy.sparse.linalg"
PYTREE_OP = "lambda t: {'a': 2.0 * t['a'] + 0.5 * t['b'], 'b': 0.5 * t['a'] + 3.0 * t['b']}"
EXPRS = [
    *(f"{L}.{f}(SPD, B)[0]" for f in ("cg", "bicgstab")),
    *(f"{L}.{f}(SPD, B, M=D)[0]" for f in ("cg", "bicgstab")),
    *(f"{L}.{f}(lambda v: SPD @ v, B, x0=B, tol=1e-6)[0]" for f in ("cg", "bicgstab")),
    *(f"{L}.{f}(SPD, B, maxiter=2)[0]" for f in ("cg", "bicgstab")),
    *(f"{L}.{f}({PYTREE_OP}, {{'a': B, 'b': B[::-1]}})[0]" for f in ("cg", "bicgstab")),
    *(f"{L}.{f}(SPD, B, M=lambda v: D @ v, atol=1e-3)[0]" for f in ("cg", "bicgstab")),
    f"{L}.bicgstab(GEN, B)[0]", f"{L}.bicgstab(GEN, B, M=D)[0]", f"{L}.cg(HERM, BC)[0]",
    f"{L}.bicgstab(HERM, BC)[0]", f"{L}.cg(SPD, B)[1]",
    f"jax.grad(lambda b: {L}.cg(SPD, b)[0].sum())(B)",
    f"jax.grad(lambda b: {L}.bicgstab(GEN, b)[0][2])(B)",
    f"jax.grad(lambda m: {L}.cg(lambda v: m @ v, B)[0].sum())(SPD)",
    f"jax.vmap(lambda b: {L}.cg(SPD, b)[0])(np.stack([B, 2 * B]))",
    f"{L}.cg(SPD, B, x0=B[:3])", f"{L}.cg(SPD, B, x0=[B])",
]


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("import jax.scipy.sparse.linalg\n" + JAX_SNIPPET, exprs=EXPRS, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(jax_outcomes, index, jit):
    expr = EXPRS[index]
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index][jit], rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("name,a", [("cg", SPD), ("bicgstab", GEN)])
def test_solves_match_numpy(name, a):
    import laminax.scipy.sparse.linalg as sl

    x, info = getattr(sl, name)(a, B, tol=1e-6)
    assert info is None
    np.testing.assert_allclose(x, np.linalg.solve(a, B), rtol=1e-4, atol=1e-4)
