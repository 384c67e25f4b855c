"""lax.dot, lax.batch_matmul and lax.Precision: shapes, precision canonicalization, dtype
promotion, and errors."""

import numpy as np
import pytest
from laminax_core import grad, lax, make_jaxpr

X = np.random.RandomState(0).standard_normal((2, 3)).astype(np.float32)
V = np.random.RandomState(1).standard_normal(3).astype(np.float32)


def test_dot_of_matrices_and_vectors_matches_numpy():
    np.testing.assert_allclose(lax.dot(X, V), X @ V, rtol=1e-6)
    np.testing.assert_allclose(lax.dot(V, V), V @ V, rtol=1e-6)
    np.testing.assert_allclose(lax.dot(X, X.T), X @ X.T, rtol=1e-6)
    np.testing.assert_allclose(lax.dot(V, X.T), V @ X.T, rtol=1e-6)


def test_dot_with_dimension_numbers_is_dot_general():
    out = lax.dot(X, X, dimension_numbers=(((1,), (1,)), ((), ())))
    np.testing.assert_allclose(out, X @ X.T, rtol=1e-6)


def test_dot_promotes_mixed_dtypes_and_honours_preferred_element_type():
    assert lax.dot(X, V.astype(np.int32)).dtype == np.float32
    ints = lax.dot(np.ones((2, 3), np.int8), np.ones(3, np.int8), preferred_element_type=np.int32)
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(ints, [3, 3])


@pytest.mark.parametrize(
    "precision,expected",
    [
        (None, None),
        ("highest", (lax.Precision.HIGHEST, lax.Precision.HIGHEST)),
        (lax.Precision.HIGH, (lax.Precision.HIGH, lax.Precision.HIGH)),
        (("bfloat16", "float32"), (lax.Precision.DEFAULT, lax.Precision.HIGHEST)),
    ],
)
def test_precision_reaches_dot_general_as_a_pair(precision, expected):
    jaxpr = make_jaxpr(lambda a: lax.dot(a, a.T, precision=precision))(X)
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "dot_general"]
    assert eqn.params["precision"] == expected


def test_precision_prints_as_jax_does():
    text = str(make_jaxpr(lambda a: lax.dot(a, a.T, precision="highest"))(X))
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text


def test_precision_accepts_jax_strings():
    assert lax.Precision("tensorfloat32") is lax.Precision.HIGH
    assert lax.Precision("fastest") is lax.Precision.DEFAULT
    assert repr(lax.Precision("float32")) == "Precision.HIGHEST"
    assert str(lax.Precision.HIGH) == "HIGH"
    with pytest.raises(ValueError, match="'bad' is not a valid Precision"):
        lax.Precision("bad")
    with pytest.raises(ValueError, match="precision must be None"):
        lax.dot(X, V, precision="bad")
    with pytest.raises(ValueError, match="precision must be None"):
        lax.dot(X, V, precision=(lax.Precision.HIGH, "float32"))


def test_dot_gradient():
    g = grad(lambda a: lax.dot(a, V).sum())(X)
    np.testing.assert_allclose(g, np.broadcast_to(V, X.shape), rtol=1e-6)


def test_dot_without_dimension_numbers_needs_simple_shapes():
    with pytest.raises(ValueError, match="lax.dot: without dimension_numbers"):
        lax.dot(X, X)
    with pytest.raises(ValueError, match="lax.dot: without dimension_numbers"):
        lax.dot(np.ones((2, 3, 4), np.float32), np.ones(4, np.float32))


def test_batch_matmul_matches_numpy():
    a = np.random.RandomState(2).standard_normal((2, 3, 4)).astype(np.float32)
    b = np.random.RandomState(3).standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(lax.batch_matmul(a, b), a @ b, rtol=1e-5)
    np.testing.assert_allclose(lax.batch_matmul(a[0], b[0]), a[0] @ b[0], rtol=1e-5)


def test_batch_matmul_errors():
    with pytest.raises(ValueError, match="at least 2-D"):
        lax.batch_matmul(V, X)
    with pytest.raises(ValueError, match="the same rank"):
        lax.batch_matmul(np.ones((2, 3, 4)), np.ones((4, 5)))
