"""The lax programs of the special functions (`lax/_special_programs.py`), run on core's NumPy
reference interpreter, against the primitives' float64 NumPy references, closed forms and
identities."""

import doctest
import math

import numpy as np
import pytest
from laminax_core import config, lax
from laminax_core.internal import set_eager_impl
from laminax_core.lax import _special_programs as programs


@pytest.fixture(autouse=True)
def _reference_interpreter():
    previous = set_eager_impl(None)
    yield
    set_eager_impl(previous)


A = np.array([0.5, 1.0, 2.0, 5.0, 30.0, 0.01, 3.0, 0.7, 12.0, 150.0])
X = np.array([0.3, 2.0, 2.5, 1.0, 25.0, 0.5, 10.0, 40.0, 11.0, 160.0])


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a"])
def test_incomplete_gamma_programs_match_the_primitive_references(name, x64):
    dtype = np.float64 if x64 else np.float32
    with config.enable_x64(x64), np.errstate(all="ignore"):
        got = getattr(programs, f"{name}_program")(A.astype(dtype), X.astype(dtype))
        expected = getattr(lax, name)(A.astype(dtype), X.astype(dtype))
    assert got.dtype == dtype
    tol = 1e-5 if not x64 else (1e-10 if name != "igamma_grad_a" else 1e-6)
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_igamma_of_one_is_the_exponential_distribution():
    x = np.array([0.1, 0.7, 1.0, 3.0, 9.0])
    with config.enable_x64(True):
        np.testing.assert_allclose(programs.igamma_program(np.ones(5), x), -np.expm1(-x),
                                   rtol=1e-14)
        np.testing.assert_allclose(programs.igammac_program(np.ones(5), x), np.exp(-x),
                                   rtol=1e-14)


def test_igamma_special_values_follow_jax():
    a = np.array([2.0, 2.0, -1.0, 0.0, np.nan, 0.0], np.float32)
    x = np.array([0.0, np.inf, 1.0, 0.0, 1.0, 3.0], np.float32)
    with np.errstate(all="ignore"):
        lower = programs.igamma_program(a, x)
        upper = programs.igammac_program(a, x)
    np.testing.assert_array_equal(lower, [0, 1, np.nan, np.nan, np.nan, 1])
    np.testing.assert_array_equal(upper, [1, 0, np.nan, np.nan, np.nan, 0])


def test_random_gamma_grad_program_is_the_implicit_derivative():
    a, x = np.float64(2.5), np.float64(1.7)
    with config.enable_x64(True):
        d_da = programs.igamma_grad_a_program(a, x)
        density = x ** (a - 1) * np.exp(-x) / math.gamma(a)
        np.testing.assert_allclose(programs.random_gamma_grad_program(a, x), -d_da / density,
                                   rtol=1e-12)
        assert programs.random_gamma_grad_program(a, np.float64(0)) == 0


def test_bessel_i0e_program_matches_numpy_i0():
    x = np.array([0.0, 0.3, -1.0, 5.0, 7.99, 8.0, 8.01, -20.0, 300.0])
    with config.enable_x64(True):
        got = programs.bessel_i0e_program(x)
    np.testing.assert_allclose(got, np.exp(-np.abs(x)) * np.i0(x), rtol=1e-14)
    got32 = programs.bessel_i0e_program(x.astype(np.float32))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, np.exp(-np.abs(x)) * np.i0(x), rtol=3e-6)


def test_bessel_i0e_program_upcasts_float16():
    got = programs.bessel_i0e_program(np.array([1.0, 10.0], np.float16))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, np.exp(-1.0) * np.i0(1.0) * np.array([1, 0]) + np.array(
        [0, np.exp(-10.0) * np.i0(10.0)]), rtol=1e-3)


def _binomial_tail(n_a, n_b, x):
    """I_x(a, b) for integer a, b: P(Binomial(a + b - 1, x) >= a)."""
    n = n_a + n_b - 1
    return sum(math.comb(n, j) * x**j * (1 - x) ** (n - j) for j in range(n_a, n + 1))


@pytest.mark.parametrize("x64", [False, True])
def test_betainc_program_matches_binomial_tails(x64):
    dtype = np.float64 if x64 else np.float32
    cases = [(2, 3, 0.5), (1, 1, 0.3), (5, 2, 0.9), (10, 12, 0.45), (3, 30, 0.05), (7, 1, 0.99)]
    a, b, x = (np.array(c, dtype) for c in zip(*cases, strict=True))
    with config.enable_x64(x64):
        got = programs.betainc_program(a, b, x)
    expected = [_binomial_tail(int(p), int(q), float(v)) for p, q, v in cases]
    np.testing.assert_allclose(got, expected, rtol=1e-13 if x64 else 3e-6)


def test_betainc_program_symmetry_and_edges():
    a = np.array([0.3, 4.0, 2.0, 2.0, 2.0, 0.0, 2.0], np.float64)
    b = np.array([0.7, 0.5, 2.0, 2.0, 2.0, 2.0, -1.0], np.float64)
    x = np.array([0.2, 0.8, 0.0, 1.0, 1.2, 0.5, 0.5], np.float64)
    with config.enable_x64(True), np.errstate(all="ignore"):
        got = programs.betainc_program(a, b, x)
        mirrored = programs.betainc_program(b[:2], a[:2], 1 - x[:2])
        reference = lax.betainc(a[:2], b[:2], x[:2])
    np.testing.assert_allclose(got[:2], 1 - mirrored, rtol=1e-13)
    np.testing.assert_allclose(got[:2], reference, rtol=1e-12)
    np.testing.assert_array_equal(got[2:], [0, 1, np.nan, 1, np.nan])


def test_programs_broadcast_their_operands():
    got = programs.betainc_program(np.float32(2), np.float32(3), np.full((2, 3), 0.5, np.float32))
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, 0.6875, rtol=1e-6)
    assert programs.igamma_program(np.ones(4, np.float32), np.float32(1)).shape == (4,)


def test_docstring_examples_run():
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(programs, globs={**vars(programs), "np": np}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
