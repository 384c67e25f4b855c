"""`scipy.interpolate.RegularGridInterpolator` against real JAX 0.10.2 (values eagerly and under
jit, gradients, errors) and SciPy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.interpolate as si
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
GX = np.array([0.0, 0.5, 1.5, 3.0], np.float32)
GY = np.linspace(-1, 1, 5).astype(np.float32)
VAL = R.randn(4, 5).astype(np.float32)
VAL3 = R.randn(4, 5, 2).astype(np.float32)
XI = np.stack([R.rand(6) * 3.6 - 0.3, R.rand(6) * 2.4 - 1.2], -1).astype(np.float32)
INPUTS = dict(GX=GX, GY=GY, VAL=VAL, VAL3=VAL3, XI=XI, XIN=np.clip(XI, [0, -1], [3, 1]))
RGI = "jax.scipy.interpolate.RegularGridInterpolator"
EXPRS = [
    f"{RGI}((GX, GY), VAL)(XI)", f"{RGI}((GX, GY), VAL, method='nearest')(XI)",
    f"{RGI}((GX, GY), VAL, fill_value=None)(XI)", f"{RGI}((GX, GY), VAL, fill_value=-2.0)(XI)",
    f"{RGI}((GX, GY), VAL3)(XIN)", f"{RGI}((GX, GY), VAL)(XIN.reshape(2, 3, 2))",
    f"{RGI}((GX, GY), VAL)((XIN[:, 0], XIN[:, 1]))", f"{RGI}((GX,), VAL[:, 0])(XIN[:, :1])",
    f"{RGI}((GX, GY), VAL)(XI, method='nearest')",
    f"jax.grad(lambda v: {RGI}((GX, GY), v)(XIN).sum())(VAL)",
    f"jax.grad(lambda x: {RGI}((GX, GY), VAL, fill_value=None)(x).sum())(XIN)",
    f"{RGI}((GX, GY), VAL, method='cubic')", f"{RGI}((GX, GY), VAL, bounds_error=True)",
    f"{RGI}((GX, GY), VAL)(XI[:, :1])",
]


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("import jax.scipy.interpolate\n" + JAX_SNIPPET, exprs=EXPRS, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(jax_outcomes, index, jit):
    expr = EXPRS[index]
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index][jit], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_matches_scipy_and_is_a_pytree(method):
    import laminax
    from laminax.scipy.interpolate import RegularGridInterpolator

    interp = RegularGridInterpolator((GX, GY), VAL, method=method)
    want = si.RegularGridInterpolator((GX, GY), VAL, method=method, bounds_error=False)(XI)
    np.testing.assert_allclose(interp(XI), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(laminax.jit(lambda f, x: f(x))(interp, XI), want, rtol=1e-5,
                               atol=1e-5)
