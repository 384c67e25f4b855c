"""Tests of laminax_core.nn on the reference interpreter: values against NumPy formulas,
derivatives (check_grads, JAX's zero slope of relu/relu6 at the kinks), `where`/`axis`
handling, one_hot, errors, and the initializers."""

import doctest

import numpy as np
import pytest
from laminax_core import config, grad, lax, nn, vmap
from laminax_core import random as jr
from laminax_core.internal import set_eager_impl
from laminax_core.nn import _attention, _functions, initializers
from laminax_core.testing import check_grads


@pytest.fixture(autouse=True)
def _reference_interpreter():
    """These tests check core on its NumPy reference interpreter: unplug an eager executor that
    another package (dispatch) may have installed in this test process, and restore it after."""
    previous = set_eager_impl(None)
    yield
    set_eager_impl(previous)


X = np.array([-2.5, -1.0, -0.25, 0.0, 0.3, 1.0, 4.0], np.float32)
SMOOTH_X = np.array([-2.5, -1.5, -0.25, 0.3, 1.5, 4.0], np.float32)  # away from kinks


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


REFERENCES = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    "sigmoid": _np_sigmoid,
    "softplus": lambda x: np.log1p(np.exp(x)),
    "log_sigmoid": lambda x: -np.log1p(np.exp(-x)),
    "silu": lambda x: x * _np_sigmoid(x),
    "swish": lambda x: x * _np_sigmoid(x),
    "mish": lambda x: x * np.tanh(np.log1p(np.exp(x))),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: 0.5 * np.clip(x + 1, 0, 2),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "identity": lambda x: x,
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_values(name):
    out = getattr(nn, name)(X)
    assert out.dtype == np.float32 and out.shape == X.shape
    np.testing.assert_allclose(out, REFERENCES[name](X.astype(np.float64)), rtol=2e-6, atol=2e-6)


def test_exact_gelu_uses_erfc():
    import math

    expected = [0.5 * x * math.erfc(-x / math.sqrt(2)) for x in X.tolist()]
    np.testing.assert_allclose(nn.gelu(X, approximate=False), expected, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["elu", "celu", "selu", "gelu", "sigmoid", "softplus",
                                  "log_sigmoid", "silu", "mish", "soft_sign", "squareplus",
                                  "leaky_relu", "relu", "relu6", "hard_tanh"])
def test_activation_derivatives_match_finite_differences(name):
    check_grads(getattr(nn, name), (SMOOTH_X,), order=1)


def test_relu_and_relu6_have_zero_slope_at_kinks_like_jax():
    assert float(grad(nn.relu)(np.float32(0.0))) == 0.0
    assert float(grad(nn.relu6)(np.float32(0.0))) == 0.0
    assert float(grad(nn.relu6)(np.float32(6.0))) == 0.0
    assert float(grad(nn.relu6)(np.float32(3.0))) == 1.0
    assert np.isnan(nn.relu(np.float32(np.nan)))


def test_activations_keep_float16_and_promote_integers():
    assert nn.gelu(X.astype(np.float16)).dtype == np.float16
    assert nn.relu(np.array([-1, 2], np.int32)).dtype == np.int32
    assert nn.sigmoid(np.array([0, 1], np.int32)).dtype == np.float32
    with pytest.raises(TypeError, match="relu requires an array argument, got str"):
        nn.relu("x")


def test_softmax_and_log_softmax():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1000.0]], np.float32)
    expected = np.exp(x - x.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(nn.softmax(x), expected, rtol=1e-6)
    shifted = x - x.max(-1, keepdims=True)
    np.testing.assert_allclose(nn.log_softmax(x),
                               shifted - np.log(np.exp(shifted).sum(-1, keepdims=True)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(nn.softmax(x, axis=0).sum(0), np.ones(3), rtol=1e-6)
    np.testing.assert_allclose(nn.softmax(x, axis=(0, 1)).sum(), 1.0, rtol=1e-6)


def test_softmax_where_masks_elements():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    where = np.array([True, False, True])
    out = nn.softmax(x, where=where)
    assert out[1] == 0 and abs(float(out.sum()) - 1) < 1e-6
    assert nn.log_softmax(x, where=where)[1] == -np.inf


def test_softmax_derivatives_in_both_jvp_modes():
    x = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]], np.float32)
    check_grads(nn.softmax, (x,), order=2)
    check_grads(nn.log_softmax, (x,), order=1)
    with config.softmax_custom_jvp(True):
        check_grads(nn.softmax, (x,), order=1)


def test_logsumexp_variants():
    a = np.array([[0.0, 1.0], [2.0, -np.inf]], np.float32)
    np.testing.assert_allclose(nn.logsumexp(a), np.log(np.exp(a).sum()), rtol=1e-6)
    np.testing.assert_allclose(nn.logsumexp(a, axis=1, keepdims=True),
                               np.log(np.exp(a).sum(1, keepdims=True)), rtol=1e-6)
    b = np.array([[1.0, -2.0], [0.5, 1.0]], np.float32)
    out, sign = nn.logsumexp(a, axis=1, b=b, return_sign=True)
    sums = (b * np.exp(a)).sum(1)
    np.testing.assert_allclose(out, np.log(np.abs(sums)), rtol=1e-6)
    np.testing.assert_array_equal(sign, np.sign(sums))
    assert np.isnan(nn.logsumexp(a, axis=1, b=b)[0])
    assert float(nn.logsumexp(np.full(3, -np.inf, np.float32))) == -np.inf
    check_grads(lambda v: nn.logsumexp(v, axis=1), (np.array([[0.1, 0.5]], np.float32),), 2)


def test_standardize_and_logmeanexp():
    x = np.array([[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]], np.float32)
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.standardize(x), expected, rtol=1e-5)
    np.testing.assert_allclose(nn.standardize(x, algorithm="stable"), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="Unknown algorithm 'slow'"):
        nn.standardize(x, algorithm="slow")
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1), np.log(np.exp(x).mean(1)), rtol=1e-6)


def test_one_hot():
    out = nn.one_hot(np.array([0, 2, 5, -1]), 3)
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert out.dtype == np.float32
    assert nn.one_hot(np.array([[1, 0]]), 2, axis=0, dtype=np.int32).shape == (2, 1, 2)
    with pytest.raises(TypeError, match="num_classes must be a static Python int"):
        nn.one_hot(np.array([1]), 2.5)


def test_glu():
    x = np.array([[1.0, 2.0, 0.0, 1.0]], np.float32)
    np.testing.assert_allclose(nn.glu(x), x[:, :2] * _np_sigmoid(x[:, 2:]), rtol=1e-6)
    with pytest.raises(ValueError, match="glu: the size of axis 1 must be even"):
        nn.glu(np.ones((1, 3), np.float32))


def test_vmap_of_activations_matches_loop():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 3 - 2
    for f in (nn.softmax, nn.gelu, nn.relu, lambda v: nn.logsumexp(v)):
        batched = vmap(f)(x)
        for i in range(3):
            np.testing.assert_allclose(batched[i], f(x[i]), rtol=1e-6)


def _np_attention(q, k, v, causal=False):
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(q.shape[-1])
    if causal:
        t, s = logits.shape[-2:]
        logits = np.where(np.tril(np.ones((t, s), bool)), logits, -1e30)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", probs, v)


def test_dot_product_attention_against_numpy():
    rng = np.random.RandomState(0)
    q, k, v = (rng.randn(2, 4, 3, 8).astype(np.float32) for _ in range(3))
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v), _np_attention(q, k, v),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v, is_causal=True),
                               _np_attention(q, k, v, causal=True), rtol=1e-5, atol=1e-6)
    # grouped-query attention: each key/value head serves 3 query heads
    k1, v1 = k[:, :, :1], v[:, :, :1]
    expected = _np_attention(q, np.repeat(k1, 3, 2), np.repeat(v1, 3, 2))
    np.testing.assert_allclose(nn.dot_product_attention(q, k1, v1), expected, rtol=1e-5,
                               atol=1e-6)
    check_grads(lambda a: nn.dot_product_attention(a, k, v), (q,), order=1, atol=5e-2,
                rtol=5e-2)


def test_dot_product_attention_errors():
    q = np.ones((1, 2, 3, 4), np.float32)
    with pytest.raises(ValueError, match="multiple of key/value heads, but got 3 vs 2"):
        nn.dot_product_attention(q, np.ones((1, 2, 2, 4), np.float32),
                                 np.ones((1, 2, 2, 4), np.float32))
    with pytest.raises(ValueError, match="value shape should be"):
        nn.dot_product_attention(q, q, np.ones((1, 2, 3, 5), np.float32))
    with pytest.raises(ValueError, match="Unsupported implementation option: cudnn"):
        nn.dot_product_attention(q, q, q, implementation="cudnn")


def test_log1mexp_is_accurate_at_both_ends():
    x = np.array([1e-6, 0.5, 1.0, 30.0], np.float64)
    # float32 exp(-30) itself is only good to ~1e-4 relative
    np.testing.assert_allclose(nn.log1mexp(x.astype(np.float32)), np.log(-np.expm1(-x)),
                               rtol=2e-4)
    check_grads(nn.log1mexp, (np.array([0.3, 2.0], np.float32),), order=1)


# ----- initializers -------------------------------------------------------------------------

KEY = jr.PRNGKey(0)


def test_simple_initializers():
    np.testing.assert_array_equal(initializers.zeros(KEY, (2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(initializers.ones(KEY, (2,), np.float16), np.ones(2))
    np.testing.assert_array_equal(initializers.constant(3.0)(KEY, (2,)), [3, 3])
    np.testing.assert_array_equal(initializers.uniform(2.0)(KEY, (3,)),
                                  jr.uniform(KEY, (3,)) * np.float32(2))
    np.testing.assert_array_equal(initializers.normal(0.5)(KEY, (3,)),
                                  jr.normal(KEY, (3,)) * np.float32(0.5))


@pytest.mark.parametrize("name, scale, mode", [
    ("glorot_uniform", 1.0, "fan_avg"), ("xavier_uniform", 1.0, "fan_avg"),
    ("lecun_uniform", 1.0, "fan_in"), ("he_uniform", 2.0, "fan_in"),
    ("kaiming_uniform", 2.0, "fan_in"),
])
def test_uniform_variance_scaling_bounds(name, scale, mode):
    shape = (200, 100)
    fan = {"fan_in": 200, "fan_avg": 150}[mode]
    limit = np.sqrt(3 * scale / fan)
    w = getattr(initializers, name)()(KEY, shape)
    assert w.shape == shape and np.abs(w).max() <= limit * (1 + 1e-6)
    assert abs(np.var(w) / (scale / fan) - 1) < 0.05


@pytest.mark.parametrize("name", ["glorot_normal", "xavier_normal", "lecun_normal",
                                  "he_normal", "kaiming_normal"])
def test_truncated_normal_variance_scaling(name):
    w = getattr(initializers, name)()(KEY, (300, 200))
    fan = 250 if "glorot" in name or "xavier" in name else 300
    scale = 2.0 if "he" in name or "kaiming" in name else 1.0
    assert abs(np.var(w) / (scale / fan) - 1) < 0.05
    assert np.abs(w).max() < 2 * np.sqrt(scale / fan) / 0.8796256610342398 + 1e-6


@pytest.mark.parametrize("shape, column_axis", [((4, 4), -1), ((3, 2, 6), -1), ((6, 3), 0)])
def test_orthogonal_initializer(shape, column_axis):
    w = np.asarray(initializers.orthogonal(2.0, column_axis)(KEY, shape), np.float64)
    assert w.shape == shape
    columns = np.moveaxis(w, column_axis, -1).reshape(-1, shape[column_axis])
    n_rows, n_cols = columns.shape
    gram = columns.T @ columns if n_rows >= n_cols else columns @ columns.T
    np.testing.assert_allclose(gram, 4 * np.eye(min(n_rows, n_cols)), atol=1e-4)
    with pytest.raises(ValueError, match="requires at least a 2D shape"):
        initializers.orthogonal()(KEY, (3,))


def test_delta_orthogonal_centers_an_orthogonal_matrix():
    w = np.asarray(initializers.delta_orthogonal()(KEY, (3, 3, 4, 4)), np.float64)
    center = w[1, 1]
    np.testing.assert_allclose(center @ center.T, np.eye(4), atol=1e-5)
    w[1, 1] = 0
    assert not w.any()
    with pytest.raises(ValueError, match="requires a 3D, 4D or 5D shape"):
        initializers.delta_orthogonal()(KEY, (4, 4))
    with pytest.raises(ValueError, match="`fan_in` must be less or equal than `fan_out`"):
        initializers.delta_orthogonal()(KEY, (3, 5, 4))
    assert isinstance(initializers.he_normal(), initializers.Initializer)


def test_variance_scaling_fans_and_errors():
    assert initializers._compute_fans((3, 3, 16, 32)) == (144.0, 288.0)
    with pytest.raises(ValueError, match="Must be at least 2D or specify in_axis"):
        initializers.lecun_normal()(KEY, (5,))
    with pytest.raises(ValueError, match="invalid mode for variance scaling"):
        initializers.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="invalid distribution for variance scaling"):
        initializers.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="real floating dtypes, got int32"):
        initializers.normal()(KEY, (2,), np.int32)


def test_docstring_examples():
    globs = {"np": np, "lax": lax}
    for module in (_functions, initializers, _attention):
        result = doctest.testmod(module, extraglobs=globs, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__


def test_every_public_name_has_a_docstring():
    for name in nn.__all__:
        assert getattr(nn, name).__doc__, name
    for name in initializers.__all__:
        assert getattr(initializers, name).__doc__, name


def test_softplus_slope_at_zero_is_one_half():
    # JAX defines logaddexp's derivative as the softmax weights, not through |x1 - x2|.
    from laminax_core import grad

    assert float(grad(nn.softplus)(np.float32(0.0))) == 0.5
