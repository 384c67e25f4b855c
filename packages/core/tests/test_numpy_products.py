"""Products (dot, matmul, vdot, vecdot, inner, outer, tensordot, kron), einsum with its greedy
contraction order, and sorting/searching/unique/bincount/histogram/quantiles vs NumPy."""

import laminax_core.numpy as jnp
import numpy as np
import pytest
from laminax_core import errors, make_jaxpr, vmap
from laminax_core.numpy import _einsum

RNG = np.random.RandomState(0)


def _rand(*shape, dtype=np.float32):
    return RNG.randn(*shape).astype(dtype)


PRODUCT_CASES = [
    ("dot_mm", "dot", (_rand(3, 4), _rand(4, 5))), ("dot_mv", "dot", (_rand(3, 4), _rand(4))),
    ("dot_vv", "dot", (_rand(4), _rand(4))), ("dot_nd", "dot", (_rand(2, 3, 4), _rand(5, 4, 2))),
    ("dot_scalar", "dot", (_rand(3), np.float32(2))),
    ("matmul", "matmul", (_rand(3, 4), _rand(4, 5))),
    ("matmul_batch", "matmul", (_rand(2, 1, 3, 4), _rand(5, 4, 2))),
    ("matmul_vec_left", "matmul", (_rand(4), _rand(2, 4, 3))),
    ("matmul_vec_right", "matmul", (_rand(2, 3, 4), _rand(4))),
    ("vdot", "vdot", (_rand(2, 3), _rand(3, 2))), ("inner", "inner", (_rand(2, 3), _rand(4, 3))),
    ("outer", "outer", (_rand(3), _rand(2, 2))),
    ("tensordot", "tensordot", (_rand(2, 3, 4), _rand(3, 4, 5))),
    ("kron", "kron", (_rand(2, 3), _rand(3, 2))), ("kron_1d", "kron", (_rand(2), _rand(3))),
    ("matmul_int", "matmul", (RNG.randint(-3, 3, (2, 3)), RNG.randint(-3, 3, (3, 2)))),
]  # fmt: skip


@pytest.mark.parametrize("name,fn,args", PRODUCT_CASES, ids=[c[0] for c in PRODUCT_CASES])
def test_product_matches_numpy(name, fn, args):
    expected = getattr(np, fn)(*args)
    actual = getattr(jnp, fn)(*args)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def test_tensordot_axes_forms_and_vecdot():
    a, b = _rand(2, 3, 4), _rand(4, 3, 5)
    np.testing.assert_allclose(jnp.tensordot(a, b, ([1, 2], [1, 0])),
                               np.tensordot(a, b, ([1, 2], [1, 0])), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jnp.tensordot(a, b, 0), np.tensordot(a, b, 0), rtol=1e-6)
    np.testing.assert_allclose(jnp.vecdot(a, _rand(4)).shape, (2, 3))


def test_product_errors_are_clear():
    with pytest.raises(TypeError, match="contracted dimensions have different sizes"):
        jnp.dot(_rand(3, 4), _rand(3, 4))
    with pytest.raises(TypeError, match="matmul: size mismatch"):
        jnp.matmul(_rand(3, 4), _rand(3, 4))
    with pytest.raises(ValueError, match="at least one dimension"):
        jnp.matmul(np.float32(1), _rand(3))
    with pytest.raises(TypeError, match="axis lists"):
        jnp.tensordot(_rand(3), _rand(3), ([0], [0, 1]))


def test_dot_preferred_element_type_is_the_promoted_dtype():
    closed = make_jaxpr(jnp.dot)(np.ones((2, 2), np.int8), np.ones((2, 2), np.float16))
    eqn = closed.eqns[-1]
    assert eqn.primitive.name == "dot_general"
    assert eqn.params["preferred_element_type"] == np.float16


EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]), ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("ij...,jk...->ik...", [(3, 4, 2), (4, 5, 2)]),
    ("ijk,kl,lm->im", [(2, 3, 4), (4, 5), (5, 6)]), ("abc,cd,de,ea->b", [(2, 3, 4), (4, 5),
                                                                         (5, 6), (6, 2)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]), ("ij,ij,ij->i", [(3, 4), (3, 4), (3, 4)]),
    ("i,i,i", [(4,), (4,), (4,)]), ("ab,bc,cd,de,ef->af", [(2, 3), (3, 4), (4, 5), (5, 6),
                                                          (6, 2)]),
    ("...", [(2, 3)]), ("ij,kl->ijkl", [(2, 3), (2, 3)]), ("ijk->kij", [(2, 3, 4)]),
    ("i,ij->ij", [(3,), (1, 4)]),
]  # fmt: skip


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_matches_numpy(spec, shapes):
    operands = [_rand(*s) for s in shapes]
    expected = np.einsum(spec, *operands)
    actual = jnp.einsum(spec, *operands)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=2e-4, atol=2e-4)
    np.testing.assert_allclose(jnp.einsum(spec, *operands, optimize=False), expected, rtol=2e-4,
                               atol=2e-4)


def test_einsum_interleaved_form_and_promotion():
    a, b = _rand(3, 4), RNG.randint(0, 3, (4, 2)).astype(np.int8)
    np.testing.assert_allclose(jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(a, [0, 1],
                                                                                   b, [1, 2],
                                                                                   [0, 2]),
                               rtol=1e-5, atol=1e-5)
    assert jnp.einsum("ij,jk", a, b).dtype == np.float32


def test_einsum_greedy_path_avoids_large_intermediates():
    # contracting the two vectors' partners first keeps intermediates small
    terms, sizes = ["ab", "bc", "c"], {"a": 1000, "b": 2, "c": 1000}
    assert _einsum.greedy_path(terms, "a", sizes) == [(1, 2), (0, 1)]
    path, description = jnp.einsum_path("ij,jk,k->i", _rand(50, 2), _rand(2, 50), _rand(50))
    assert path == ["einsum_path", (1, 2), (0, 1)]
    assert "Complete contraction:  ij,jk,k->i" in description
    closed = make_jaxpr(lambda a, b, c: jnp.einsum("ij,jk,k->i", a, b, c))(
        _rand(50, 2), _rand(2, 50), _rand(50))
    dots = [e for e in closed.eqns if e.primitive.name == "dot_general"]
    assert [d.outvars[0].aval.shape for d in dots] == [(2,), (50,)]


def test_einsum_errors():
    with pytest.raises(ValueError, match="name 2 operands, but 1 were given"):
        jnp.einsum("ij,jk", _rand(2, 2))
    with pytest.raises(ValueError, match="label 'j' has sizes"):
        jnp.einsum("ij,jk", _rand(2, 3), _rand(4, 2))
    with pytest.raises(ValueError, match="output label 'z' does not occur"):
        jnp.einsum("ij->z", _rand(2, 3))


# ----- sorting and searching ----------------------------------------------------------------

S = np.array([[3.0, np.nan, 1.0, 1.0, -np.inf], [2.0, 0.0, 2.0, 5.0, 1.0]], np.float32)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_and_argsort_match_numpy(axis):
    np.testing.assert_array_equal(jnp.sort(S, axis=axis), np.sort(S, axis=axis))
    np.testing.assert_array_equal(jnp.argsort(S, axis=axis),
                                  np.argsort(S, axis=axis, kind="stable"))
    ints = np.array([2, 1, 2, 1, 3])
    np.testing.assert_array_equal(jnp.argsort(ints, descending=True), [4, 0, 2, 1, 3])
    np.testing.assert_array_equal(jnp.sort(ints, descending=True), [3, 2, 2, 1, 1])


def test_lexsort_and_searchsorted_match_numpy():
    keys = (np.array([1, 5, 1, 4]), np.array([2, 1, 2, 1]))
    np.testing.assert_array_equal(jnp.lexsort(keys), np.lexsort(keys))
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32)
    v = np.array([[2.0, 0.0], [5.0, np.nan]], np.float32)
    for side in ("left", "right"):
        np.testing.assert_array_equal(jnp.searchsorted(a, v, side=side),
                                      np.searchsorted(a, v, side=side))
    np.testing.assert_array_equal(jnp.searchsorted(np.array([3, 1, 2]), 2,
                                                   sorter=np.array([1, 2, 0])), 1)
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        jnp.searchsorted(a, v, side="middle")


def test_unique_matches_numpy_and_jax_fill_rules():
    x = np.array([[3, 1], [3, 2], [7, 1]])
    values, index, inverse, counts = jnp.unique(x, return_index=True, return_inverse=True,
                                                return_counts=True)
    e_values, e_index, e_inverse, e_counts = np.unique(x, return_index=True, return_inverse=True,
                                                       return_counts=True)
    for ours, theirs in ((values, e_values), (index, e_index), (counts, e_counts)):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(inverse, e_inverse.reshape(x.shape))
    out = jnp.unique(np.array([3.0, 1, 3, 2]), size=5, return_index=True, return_inverse=True,
                     return_counts=True)
    np.testing.assert_array_equal(out[0], [1, 2, 3, 1, 1])  # JAX fills with the smallest value
    np.testing.assert_array_equal(out[1], [1, 3, 0, 1, 1])
    np.testing.assert_array_equal(out[2], [2, 0, 2, 1])
    np.testing.assert_array_equal(out[3], [1, 1, 2, 0, 0])
    np.testing.assert_array_equal(jnp.unique(np.array([2, 1, 2]), size=1), [1])
    np.testing.assert_array_equal(jnp.unique(np.array([2, 1, 2]), size=3, fill_value=-5),
                                  [1, 2, -5])
    nans = np.array([np.nan, 1.0, np.nan], np.float32)
    assert jnp.unique(nans).shape == (2,)
    assert jnp.unique(nans, equal_nan=False).shape == (3,)


def test_unique_under_tracing_needs_size():
    out = vmap(lambda v: jnp.unique(v, size=3, fill_value=0))(np.array([[1, 1, 2], [3, 4, 5]]))
    np.testing.assert_array_equal(out, [[1, 2, 0], [3, 4, 5]])
    with pytest.raises(errors.ConcretizationTypeError, match="size argument of jnp.unique"):
        make_jaxpr(jnp.unique)(np.array([1, 2]))
    # unique rows, against NumPy (real JAX: tests/test_hardening_sweep_vs_jax.py)
    rows = np.array([[1, 2], [3, 4], [1, 2], [0, 9]], np.int32)
    for got, want in zip(jnp.unique(rows, axis=0, return_index=True, return_inverse=True,
                                    return_counts=True),
                         np.unique(rows, axis=0, return_index=True, return_inverse=True,
                                   return_counts=True), strict=True):
        np.testing.assert_array_equal(got, np.reshape(want, np.shape(got)))
    values, counts = jnp.unique_counts(np.array([2, 1, 2]))
    np.testing.assert_array_equal(counts, [1, 2])
    assert len(jnp.unique_all(np.array([2, 1, 2]))) == 4


def test_bincount_and_histogram_match_numpy():
    x = np.array([0, 1, 1, 3, 2, 1, 7])
    np.testing.assert_array_equal(jnp.bincount(x), np.bincount(x))
    w = np.linspace(0, 1, 7).astype(np.float32)
    np.testing.assert_allclose(jnp.bincount(x, w, minlength=10), np.bincount(x, w, minlength=10),
                               rtol=1e-6)
    np.testing.assert_array_equal(jnp.bincount(np.array([-1, 0, 5, 2]), length=3), [2, 0, 1])
    with pytest.raises(errors.ConcretizationTypeError, match="length argument of jnp.bincount"):
        make_jaxpr(jnp.bincount)(x)
    data = RNG.randn(100).astype(np.float32)
    for kwargs in ({"bins": 5}, {"bins": 4, "range": (-1.0, 1.0)},
                   {"bins": np.array([-2.0, 0.0, 0.5, 3.0], np.float32)}, {"bins": 3,
                                                                            "density": True}):
        counts, edges = jnp.histogram(data, **kwargs)
        e_counts, e_edges = np.histogram(data, **kwargs)
        np.testing.assert_allclose(counts, e_counts, rtol=1e-5)
        np.testing.assert_allclose(edges, e_edges, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_quantile_matches_numpy(method, axis):
    x = RNG.randn(5, 6).astype(np.float32)
    q = np.array([0.0, 0.3, 0.5, 1.0], np.float32)
    np.testing.assert_allclose(jnp.quantile(x, q, axis=axis, method=method),
                               np.quantile(x, q, axis=axis, method=method), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(jnp.percentile(x, 40, axis=axis, method=method, keepdims=True),
                               np.percentile(x, 40, axis=axis, method=method, keepdims=True),
                               rtol=1e-5, atol=1e-6)


def test_median_and_nan_quantiles():
    x = np.array([[1.0, np.nan, 3.0, 0.0], [4.0, 2.0, 1.0, 1.0]], np.float32)
    np.testing.assert_allclose(jnp.median(x, axis=1), np.median(x, axis=1))
    np.testing.assert_allclose(jnp.nanmedian(x, axis=1), np.nanmedian(x, axis=1))
    np.testing.assert_allclose(jnp.nanpercentile(x, 25, axis=1), np.nanpercentile(x, 25, axis=1))
    np.testing.assert_allclose(jnp.median(x[1]), np.median(x[1]))
    with pytest.raises(ValueError, match="method must be one of"):
        jnp.quantile(x, 0.5, method="cubic")
