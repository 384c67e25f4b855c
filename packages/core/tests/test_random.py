"""Tests of laminax_core.random on the reference interpreter: the threefry primitive (known
answers from the Random123 paper, lax expansion, batching), keys, and samplers (shapes,
dtypes, ranges, statistics with fixed keys, errors, vmap over keys)."""

import doctest

import numpy as np
import pytest
from laminax_core import config, dtypes, grad, lax, make_jaxpr, vmap
from laminax_core import random as jr
from laminax_core.internal import set_eager_impl
from laminax_core.random import (
    _discrete,
    _gamma,
    _keys,
    _linalg_samplers,
    _permutations,
    _samplers,
    _threefry,
    _transformed,
)


@pytest.fixture(autouse=True)
def _reference_interpreter():
    """These tests check core on its NumPy reference interpreter: unplug an eager executor that
    another package (dispatch) may have installed in this test process, and restore it after."""
    previous = set_eager_impl(None)
    yield
    set_eager_impl(previous)


U32 = np.uint32


# ----- threefry2x32 -------------------------------------------------------------------------

# Random123 known-answer vectors for threefry2x32_20: (key, counter) -> output
KNOWN_ANSWERS = [
    ((0x0, 0x0), (0x0, 0x0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("key, count, expected", KNOWN_ANSWERS)
def test_threefry2x32_matches_random123_known_answers(key, count, expected):
    args = [np.asarray(v, U32) for v in (*key, *count)]
    out = jr.threefry2x32_p.bind(*args)
    assert [int(o) for o in out] == list(expected)


@pytest.mark.parametrize("key, count, expected", KNOWN_ANSWERS)
def test_threefry2x32_lax_expansion_matches_primitive(key, count, expected):
    args = [np.asarray(v, U32) for v in (*key, *count)]
    assert [int(o) for o in _threefry.threefry2x32_lax(*args)] == list(expected)


def test_threefry2x32_lax_expansion_on_arrays():
    rng = np.random.RandomState(0)
    x1, x2 = (rng.randint(0, 2**32, size=(3, 5), dtype=np.uint64).astype(U32) for _ in range(2))
    k1, k2 = U32(12345), U32(0xDEADBEEF)
    expected = jr.threefry2x32_p.bind(k1, k2, x1, x2)
    got = _threefry.threefry2x32_lax(k1, k2, x1, x2)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(g, e)


def test_threefry2x32_rejects_non_uint32():
    with pytest.raises(TypeError, match="threefry2x32 takes uint32 arguments.*int32"):
        jr.threefry2x32_p.bind(U32(0), U32(0), np.int32(1), U32(1))


def test_threefry2x32_jaxpr_and_batching():
    jaxpr = make_jaxpr(lambda a, b: jr.threefry2x32_p.bind(U32(1), U32(2), a, b))(
        np.zeros(3, U32), np.zeros(3, U32))
    assert "threefry2x32" in str(jaxpr)
    xs = np.arange(12, dtype=U32).reshape(4, 3)
    batched = vmap(lambda k, x: jr.threefry2x32_p.bind(k, U32(7), x, x))(xs[:, 0], xs)
    for i in range(4):
        expected = jr.threefry2x32_p.bind(xs[i, 0], U32(7), xs[i], xs[i])
        np.testing.assert_array_equal(batched[0][i], expected[0])
        np.testing.assert_array_equal(batched[1][i], expected[1])


def test_threefry_2x32_odd_length_counts():
    key = np.array([3, 4], U32)
    out = jr.threefry_2x32(key, np.arange(5, dtype=U32).reshape(5, 1))
    # odd counts are padded with one 0, split in halves, hashed pairwise, and unpadded
    first, second = jr.threefry2x32_p.bind(key[0], key[1], np.array([0, 1, 2], U32),
                                           np.array([3, 4, 0], U32))
    np.testing.assert_array_equal(out.reshape(-1), np.concatenate([first, second])[:5])
    assert out.shape == (5, 1)


# ----- keys ---------------------------------------------------------------------------------


def test_prngkey_seed_words():
    np.testing.assert_array_equal(jr.PRNGKey(0), [0, 0])
    np.testing.assert_array_equal(jr.PRNGKey(42), [0, 42])
    np.testing.assert_array_equal(jr.PRNGKey(-1), [0, 2**32 - 1])
    np.testing.assert_array_equal(jr.PRNGKey(2**40 + 5), [0, 5])  # low word without x64


def test_prngkey_64_bit_seed_with_x64():
    with config.enable_x64(True):
        np.testing.assert_array_equal(jr.PRNGKey(2**40 + 5), [256, 5])
        np.testing.assert_array_equal(jr.PRNGKey(-1), [2**32 - 1, 2**32 - 1])


def test_seed_errors():
    with pytest.raises(TypeError, match="PRNGKey accepts a scalar seed.*shape \\(2,\\)"):
        jr.PRNGKey(np.array([1, 2]))
    with pytest.raises(TypeError, match="seed must be an integer"):
        jr.PRNGKey(np.float32(1.5))
    with pytest.raises(TypeError, match="key accepts a scalar seed, but was given a PRNG key"):
        jr.key(jr.key(0))


def test_typed_keys_shape_dtype_printing_and_indexing():
    k = jr.key(0)
    assert k.shape == () and k.ndim == 0 and str(k.dtype) == "key<fry>"
    assert dtypes.issubdtype(k.dtype, dtypes.prng_key)
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    keys = jr.split(k, 3)
    assert isinstance(keys, jr.PRNGKeyArray) and keys.shape == (3,) and len(keys) == 3
    np.testing.assert_array_equal(jr.key_data(keys[1]), jr.split(jr.PRNGKey(0), 3)[1])
    np.testing.assert_array_equal(jr.key_data(keys[-1]), jr.key_data(list(keys)[2]))
    assert keys[1:].shape == (2,)
    assert bool(keys[0] == keys[0]) and not bool(keys[0] == keys[1])
    assert jr.split(k, (2, 2)).shape == (2, 2)
    assert keys.reshape(3, 1).shape == (3, 1)
    assert jr.key_impl(k) == "threefry2x32"


def test_typed_key_array_methods():
    keys = jr.split(jr.key(0), 6).reshape(2, 3)
    assert keys.shape == (2, 3) and keys.T.shape == (3, 2) and keys.ravel().shape == (6,)
    assert keys.reshape(-1, 2).shape == (3, 2) and keys[:1].squeeze().shape == (3,)
    np.testing.assert_array_equal(jr.key_data(keys.T[2, 1]), jr.key_data(keys[1, 2]))
    with pytest.raises(TypeError, match="PRNGKey dtype cannot be converted to a NumPy array"):
        np.asarray(keys)


def test_wrap_key_data_round_trip():
    data = jr.key_data(jr.key(7))
    np.testing.assert_array_equal(data, [0, 7])
    assert bool(jr.wrap_key_data(data) == jr.key(7))
    with pytest.raises(TypeError, match="wrap_key_data expects raw uint32 key data"):
        jr.wrap_key_data(jr.key(7))


def test_raw_and_typed_keys_give_the_same_values():
    np.testing.assert_array_equal(jr.normal(jr.key(3), (4,)), jr.normal(jr.PRNGKey(3), (4,)))
    np.testing.assert_array_equal(jr.key_data(jr.fold_in(jr.key(3), 9)),
                                  jr.fold_in(jr.PRNGKey(3), 9))


def test_invalid_keys_name_the_function():
    with pytest.raises(TypeError, match="normal: invalid PRNG key data.*int32"):
        jr.normal(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="uniform: invalid PRNG key data.*\\[3\\]"):
        jr.uniform(np.zeros(3, U32))
    with pytest.raises(ValueError, match="split accepts a single key.*shape \\(3,\\)"):
        jr.split(jr.split(jr.key(0), 3))
    with pytest.raises(TypeError, match="unexpected PRNG key type float"):
        jr.bits(1.5)
    with pytest.raises(TypeError, match="fold_in accepts a scalar"):
        jr.fold_in(jr.key(0), np.array([1, 2]))


def test_split_and_fold_in_differ_and_are_deterministic():
    a, b = jr.split(jr.PRNGKey(1))
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(jr.fold_in(jr.PRNGKey(1), 5), jr.fold_in(jr.PRNGKey(1), 5))
    assert not np.array_equal(jr.fold_in(jr.PRNGKey(1), 5), jr.fold_in(jr.PRNGKey(1), 6))


def test_original_threefry_layout_when_not_partitionable():
    with config.threefry_partitionable(False):
        key = jr.PRNGKey(0)
        split = jr.split(key)
        np.testing.assert_array_equal(split, jr.threefry_2x32(key, np.arange(4, dtype=U32))
                                      .reshape(2, 2))
        for dtype in (np.uint8, np.uint16, np.uint32):
            assert jr.bits(key, (5,), dtype).dtype == dtype


# ----- samplers -----------------------------------------------------------------------------

KEY = jr.PRNGKey(1701)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
def test_bits_dtypes_and_spread(dtype):
    out = jr.bits(KEY, (1000,), dtype)
    assert out.dtype == dtype and out.shape == (1000,)
    assert out.max() > np.iinfo(dtype).max * 0.9 and len(np.unique(out)) > 200


def test_bits_rejects_signed_dtype():
    with pytest.raises(ValueError, match="`bits` must be an unsigned int dtype, got int32"):
        jr.bits(KEY, (2,), np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, dtypes.bfloat16])
def test_uniform_range_and_mean(dtype):
    out = jr.uniform(KEY, (4000,), dtype)
    assert out.dtype == dtype
    values = np.asarray(out, np.float64)
    assert values.min() >= 0 and values.max() < 1
    assert abs(values.mean() - 0.5) < 0.02


def test_uniform_bounds_broadcast():
    out = jr.uniform(KEY, (2, 3), minval=np.array([0.0, 10.0, 20.0], np.float32),
                     maxval=np.array([1.0, 11.0, 21.0], np.float32))
    assert np.all(out >= [0, 10, 20]) and np.all(out < [1, 11, 21])
    with pytest.raises(ValueError, match="uniform parameter shapes must be broadcast"):
        jr.uniform(KEY, (2,), minval=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="`uniform` must be a float dtype, got int32"):
        jr.uniform(KEY, (2,), np.int32)


def test_normal_statistics_and_complex():
    out = jr.normal(KEY, (20000,))
    assert abs(out.mean()) < 0.03 and abs(out.std() - 1) < 0.03
    z = jr.normal(KEY, (20000,), np.complex64)
    assert z.dtype == np.complex64 and abs(np.var(z.real) - 0.5) < 0.03


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int16])
def test_randint_range(dtype):
    out = jr.randint(KEY, (2000,), 3, 10, dtype)
    assert out.dtype == dtype and out.min() == 3 and out.max() == 9


def test_randint_full_uint8_range_and_empty_span():
    out = jr.randint(KEY, (4000,), 0, 256, np.uint8)
    assert out.min() == 0 and out.max() == 255
    np.testing.assert_array_equal(jr.randint(KEY, (3,), 5, 2), [5, 5, 5])
    with pytest.raises(TypeError, match="randint only accepts integer dtypes"):
        jr.randint(KEY, (2,), 0, 3, np.float32)


def test_bernoulli_rate_and_modes():
    assert abs(jr.bernoulli(KEY, 0.3, (5000,)).mean() - 0.3) < 0.03
    assert abs(jr.bernoulli(KEY, 0.3, (5000,), mode="high").mean() - 0.3) < 0.03
    assert jr.bernoulli(KEY, np.array([0.0, 1.0], np.float32)).tolist() == [False, True]
    with pytest.raises(ValueError, match="expected 'high' or 'low'"):
        jr.bernoulli(KEY, 0.5, mode="mid")


@pytest.mark.parametrize("name, mean, var", [
    ("exponential", 1.0, 1.0), ("laplace", 0.0, 2.0), ("logistic", 0.0, np.pi**2 / 3),
    ("gumbel", np.euler_gamma, np.pi**2 / 6),
])
def test_continuous_distribution_moments(name, mean, var):
    out = np.asarray(getattr(jr, name)(KEY, (40000,)), np.float64)
    assert abs(out.mean() - mean) < 0.05 and abs(out.var() / var - 1) < 0.06


def test_gumbel_high_modes_and_errors():
    for mode in ("high", "highest"):
        out = jr.gumbel(KEY, (20000,), mode=mode)
        assert abs(out.mean() - np.euler_gamma) < 0.05 and np.isfinite(out).all()
    with pytest.raises(ValueError, match="mode must be 'low', 'high' or 'highest'"):
        jr.gumbel(KEY, mode="max")


def test_truncated_normal_bounds():
    out = jr.truncated_normal(KEY, -0.5, 1.5, (5000,))
    assert out.min() > -0.5 and out.max() < 1.5
    out = jr.truncated_normal(KEY, np.array([-1.0, 0.0], np.float32), 2.0)
    assert out.shape == (2,)


def test_categorical_frequencies_and_shapes():
    probs = np.array([0.2, 0.5, 0.3], np.float32)
    draws = jr.categorical(KEY, np.log(probs), shape=(6000,))
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 6000, probs, atol=0.03)
    logits = np.zeros((4, 3), np.float32)
    assert jr.categorical(KEY, logits).shape == (4,)
    assert jr.categorical(KEY, logits, axis=0).shape == (3,)
    assert jr.categorical(KEY, logits, shape=(5, 4)).shape == (5, 4)


def test_permutation_is_a_permutation():
    np.testing.assert_array_equal(np.sort(jr.permutation(KEY, 50)), np.arange(50))
    x = np.arange(24).reshape(4, 6)
    rows = jr.permutation(KEY, x)
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, x.tolist()))
    cols = jr.permutation(KEY, x, axis=1)
    np.testing.assert_array_equal(np.sort(cols, 1), x)
    np.testing.assert_array_equal(cols, x[:, cols[0]])  # whole columns move together
    independent = jr.permutation(KEY, x, axis=1, independent=True)
    np.testing.assert_array_equal(np.sort(independent, 1), x)
    with pytest.raises(TypeError, match="x must be an integer or at least 1-dimensional"):
        jr.permutation(KEY, 2.5)


def test_choice_with_and_without_replacement():
    draws = jr.choice(KEY, 5, (4000,))
    assert draws.min() == 0 and draws.max() == 4
    np.testing.assert_allclose(np.bincount(draws) / 4000, 0.2, atol=0.03)
    distinct = jr.choice(KEY, 10, (10,), replace=False)
    np.testing.assert_array_equal(np.sort(distinct), np.arange(10))
    p = np.array([0.1, 0.0, 0.9], np.float32)
    weighted = jr.choice(KEY, np.array([10, 20, 30]), (3000,), p=p)
    assert 20 not in weighted and abs((weighted == 30).mean() - 0.9) < 0.03
    picked = jr.choice(KEY, 6, (3,), replace=False, p=np.full(6, 1 / 6, np.float32))
    assert len(set(picked.tolist())) == 3
    a = np.arange(12).reshape(3, 4)
    assert jr.choice(KEY, a, (2, 5), axis=1).shape == (3, 2, 5, 1)[:1] + (2, 5)
    assert jr.choice(KEY, 3, (0,)).shape == (0,)


def test_choice_errors():
    with pytest.raises(ValueError, match="Cannot take a larger sample \\(size 4\\)"):
        jr.choice(KEY, 3, (4,), replace=False)
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        jr.choice(KEY, 3, (2,), p=np.ones(4, np.float32) / 4)
    with pytest.raises(TypeError, match="shape argument of jax.random.choice must be a sequence"):
        jr.choice(KEY, 3, 2)
    with pytest.raises(ValueError, match="a must be greater than 0"):
        jr.choice(KEY, 0, (2,))


@pytest.mark.parametrize("a", [0.3, 1.0, 4.5])
def test_gamma_moments(a):
    out = jr.gamma(KEY, a, (6000,))
    assert out.dtype == np.float32 and out.min() > 0
    assert abs(out.mean() / a - 1) < 0.06 and abs(out.var() / a - 1) < 0.12
    log_out = jr.loggamma(KEY, a, (6000,))
    np.testing.assert_allclose(np.exp(log_out), out, rtol=1e-5)


def test_gamma_of_tiny_shape_in_log_space():
    assert np.isfinite(jr.loggamma(KEY, 1e-4, (100,))).all()


def test_beta_and_dirichlet():
    b = jr.beta(KEY, 2.0, 5.0, (6000,))
    assert abs(b.mean() - 2 / 7) < 0.01 and b.min() > 0 and b.max() < 1
    assert jr.beta(KEY, np.ones((2, 1), np.float32), np.ones(3, np.float32)).shape == (2, 3)
    d = jr.dirichlet(KEY, np.array([1.0, 2.0, 3.0], np.float32), (2000,))
    assert d.shape == (2000, 3)
    np.testing.assert_allclose(d.sum(-1), 1, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.02)
    with pytest.raises(ValueError, match="dirichlet requires alpha.ndim >= 1"):
        jr.dirichlet(KEY, 1.0)


def test_gamma_shape_errors_and_gradient():
    with pytest.raises(ValueError, match="gamma parameter shapes must be broadcast"):
        jr.gamma(KEY, np.ones(3, np.float32), (2,))
    with pytest.raises(ValueError, match="`gamma` must be a float dtype"):
        jr.gamma(KEY, 1.0, dtype=np.int32)
    # the implicit reparameterization gradient: dx/da = -(dP/da) / (dP/dx) at the sample
    x = jr.gamma(KEY, np.float32(2.0))
    np.testing.assert_allclose(grad(lambda a: jr.gamma(KEY, a))(np.float32(2.0)),
                               lax.random_gamma_grad(np.float32(2.0), x), rtol=1e-6)


def test_gamma_under_vmap_matches_loop():
    keys = jr.split(KEY, 3)
    alphas = np.array([0.5, 2.0, 7.0], np.float32)
    batched = vmap(lambda k, a: jr.gamma(k, a, (2,)))(keys, alphas)
    for i in range(3):
        np.testing.assert_array_equal(batched[i], jr.gamma(keys[i], alphas[i], (2,)))


@pytest.mark.parametrize("method", ["cholesky", "svd", "eigh"])
def test_multivariate_normal_moments(method):
    mean = np.array([1.0, -2.0, 0.5], np.float32)
    a = np.array([[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [-0.3, 0.2, 0.7]], np.float32)
    cov = a @ a.T
    x = jr.multivariate_normal(KEY, mean, cov, (8000,), method=method)
    assert x.shape == (8000, 3) and x.dtype == np.float32
    np.testing.assert_allclose(x.mean(0), mean, atol=0.05)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.08)


def test_multivariate_normal_batching_and_errors():
    mean = np.zeros((4, 2), np.float32)
    cov = np.broadcast_to(np.eye(2, dtype=np.float32), (4, 2, 2))
    assert jr.multivariate_normal(KEY, mean, cov).shape == (4, 2)
    assert jr.multivariate_normal(KEY, mean, cov, (5, 4)).shape == (5, 4, 2)
    with pytest.raises(ValueError, match="requires cov.shape == \\(..., n, n\\) for n=2"):
        jr.multivariate_normal(KEY, np.zeros(2, np.float32), np.eye(3, dtype=np.float32))
    with pytest.raises(ValueError, match="method must be one of"):
        jr.multivariate_normal(KEY, mean, cov, method="qr")
    with pytest.raises(ValueError, match="requires mean.ndim >= 1"):
        jr.multivariate_normal(KEY, np.float32(0), cov)


@pytest.mark.parametrize("n, m", [(4, 4), (3, 5), (5, 2)])
def test_orthogonal_has_orthonormal_rows_or_columns(n, m):
    q = np.asarray(jr.orthogonal(KEY, n, (2,), m=m), np.float64)
    assert q.shape == (2, n, m)
    k = min(n, m)
    gram = q @ np.swapaxes(q, -1, -2) if n <= m else np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(k), (2, k, k)), atol=1e-5)


@pytest.mark.parametrize("call, mean, var", [
    ("pareto(KEY, 5.0, (20000,))", 5 / 4, 5 / (16 * 3)),
    ("t(KEY, 6.0, (20000,))", 0.0, 6 / 4),
    ("chisquare(KEY, 3.0, (20000,))", 3.0, 6.0),
    ("f(KEY, 5.0, 10.0, (20000,))", 10 / 8, 2 * 100 * 13 / (5 * 64 * 6)),
    ("maxwell(KEY, (20000,))", 2 * np.sqrt(2 / np.pi), 3 - 8 / np.pi),
    ("lognormal(KEY, 0.5, (20000,))", np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)),
    ("rayleigh(KEY, 2.0, (20000,))", 2 * np.sqrt(np.pi / 2), (4 - np.pi) / 2 * 4),
    ("wald(KEY, 1.5, (20000,))", 1.5, 1.5**3),
    ("weibull_min(KEY, 1.0, 2.0, (20000,))", np.sqrt(np.pi) / 2, 1 - np.pi / 4),
    ("triangular(KEY, 0.0, 0.25, 1.0, (20000,))", 1.25 / 3, (1 + 0.0625 - 0.25) / 18),
    ("geometric(KEY, 0.25, (20000,))", 4.0, 0.75 / 0.0625),
    ("rademacher(KEY, (20000,))", 0.0, 1.0),
    ("double_sided_maxwell(KEY, 1.0, 2.0, (20000,))", 1.0, 4 * 3),
])
def test_transformed_distribution_moments(call, mean, var):
    out = np.asarray(eval(f"jr.{call}", {"jr": jr, "KEY": KEY}), np.float64)  # noqa: S307
    assert abs(out.mean() - mean) < 0.05 * max(1, abs(mean), np.sqrt(var))
    assert abs(out.var() / var - 1) < 0.15


def test_ball_cauchy_generalized_normal_clone_and_key_dtype():
    x = np.asarray(jr.ball(KEY, 4, p=1.5, shape=(100,)))
    assert x.shape == (100, 4) and (np.sum(np.abs(x) ** 1.5, -1) <= 1 + 1e-5).all()
    assert abs(np.median(np.asarray(jr.cauchy(KEY, (4001,))))) < 0.1
    assert jr.generalized_normal(KEY, 1.0, (3, 2)).shape == (3, 2)
    np.testing.assert_array_equal(jr.clone(KEY), KEY)
    assert str(jr.key_dtype()) == "key<fry>" and jr.key(0).dtype == jr.key_dtype()
    with pytest.raises(ValueError, match="`geometric` must be an int dtype"):
        jr.geometric(KEY, 0.5, dtype=np.float32)


@pytest.mark.parametrize("lam", [0.7, 4.0, 25.0, 400.0])
def test_poisson_moments(lam):
    out = jr.poisson(KEY, lam, (5000,))
    assert out.dtype == np.int32 and out.min() >= 0
    assert abs(out.mean() / lam - 1) < 0.05 and abs(out.var() / lam - 1) < 0.12
    assert (jr.poisson(KEY, 0.0, (3,)) == 0).all()


@pytest.mark.parametrize("n, p", [(8.0, 0.3), (60.0, 0.5), (500.0, 0.9)])
def test_binomial_moments_and_multinomial(n, p):
    out = jr.binomial(KEY, n, p, (5000,))
    assert out.min() >= 0 and out.max() <= n and (out == np.floor(out)).all()
    assert abs(out.mean() / (n * p) - 1) < 0.03
    assert abs(out.var() / (n * p * (1 - p)) - 1) < 0.15
    counts = jr.multinomial(KEY, n, np.array([0.2, 0.3, 0.5], np.float32), shape=(400, 3))
    np.testing.assert_allclose(counts.sum(-1), n)
    np.testing.assert_allclose(counts.mean(0) / n, [0.2, 0.3, 0.5], atol=0.03)


def test_binomial_edge_cases():
    out = jr.binomial(KEY, np.array([np.inf, -1.0, 5.0], np.float32),
                      np.array([0.3, 0.3, np.nan], np.float32))
    assert out[0] == np.inf and np.isnan(out[1]) and np.isnan(out[2])
    with pytest.raises(ValueError, match="`binomial` must be a float dtype"):
        jr.binomial(KEY, 3.0, 0.5, dtype=np.int32)


def test_vmap_over_keys_matches_python_loop():
    keys = jr.split(jr.PRNGKey(0), 4)
    for sampler in (lambda k: jr.normal(k, (3,)), lambda k: jr.uniform(k, (2, 2)),
                    lambda k: jr.randint(k, (3,), 0, 100), lambda k: jr.split(k),
                    lambda k: jr.bits(k, (2,), np.uint8), lambda k: jr.permutation(k, 6),
                    lambda k: jr.gumbel(k, (2,)), lambda k: jr.bernoulli(k, 0.4, (3,))):
        batched = vmap(sampler)(keys)
        for i in range(4):
            np.testing.assert_array_equal(batched[i], sampler(keys[i]))


def test_vmap_over_typed_keys():
    keys = jr.split(jr.key(0), 3)
    batched = vmap(lambda k: jr.uniform(k, (2,)))(keys)
    for i in range(3):
        np.testing.assert_array_equal(batched[i], jr.uniform(keys[i], (2,)))


def test_vmap_over_seeds_and_fold_in_data():
    seeds = np.array([0, 1, 2**31 - 1, -5], np.int32)
    np.testing.assert_array_equal(vmap(jr.PRNGKey)(seeds),
                                  np.stack([jr.PRNGKey(int(s)) for s in seeds]))
    data = np.array([0, 7, 9], np.uint32)
    np.testing.assert_array_equal(vmap(lambda d: jr.fold_in(KEY, d))(data),
                                  np.stack([jr.fold_in(KEY, int(d)) for d in data]))


def test_samplers_trace_to_jaxprs():
    jaxpr = make_jaxpr(lambda k: jr.normal(k, (3,)))(jr.PRNGKey(0))
    text = str(jaxpr)
    assert "threefry2x32" in text and "erf_inv" in text and "f32[3]" in text


def test_docstring_examples():
    globs = {"np": np, "lax": lax, **{n: getattr(jr, n) for n in jr.__all__}}
    for module in (_threefry, _keys, _samplers, _permutations, _gamma, _linalg_samplers,
                   _transformed, _discrete):
        result = doctest.testmod(module, extraglobs=globs, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__


def test_every_public_name_has_a_docstring():
    for name in jr.__all__:
        assert getattr(jr, name).__doc__, name
