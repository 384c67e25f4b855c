"""laminax_core.random against real JAX 0.10.2 on the same seeds and calls.

laminax_core runs here on its NumPy reference interpreter, JAX on XLA. Keys, bits, integer and
boolean samples and uniforms on [0, 1) are equal bit for bit. Two XLA effects make the rest
agree to float rounding only: XLA's CPU backend contracts `floats * (maxval - minval) + minval`
into one fused multiply-add (the reference rounds twice: uniforms with other bounds differ by at
most one ulp of the bounds), and XLA's erf_inv/log1p/log are approximations whose last bits
differ from the reference's (normals agree to about 1e-5 relative in float32).
"""

import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core import config, dtypes
from laminax_core import random as jr

SEEDS = [0, 1, 42, -1, 2**31 - 1, -(2**31), 2**40 + 5, 123456789]
SHAPES = [(), (1,), (7,), (3, 4), (2, 3, 5)]


def _same_bits(got, expected) -> None:
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint8),
                                  expected.reshape(-1).view(np.uint8))


# ----- keys ---------------------------------------------------------------------------------


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_prngkey_and_key_data_match_jax(x64):
    expected = run_jax(
        "result = [np.asarray(jax.random.PRNGKey(s)) for s in seeds] + "
        "[np.asarray(jax.random.key_data(jax.random.key(s))) for s in seeds]",
        seeds=SEEDS, x64=x64)
    with config.enable_x64(x64):
        got = [jr.PRNGKey(s) for s in SEEDS] + [jr.key_data(jr.key(s)) for s in SEEDS]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
        assert np.asarray(g).dtype == np.uint32


@requires_jax
def test_seed_dtypes_match_jax():
    seeds = [np.int8(-3), np.uint8(200), np.int16(-300), np.uint32(2**32 - 1), np.int32(-7)]
    expected = run_jax("result = [np.asarray(jax.random.PRNGKey(s)) for s in seeds]",
                       seeds=seeds)
    for s, e in zip(seeds, expected, strict=True):
        np.testing.assert_array_equal(jr.PRNGKey(s), e)


@requires_jax
@pytest.mark.parametrize("partitionable", [True, False])
def test_split_and_fold_in_match_jax(partitionable):
    source = """
from jax._src import config as c
with c.threefry_partitionable(partitionable):
    result = []
    for s in seeds:
        k = jax.random.PRNGKey(s)
        result += [jax.random.split(k), jax.random.split(k, 3), jax.random.split(k, (2, 3)),
                   jax.random.key_data(jax.random.split(jax.random.key(s), 5))]
        result += [jax.random.fold_in(k, d) for d in data]
"""
    data = [0, 1, 2**31, 2**32 - 1]
    expected = run_jax(source, seeds=SEEDS[:5], data=data, partitionable=partitionable)
    got = []
    with config.threefry_partitionable(partitionable):
        for s in SEEDS[:5]:
            k = jr.PRNGKey(s)
            got += [jr.split(k), jr.split(k, 3), jr.split(k, (2, 3)),
                    jr.key_data(jr.split(jr.key(s), 5))]
            got += [jr.fold_in(k, d) for d in data]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


def test_typed_key_repr_matches_jax_format():
    keys = jr.split(jr.key(0), 3)
    expected_head = "Array((3,), dtype=key<fry>) overlaying:\n[[1797259609 2579123966]"
    assert repr(keys).startswith(expected_head)


# ----- bits and uniform: bit for bit --------------------------------------------------------


@requires_jax
@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32"])
def test_bits_match_jax_exactly(dtype, partitionable):
    source = """
from jax._src import config as c
with c.threefry_partitionable(partitionable):
    result = [jax.random.bits(jax.random.PRNGKey(s), shape, dtype)
              for s in seeds for shape in shapes]
"""
    expected = run_jax(source, seeds=SEEDS[:4], shapes=SHAPES, dtype=dtype,
                       partitionable=partitionable)
    with config.threefry_partitionable(partitionable):
        got = [jr.bits(jr.PRNGKey(s), shape, np.dtype(dtype)) for s in SEEDS[:4]
               for shape in SHAPES]
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).dtype == e.dtype
        np.testing.assert_array_equal(g, e)


@requires_jax
@pytest.mark.parametrize("partitionable", [True, False])
def test_uint64_bits_match_jax_exactly_with_x64(partitionable):
    source = """
from jax._src import config as c
with c.threefry_partitionable(partitionable):
    result = [jax.random.bits(jax.random.PRNGKey(s), shape, 'uint64')
              for s in seeds for shape in shapes]
"""
    expected = run_jax(source, seeds=SEEDS[:4], shapes=SHAPES, x64=True,
                       partitionable=partitionable)
    with config.enable_x64(True), config.threefry_partitionable(partitionable):
        got = [jr.bits(jr.PRNGKey(s), shape, np.uint64) for s in SEEDS[:4] for shape in SHAPES]
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).dtype == np.uint64
        np.testing.assert_array_equal(g, e)


UNIFORM_SOURCE = """
result = [jax.random.uniform(jax.random.PRNGKey(s), shape, dtype, *bounds)
          for s in seeds for shape in shapes]
"""


def _check_uniforms(got, expected, bounds, dtype):
    for g, e in zip(got, expected, strict=True):
        if bounds == (0.0, 1.0):
            _same_bits(g, e)
        else:  # XLA fuses the affine map into an fma: one ulp of the bounds at most
            spacing = float(np.spacing(np.asarray(max(map(abs, bounds)), dtype)))
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64),
                                       rtol=0, atol=spacing)


@requires_jax
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-3.0, 2.5)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_uniform_matches_jax(dtype, bounds):
    expected = run_jax(UNIFORM_SOURCE, seeds=SEEDS[:4], shapes=SHAPES, dtype=dtype,
                       bounds=bounds)
    np_dtype = dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    got = [jr.uniform(jr.PRNGKey(s), shape, np_dtype, *bounds) for s in SEEDS[:4]
           for shape in SHAPES]
    _check_uniforms(got, expected, bounds, np_dtype)


@requires_jax
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-3.0, 2.5)])
def test_float64_uniform_matches_jax_with_x64(bounds):
    expected = run_jax(UNIFORM_SOURCE, seeds=SEEDS[:4], shapes=SHAPES, dtype="float64",
                       bounds=bounds, x64=True)
    with config.enable_x64(True):
        got = [jr.uniform(jr.PRNGKey(s), shape, np.float64, *bounds) for s in SEEDS[:4]
               for shape in SHAPES]
    _check_uniforms(got, expected, bounds, np.float64)


@requires_jax
def test_uniform_with_array_bounds_matches_jax():
    lo = np.array([0.0, -1.0, 5.0], np.float32)
    hi = np.array([[1.0], [2.0]], np.float32)
    expected = run_jax("result = jax.random.uniform(jax.random.key(3), (2, 3), minval=lo, "
                       "maxval=hi)", lo=lo, hi=hi)
    np.testing.assert_allclose(jr.uniform(jr.key(3), (2, 3), minval=lo, maxval=hi),
                               expected, rtol=0, atol=float(np.spacing(np.float32(5))))


# ----- normal: erf_inv's last bits ---------------------------------------------------------

NORMAL_RTOL = {"float32": 1e-5, "float16": 1e-3, "bfloat16": 8e-3, "float64": 1e-13}


@requires_jax
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_normal_matches_jax_within_ulps(dtype):
    source = ("result = [jax.random.normal(jax.random.PRNGKey(s), shape, dtype) "
              "for s in seeds for shape in shapes]")
    expected = run_jax(source, seeds=SEEDS, shapes=SHAPES, dtype=dtype)
    np_dtype = dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    got = [jr.normal(jr.PRNGKey(s), shape, np_dtype) for s in SEEDS for shape in SHAPES]
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64),
                                   rtol=NORMAL_RTOL[dtype], atol=NORMAL_RTOL[dtype] / 10)


@requires_jax
def test_float64_normal_matches_jax_within_ulps():
    source = ("result = [jax.random.normal(jax.random.PRNGKey(s), (50,), 'float64') "
              "for s in seeds]")
    expected = run_jax(source, seeds=SEEDS, x64=True)
    with config.enable_x64(True):
        got = [jr.normal(jr.PRNGKey(s), (50,), np.float64) for s in SEEDS]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=NORMAL_RTOL["float64"])


@requires_jax
def test_complex_normal_matches_jax():
    expected = run_jax("result = jax.random.normal(jax.random.key(5), (20,), jnp.complex64)")
    np.testing.assert_allclose(jr.normal(jr.key(5), (20,), np.complex64), expected, rtol=1e-6)


# ----- integer and boolean samplers: exact --------------------------------------------------


@requires_jax
def test_randint_matches_jax_exactly():
    cases = [((5,), 0, 10, "int32"), ((3, 4), -50, 50, "int32"), ((8,), 0, 256, "uint8"),
             ((8,), -128, 128, "int8"), ((6,), -5, 1000, "int16"), ((4,), 7, 3, "int32"),
             ((6,), -(2**31), 2**31 - 1, "int32"),
             ((5,), np.uint32(10), np.uint32(4_000_000_000), "uint32")]
    source = ("result = [jax.random.randint(jax.random.PRNGKey(s), shape, lo, hi, dtype) "
              "for s in seeds for shape, lo, hi, dtype in cases]")
    expected = run_jax(source, seeds=SEEDS[:4], cases=cases)
    got = [jr.randint(jr.PRNGKey(s), shape, lo, hi, np.dtype(dtype)) for s in SEEDS[:4]
           for shape, lo, hi, dtype in cases]
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).dtype == e.dtype
        np.testing.assert_array_equal(g, e)


@requires_jax
def test_randint_array_bounds_and_int64_match_jax():
    lo = np.array([0, 10, -3], np.int32)
    hi = np.array([5, 20, 3], np.int32)
    expected = run_jax("result = jax.random.randint(jax.random.key(9), (2, 3), lo, hi)",
                       lo=lo, hi=hi)
    np.testing.assert_array_equal(jr.randint(jr.key(9), (2, 3), lo, hi), expected)
    expected = run_jax("result = jax.random.randint(jax.random.key(9), (6,), -2**40, 2**41, "
                       "'int64')", x64=True)
    with config.enable_x64(True):
        np.testing.assert_array_equal(
            jr.randint(jr.key(9), (6,), -(2**40), 2**41, np.int64), expected)


@requires_jax
def test_bernoulli_matches_jax_exactly():
    p = np.array([0.1, 0.5, 0.9, 1e-6], np.float32)
    source = """
k = jax.random.PRNGKey(11)
result = [jax.random.bernoulli(k, 0.3, (50,)), jax.random.bernoulli(k, p),
          jax.random.bernoulli(k, p, (3, 4)), jax.random.bernoulli(k, 0.3, (50,), mode='high')]
"""
    expected = run_jax(source, p=p)
    k = jr.PRNGKey(11)
    got = [jr.bernoulli(k, 0.3, (50,)), jr.bernoulli(k, p), jr.bernoulli(k, p, (3, 4)),
           jr.bernoulli(k, 0.3, (50,), mode="high")]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


@requires_jax
def test_categorical_matches_jax_exactly():
    logits = np.log(np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]], np.float32))
    source = """
k = jax.random.key(4)
result = [jax.random.categorical(k, logits), jax.random.categorical(k, logits, axis=0),
          jax.random.categorical(k, logits, shape=(7, 2)),
          jax.random.categorical(k, logits[0], shape=(30,))]
"""
    expected = run_jax(source, logits=logits)
    k = jr.key(4)
    got = [jr.categorical(k, logits), jr.categorical(k, logits, axis=0),
           jr.categorical(k, logits, shape=(7, 2)), jr.categorical(k, logits[0], shape=(30,))]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


# ----- continuous samplers: float tolerance -------------------------------------------------


@requires_jax
@pytest.mark.parametrize("call", [
    "exponential(k, (40,))", "laplace(k, (40,))", "logistic(k, (40,))", "gumbel(k, (40,))",
    "gumbel(k, (40,), mode='high')", "gumbel(k, (40,), mode='highest')",
    "truncated_normal(k, -1.5, 0.5, (40,))",
    "truncated_normal(k, np.float32(-0.5), np.array([0.0, 1.0, 3.0], np.float32))",
    "exponential(k, (3, 5), jnp.float16)",
])
def test_continuous_samplers_match_jax(call):
    results = []
    for s in SEEDS[:3]:
        expected = run_jax(f"k = jax.random.PRNGKey({s})\nresult = jax.random.{call}")
        namespace = {"k": jr.PRNGKey(s), "np": np, "jnp": np}
        got = eval(f"jr.{call}", {"jr": jr, **namespace})  # noqa: S307 (test-local snippet)
        assert np.asarray(got).dtype == expected.dtype and got.shape == expected.shape
        results.append((got, expected))
    for got, expected in results:
        rtol = 2e-3 if expected.dtype == np.float16 else 2e-6
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


# ----- permutation and choice: exact --------------------------------------------------------

PERMUTATION_CALLS = [
    "permutation(k, 7)", "permutation(k, 300)", "permutation(k, np.arange(12).reshape(3, 4))",
    "permutation(k, np.arange(12).reshape(3, 4), axis=1)",
    "permutation(k, np.arange(24.0).reshape(2, 3, 4), axis=2, independent=True)",
    "choice(k, 10, (5,))", "choice(k, 10, (2, 3), replace=False)",
    "choice(k, np.arange(8) * 3, (4,), replace=False)",
    "choice(k, np.arange(12).reshape(3, 4), (2,), axis=1)",
    "choice(k, 5, (6,), p=np.array([0.1, 0.2, 0.3, 0.25, 0.15], np.float32))",
    "choice(k, 5, (3,), replace=False, p=np.array([0.1, 0.2, 0.3, 0.25, 0.15], np.float32))",
]


@requires_jax
@pytest.mark.parametrize("call", PERMUTATION_CALLS)
def test_permutation_and_choice_match_jax_exactly(call):
    for s in SEEDS[:3]:
        expected = run_jax(f"k = jax.random.PRNGKey({s})\nresult = jax.random.{call}")
        got = eval(f"jr.{call}", {"jr": jr, "np": np, "k": jr.PRNGKey(s)})  # noqa: S307
        assert np.asarray(got).dtype == expected.dtype, call
        np.testing.assert_array_equal(got, expected)


# ----- gamma family: float tolerance --------------------------------------------------------

GAMMA_CALLS = [
    "gamma(k, 2.0, (20,))", "gamma(k, np.array([0.1, 0.5, 1.0, 3.0, 30.0], np.float32))",
    "loggamma(k, np.array([0.001, 0.3, 2.0], np.float32), (4, 3))",
    "beta(k, 0.5, 2.0, (10,))", "beta(k, np.array([1.0, 3.0], np.float32), 2.0)",
    "dirichlet(k, np.array([0.2, 1.0, 5.0], np.float32), (4,))",
]


@requires_jax
@pytest.mark.parametrize("call", GAMMA_CALLS)
def test_gamma_family_matches_jax(call):
    for s in SEEDS[:2]:
        expected = run_jax(f"k = jax.random.PRNGKey({s})\nresult = jax.random.{call}")
        got = eval(f"jr.{call}", {"jr": jr, "np": np, "k": jr.PRNGKey(s)})  # noqa: S307
        assert np.asarray(got).dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@requires_jax
def test_float64_gamma_matches_jax_with_x64():
    expected = run_jax("result = jax.random.gamma(jax.random.key(2), 0.8, (30,), 'float64')",
                       x64=True)
    with config.enable_x64(True):
        got = jr.gamma(jr.key(2), 0.8, (30,), np.float64)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


# ----- through laminax_dispatch.jit: XLA runs the same ops as JAX, so bit for bit -----------

JIT_CALLS = [
    "bits(k, (64,))", "bits(k, (3, 5), np.uint8)", "split(k, 3)", "fold_in(k, 7)",
    "uniform(k, (64,))", "uniform(k, (64,), minval=-3.0, maxval=2.5)",
    "uniform(k, (16,), ml_dtypes.bfloat16)", "normal(k, (256,))", "normal(k, (64,), np.float16)",
    "normal(k, (64,), ml_dtypes.bfloat16)", "normal(k, (8,), np.complex64)",
    "truncated_normal(k, -1.0, 2.0, (64,))", "exponential(k, (64,))", "laplace(k, (64,))",
    "logistic(k, (64,))", "gumbel(k, (64,))", "gumbel(k, (64,), mode='highest')",
    "randint(k, (64,), -5, 1000)",
    "bernoulli(k, 0.3, (64,))", "permutation(k, 20)", "choice(k, 10, (5,), replace=False)",
    "categorical(k, np.log(np.array([0.2, 0.3, 0.5], np.float32)), shape=(32,))",
    "choice(k, 5, (6,), p=np.array([0.1, 0.2, 0.3, 0.25, 0.15], np.float32))",
]


@requires_jax
@pytest.mark.parametrize("call", JIT_CALLS)
def test_jitted_samplers_match_jax_bit_for_bit(call):
    import ml_dtypes

    dispatch = pytest.importorskip("laminax_dispatch")
    namespace = {"jr": jr, "np": np, "ml_dtypes": ml_dtypes}
    jax_call = call.replace("ml_dtypes.bfloat16", "jnp.bfloat16")
    sampler = dispatch.jit(lambda k: eval(f"jr.{call}", {**namespace, "k": k}))  # noqa: S307
    for s in SEEDS[:3]:
        expected = run_jax(f"k = jax.random.PRNGKey({s})\nresult = jax.random.{jax_call}")
        _same_bits(np.asarray(sampler(np.asarray(jr.PRNGKey(s)))), expected)


# ----- factorization-based samplers: float tolerance ----------------------------------------

LINALG_CALLS = [
    "multivariate_normal(k, mean, cov, (5,))",
    "multivariate_normal(k, mean, cov, (4,), method='svd')",
    "multivariate_normal(k, mean, cov, (4,), method='eigh')",
    "multivariate_normal(k, np.zeros((2, 3), np.float32), cov)",
    "orthogonal(k, 4)", "orthogonal(k, 3, (2,))", "orthogonal(k, 2, m=5)", "orthogonal(k, 5, m=2)",
]


@requires_jax
@pytest.mark.parametrize("call", LINALG_CALLS)
def test_linalg_samplers_match_jax(call):
    mean = np.array([1.0, -2.0, 0.5], np.float32)
    a = np.array([[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [-0.3, 0.2, 0.7]], np.float32)
    cov = a @ a.T
    for s in SEEDS[:2]:
        expected = run_jax(f"k = jax.random.PRNGKey({s})\nresult = jax.random.{call}",
                           mean=mean, cov=cov)
        namespace = {"jr": jr, "np": np, "k": jr.PRNGKey(s), "mean": mean, "cov": cov}
        got = eval(f"jr.{call}", namespace)  # noqa: S307
        assert np.asarray(got).dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=2e-6)


TRANSFORMED_CALLS = [
    "cauchy(k, (20,))", "pareto(k, 3.0, (20,))", "t(k, 5.0, (20,))", "chisquare(k, 2.0, (20,))",
    "f(k, 3.0, 7.0, (20,))", "rademacher(k, (20,))", "maxwell(k, (20,))",
    "double_sided_maxwell(k, 0.0, 1.0, (20,))", "weibull_min(k, 1.0, 2.0, (20,))",
    "lognormal(k, 0.5, (20,))", "rayleigh(k, 2.0, (20,))", "wald(k, 1.5, (20,))",
    "triangular(k, 0.0, 0.5, 1.0, (20,))", "geometric(k, 0.3, (20,))",
    "generalized_normal(k, 1.5, (20,))", "ball(k, 3, shape=(4,))",
]


@requires_jax
@pytest.mark.parametrize("call", TRANSFORMED_CALLS)
def test_transformed_samplers_match_jax(call):
    for s in SEEDS[:2]:
        expected = run_jax(f"k = jax.random.PRNGKey({s})\nresult = jax.random.{call}")
        got = eval(f"jr.{call}", {"jr": jr, "np": np, "k": jr.PRNGKey(s)})  # noqa: S307
        assert np.asarray(got).dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


DISCRETE_CALLS = [
    "poisson(k, 3.0, (12,))",
    "poisson(k, np.array([0.0, 0.5, 4.0, 12.0, 50.0, 1000.0], np.float32))",
    "binomial(k, 10.0, 0.3, (12,))",
    "binomial(k, np.array([5.0, 20.0, 100.0, 1000.0, 40.0, 3.0], np.float32), "
    "np.array([0.1, 0.5, 0.7, 0.2, 0.99, 0.0], np.float32))",
    "multinomial(k, 10.0, np.array([0.2, 0.3, 0.5], np.float32))",
    "multinomial(k, np.array([5.0, 100.0], np.float32), "
    "np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], np.float32))",
]


@requires_jax
@pytest.mark.parametrize("call", DISCRETE_CALLS)
def test_discrete_samplers_match_jax_exactly(call):
    for s in SEEDS[:2]:
        expected = run_jax(f"k = jax.random.PRNGKey({s})\nresult = jax.random.{call}")
        got = eval(f"jr.{call}", {"jr": jr, "np": np, "k": jr.PRNGKey(s)})  # noqa: S307
        assert np.asarray(got).dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
