"""Family tests for lax's elementwise math, special functions and bitwise primitives (beyond
the generic OP_CASES rows): edge values, rounding modes, bit-level semantics, complex parts,
and the dtype/shape errors."""

import numpy as np
import pytest
from laminax_core import grad, jvp, lax, make_jaxpr, vjp, vmap
from laminax_core.testing import check_grads


def test_round_methods_break_ties_differently():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.4], np.float32)
    np.testing.assert_array_equal(lax.round(x), [1, 2, 3, -1, -3, 2])
    np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                                  [0, 2, 2, -0, -2, 2])


def test_round_prints_its_method_as_jax_does():
    assert "round[rounding_method=1]" in str(make_jaxpr(lambda v: lax.round(v, 1))(np.ones(2)))


@pytest.mark.parametrize("x,expected", [(0.5, 0.5), (1.00048828125, 1.0),
                                        (1.0009765625, 1.0009765625), (70000.0, np.inf),
                                        (-70000.0, -np.inf), (1e-9, 0.0), (np.nan, np.nan)])
def test_reduce_precision_to_half(x, expected):
    out = lax.reduce_precision(np.float32(x), 5, 10)
    np.testing.assert_array_equal(out, np.float32(expected))


def test_reduce_precision_to_bfloat16_matches_ml_dtypes():
    import ml_dtypes

    x = np.random.RandomState(0).standard_normal(100).astype(np.float32) * 100
    expected = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(lax.reduce_precision(x, 8, 7), expected)


def test_reduce_precision_is_linear_in_jvp():
    _, t = jvp(lambda v: lax.reduce_precision(v, 5, 10), (np.float32(1),), (np.float32(3),))
    assert t == np.float32(3)


def test_bitcast_shapes_follow_the_bit_widths():
    x = np.ones((3,), np.float32)
    assert lax.bitcast_convert_type(x, np.int16).shape == (3, 2)
    back = lax.bitcast_convert_type(lax.bitcast_convert_type(x, np.int16), np.float32)
    np.testing.assert_array_equal(back, x)
    with pytest.raises(ValueError, match="needs a last dimension of 2"):
        lax.bitcast_convert_type(np.ones((3, 3), np.int16), np.float32)


def test_shifts_saturate_like_xla():
    x = np.array([-8, 8, 1, -1], np.int32)
    np.testing.assert_array_equal(lax.shift_right_arithmetic(x, np.int32(40)), [-1, 0, 0, -1])
    np.testing.assert_array_equal(lax.shift_right_logical(x, np.int32(-1)), [0, 0, 0, 0])
    np.testing.assert_array_equal(lax.shift_left(x, np.int32(32)), [0, 0, 0, 0])
    np.testing.assert_array_equal(lax.shift_right_logical(np.int32(-1), np.int32(28)), 15)


def test_unsigned_bit_counts():
    x = np.array([0, 1, 255], np.uint8)
    np.testing.assert_array_equal(lax.clz(x), [8, 7, 0])
    np.testing.assert_array_equal(lax.population_count(x), [0, 1, 8])


def test_complex_parts_and_conj():
    z = np.array([1 + 2j, -3j], np.complex64)
    np.testing.assert_array_equal(lax.real(z), [1, 0])
    np.testing.assert_array_equal(lax.imag(z), [2, -3])
    np.testing.assert_array_equal(lax.conj(z), np.conj(z))
    assert lax.conj(np.float32(1)).dtype == np.complex64
    assert lax.complex(np.float64(1), np.float64(2)).dtype in (np.complex64, np.complex128)


def test_grad_through_complex_parts():
    def f(x, y):
        z = lax.complex(x, y)
        return lax.real(lax.mul(z, lax.conj(z)))  # x^2 + y^2

    gx, gy = grad(f, argnums=(0, 1))(np.float32(3), np.float32(4))
    np.testing.assert_allclose([gx, gy], [6, 8], rtol=1e-6)


def test_special_function_edge_values():
    nan, inf = np.nan, np.inf
    np.testing.assert_array_equal(lax.digamma(np.array([0, -1], np.float32)), [nan, nan])
    np.testing.assert_array_equal(lax.lgamma(np.array([0, -1], np.float32)), [inf, inf])
    np.testing.assert_array_equal(lax.erf_inv(np.array([1, -1, 1.5, 0], np.float32)),
                                  [inf, -inf, nan, 0])
    np.testing.assert_array_equal(lax.zeta(np.array([1, 0.5], np.float32), np.float32(1)),
                                  [inf, nan])


def test_special_functions_match_scipy_in_float64():
    special = pytest.importorskip("scipy.special")
    x = np.linspace(-4.7, 6, 41)
    np.testing.assert_allclose(lax.digamma(x), special.digamma(x), rtol=1e-5, atol=1e-5)
    y = np.linspace(-0.99, 0.99, 41)
    np.testing.assert_allclose(lax.erf_inv(y), special.erfinv(y), rtol=1e-5, atol=1e-6)
    q = np.linspace(0.2, 5, 13)
    np.testing.assert_allclose(lax.polygamma(np.full_like(q, 2), q), special.polygamma(2, q),
                               rtol=1e-5)


def test_second_derivatives_of_special_functions():
    check_grads(lax.lgamma, (np.array([0.7, 2.5], np.float32),), order=2)
    check_grads(lax.erf_inv, (np.array([-0.4, 0.3], np.float32),), order=2)


def test_clamp_with_batched_bounds_matches_loop():
    lo = np.array([-1, 0, 0.5], np.float32)
    x = np.array([[-2, 0.2, 3], [0.3, -0.1, 0.7]], np.float32)
    out = vmap(lax.clamp, in_axes=(None, 0, None))(lo, x, np.float32(1))
    np.testing.assert_array_equal(out, np.clip(x, lo, 1))
    out = vmap(lambda a, v: lax.clamp(a, v, 2.0), in_axes=(0, None))(lo, x[0])
    np.testing.assert_array_equal(out, np.clip(x[0][None], lo[:, None], 2))


def test_clamp_gradient_flows_to_the_active_bound():
    g = grad(lambda lo, v: lax.reduce_sum(lax.clamp(lo, v, 2.0), (0,)), argnums=(0, 1))
    g_lo, g_x = g(np.float32(0), np.array([-1, 1, 3], np.float32))
    assert g_lo == 1 and list(g_x) == [0, 1, 0]


def test_rounding_and_bitwise_tangents_are_zero():
    x = np.array([1.3, -2.7], np.float32)
    for fun in (lax.floor, lax.ceil, lax.round, lambda v: lax.convert_element_type(
            lax.is_finite(v), np.float32)):
        _, t = jvp(fun, (x,), (np.ones_like(x),))
        np.testing.assert_array_equal(t, np.zeros_like(x))


def test_nextafter_has_no_derivative_as_in_jax():
    with pytest.raises(NotImplementedError, match="'nextafter' not implemented"):
        jvp(lambda v: lax.nextafter(v, v), (np.float32(1),), (np.float32(1),))


def test_real_transposes_to_a_complex_cotangent():
    _, pullback = vjp(lax.real, np.complex64(1 + 1j))
    (ct,) = pullback(np.float32(2))
    assert ct == np.complex64(2)


@pytest.mark.parametrize("fun,error,match", [
    (lambda: lax.tan(np.ones(3, np.int32)), TypeError, "tan does not accept dtype int32"),
    (lambda: lax.erf(np.ones(3, np.complex64)), TypeError,
     "erf does not accept dtype complex64"),
    (lambda: lax.rem(np.ones(3, np.complex64), np.ones(3, np.complex64)), TypeError,
     "rem does not accept dtype complex64"),
    (lambda: lax.bitwise_and(np.ones(3, np.float32), np.ones(3, np.float32)), TypeError,
     "and does not accept dtype float32"),
    (lambda: lax.population_count(np.ones(3, np.bool_)), TypeError,
     "population_count does not accept dtype bool"),
    (lambda: lax.shift_left(np.ones(3, np.int32), np.ones(3, np.uint32)), TypeError,
     "lax.shift_left requires arguments to have the same dtypes, got int32, uint32"),
    (lambda: lax.clamp(np.ones(2, np.float32), np.ones(3, np.float32), 2.0), TypeError,
     r"clamp requires min.shape == operand.shape or min.shape == \(\), got min.shape=\(2,\)"),
    (lambda: lax.real(np.ones(3, np.float32)), TypeError, "real does not accept dtype float32"),
    (lambda: lax.is_finite(np.ones(3, np.int32)), TypeError,
     "is_finite does not accept dtype int32"),
    (lambda: lax.atan2(np.ones(3, np.float32), np.ones(2, np.float32)), TypeError,
     "atan2 got incompatible shapes"),
    (lambda: lax.reduce_precision(np.ones(3, np.float32), 0, 3), ValueError,
     "exponent_bits=0 must be >= 1"),
])
def test_errors_name_the_primitive_and_what_was_expected(fun, error, match):
    with pytest.raises(error, match=match):
        fun()


def test_incomplete_gamma_beta_and_bessel_match_scipy():
    special = pytest.importorskip("scipy.special")
    a = np.array([0.5, 2.0, 5.0, 0.1, 30.0])
    x = np.array([0.3, 2.5, 4.0, 10.0, 25.0])
    np.testing.assert_allclose(lax.igamma(a, x), special.gammainc(a, x), rtol=1e-5)
    np.testing.assert_allclose(lax.igammac(a, x), special.gammaincc(a, x), rtol=1e-5, atol=1e-7)
    z = np.array([0.0, 1.0, -5.0, 29.9, 30.1, -45.0, 800.0])
    np.testing.assert_allclose(lax.bessel_i0e(z), special.i0e(z), rtol=1e-6)
    np.testing.assert_allclose(lax.bessel_i1e(z), special.i1e(z), rtol=1e-6, atol=1e-7)
    b = np.array([0.7, 3.0, 1.0, 1.0, 2.0])
    u = np.array([0.3, 0.5, 0.9, 0.2, 0.99])
    np.testing.assert_allclose(lax.betainc(a, b, u), special.betainc(a, b, u), rtol=1e-5)


def test_incomplete_gamma_and_bessel_derivatives():
    check_grads(lax.igamma, (np.float32(2.0), np.float32(2.5)), order=1)
    check_grads(lax.igammac, (np.float32(0.7), np.float32(1.5)), order=1)
    check_grads(lax.bessel_i0e, (np.array([0.5, -2.0, 40.0], np.float32),), order=2)
    check_grads(lax.bessel_i1e, (np.array([0.5, -2.0, 40.0], np.float32),), order=2)
    check_grads(lambda v: lax.betainc(np.float32(2), np.float32(3), v),
                (np.array([0.2, 0.7], np.float32),), order=2)
    _, t = jvp(lax.bessel_i1e, (np.float32(0),), (np.float32(1),))
    assert t == np.float32(0.5)


def test_random_gamma_grad_is_the_implicit_derivative():
    special = pytest.importorskip("scipy.special")
    a, x = 2.0, 2.5
    h = 1e-6  # x(a) solves P(a, x) = u: dx/da = -(dP/da) / (dP/dx)
    dp_da = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    dp_dx = x ** (a - 1) * np.exp(-x) / special.gamma(a)
    np.testing.assert_allclose(lax.random_gamma_grad(np.float64(a), np.float64(x)),
                               -dp_da / dp_dx, rtol=1e-5)


def test_unsupported_special_derivatives_say_so():
    with pytest.raises(NotImplementedError, match="'igamma_grad_a' not implemented"):
        jvp(lambda a: lax.igamma_grad_a(a, np.float32(1)), (np.float32(1),), (np.float32(1),))
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        grad(lambda a: lax.betainc(a, np.float32(1), np.float32(0.5)))(np.float32(1))


def test_erf_inv_float64_reference_is_accurate_in_the_tails():
    # values from JAX 0.10.2 with x64 (XLA's float64 erf_inv), which agree with mpmath
    from laminax_core.config import enable_x64

    y = np.array([0.3, -0.7, 1 - 1e-6, 1 - 1e-10, 1 - 1e-14, -(1 - 1e-15), 1 - 2**-52])
    expected = [0.2724627147267544, -0.7328690779592166, 3.4589107372739605, 4.57282495853958,
                5.4725525174145355, -5.675915739744714, 5.805018683193453]
    with enable_x64(True):
        actual = np.asarray(lax.erf_inv(y))
    np.testing.assert_allclose(actual, expected, rtol=2e-12)  # XLA's own error at 1 - 1e-10
    import math

    residual = [math.erfc(abs(x)) / (1 - abs(v)) - 1 for x, v in zip(actual, y, strict=True)]
    np.testing.assert_allclose(residual[2:], 0.0, atol=1e-14)


def test_integer_pow_of_a_complex_number_is_differentiable():
    # (2+4j) is what JAX 0.10.2 returns for grad(real(z**2)) at z = 1+2j
    from laminax_core import numpy as jnp

    z = np.complex64(1 + 2j)
    np.testing.assert_allclose(grad(lambda v: jnp.real(lax.integer_pow(v, 2)))(z), 2 + 4j)
    _, tangent = jvp(lambda v: lax.integer_pow(v, 3), (z,), (np.complex64(1),))
    np.testing.assert_allclose(tangent, 3 * z**2, rtol=1e-6)
