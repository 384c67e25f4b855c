"""Tests of laminax_core.scipy.special on the reference interpreter: values against Python's
math module and closed forms, tails of ndtr/log_ndtr/ndtri, promotion, derivatives, errors."""

import doctest
import math

import numpy as np
import pytest
from laminax_core import config, grad, lax
from laminax_core.internal import set_eager_impl
from laminax_core.scipy import special
from laminax_core.testing import check_grads


@pytest.fixture(autouse=True)
def _reference_interpreter():
    """These tests check core on its NumPy reference interpreter: unplug an eager executor that
    another package (dispatch) may have installed in this test process, and restore it after."""
    previous = set_eager_impl(None)
    yield
    set_eager_impl(previous)


X = np.array([-3.0, -1.2, -0.3, 0.0, 0.4, 1.7, 4.0])


def _vectorize(f):
    return np.vectorize(f, otypes=[np.float64])


@pytest.mark.parametrize("name, reference", [
    ("erf", _vectorize(math.erf)),
    ("erfc", _vectorize(math.erfc)),
    ("expit", lambda x: 1 / (1 + np.exp(-x))),
    ("ndtr", _vectorize(lambda x: 0.5 * math.erfc(-x / math.sqrt(2)))),
    ("log_ndtr", _vectorize(lambda x: math.log(0.5 * math.erfc(-x / math.sqrt(2))))),
])
@pytest.mark.parametrize("x64", [False, True])
def test_functions_of_the_real_line(name, reference, x64):
    with config.enable_x64(x64):
        dtype = np.float64 if x64 else np.float32
        out = getattr(special, name)(X.astype(dtype))
        assert out.dtype == dtype
        np.testing.assert_allclose(out, reference(X), rtol=1e-13 if x64 else 2e-6, atol=1e-7)


def test_gammaln_digamma_erfinv():
    x = np.array([0.5, 1.0, 2.5, 7.0], np.float32)
    np.testing.assert_allclose(special.gammaln(x), [math.lgamma(v) for v in x], rtol=1e-6)
    np.testing.assert_allclose(special.digamma(np.float32(1)), -np.euler_gamma, rtol=1e-6)
    y = np.array([-0.9, 0.0, 0.5], np.float32)
    np.testing.assert_allclose(special.erf(special.erfinv(y)), y, rtol=1e-6, atol=1e-7)


def test_logit_inverts_expit():
    p = np.array([0.01, 0.25, 0.5, 0.9], np.float32)
    np.testing.assert_allclose(special.expit(special.logit(p)), p, rtol=1e-6)


def test_xlogy_and_xlog1py_are_zero_at_zero_x():
    np.testing.assert_array_equal(special.xlogy(np.array([0.0, 0.0]), np.array([0.0, -1.0])),
                                  [0, 0])
    np.testing.assert_allclose(special.xlogy(2.0, np.float32(3.0)), 2 * np.log(3.0), rtol=1e-6)
    np.testing.assert_allclose(special.xlog1py(np.float32(2), np.float32(0.5)),
                               2 * np.log1p(0.5), rtol=1e-6)
    assert float(special.xlog1py(np.float32(0), np.float32(-1))) == 0.0
    assert special.xlogy(np.array([1, 2]), np.array([3, 4])).dtype == np.float32
    check_grads(special.xlogy, (np.float32(1.5), np.float32(2.5)), order=1)


def test_log_ndtr_tails():
    with config.enable_x64(True):
        x = np.array([-40.0, -25.0, 9.0, 12.0])
        out = special.log_ndtr(x)
        # lower tail: log Phi(x) ~ -x^2/2 - log(-x) - log(2 pi)/2 ; upper: -Phi(-x)
        approx = -x[:2] ** 2 / 2 - np.log(-x[:2]) - 0.5 * np.log(2 * np.pi)
        np.testing.assert_allclose(out[:2], approx, rtol=1e-3)
        upper = [-0.5 * math.erfc(v / math.sqrt(2)) for v in x[2:]]
        np.testing.assert_allclose(out[2:], upper, rtol=1e-10)
    with pytest.raises(ValueError, match="series_order must be an int"):
        special.log_ndtr(np.float32(0), series_order=-1)


@pytest.mark.parametrize("x64", [False, True])
def test_ndtri_inverts_ndtr(x64):
    with config.enable_x64(x64):
        dtype = np.float64 if x64 else np.float32
        p = np.array([1e-30 if x64 else 1e-20, 1e-6, 0.02, 0.3, 0.5, 0.8, 0.999], dtype)
        x = special.ndtri(p)
        np.testing.assert_allclose(special.ndtr(x), p, rtol=1e-12 if x64 else 1e-5)
        edges = special.ndtri(np.array([0.0, 1.0, -0.1, 1.1], dtype))
        assert edges[0] == -np.inf and edges[1] == np.inf and np.isnan(edges[2:]).all()


def test_logsumexp_alias():
    a = np.array([1.0, 2.0], np.float32)
    np.testing.assert_allclose(special.logsumexp(a), np.log(np.exp(a).sum()), rtol=1e-6)


def test_derivatives():
    x = np.array([-1.0, 0.2, 1.5], np.float32)
    for f in (special.erf, special.erfc, special.ndtr, special.log_ndtr, special.expit):
        check_grads(f, (x,), order=1)
    check_grads(special.gammaln, (np.abs(x) + 0.5,), order=1)
    np.testing.assert_allclose(grad(special.ndtr)(np.float32(0.0)), 1 / np.sqrt(2 * np.pi),
                               rtol=1e-6)


def test_gamma_family_and_entropies():
    x = np.array([-2.5, -0.5, 0.5, 3.0, 5.0], np.float32)
    np.testing.assert_allclose(special.gamma(x), [math.gamma(v) for v in x.tolist()],
                               rtol=1e-5)
    np.testing.assert_array_equal(special.gammasgn(np.array([-1.5, -0.5, -2.0], np.float32))
                                  [:2], [1, -1])
    assert np.isnan(special.gammasgn(np.float32(-2.0)))
    np.testing.assert_allclose(special.factorial(np.float32(5)), 120, rtol=1e-5)
    assert float(special.factorial(np.float32(-1))) == 0
    np.testing.assert_allclose(special.poch(np.float32(3), np.float32(2)), 12, rtol=1e-5)
    np.testing.assert_allclose(special.betaln(np.float32(2), np.float32(3)), np.log(1 / 12),
                               rtol=1e-5)
    np.testing.assert_allclose(special.multigammaln(np.float32(3), 1), math.lgamma(3),
                               rtol=1e-6)
    np.testing.assert_allclose(special.polygamma(1, np.float32(1)), np.pi**2 / 6, rtol=1e-5)
    np.testing.assert_allclose(special.zeta(np.float32(2), np.float32(1)), np.pi**2 / 6,
                               rtol=1e-5)
    np.testing.assert_allclose(special.entr(np.float32(0.5)), 0.5 * np.log(2), rtol=1e-6)
    assert float(special.rel_entr(np.float32(0), np.float32(1))) == 0
    assert float(special.rel_entr(np.float32(1), np.float32(0))) == np.inf
    np.testing.assert_allclose(special.kl_div(np.float32(0.5), np.float32(0.25)),
                               0.5 * np.log(2) - 0.25, rtol=1e-6)
    np.testing.assert_allclose(special.boxcox(np.float32(4), np.float32(0)), np.log(4),
                               rtol=1e-6)
    np.testing.assert_allclose(special.boxcox1p(np.float32(1e-3), np.float32(1)), 1e-3,
                               rtol=1e-5)
    np.testing.assert_allclose(special.softmax(np.zeros(4, np.float32)), 0.25)
    with pytest.raises(ValueError, match="`n` to polygamma must be of integer type"):
        special.polygamma(np.float32(1), np.float32(1))
    with pytest.raises(NotImplementedError, match="factorial with exact=True"):
        special.factorial(3, exact=True)


def test_errors_name_the_function():
    with pytest.raises(TypeError, match="erf requires array arguments, got str"):
        special.erf("a")
    with pytest.raises(TypeError, match="log_ndtr: x.dtype=float16 is not supported"):
        special.log_ndtr(np.float16(0))


def test_docstring_examples():
    result = doctest.testmod(special, extraglobs={"np": np, "lax": lax},
                             optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_every_public_name_has_a_docstring():
    for name in special.__all__:
        assert getattr(special, name).__doc__, name
