"""laminax_core.nn, nn.initializers and scipy.special against real JAX 0.10.2: values on the
same inputs (float tolerance: laminax_core runs on its NumPy reference interpreter, JAX on XLA),
gradients, and initializers on the same keys."""

import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core import config, grad, jvp, lax, nn
from laminax_core import random as jr
from laminax_core.nn import initializers
from laminax_core.scipy import special

X = np.array([[-6.0, -2.5, -1.0, -0.25, 0.0], [0.3, 1.0, 2.0, 4.0, 9.0]], np.float32)

ACTIVATIONS = [
    "relu", "relu6", "leaky_relu", "hard_tanh", "elu", "celu", "selu", "gelu", "sigmoid",
    "softplus", "log_sigmoid", "silu", "swish", "mish", "soft_sign", "squareplus",
    "sparse_plus", "sparse_sigmoid", "hard_sigmoid", "hard_silu", "identity",
]


@requires_jax
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_activations_match_jax(dtype):
    x = X.astype(dtype)
    expected = run_jax("result = [getattr(jax.nn, n)(x) for n in names]", names=ACTIVATIONS,
                       x=x)
    rtol = 1e-6 if dtype == "float32" else 2e-3
    for name, e in zip(ACTIVATIONS, expected, strict=True):
        got = getattr(nn, name)(x)
        assert np.asarray(got).dtype == e.dtype, name
        np.testing.assert_allclose(got, e, rtol=rtol, atol=rtol, err_msg=name)


@requires_jax
def test_parametrized_activations_match_jax():
    source = """
result = [jax.nn.gelu(x, approximate=False), jax.nn.elu(x, 0.5), jax.nn.celu(x, 2.0),
          jax.nn.leaky_relu(x, 0.2), jax.nn.glu(x, axis=0), jax.nn.squareplus(x, 1.0)]
"""
    expected = run_jax(source, x=X)
    got = [nn.gelu(X, approximate=False), nn.elu(X, 0.5), nn.celu(X, 2.0),
           nn.leaky_relu(X, 0.2), nn.glu(X, axis=0), nn.squareplus(X, 1.0)]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


@requires_jax
def test_activation_gradients_match_jax():
    points = np.array([-2.0, -0.5, 0.0, 0.5, 6.0], np.float32)
    names = ["relu", "relu6", "gelu", "silu", "softplus", "elu", "log_sigmoid", "hard_tanh"]
    expected = run_jax("result = [jax.vmap(jax.grad(getattr(jax.nn, n)))(x) for n in names]",
                       names=names, x=points)
    for name, e in zip(names, expected, strict=True):
        got = np.array([grad(getattr(nn, name))(p) for p in points])
        np.testing.assert_allclose(got, e, rtol=1e-6, atol=1e-7, err_msg=name)


@requires_jax
def test_softmax_family_matches_jax():
    where = np.array([[True, True, False, True, True], [False, True, True, True, True]])
    source = """
result = [jax.nn.softmax(x), jax.nn.softmax(x, axis=0), jax.nn.log_softmax(x),
          jax.nn.softmax(x, where=where), jax.nn.log_softmax(x, axis=(0, 1)),
          jax.nn.logsumexp(x), jax.nn.logsumexp(x, axis=1, keepdims=True),
          jax.nn.logmeanexp(x, axis=1), jax.nn.standardize(x),
          jax.nn.standardize(x, axis=0, algorithm='stable'),
          jax.grad(lambda v: jax.nn.softmax(v)[0, 1])(x)]
"""
    expected = run_jax(source, x=X, where=where)
    got = [nn.softmax(X), nn.softmax(X, axis=0), nn.log_softmax(X), nn.softmax(X, where=where),
           nn.log_softmax(X, axis=(0, 1)), nn.logsumexp(X),
           nn.logsumexp(X, axis=1, keepdims=True), nn.logmeanexp(X, axis=1), nn.standardize(X),
           nn.standardize(X, axis=0, algorithm="stable"),
           grad(lambda v: nn.softmax(v)[0, 1])(X)]
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        np.testing.assert_allclose(g, e, rtol=2e-6, atol=2e-7, err_msg=str(i))


@requires_jax
def test_one_hot_matches_jax():
    idx = np.array([[0, 3], [2, -1]], np.int32)
    source = ("result = [jax.nn.one_hot(idx, 4), jax.nn.one_hot(idx, 3, axis=0), "
              "jax.nn.one_hot(idx, 4, dtype=jnp.int8, axis=1)]")
    expected = run_jax(source, idx=idx)
    got = [nn.one_hot(idx, 4), nn.one_hot(idx, 3, axis=0),
           nn.one_hot(idx, 4, dtype=np.int8, axis=1)]
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).dtype == e.dtype
        np.testing.assert_array_equal(g, e)


INITIALIZERS = [
    "glorot_uniform()", "glorot_normal()", "xavier_uniform()", "xavier_normal()",
    "lecun_uniform()", "lecun_normal()", "he_uniform()", "he_normal()", "kaiming_uniform()",
    "kaiming_normal()", "normal(0.3)", "uniform(2.0)", "truncated_normal(0.5)",
    "variance_scaling(0.7, 'fan_out', 'normal')",
    "variance_scaling(1.3, 'fan_geo_avg', 'uniform', in_axis=0, out_axis=(1, 2))",
    "variance_scaling(2.0, 'fan_avg', 'truncated_normal', batch_axis=0)",
    "constant(0.25)", "orthogonal()", "orthogonal(0.5, column_axis=0)",
]


@requires_jax
@pytest.mark.parametrize("init", INITIALIZERS)
def test_initializers_match_jax_on_the_same_keys(init):
    shape = (4, 6, 5)
    source = f"result = jax.nn.initializers.{init}(jax.random.key(seed), shape)"
    for seed in (0, 3):
        expected = run_jax(source, seed=seed, shape=shape)
        got = eval(f"initializers.{init}", {"initializers": initializers})(jr.key(seed), shape)  # noqa: S307
        assert np.asarray(got).dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-6)


@requires_jax
def test_uniform_initializers_are_bit_exact_where_no_fma_is_involved():
    expected = run_jax("result = jax.nn.initializers.uniform(1.0)(jax.random.key(1), (50,))")
    np.testing.assert_array_equal(initializers.uniform(1.0)(jr.key(1), (50,)), expected)


SPECIAL = ["erf", "erfc", "expit", "ndtr", "log_ndtr", "gammaln", "digamma"]


@requires_jax
@pytest.mark.parametrize("x64", [False, True])
def test_scipy_special_matches_jax(x64):
    x = np.array([-12.0, -3.0, -0.7, 0.2, 1.5, 4.0, 9.0])
    positive = np.abs(x) + 0.25
    p = np.array([1e-12, 1e-4, 0.02, 0.3, 0.5, 0.77, 0.999])
    source = """
from jax.scipy import special as s
x = x.astype(dtype); positive = positive.astype(dtype); p = p.astype(dtype)
result = [getattr(s, n)(x) for n in ['erf', 'erfc', 'expit', 'ndtr', 'log_ndtr']]
result += [s.gammaln(positive), s.digamma(positive), s.erfinv(p[1:] * 2 - 1), s.logit(p),
           s.ndtri(p), s.xlogy(x, positive), s.xlog1py(positive, x / 20),
           s.logsumexp(x), s.logsumexp(x, b=x, return_sign=True)[1]]
"""
    dtype = "float64" if x64 else "float32"
    expected = run_jax(source, x=x, positive=positive, p=p, dtype=dtype, x64=x64)
    with config.enable_x64(x64):
        xs, ps, ys = x.astype(dtype), positive.astype(dtype), p.astype(dtype)
        got = [getattr(special, n)(xs) for n in ["erf", "erfc", "expit", "ndtr", "log_ndtr"]]
        got += [special.gammaln(ps), special.digamma(ps), special.erfinv(ys[1:] * 2 - 1),
                special.logit(ys), special.ndtri(ys), special.xlogy(xs, ps),
                special.xlog1py(ps, xs / 20), special.logsumexp(xs),
                special.logsumexp(xs, b=xs, return_sign=True)[1]]
    # float32: XLA's lgamma keeps absolute, not relative, accuracy near its root at 1.46
    rtol, atol = (1e-12, 1e-15) if x64 else (5e-6, 2e-6)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert np.asarray(g).dtype == e.dtype, i
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=str(i))


@requires_jax
def test_custom_jvps_match_jax():
    where = np.array([[True, True, False, True, True], [False, True, True, True, True]])
    source = """
from jax._src import config as c
with c.softmax_custom_jvp(True):
    g1 = jax.grad(lambda v: (jax.nn.softmax(v, where=where) ** 2).sum())(x)
    g2 = jax.jvp(lambda v: jax.nn.softmax(v, axis=0), (x,), (x * 0.5,))[1]
g3 = jax.grad(jax.scipy.special.xlogy, (0, 1))(0.0, 2.0)
g4 = jax.grad(jax.scipy.special.xlog1py, (0, 1))(1.5, 0.25)
result = [g1, g2, np.array(g3), np.array(g4)]
"""
    expected = run_jax(source, x=X, where=where)
    with config.softmax_custom_jvp(True):
        g1 = grad(lambda v: lax.reduce_sum(lax.integer_pow(nn.softmax(v, where=where), 2),
                                           (0, 1)))(X)
        g2 = jvp(lambda v: nn.softmax(v, axis=0), (X,), (X * np.float32(0.5),))[1]
    g3 = grad(special.xlogy, (0, 1))(np.float32(0.0), np.float32(2.0))
    g4 = grad(special.xlog1py, (0, 1))(np.float32(1.5), np.float32(0.25))
    for g, e in zip([g1, g2, np.array(g3), np.array(g4)], expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=2e-6, atol=1e-7)


JIT_NN = ACTIVATIONS + ["softmax", "log_softmax", "logsumexp", "standardize", "logmeanexp"]
JIT_SPECIAL = ["erf", "erfc", "expit", "ndtr", "log_ndtr", "gammaln", "digamma"]


@requires_jax
def test_jitted_nn_and_special_match_jax_bit_for_bit():
    dispatch = pytest.importorskip("laminax_dispatch")
    x = np.random.RandomState(0).randn(4, 33).astype(np.float32) * 3
    source = """
from jax.scipy import special as s
result = [jax.jit(getattr(jax.nn, n))(x) for n in nn_names]
result += [jax.jit(getattr(s, n))(x) for n in special_names]
"""
    expected = run_jax(source, x=x, nn_names=JIT_NN, special_names=JIT_SPECIAL)
    functions = [getattr(nn, n) for n in JIT_NN] + [getattr(special, n) for n in JIT_SPECIAL]
    for name, f, e in zip(JIT_NN + JIT_SPECIAL, functions, expected, strict=True):
        got = np.asarray(dispatch.jit(f)(x))
        assert got.dtype == e.dtype and got.shape == e.shape, name
        np.testing.assert_array_equal(got, e, err_msg=name)


# orthogonal needs a lowering of lax.linalg.qr, which dispatch does not have yet
JIT_INITIALIZERS = [init for init in INITIALIZERS if not init.startswith("orthogonal")]


@requires_jax
@pytest.mark.parametrize("init", JIT_INITIALIZERS)
def test_jitted_initializers_match_jax_bit_for_bit(init):
    dispatch = pytest.importorskip("laminax_dispatch")
    shape = (4, 6, 5)
    expected = run_jax(f"result = jax.jit(lambda k: jax.nn.initializers.{init}(k, shape))("
                       "jax.random.key(1))", shape=shape)
    build = eval(f"initializers.{init}", {"initializers": initializers})  # noqa: S307
    got = np.asarray(dispatch.jit(lambda k: build(k, shape))(jr.key(1)))
    np.testing.assert_array_equal(got, expected)


ATTENTION_CALLS = [
    "dot_product_attention(q, k, v)",
    "dot_product_attention(q, k, v, is_causal=True)",
    "dot_product_attention(q, k, v, bias=bias)",
    "dot_product_attention(q, k, v, mask=mask, scale=0.3)",
    "dot_product_attention(q, k, v, local_window_size=(1, 2))",
    "dot_product_attention(q, k, v, query_seq_lengths=ql, key_value_seq_lengths=kl)",
    "dot_product_attention(q, k, v, is_causal=True, return_residual=True)",
    "dot_product_attention(q[0], k[0], v[0])",
    "dot_product_attention(q.astype(jnp.float16), k.astype(jnp.float16), v.astype(jnp.float16))",
]


@requires_jax
@pytest.mark.parametrize("call", ATTENTION_CALLS)
def test_dot_product_attention_matches_jax(call):
    rng = np.random.RandomState(0)
    inputs = {
        "q": rng.randn(2, 5, 4, 8).astype(np.float32),
        "k": rng.randn(2, 6, 2, 8).astype(np.float32),
        "v": rng.randn(2, 6, 2, 8).astype(np.float32),
        "bias": rng.randn(2, 1, 5, 6).astype(np.float32),
        "mask": rng.rand(2, 4, 5, 6) > 0.3,
        "ql": np.array([5, 3], np.int32), "kl": np.array([4, 6], np.int32),
    }
    expected = run_jax(f"result = jax.nn.{call}", **inputs)
    got = eval(f"nn.{call}", {"nn": nn, "jnp": np, **inputs})  # noqa: S307
    got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).dtype == e.dtype and g.shape == e.shape
        tol = 2e-3 if e.dtype == np.float16 else 2e-5
        np.testing.assert_allclose(np.asarray(g, np.float32), np.asarray(e, np.float32),
                                   rtol=tol, atol=tol)


@requires_jax
def test_log1mexp_tanh_and_delta_orthogonal_match_jax():
    x = np.array([1e-4, 0.3, 0.69, 0.7, 3.0, 40.0], np.float32)
    source = """
result = [jax.nn.log1mexp(x), jax.vmap(jax.grad(jax.nn.log1mexp))(x), jax.nn.tanh(x),
          jax.nn.initializers.delta_orthogonal()(jax.random.key(2), (3, 3, 4, 5))]
"""
    expected = run_jax(source, x=x)
    got = [nn.log1mexp(x), np.array([grad(nn.log1mexp)(v) for v in x]), nn.tanh(x),
           initializers.delta_orthogonal()(jr.key(2), (3, 3, 4, 5))]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=2e-6, atol=1e-6)


MORE_SPECIAL = [
    "gammasgn(x)", "gamma(x)", "factorial(y)", "poch(y, w)", "betaln(y, w)",
    "multigammaln(y + 2, 3)", "polygamma(2, y)", "polygamma(np.int32(1), y)",
    "zeta(y + 1.5, w)", "entr(x)", "rel_entr(y, w)", "kl_div(y, w)", "boxcox(y, np.float32(0.3))",
    "boxcox1p(y, np.float32(0.0))", "softmax(x)", "log_softmax(x)",
]


@requires_jax
@pytest.mark.parametrize("call", MORE_SPECIAL)
def test_more_special_functions_match_jax(call):
    inputs = {"x": np.array([-2.5, -1.5, -0.3, 0.0, 0.4, 2.0, 4.5], np.float32),
              "y": np.array([0.2, 0.5, 1.0, 2.5, 3.0, 4.0, 7.5], np.float32),
              "w": np.array([1.5, 0.5, 2.0, 1.0, 3.5, 0.25, 2.0], np.float32)}
    expected = run_jax(f"from jax.scipy import special as s\nresult = s.{call}", **inputs)
    got = eval(f"special.{call}", {"special": special, "np": np, **inputs})  # noqa: S307
    assert np.asarray(got).dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=5e-6, atol=1e-6)
