"""lax.fft and jnp.fft against real JAX 0.10.2: values, dtypes and errors, eagerly and under
jit, plus gradients (the RFFT/IRFFT transposes) and batching, in float32 and float64."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from exprcompare import JAX_SNIPPET, compare, run_laminax
from jaxref import requires_jax, run_jax

R = np.random.RandomState(0)
F = R.randn(4, 6).astype(np.float32)
F3 = R.randn(2, 3, 5).astype(np.float32)
C = (R.randn(4, 6) + 1j * R.randn(4, 6)).astype(np.complex64)
C3 = (R.randn(2, 3, 4) + 1j * R.randn(2, 3, 4)).astype(np.complex64)
F5 = R.randn(2, 2, 3, 2, 4).astype(np.float32)
INTS = R.randint(-4, 5, size=(8,)).astype(np.int32)
INPUTS = dict(F=F, F3=F3, C=C, C3=C3, F5=F5, INTS=INTS)

EXPRS = [
    # lax.fft, each type
    "lax.fft(C, 'fft', (6,))", "lax.fft(C, lax.FftType.IFFT, (4, 6))",
    "lax.fft(F, 'rfft', (4, 6))", "lax.fft(C3, 'irfft', (3, 6))", "lax.fft(F3, 'RFFT', (5,))",
    "lax.fft(INTS, 'fft', (8,))", "lax.fft(F, 'fft', ())", "lax.fft(C, 'rfft', (6,))",
    "lax.fft(C, 'fft', (5,))", "lax.fft(C, 'Fft', (6,))",
    # jnp.fft, with n/s, axis/axes and norm
    "jnp.fft.fft(F)", "jnp.fft.fft(F, n=9, axis=0, norm='ortho')", "jnp.fft.ifft(C, n=4)",
    "jnp.fft.ifft(C, norm='forward')", "jnp.fft.rfft(F, n=7)", "jnp.fft.rfft(INTS, norm='ortho')",
    "jnp.fft.irfft(C)", "jnp.fft.irfft(C, n=11, axis=0, norm='ortho')",
    "jnp.fft.hfft(C)", "jnp.fft.hfft(C, n=5, axis=0, norm='forward')", "jnp.fft.ihfft(F)",
    "jnp.fft.ihfft(F, n=3, norm='ortho')", "jnp.fft.fft2(C3)", "jnp.fft.ifft2(F3, s=(4, 4))",
    "jnp.fft.rfft2(F3, axes=(0, 2))", "jnp.fft.irfft2(C3, norm='ortho')",
    "jnp.fft.fftn(F3)", "jnp.fft.fftn(F3, s=(3, 2), axes=(2, 0))", "jnp.fft.ifftn(C3)",
    "jnp.fft.rfftn(F3, norm='forward')", "jnp.fft.irfftn(C3, s=(2, 4, 5))",
    "jnp.fft.fftn(F5)", "jnp.fft.rfftn(F5)", "jnp.fft.irfftn(F5)", "jnp.fft.ifftn(F5[0])",
    "jnp.fft.fftshift(F)", "jnp.fft.ifftshift(F3, axes=(0, 2))", "jnp.fft.fftshift(INTS, 0)",
    # errors
    "jnp.fft.fft(F, norm='bad')", "jnp.fft.fft(F, n=0)", "jnp.fft.fft(F, axis=(0, 1))",
    "jnp.fft.fft2(F3, axes=(0,))", "jnp.fft.fftn(F3, s=(2, 2), axes=(1,))",
    "jnp.fft.fftn(F3, axes=(1, 1))",
    # derivatives (the transpose rules) and batching
    "jax.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2))(F)",
    "jax.grad(lambda x: jnp.sum(jnp.fft.rfft(x, n=5).imag * x[:, :3]))(F)",
    "jax.grad(lambda z: jnp.sum(jnp.fft.irfft(z) ** 3).real)(C)",
    "jax.grad(lambda z: jnp.real(jnp.sum(jnp.fft.irfft2(z, s=(4, 7)) * 2.0)))(C)",
    "jax.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.fft2(x, norm='ortho'))))(F)",
    "jax.vjp(lambda z: jnp.fft.fft(z), C)[1](C)",
    "jax.jvp(lambda x: jnp.fft.rfftn(x), (F3,), (F3 * 2.0,))",
    "jax.vmap(lambda x: jnp.fft.rfft(x), in_axes=1)(F)",
    "jax.vmap(lambda z: jnp.fft.irfft(z, n=5), in_axes=0)(C)",
]  # fmt: skip

FREQ_EXPRS = [
    "jnp.fft.fftfreq(7, 0.3)", "jnp.fft.fftfreq(8)", "jnp.fft.rfftfreq(9, 2.0)",
    "jnp.fft.fftfreq(4, dtype=jnp.int32)", "jnp.fft.rfftfreq(5, dtype=jnp.float16)",
    "jnp.fft.fftfreq([3])",
]  # fmt: skip

X64_EXPRS = [
    "jnp.fft.fft(F.astype(np.float64))", "jnp.fft.rfft(F.astype(np.float64), norm='ortho')",
    "jnp.fft.irfftn(C3.astype(np.complex128))", "jnp.fft.fftfreq(5, 0.1)",
    "jax.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2))(F.astype(np.float64))",
]  # fmt: skip


@functools.cache
def _jax_results(table: str, x64: bool):
    exprs = {"main": EXPRS, "freq": FREQ_EXPRS, "x64": X64_EXPRS}[table]
    return run_jax(JAX_SNIPPET, x64=x64, exprs=exprs, inputs=INPUTS)


@requires_jax
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("expr", EXPRS)
def test_fft_matches_jax(expr, jit):
    theirs = _jax_results("main", False)[EXPRS.index(expr)][jit]
    compare(expr, run_laminax(expr, INPUTS, jit), theirs, rtol=5e-4, atol=5e-4)


@requires_jax
@pytest.mark.parametrize("expr", FREQ_EXPRS)
def test_frequencies_match_jax(expr):
    theirs = _jax_results("freq", False)[FREQ_EXPRS.index(expr)][False]
    compare(expr, run_laminax(expr, INPUTS, False), theirs, rtol=1e-6, atol=1e-7)


@requires_jax
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("expr", X64_EXPRS)
def test_fft_matches_jax_with_x64(expr, jit):
    from laminax_core import config

    theirs = _jax_results("x64", True)[X64_EXPRS.index(expr)][jit]
    with config.enable_x64(True):
        ours = run_laminax(expr, INPUTS, jit)
    compare(expr, ours, theirs, rtol=1e-10, atol=1e-10)


@requires_jax
def test_fft_jaxpr_equation_matches_jax():
    import laminax

    source = "result = str(jax.make_jaxpr(lambda x: jax.lax.fft(x, 'rfft', (6,)))(F))"
    theirs = run_jax(source, F=F)
    ours = str(laminax.make_jaxpr(lambda x: laminax.lax.fft(x, "rfft", (6,)))(F))
    line = "fft[fft_lengths=(6,) fft_type=2] a"
    assert line in theirs and line in ours
