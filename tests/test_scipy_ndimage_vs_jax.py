"""`scipy.ndimage.map_coordinates` (orders 0 and 1, every mode JAX has) against real JAX 0.10.2
(values eagerly and under jit, gradients, errors) and SciPy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as sn
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
X = R.randn(5, 6).astype(np.float32)
I = np.arange(30, dtype=np.int32).reshape(5, 6)  # noqa: E741
C = (R.rand(2, 7) * 12 - 3).astype(np.float32)
L = (R.rand(1, 3, 4) * 9 - 2).astype(np.float32)
INPUTS = dict(X=X, I=I, C=C, L=L, V=X[0])
M = "jax.scipy.ndimage.map_coordinates"
MODES = ("constant", "nearest", "wrap", "mirror", "reflect")
EXPRS = [
    *(f"{M}({x}, C, {o}, mode='{m}', cval=1.5)" for o in (0, 1) for m in MODES
      for x in ("X", "I")),
    *(f"{M}(V, L, {o}, mode='{m}')" for o in (0, 1) for m in MODES),
    f"{M}(X, [C[0], C[1]], 1)", f"{M}(X, np.array([[0.5, 4.0], [2.0, 5.5]]), 1)",
    f"jax.grad(lambda x: {M}(x, C, 1, mode='reflect').sum())(X)",
    f"jax.grad(lambda c: {M}(X, c, 1, mode='nearest').sum())(C)",
    f"{M}(X, C, 3)", f"{M}(X, C[:1], 1)", f"{M}(X, C, 1, mode='grid-wrap')",
]


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("import jax.scipy.ndimage\n" + JAX_SNIPPET, exprs=EXPRS, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(jax_outcomes, index, jit):
    expr = EXPRS[index]
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index][jit], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["constant", "nearest", "mirror", "reflect"])
def test_linear_matches_scipy(mode):
    from laminax.scipy.ndimage import map_coordinates

    np.testing.assert_allclose(map_coordinates(X, C, 1, mode=mode, cval=0.5),
                               sn.map_coordinates(X, C, order=1, mode=mode, cval=0.5),
                               rtol=1e-5, atol=1e-5)
