"""`scipy.signal`'s convolutions and `detrend` against real JAX 0.10.2 (values eagerly and under
jit, gradients, errors) and SciPy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
A = R.randn(7, 5).astype(np.float32)
K = R.randn(4, 2).astype(np.float32)
V = R.randn(9).astype(np.float32)
W = R.randn(4).astype(np.float32)
Z = (R.randn(6) + 1j * R.randn(6)).astype(np.complex64)
CUBE = R.randn(3, 4, 5).astype(np.float32)
T = R.randn(3, 20).astype(np.float32)
INPUTS = dict(A=A, K=K, V=V, W=W, Z=Z, CUBE=CUBE, T=T)
S = "jax.scipy.signal"
EXPRS = [
    *(f"{S}.{f}({x}, {y}, '{m}')" for f in ("convolve", "correlate", "convolve2d", "correlate2d",
                                            "fftconvolve")
      for m in ("full", "same", "valid") for x, y in (("A", "K"), ("K", "A"))),
    *(f"{S}.{f}({x}, {y}, mode='{m}')" for f in ("convolve", "correlate")
      for m in ("full", "same", "valid") for x, y in (("V", "W"), ("W", "Z"))),
    f"{S}.convolve(CUBE, CUBE[:2, 1:3, :2], 'same')", f"{S}.convolve(A, K, method='fft')",
    f"{S}.correlate(V, W, method='fft')", f"{S}.convolve(np.arange(5), np.arange(3))",
    f"{S}.fftconvolve(CUBE, CUBE[:1, :, :2], axes=(0, 2))", f"{S}.fftconvolve(Z, Z, 'same')",
    f"{S}.fftconvolve(A, K[:, :1], 'same', axes=0)", f"{S}.fftconvolve(A, A[:3], 'same', axes=0)",
    f"{S}.fftconvolve(A, A[:3], 'valid', axes=[0])",
    f"jax.grad(lambda a: {S}.convolve(a, K, 'same')[2, 1])(A)",
    f"jax.grad(lambda k: {S}.correlate2d(A, k, 'valid').sum())(K)",
    f"jax.grad(lambda a: {S}.fftconvolve(a, K)[3, 2])(A)",
    f"{S}.detrend(T)", f"{S}.detrend(T, axis=0)", f"{S}.detrend(T, type='constant')",
    f"{S}.detrend(T, bp=[5, 12])", f"{S}.detrend(T, bp=7)", f"{S}.detrend(np.arange(6))",
    f"jax.grad(lambda t: {S}.detrend(t)[1, 3])(T)",
    f"{S}.convolve(A, V, 'full')", f"{S}.convolve(A, CUBE[0], 'valid')",
    f"{S}.convolve2d(V, W)", f"{S}.convolve(A, K, 'middle')", f"{S}.detrend(T, type='cubic')",
]


@pytest.fixture(scope="module")
def jax_outcomes():
    return run_jax("import jax.scipy.signal\n" + JAX_SNIPPET, exprs=EXPRS, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("index", range(len(EXPRS)), ids=EXPRS)
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(jax_outcomes, index, jit):
    expr = EXPRS[index]
    compare(expr, run_laminax(expr, INPUTS, jit), jax_outcomes[index][jit], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_matches_scipy(mode):
    import laminax.scipy.signal as sig

    for f in ("convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve"):
        np.testing.assert_allclose(getattr(sig, f)(A, K, mode), getattr(ss, f)(A, K, mode),
                                   rtol=1e-4, atol=1e-4, err_msg=f)
    np.testing.assert_allclose(sig.detrend(T, bp=[5, 12]), ss.detrend(T, bp=[5, 12]), atol=1e-5)
