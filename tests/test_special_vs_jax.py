"""laminax's special functions against real JAX 0.10.2, under jit, in float32 and float64:
the lowered lax programs (igamma, igammac, igamma_grad_a, random_gamma_grad, bessel_i0e,
betainc) and `scipy.special`'s functions, values at ordinary and edge arguments (0, negative,
large, inf, NaN) and gradients.

The lax programs are JAX's algorithms with the same operations, so most values are equal bit
for bit; the tolerances leave room for XLA fusing the same arithmetic differently (a few ulps,
more in float32 where a series cancels).
"""

import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core import config, grad, lax, vmap
from laminax_core.scipy import special
from laminax_dispatch import jit

X = np.array([-30, -5.5, -1, -0.3, 0, 0.05, 0.3, 0.5, 1, 1.5, 2, 2.5, 3.3, 5, 7, 8.5, 9.5, 12, 20,
              27, 40, 70, 200, 1e5, np.inf, -np.inf, np.nan])
Y = np.abs(X[::-1]) / 3  # non-negative partners (shapes, orders)
P = np.linspace(0, 1, X.size)  # points of [0, 1]

# name -> an expression in x, y, p evaluated with S = scipy.special and L = lax on both sides
VALUES = {
    "igamma": "L.igamma(y, x)",
    "igammac": "L.igammac(y, x)",
    "igamma_grad_a": "L.igamma_grad_a(y, x)",
    "random_gamma_grad": "L.random_gamma_grad(y, x)",
    "bessel_i0e": "L.bessel_i0e(x)",
    "betainc_lax": "L.betainc(y, x[::-1], p)",
    "gammainc": "S.gammainc(y, x)",
    "gammaincc": "S.gammaincc(y, x)",
    "betainc": "S.betainc(y + 0.5, y[::-1] + 0.5, p)",
    "i0": "S.i0(x)",
    "i0e": "S.i0e(x)",
    "i1": "S.i1(x)",
    "i1e": "S.i1e(x)",
    "beta": "S.beta(x, y)",
    "betaln": "S.betaln(y, y[::-1])",
    "loggamma": "S.loggamma(x)",
    "comb": "S.comb(y, x)",
    "comb_repetition": "S.comb(y, x, repetition=True)",
    "erfcx": "S.erfcx(x)",
    "dawsn": "S.dawsn(x)",
    "expi": "S.expi(x)",
    "exp1": "S.exp1(x)",
    "expn": "S.expn(2 * y // 3, x)",
    "spence": "S.spence(y)",
    "fresnel_s": "S.fresnel(x)[0]",
    "fresnel_c": "S.fresnel(x)[1]",
    "si": "S.sici(x)[0]",
    "ci": "S.sici(x)[1]",
    "owens_t": "S.owens_t(x, y - 3)",
    "owens_t_swapped": "S.owens_t(y, x / 7)",
}


def _tolerance(x64):
    return dict(rtol=1e-12, atol=1e-300) if x64 else dict(rtol=3e-6, atol=1e-37)


def _jax_values(exprs, x64, **inputs):
    src = ("import jax.scipy.special as S\nfrom jax import lax as L\n"
           f"result = list(jax.jit(lambda x, y, p: ({', '.join(exprs)},))(x, y, p))")
    return run_jax(src, x64=x64, **inputs)


def _assert_close(got, expected, x64, name):
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape, name
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=name)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected), err_msg=name)
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], err_msg=name, **_tolerance(x64))


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_values_under_jit_match_jax(x64):
    dtype = np.float64 if x64 else np.float32
    inputs = dict(x=X.astype(dtype), y=Y.astype(dtype), p=P.astype(dtype))
    expected = _jax_values(list(VALUES.values()), x64, **inputs)
    with config.enable_x64(x64), np.errstate(all="ignore"):
        fun = eval("lambda x, y, p: (" + ", ".join(VALUES.values()) + ",)",
                   {"S": special, "L": lax})
        got = jit(fun)(**inputs)
    for name, g, e in zip(VALUES, got, expected, strict=True):
        _assert_close(g, e, x64, name)


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_bernoulli_matches_jax(x64):
    expected = run_jax("import jax.scipy.special as S\nresult = S.bernoulli(14)", x64=x64)
    with config.enable_x64(x64):
        got = special.bernoulli(14)
    _assert_close(got, expected, x64, "bernoulli")


# name -> a scalar function of x (positive arguments of moderate size)
GRADS = {
    "gammainc_x": "lambda x: S.gammainc(2.5, x)",
    "gammainc_a": "lambda x: S.gammainc(x, 2.5)",
    "gammaincc_a": "lambda x: S.gammaincc(x, 1.5)",
    "betainc_x": "lambda x: S.betainc(2.0, 3.0, x / 10)",
    "i0": "S.i0",
    "i0e": "S.i0e",
    "i1": "S.i1",
    "i1e": "S.i1e",
    "loggamma": "S.loggamma",
    "beta": "lambda x: S.beta(x, 2.5)",
    "betaln": "lambda x: S.betaln(x, 9.0)",
    "erfcx": "S.erfcx",
    "dawsn": "S.dawsn",
    "expi": "S.expi",
    "exp1": "S.exp1",
    "expn": "lambda x: S.expn(3, x)",
    "spence": "S.spence",
    "sici": "lambda x: S.sici(x)[0] + 2 * S.sici(x)[1]",
    "fresnel": "lambda x: S.fresnel(x)[0] + 3 * S.fresnel(x)[1]",
    "owens_t_h": "lambda x: S.owens_t(x, 0.7)",
    "owens_t_a": "lambda x: S.owens_t(0.7, x - 3)",
}
GRAD_X = np.array([0.2, 0.7, 1.3, 2.9, 4.5, 7.5])


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_gradients_under_jit_match_jax(x64):
    dtype = np.float64 if x64 else np.float32
    x = GRAD_X.astype(dtype)
    src = ("import jax.scipy.special as S\nfrom jax import lax as L\n"
           f"fns = [{', '.join(GRADS.values())}]\n"
           "result = [jax.jit(jax.vmap(jax.grad(f)))(x) for f in fns]")
    expected = run_jax(src, x64=x64, x=x)
    with config.enable_x64(x64):
        for (name, fn_src), e in zip(GRADS.items(), expected, strict=True):
            fn = eval(fn_src, {"S": special, "L": lax})
            got = jit(vmap(grad(fn)))(x)
            # (sin and cos differ in XLA's last bits between the two traces)
            np.testing.assert_allclose(got, e, rtol=1e-11 if x64 else 2e-5, atol=1e-6,
                                       err_msg=name)


@requires_jax
def test_gamma_sample_gradients_match_jax():
    # random.gamma/loggamma/beta differentiate through random_gamma_grad, as JAX's do
    from laminax_core import random as jr

    a = np.array([0.3, 1.0, 2.5, 9.0], np.float32)
    expected = run_jax(
        "k = jax.random.PRNGKey(3)\n"
        "result = [jax.jit(jax.grad(lambda a: jax.random.gamma(k, a).sum()))(a),\n"
        "          jax.jit(jax.grad(lambda a: jax.random.loggamma(k, a).sum()))(a),\n"
        "          jax.jit(jax.grad(lambda a: jax.random.beta(k, a, a[::-1]).sum()))(a)]", a=a)
    key = jr.PRNGKey(3)
    got = [jit(grad(lambda a: jr.gamma(key, a).sum()))(a),
           jit(grad(lambda a: jr.loggamma(key, a).sum()))(a),
           jit(grad(lambda a: jr.beta(key, a, a[::-1]).sum()))(a)]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_hyp1f1_and_bessel_jn_match_jax(x64):
    dtype = np.float64 if x64 else np.float32
    a = np.array([0, 0.5, 1, 2, -1.5, 3, 1, 2.5, 7, 0.3, 2, np.nan], dtype)
    b = np.array([1, 1.5, 1, 3, 2.5, 0, 4, 2.5, 3, 0.7, 5, 1], dtype)
    x = np.array([1, -2, 3, 0.5, 10, 1, 150, -120, 20, 0.1, -30, 1], dtype)
    z = np.array([0.0, 0.5, 1, 2.5, 7, 15, -3, 30], dtype)
    n_iter = 50 if x64 else 20  # float32 overflows from order 50 (NaN, in JAX too)
    expected = run_jax(
        "import jax.scipy.special as S\n"
        "result = [jax.jit(S.hyp1f1)(a, b, x),\n"
        "          jax.jit(lambda z: S.bessel_jn(z, v=3, n_iter=n))(z),\n"
        "          *jax.jit(jax.vmap(jax.grad(S.hyp1f1, (0, 1, 2))))(a[1:5], b[1:5], x[1:5])]",
        a=a, b=b, x=x, z=z, n=n_iter, x64=x64)
    with config.enable_x64(x64):
        got = [jit(special.hyp1f1)(a, b, x),
               jit(lambda z: special.bessel_jn(z, v=3, n_iter=n_iter))(z),
               *jit(vmap(grad(special.hyp1f1, (0, 1, 2))))(a[1:5], b[1:5], x[1:5])]
    for name, g, e in zip(["hyp1f1", "bessel_jn", "d_a", "d_b", "d_x"], got, expected,
                          strict=True):
        _assert_close(g, e, x64, name)


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_wofz_and_complex_erfcx_match_jax(x64):
    re = np.array([0, 1, -2, 0.5, 3, -0.2, 10, -7, 1e3, 0, np.nan])
    im = np.array([0, 1, -0.5, -3, 0.1, 2, -1, 4, 1, -1e3, 0])
    z = (re + 1j * im).astype(np.complex128 if x64 else np.complex64)
    r = re[:8].astype(np.float64 if x64 else np.float32)
    expected = run_jax(
        "import jax.scipy.special as S\n"
        "result = [jax.jit(S.wofz)(z), jax.jit(S.erfcx)(z), jax.jit(S.wofz)(r),\n"
        "          jax.jit(jax.vmap(jax.grad(lambda v: S.wofz(v).real + 2 * S.wofz(v).imag)))(r)]",
        z=z, r=r, x64=x64)
    with config.enable_x64(x64):
        got = [jit(special.wofz)(z), jit(special.erfcx)(z), jit(special.wofz)(r),
               jit(vmap(grad(lambda v: special.wofz(v).real + 2 * special.wofz(v).imag)))(r)]
    for g, e in zip(got, expected, strict=True):
        g = np.asarray(g)
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(np.isnan(g), np.isnan(e))
        keep = ~np.isnan(e)
        np.testing.assert_allclose(g[keep], e[keep], rtol=1e-12 if x64 else 3e-5,
                                   atol=0 if x64 else 1e-6)


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_hyp2f1_values_and_gradients_match_jax(x64):
    # rows reach every branch: the power series, poles, Euler's transformation, b == c,
    # Gauss's theorem at x = 1, terminating sums, and the digamma series near x = 1 with
    # c - a - b = 0, 2 and -1
    rows = [(1, 1, 2, 0.5), (0.5, 1.5, 3, 0.3), (-2, 3, 4, 0.7), (1.5, 2.5, 4, 0.95),
            (2, 3, 5, 0.99), (0, 1, 1, 0.5), (3, 2, 0, 0.5), (1, 2, 3, 1), (-3, 2, 5, 0.4),
            (2.5, 0.5, 3, -0.5), (1, 1, 2, 1.5), (0.3, 0.7, 1, 0.97), (1, 1, 4, 0.95),
            (0.5, 1, 3.5, 0.93), (2, 2, 3, 0.95), (np.nan, 1, 1, 0.2), (1, 1, -2, 0.3)]
    dtype = np.float64 if x64 else np.float32
    a, b, c, x = (np.array(col, dtype) for col in zip(*rows, strict=True))
    expected = run_jax(
        "import jax.scipy.special as S\n"
        "result = [jax.jit(S.hyp2f1)(a, b, c, x),\n"
        "          *jax.jit(jax.vmap(jax.grad(S.hyp2f1, (0, 1, 2, 3))))(a[:5], b[:5], c[:5],\n"
        "                                                               x[:5])]",
        a=a, b=b, c=c, x=x, x64=x64)
    with config.enable_x64(x64), np.errstate(all="ignore"):
        got = [jit(special.hyp2f1)(a, b, c, x),
               *jit(vmap(grad(special.hyp2f1, (0, 1, 2, 3))))(a[:5], b[:5], c[:5], x[:5])]
    for name, g, e in zip(["hyp2f1", "d_a", "d_b", "d_c", "d_x"], got, expected, strict=True):
        _assert_close(g, e, x64, name)


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_sph_harm_y_matches_jax(x64):
    n = np.array([0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 2])
    m = np.array([0, 0, -1, 1, -2, 2, -3, 0, 4, -5, 3])
    dtype = np.float64 if x64 else np.float32
    theta = np.linspace(0.1, 3.0, n.size).astype(dtype)
    phi = np.linspace(-2, 5, n.size).astype(dtype)
    expected = run_jax("import jax.scipy.special as S\n"
                       "result = jax.jit(lambda t, p: S.sph_harm_y(n, m, t, p, n_max=5))(t, p)",
                       n=n, m=m, t=theta, p=phi, x64=x64)
    with config.enable_x64(x64):
        got = np.asarray(jit(lambda t, p: special.sph_harm_y(n, m, t, p, n_max=5))(theta, phi))
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-13 if x64 else 1e-6,
                               atol=1e-15 if x64 else 1e-7)


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_complex_loggamma_and_gamma_match_jax(x64):
    re = np.array([5, 0.5, -2.5, -3, 0, 1, 10, -7.3, 0.2, 30, np.nan, 2])
    im = np.array([0, 1, 0.5, 0, 0, -2, 3, -4, 0, -20, 0, np.inf])
    z = (re + 1j * im).astype(np.complex128 if x64 else np.complex64)
    expected = run_jax("import jax.scipy.special as S\n"
                       "result = [jax.jit(S.loggamma)(z), jax.jit(S.gamma)(z)]", z=z, x64=x64)
    with config.enable_x64(x64), np.errstate(all="ignore"):
        got = [jit(special.loggamma)(z), jit(special.gamma)(z)]
    for g, e in zip(got, expected, strict=True):
        g = np.asarray(g)
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(np.isnan(g), np.isnan(e))
        keep = ~np.isnan(e)
        np.testing.assert_allclose(g[keep], e[keep], rtol=1e-13 if x64 else 5e-6)
