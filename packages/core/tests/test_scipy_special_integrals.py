"""The `scipy.special` functions added on the incomplete gamma/beta programs, the Bessel
primitives and rational approximations (gammainc, betainc, beta, comb, i0/i1, erfcx, dawsn,
expi/exp1/expn, spence, bernoulli), on the reference interpreter: known values, closed forms,
identities, derivatives and errors."""

import doctest
import math

import numpy as np
import pytest
from laminax_core import config, grad
from laminax_core.internal import set_eager_impl
from laminax_core.scipy import (
    _special_complex_gamma,
    _special_faddeeva,
    _special_fresnel,
    _special_harmonics,
    _special_integrals,
    _special_series,
    special,
)


@pytest.fixture(autouse=True)
def _reference_interpreter():
    previous = set_eager_impl(None)
    yield
    set_eager_impl(previous)


def _f64(fn, *args):
    with config.enable_x64(True), np.errstate(all="ignore"):
        return np.asarray(fn(*(np.asarray(a, np.float64) for a in args)))


X = np.array([0.1, 0.5, 1.0, 2.5, 7.0, 20.0])


def test_gammainc_and_gammaincc_of_shape_one_are_exponential():
    np.testing.assert_allclose(_f64(special.gammainc, np.ones(6), X), -np.expm1(-X), rtol=1e-13)
    np.testing.assert_allclose(_f64(special.gammaincc, np.ones(6), X), np.exp(-X), rtol=1e-12)
    out = special.gammainc(2, np.array([1, 3], np.int32))  # integers promote to float32
    assert out.dtype == np.float32


def test_gammainc_gradient_in_x_is_the_gamma_density():
    a, x = 2.5, np.float32(1.7)
    slope = grad(lambda x: special.gammainc(np.float32(a), x))(x)
    np.testing.assert_allclose(slope, x ** (a - 1) * np.exp(-x) / math.gamma(a), rtol=1e-5)


def test_betainc_matches_the_binomial_tail_and_its_x_gradient_is_the_density():
    x = np.array([0.1, 0.5, 0.8])
    tail = 6 * x**2 * (1 - x) ** 2 + 4 * x**3 * (1 - x) + x**4  # I_x(2, 3)
    np.testing.assert_allclose(_f64(special.betainc, 2.0, 3.0, x), tail, rtol=1e-13)
    slope = grad(lambda x: special.betainc(np.float32(2), np.float32(3), x))(np.float32(0.3))
    np.testing.assert_allclose(slope, 12 * 0.3 * 0.7**2, rtol=1e-5)


def test_beta_and_betaln_match_math_lgamma_also_for_large_arguments():
    np.testing.assert_allclose(_f64(special.beta, 2.0, 3.0), 1 / 12, rtol=1e-14)
    np.testing.assert_allclose(_f64(special.beta, -0.5, 2.0), math.gamma(-0.5) /
                               math.gamma(1.5), rtol=1e-13)
    # past b = 8 the series (as JAX's, cdflib's coefficients) is good to about 1e-7 relative
    for a, b, tol in [(0.5, 5.0, 1e-14), (0.5, 20.0, 1e-7), (3.0, 1e6, 1e-9)]:
        expected = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        np.testing.assert_allclose(_f64(special.betaln, a, b), expected, rtol=tol)
        np.testing.assert_allclose(_f64(special.betaln, b, a), expected, rtol=tol)


def test_loggamma_is_nan_off_the_positive_axis():
    out = _f64(special.loggamma, np.array([5.0, 0.5, -0.5, 0.0]))
    np.testing.assert_allclose(out[:2], [math.log(24), math.lgamma(0.5)], rtol=1e-14)
    assert np.isnan(out[2:]).all()


def test_comb_counts_combinations():
    n = np.array([5.0, 5.0, 10.0, 4.0, -1.0, 3.0])
    k = np.array([2.0, 6.0, 3.0, 0.0, 1.0, -1.0])
    np.testing.assert_allclose(_f64(special.comb, n, k), [10, 0, 120, 1, 0, 0], rtol=1e-12)
    with config.enable_x64(True):
        repeated = special.comb(np.float64(3), np.float64(2), repetition=True)
    np.testing.assert_allclose(repeated, 6, rtol=1e-12)  # multisets of size 2 from 3


def test_bessel_i0_i1_and_scaled_versions():
    x = np.array([-3.0, 0.0, 0.5, 2.0, 9.0])
    np.testing.assert_allclose(_f64(special.i0, x), np.i0(x), rtol=1e-13)
    np.testing.assert_allclose(_f64(special.i0e, x), np.exp(-np.abs(x)) * np.i0(x), rtol=1e-13)
    # I1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!)
    i1 = [sum((v / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1))
              for k in range(40)) for v in x]
    np.testing.assert_allclose(_f64(special.i1, x), i1, rtol=1e-12)
    np.testing.assert_allclose(_f64(special.i1e, x), np.exp(-np.abs(x)) * i1, rtol=1e-12)
    slope = grad(special.i0)(np.float32(1.5))  # I0' = I1
    np.testing.assert_allclose(slope, i1[2] * 0 + _f64(special.i1, 1.5), rtol=1e-5)


def test_erfcx_is_the_scaled_erfc_and_its_large_x_asymptote():
    x = np.array([-2.0, 0.0, 0.5, 3.0, 8.0])
    expected = [math.exp(v * v) * math.erfc(v) for v in x]
    np.testing.assert_allclose(_f64(special.erfcx, x), expected, rtol=1e-13)
    big = np.float32(1e4)  # past sqrt(log(float32 max)): the asymptotic series
    np.testing.assert_allclose(special.erfcx(big), 1 / (big * math.sqrt(math.pi)), rtol=1e-6)
    slope = grad(special.erfcx)(np.float32(0.7))
    np.testing.assert_allclose(slope, 2 * 0.7 * special.erfcx(np.float32(0.7))
                               - 2 / math.sqrt(math.pi), rtol=1e-5)


def _dawson(x, steps=4000):
    # exp(-x^2) integral_0^x exp(t^2) dt by Simpson's rule
    t = np.linspace(0, x, steps + 1)
    weights = np.ones(steps + 1)
    weights[1:-1:2], weights[2:-1:2] = 4, 2
    return math.exp(-x * x) * (x / steps / 3) * float(np.sum(weights * np.exp(t * t)))


def test_dawsn_matches_its_integral_in_each_region_and_is_odd():
    x = np.array([0.3, 1.0, 3.0, 4.0, 6.0, 9.0])
    # (the quadrature, not the approximation, limits the agreement)
    np.testing.assert_allclose(_f64(special.dawsn, x), [_dawson(v) for v in x], rtol=1e-7)
    np.testing.assert_allclose(_f64(special.dawsn, -x), -_f64(special.dawsn, x), rtol=0)
    slope = grad(special.dawsn)(np.float32(1.0))  # F' = 1 - 2 x F
    np.testing.assert_allclose(slope, 1 - 2 * special.dawsn(np.float32(1.0)), rtol=1e-5)


def test_exponential_integrals_known_values():
    np.testing.assert_allclose(_f64(special.expi, [1.0, 3.0, 50.0, -1.0]),
                               [1.8951178163559368, 9.933832570625416, 1.0585636897131690e20,
                                -0.21938393439552029], rtol=1e-13)
    np.testing.assert_allclose(_f64(special.exp1, [0.5, 1.0, 3.0]),
                               [0.5597735947761608, 0.21938393439552029, 0.013048381094197037],
                               rtol=1e-13)
    # E_{n+1}(x) = (exp(-x) - x E_n(x)) / n, from E_1(0.5)
    e2 = math.exp(-0.5) - 0.5 * 0.5597735947761608
    e3 = (math.exp(-0.5) - 0.5 * e2) / 2
    np.testing.assert_allclose(_f64(special.expn, [2.0, 3.0, 0.0, 2.0], [1.0, 0.5, 2.0, 0.5]),
                               [0.14849550677592205, e3, math.exp(-2) / 2, e2], rtol=1e-13)
    out = _f64(special.expn, [3.0, 1.0, -1.0, 2.0], [0.0, 0.0, 1.0, -1.0])
    # JAX returns 1/n at x = 0 for n >= 2 (SciPy: 1/(n-1)); E_1(0) = inf
    np.testing.assert_array_equal(out[:2], [1 / 3, np.inf])
    assert np.isnan(out[2:]).all()


def test_tiny_arguments_of_exp1_terminate():
    # JAX's E_n also runs its continued fraction (which never converges there) on tiny x
    np.testing.assert_allclose(_f64(special.exp1, 1e-30), -np.euler_gamma + 30 * math.log(10),
                               rtol=1e-14)


def test_exponential_integral_derivatives():
    x = np.float32(1.3)
    np.testing.assert_allclose(grad(special.expi)(x), math.exp(1.3) / 1.3, rtol=1e-5)
    np.testing.assert_allclose(grad(lambda x: special.expn(np.float32(2), x))(x),
                               -special.exp1(x), rtol=1e-5)


def test_spence_known_values_and_domain():
    x = np.array([0.0, 0.5, 1.0, 2.0, 0.2, 1.7, 5.0, -1.0])
    li2 = [math.pi**2 / 6, math.pi**2 / 12 - math.log(2) ** 2 / 2, 0.0, -math.pi**2 / 12]
    out = _f64(special.spence, x)
    np.testing.assert_allclose(out[:4], li2, rtol=1e-14, atol=1e-15)
    # Euler's reflection: spence(x) + spence(1 - x) = pi^2/6 - log(x) log(1 - x)
    np.testing.assert_allclose(out[4] + _f64(special.spence, 0.8),
                               math.pi**2 / 6 - math.log(0.2) * math.log(0.8), rtol=1e-14)
    # inversion: spence(x) + spence(1/x) = -log(x)^2 / 2
    for v, s in [(1.7, out[5]), (5.0, out[6])]:
        np.testing.assert_allclose(s + _f64(special.spence, 1 / v), -math.log(v) ** 2 / 2,
                                   rtol=1e-13)
    assert np.isnan(out[7])
    with pytest.raises(TypeError, match="x.dtype=int32 is not supported"):
        special.spence(np.array([1, 2], np.int32))


def test_bernoulli_numbers():
    with config.enable_x64(True):
        out = special.bernoulli(12)
    expected = [1, -1 / 2, 1 / 6, 0, -1 / 30, 0, 1 / 42, 0, -1 / 30, 0, 5 / 66, 0, -691 / 2730]
    # JAX's series truncates zeta(m) after 48 terms: B_4 is good to about 3e-6 relative
    np.testing.assert_allclose(out, expected, rtol=3e-6, atol=1e-16)
    np.testing.assert_allclose(out[8:], expected[8:], rtol=1e-12)
    assert special.bernoulli(1).shape == (2,)
    with pytest.raises(ValueError, match="non-negative integer, got -1"):
        special.bernoulli(-1)
    with pytest.raises(TypeError, match="concrete Python integer"):
        special.bernoulli(2.5)


def test_sici_known_values_symmetry_and_limits():
    x = np.array([1.0, 10.0, -1.0, 0.0, 2e9, np.inf, -np.inf])
    si, ci = (np.asarray(v) for v in _f64(lambda v: np.stack(special.sici(v)), x))
    np.testing.assert_allclose(si[:3], [0.9460830703671830, 1.658347594218874,
                                        -0.9460830703671830], rtol=1e-14)
    np.testing.assert_allclose(ci[:3], [0.3374039229009681, -0.04545643300445537,
                                        0.3374039229009681], rtol=1e-13)
    np.testing.assert_allclose(si[4:6], np.pi / 2, rtol=1e-9)
    assert si[3] == 0 and ci[3] == -np.inf and ci[5] == 0 and np.isnan(ci[6])
    d_si, d_ci = grad(lambda v: special.sici(v)[0])(np.float32(2)), grad(
        lambda v: special.sici(v)[1])(np.float32(2))
    np.testing.assert_allclose([d_si, d_ci], [math.sin(2) / 2, math.cos(2) / 2], rtol=1e-5)


def _owens_t_quadrature(h, a, steps=2000):
    u = np.linspace(0, a, steps + 1)
    f = np.exp(-h * h * (1 + u * u) / 2) / (1 + u * u)
    return float(np.sum((f[1:] + f[:-1]) / 2) * (a / steps)) / (2 * math.pi)


def _phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def test_owens_t_matches_its_integral_and_exact_values():
    for h, a in [(0.5, 0.3), (1.2, 0.9), (0.3, 2.5), (2.0, 4.0), (-0.5, 0.3)]:
        np.testing.assert_allclose(_f64(special.owens_t, h, a), _owens_t_quadrature(h, a),
                                   rtol=1e-6)
    np.testing.assert_allclose(_f64(special.owens_t, 0.0, 2.0), math.atan(2) / (2 * math.pi),
                               rtol=1e-14)
    np.testing.assert_allclose(_f64(special.owens_t, 0.8, 1.0),
                               _phi(0.8) * (1 - _phi(0.8)) / 2, rtol=1e-13)
    np.testing.assert_allclose(_f64(special.owens_t, 0.8, -0.5), -_f64(special.owens_t, 0.8, 0.5),
                               rtol=0)
    slope_a = grad(lambda a: special.owens_t(np.float32(0.7), a))(np.float32(0.4))
    np.testing.assert_allclose(slope_a, math.exp(-0.5 * 1.16 * 0.49) / (2 * math.pi * 1.16),
                               rtol=1e-5)


def test_hyp1f1_closed_forms_and_derivatives():
    x = np.array([-2.0, 0.5, 3.0, 150.0])
    # M(1, 2, x) = (e^x - 1) / x; M(a, a, x) = e^x; M(0, b, x) = 1
    np.testing.assert_allclose(_f64(special.hyp1f1, 1.0, 2.0, x), np.expm1(x) / x, rtol=1e-12)
    np.testing.assert_allclose(_f64(special.hyp1f1, 2.5, 2.5, x), np.exp(x), rtol=1e-14)
    np.testing.assert_array_equal(_f64(special.hyp1f1, 0.0, 3.0, x), 1.0)
    # dM/dx = a/b M(a+1, b+1, x): with a = 1, b = 2, M(2, 3, x) = 2 (x e^x - e^x + 1) / x^2
    slope = grad(lambda v: special.hyp1f1(np.float32(1), np.float32(2), v))(np.float32(0.5))
    np.testing.assert_allclose(slope, (0.5 * math.exp(0.5) - math.exp(0.5) + 1) / 0.25,
                               rtol=1e-5)


def test_hyp2f1_closed_forms():
    x = np.array([-0.5, 0.3, 0.9, 0.95, 0.99])
    # 2F1(1, 1; 2; x) = -log(1 - x)/x; 2F1(a, b; b; x) = (1 - x)^-a
    np.testing.assert_allclose(_f64(special.hyp2f1, 1.0, 1.0, 2.0, x), -np.log1p(-x) / x,
                               rtol=1e-12)
    np.testing.assert_allclose(_f64(special.hyp2f1, 0.7, 2.5, 2.5, x), (1 - x) ** -0.7,
                               rtol=1e-13)
    # 2F1(1/2, 1; 3/2; x^2) = atanh(x)/x, and Gauss's theorem at x = 1
    np.testing.assert_allclose(_f64(special.hyp2f1, 0.5, 1.0, 1.5, x[1:] ** 2),
                               np.arctanh(x[1:]) / x[1:], rtol=1e-11)
    gauss = math.gamma(3.5) * math.gamma(1.0) / (math.gamma(2.5) * math.gamma(2.0))
    np.testing.assert_allclose(_f64(special.hyp2f1, 1.0, 1.5, 3.5, 1.0), gauss, rtol=1e-13)
    # a terminating sum: 2F1(-2, b; c; x) = 1 - 2 b x / c + b (b+1) x^2 / (c (c+1))
    np.testing.assert_allclose(_f64(special.hyp2f1, -2.0, 3.0, 4.0, 0.7),
                               1 - 2 * 3 * 0.7 / 4 + 3 * 4 * 0.49 / 20, rtol=1e-14)
    assert _f64(special.hyp2f1, 1.0, 1.0, 2.0, 1.5) == np.inf


def test_bessel_jn_matches_the_power_series():
    z = np.array([0.5, 1.0, 2.5, 7.0])
    with config.enable_x64(True):
        out = special.bessel_jn(z, v=3)
    assert out.shape == (4, 4)
    for n in range(4):
        series = [sum((-1) ** k * (v / 2) ** (2 * k + n) / (math.factorial(k) *
                                                             math.factorial(k + n))
                      for k in range(40)) for v in z]
        np.testing.assert_allclose(out[n], series, rtol=1e-10, atol=1e-14)
    with pytest.raises(TypeError, match="concrete Python integers"):
        special.bessel_jn(z, v=1.5)


@pytest.mark.parametrize("x64", [False, True])
def test_fresnel_known_values_limits_and_derivatives(x64):
    dtype = np.float64 if x64 else np.float32
    x = np.array([1.0, 2.0, -1.0, 0.0, 4e4, np.inf], dtype)
    with config.enable_x64(x64):
        s, c = (np.asarray(v) for v in special.fresnel(x))
    tol = 1e-14 if x64 else 2e-6
    np.testing.assert_allclose(s[:3], [0.4382591473903548, 0.3434156783636982,
                                       -0.4382591473903548], rtol=tol)
    np.testing.assert_allclose(c[:3], [0.7798934003768228, 0.4882534060753408,
                                       -0.7798934003768228], rtol=tol)
    assert s[3] == 0 and c[3] == 0 and s[5] == 0.5 and c[5] == 0.5
    np.testing.assert_allclose([s[4], c[4]], 0.5, atol=1e-5)
    slope_s = grad(lambda v: special.fresnel(v)[0])(np.float32(1.3))
    slope_c = grad(lambda v: special.fresnel(v)[1])(np.float32(1.3))
    np.testing.assert_allclose([slope_s, slope_c], [math.sin(math.pi * 1.69 / 2),
                                                    math.cos(math.pi * 1.69 / 2)], rtol=1e-5)


def test_wofz_on_the_real_line_is_gaussian_plus_dawson():
    # w(x) = exp(-x^2) + 2i/sqrt(pi) F(x) for real x
    x = np.array([-2.0, 0.0, 0.5, 1.5, 4.0])
    with config.enable_x64(True):
        w = np.asarray(special.wofz(x))
        dawson = np.asarray(special.dawsn(x))
    assert w.dtype == np.complex128
    np.testing.assert_allclose(w.real, np.exp(-x * x), atol=1e-13)
    np.testing.assert_allclose(w.imag, 2 / math.sqrt(math.pi) * dawson, atol=1e-13)


def test_wofz_reflection_and_complex_erfcx():
    z = np.array([0.3 + 0.7j, -1.2 + 0.4j, 2.0 + 3.0j], np.complex128)
    with config.enable_x64(True):
        w, w_neg = np.asarray(special.wofz(z)), np.asarray(special.wofz(-z))
        np.testing.assert_allclose(w + w_neg, 2 * np.exp(-z * z), rtol=1e-12)
        x = np.array([0.5, 2.0])
        np.testing.assert_allclose(special.erfcx(x.astype(np.complex128)).real,
                                   special.erfcx(x), rtol=1e-12)


def test_sph_harm_y_closed_forms():
    theta = np.array([0.3, 0.9, 1.7, 2.5])
    phi = np.array([0.2, -1.0, 2.0, 4.0])
    with config.enable_x64(True):
        y10 = np.asarray(special.sph_harm_y(np.ones(4, int), np.zeros(4, int), theta, phi))
        y11 = np.asarray(special.sph_harm_y(np.ones(4, int), np.ones(4, int), theta, phi))
        y1m1 = np.asarray(special.sph_harm_y(np.ones(4, int), -np.ones(4, int), theta, phi))
        y22 = np.asarray(special.sph_harm_y(np.full(4, 2), np.full(4, 2), theta, phi))
    np.testing.assert_allclose(y10, math.sqrt(3 / (4 * math.pi)) * np.cos(theta), atol=1e-14)
    np.testing.assert_allclose(y11, -math.sqrt(3 / (8 * math.pi)) * np.sin(theta)
                               * np.exp(1j * phi), atol=1e-14)
    np.testing.assert_allclose(y1m1, -np.conj(y11), atol=1e-14)  # (-1)^m conj(Y_n^m)
    np.testing.assert_allclose(y22, 0.25 * math.sqrt(15 / (2 * math.pi)) * np.sin(theta) ** 2
                               * np.exp(2j * phi), atol=1e-14)
    with pytest.raises(NotImplementedError, match="diff_n"):
        special.sph_harm_y(np.ones(1, int), np.zeros(1, int), theta[:1], phi[:1], diff_n=1)


def test_complex_loggamma_and_gamma():
    z = np.array([5 + 0j, 0.5 + 1j, -2.5 + 0.5j, 3 - 2j], np.complex128)
    with config.enable_x64(True):
        log_gamma = np.asarray(special.loggamma(z))
        gamma_z = np.asarray(special.gamma(z))
        shifted = np.asarray(special.loggamma(z + 1))
    np.testing.assert_allclose(log_gamma[0], math.log(24), rtol=1e-13)
    np.testing.assert_allclose(gamma_z, np.exp(log_gamma), rtol=1e-12)
    # log Gamma(z + 1) = log Gamma(z) + log z on the principal branch (away from the cut)
    np.testing.assert_allclose(shifted[[0, 1, 3]], (log_gamma + np.log(z))[[0, 1, 3]],
                               rtol=1e-12)
    # Gamma(1/2 + i) Gamma(1/2 - i) = pi / cosh(pi)
    np.testing.assert_allclose(gamma_z[1] * np.conj(gamma_z[1]), math.pi / math.cosh(math.pi),
                               rtol=1e-12)
    with config.enable_x64(True):
        assert np.isnan(special.loggamma(np.complex128(-3))).all()


def test_complex_arguments_are_rejected_with_a_clear_error():
    z = np.array([1 + 1j], np.complex64)
    with pytest.raises(ValueError, match="beta does not support complex"):
        special.beta(z, z)
    with pytest.raises(ValueError, match="dawsn does not support complex"):
        special.dawsn(z)


def test_docstring_examples_run():
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    modules = (_special_complex_gamma, _special_faddeeva, _special_fresnel, _special_harmonics,
               _special_integrals, _special_series, special)
    for module in modules:
        for test in doctest.DocTestFinder().find(module, globs={**vars(module), "np": np}):
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
