"""`scipy.fft` (dct family), `scipy.integrate.trapezoid` and `scipy.cluster.vq.vq` against
real JAX 0.10.2 (values eagerly and under jit, errors) and SciPy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.cluster.vq as svq
import scipy.fft as sfft
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
X = R.randn(3, 6).astype(np.float32)
ODD = R.randn(4, 5).astype(np.float32)
CUBE = R.randn(2, 3, 4).astype(np.float32)
Z = (R.randn(5) + 1j * R.randn(5)).astype(np.complex64)
OBS = R.randn(7, 2).astype(np.float32)
BOOK = R.randn(3, 2).astype(np.float32)
INPUTS = dict(X=X, ODD=ODD, CUBE=CUBE, Z=Z, OBS=OBS, BOOK=BOOK)
F = "jax.scipy.fft"
EXPRS = [
    f"{F}.dct(X)", f"{F}.dct(X, axis=0)", f"{F}.dct(ODD, norm='ortho')", f"{F}.dct(X, n=9)",
    f"{F}.dct(X, n=4, axis=1)", f"{F}.dct(Z)", f"{F}.dct(np.arange(6))", f"{F}.dct(X, norm='backward')",
    f"{F}.idct(X)", f"{F}.idct(ODD, norm='ortho')", f"{F}.idct(ODD, axis=0)", f"{F}.idct(X, n=7)",
    f"{F}.idct({F}.dct(ODD))", f"{F}.dctn(CUBE)", f"{F}.dctn(CUBE, axes=(0, 2), norm='ortho')",
    f"{F}.dctn(CUBE, s=(5, 3))", f"{F}.idctn(CUBE)", f"{F}.idctn(CUBE, axes=[1], norm='ortho')",
    f"{F}.idctn({F}.dctn(CUBE, norm='ortho'), norm='ortho')",
    f"jax.grad(lambda x: {F}.dct(x, norm='ortho')[1, 2])(X)",
    f"{F}.dct(X, type=3)", f"{F}.idct(X, type=1)", f"{F}.dct(X, norm='forward')",
    f"{F}.dctn(X, s=(1, 2, 3))",
    "jax.scipy.integrate.trapezoid(X)", "jax.scipy.integrate.trapezoid(X, dx=0.5, axis=0)",
    "jax.scipy.integrate.trapezoid(X, x=jnp.linspace(0, 1, 6))",
    "jax.scipy.integrate.trapezoid(X, x=X ** 2)",
    "jax.scipy.cluster.vq.vq(OBS, BOOK)", "jax.scipy.cluster.vq.vq(OBS[:, 0], BOOK[:, 0])",
    "jax.scipy.cluster.vq.vq(np.arange(6).reshape(3, 2), np.arange(4).reshape(2, 2))",
    "jax.scipy.cluster.vq.vq(OBS, BOOK[:, 0])", "jax.scipy.cluster.vq.vq(CUBE, CUBE)",
]


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("import jax.scipy.fft, jax.scipy.integrate, jax.scipy.cluster.vq\n"
                   + JAX_SNIPPET, exprs=EXPRS, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(jax_outcomes, index, jit):
    expr = EXPRS[index]
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index][jit], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_dct_matches_scipy(n, norm):
    import laminax.scipy.fft as F  # noqa: N812
    from laminax import enable_x64

    x = R.randn(3, n)
    with enable_x64(True):
        np.testing.assert_allclose(F.dct(x, norm=norm), sfft.dct(x, norm=norm), atol=1e-12)
        np.testing.assert_allclose(F.idct(x, norm=norm), sfft.idct(x, norm=norm), atol=1e-12)
        np.testing.assert_allclose(F.dctn(x, norm=norm), sfft.dctn(x, norm=norm), atol=1e-12)


def test_vq_matches_scipy():
    import laminax.scipy.cluster.vq as V  # noqa: N812

    code, dist = V.vq(OBS, BOOK)
    want_code, want_dist = svq.vq(OBS, BOOK)
    np.testing.assert_array_equal(code, want_code)
    np.testing.assert_allclose(dist, want_dist, rtol=1e-5)
