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
    f"{S}.stft(T, nperseg=8)", f"{S}.stft(T[0], nperseg=7, noverlap=2, nfft=10, boundary='even')",
    f"{S}.stft(T.T, nperseg=6, axis=0, boundary='odd')", f"{S}.stft(Z, nperseg=4)",
    f"{S}.stft(T, window='hamming', nperseg=6, padded=False, boundary=None, detrend='linear')",
    f"{S}.stft(T, window='blackman', nperseg=5, boundary='constant', return_onesided=False)",
    f"{S}.welch(T)", f"{S}.welch(T, nperseg=8, average='median')", f"{S}.welch(T.T, axis=0)",
    f"{S}.welch(T[1], nperseg=7, scaling='spectrum', nfft=12, window='boxcar')",
    f"{S}.csd(T, T[::-1], nperseg=8)", f"{S}.csd(T[0], T[1, :13], nperseg=4, window=np.ones(4))",
    f"{S}.csd(T, T + 1j * T, nperseg=5)", f"{S}.csd(T, T[0], nperseg=8)",
    f"{S}.istft({S}.stft(T, nperseg=8)[2])", f"{S}.istft({S}.stft(T, nperseg=6)[2], boundary=False)",
    f"{S}.istft({S}.stft(T.T, nperseg=8, axis=0)[2], time_axis=-1, freq_axis=0)",
    f"{S}.istft({S}.stft(Z, nperseg=4, return_onesided=False)[2], input_onesided=False)",
    f"jax.grad(lambda t: {S}.welch(t, nperseg=8)[1].sum())(T)",
    f"jax.grad(lambda t: {S}.istft({S}.stft(t, nperseg=8)[2])[1][0, 3])(T)",
    f"{S}.stft(T, nperseg=8, noverlap=8)", f"{S}.welch(T, average='mode')",
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


def test_odd_segment_round_trip_matches_scipy():
    import laminax.scipy.signal as sig

    _, _, zxx = sig.stft(T[0], nperseg=7, noverlap=3)
    _, want = ss.istft(ss.stft(T[0], nperseg=7, noverlap=3)[2], nperseg=7, noverlap=3)
    np.testing.assert_allclose(sig.istft(zxx, nperseg=7, noverlap=3)[1], want, atol=1e-5)
    np.testing.assert_allclose(sig.welch(T, nperseg=8)[1], ss.welch(T, nperseg=8)[1], rtol=1e-4,
                               atol=1e-6)
