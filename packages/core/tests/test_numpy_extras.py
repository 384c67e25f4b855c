"""The less common NumPy functions against NumPy: index construction and selection,
differences/convolution/interpolation/statistics/windows, polynomials, set operations and
partitions, floating-point decomposition and gcd/lcm, reshaping extras, vectorize."""

import laminax_core.numpy as jnp
import numpy as np
import pytest
from laminax_core import make_jaxpr, vmap

R = np.random.RandomState(0)
F = R.randn(3, 4).astype(np.float32)
V = R.randn(6).astype(np.float32)
K = np.array([0.5, -1.0, 2.0], np.float32)
IV = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)
SORTED = np.array([0.0, 1.0, 2.5, 4.0, 7.0], np.float32)

CASES = [
    ("indices", lambda m: m.indices((2, 3))),
    ("indices_sparse", lambda m: m.indices((2, 3), sparse=True)),
    ("ix_", lambda m: m.ix_(np.array([0, 2]), np.array([1, 3]))),
    ("unravel_index", lambda m: m.unravel_index(np.array([5, 7, 0]), (2, 4))),
    ("ravel_multi_index", lambda m: m.ravel_multi_index((np.array([1, 0]), np.array([2, 3])),
                                                        (2, 4))),
    ("ravel_multi_index_clip", lambda m: m.ravel_multi_index((np.array([5, -1]), np.array([2, 3])),
                                                             (2, 4), mode="clip")),
    ("tril_indices", lambda m: m.tril_indices(3, 1, 4)),
    ("triu_indices", lambda m: m.triu_indices(3, -1)),
    ("tril_indices_from", lambda m: m.tril_indices_from(F)),
    ("diag_indices", lambda m: m.diag_indices(3, 3)),
    ("select", lambda m: m.select([IV < 3, IV > 5], [IV, -IV], 7)),
    ("choose", lambda m: m.choose(np.array([0, 2, 1]), [np.array([1, 2, 3]),
                                                         np.array([4, 5, 6]),
                                                         np.array([7, 8, 9])])),
    ("choose_clip", lambda m: m.choose(np.array([0, 5, -1]), [np.arange(3), np.arange(3) * 10],
                                       mode="clip")),
    ("compress", lambda m: m.compress(np.array([True, False, True]), F, axis=0)),
    ("extract", lambda m: m.extract(F > 0, F)),
    ("piecewise", lambda m: m.piecewise(V, [V < 0, V > 1], [lambda x: -x, lambda x: x * 2, 0.5])),
    ("delete", lambda m: m.delete(F, [0, 2], axis=1)),
    ("delete_slice", lambda m: m.delete(IV, slice(1, 6, 2))),
    ("insert", lambda m: m.insert(IV, 2, 99)),
    ("insert_many", lambda m: m.insert(IV, [1, 4, 4], np.array([7, 8, 9]))),
    ("insert_axis", lambda m: m.insert(F, 1, 0.0, axis=1)),
    ("diff", lambda m: m.diff(F)), ("diff_n2_axis0", lambda m: m.diff(F, 2, axis=0)),
    ("diff_bool", lambda m: m.diff(F > 0)),
    ("diff_prepend", lambda m: m.diff(IV, prepend=0, append=np.array([1, 2]))),
    ("ediff1d", lambda m: m.ediff1d(F, to_end=np.array([1.0]), to_begin=-1.0)),
    ("gradient", lambda m: m.gradient(V)), ("gradient_2d", lambda m: m.gradient(F, 2.0)),
    ("trapezoid", lambda m: m.trapezoid(F, axis=0)),
    ("trapezoid_x", lambda m: m.trapezoid(V, x=np.cumsum(np.abs(V)))),
    ("convolve_full", lambda m: m.convolve(V, K)), ("convolve_same", lambda m: m.convolve(V, K,
                                                                                       "same")),
    ("convolve_valid", lambda m: m.convolve(K, V, "valid")),
    ("correlate", lambda m: m.correlate(V, K)), ("correlate_full", lambda m: m.correlate(V, K,
                                                                                      "full")),
    ("interp", lambda m: m.interp(np.array([-1.0, 0.5, 3.0, 9.0], np.float32), SORTED,
                                  SORTED ** 2)),
    ("interp_lr", lambda m: m.interp(np.array([-1.0, 9.0], np.float32), SORTED, SORTED,
                                     left=-5.0, right=5.0)),
    ("unwrap", lambda m: m.unwrap(np.cumsum(np.abs(V) * 2))),
    ("digitize", lambda m: m.digitize(V, SORTED - 1)),
    ("digitize_right", lambda m: m.digitize(V, SORTED - 1, right=True)),
    ("digitize_decreasing", lambda m: m.digitize(V, (SORTED - 1)[::-1])),
    ("cov", lambda m: m.cov(F)), ("cov_cols", lambda m: m.cov(F, rowvar=False, ddof=0)),
    ("cov_xy", lambda m: m.cov(V, V ** 2)),
    ("cov_weights", lambda m: m.cov(F, fweights=[1, 2, 1, 3], aweights=V[:4] ** 2)),
    ("corrcoef", lambda m: m.corrcoef(F)),
    ("hamming", lambda m: m.hamming(7)), ("hanning", lambda m: m.hanning(6)),
    ("blackman", lambda m: m.blackman(5)), ("bartlett", lambda m: m.bartlett(6)),
    ("polyval", lambda m: m.polyval(K, V)), ("polyadd", lambda m: m.polyadd(K, V[:2])),
    ("polysub", lambda m: m.polysub(V[:2], K)), ("polymul", lambda m: m.polymul(K, V[:4])),
    ("polyder", lambda m: m.polyder(V, 2)), ("polyint", lambda m: m.polyint(K, 2, [1.0, 2.0])),
    ("poly", lambda m: m.poly(K)), ("vander", lambda m: m.vander(K, 4)),
    ("vander_inc", lambda m: m.vander(IV[:3], increasing=True)),
    ("isin", lambda m: m.isin(IV, np.array([1, 9, 7]))),
    ("isin_invert", lambda m: m.isin(F, F[0], invert=True)),
    ("intersect1d", lambda m: m.intersect1d(IV, np.array([9, 1, 8, 1]))),
    ("union1d", lambda m: m.union1d(IV, np.array([10, 1]))),
    ("setdiff1d", lambda m: m.setdiff1d(IV, np.array([1, 9]))),
    ("setxor1d", lambda m: m.setxor1d(IV, np.array([1, 10]))),
    ("sort_complex", lambda m: m.sort_complex(V)),
    ("ldexp", lambda m: m.ldexp(V, np.arange(6, dtype=np.int32) - 2)),
    ("frexp", lambda m: m.frexp(np.array([8.0, 0.3, -5.0, 0.0, 1.0, 1024.5], np.float32))),
    ("modf", lambda m: m.modf(V * 3)),
    ("gcd", lambda m: m.gcd(IV * 6, np.array([4, 6, 8, 0, 10, 27, 1, 48], np.int32))),
    ("lcm", lambda m: m.lcm(IV, np.array([4, 6, 8, 0, 10, 27, 1, 48], np.int32))),
    ("fabs", lambda m: m.fabs(V)), ("acos", lambda m: m.acos(K / 3)),
    ("rollaxis", lambda m: m.rollaxis(np.zeros((2, 3, 4, 5)), 3, 1)),
    ("resize", lambda m: m.resize(IV, (3, 5))), ("block", lambda m: m.block([[F, F[:, :1]],
                                                                            [F[:1], F[:1, :1]]])),
    ("trim_zeros", lambda m: m.trim_zeros(np.array([0, 0, 3, 0, 2, 0]), "f")),
    ("cross", lambda m: m.cross(F[:, :3], F[::-1, 1:])),
    ("cross_2d", lambda m: m.cross(F[:, :2], F[:, 2:])),
    ("cross_axis", lambda m: m.cross(F[:3, :3].T, F[:3, 1:].T, axis=0)),
    ("partition_values", lambda m: m.sort(m.partition(IV, 3)[:4])),
    ("apply_along_axis", lambda m: m.apply_along_axis(lambda v: v.sum() * v, 0, F)
     if m is jnp else np.apply_along_axis(lambda v: v.sum() * v, 0, F)),
    ("fromfunction", lambda m: m.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=np.int32)),
    ("put", lambda m: m.put(np.zeros(5, np.int32), np.array([0, 2]), np.array([7, 8]),
                            inplace=False)
     if m is jnp else _np_put()),
    ("fill_diagonal", lambda m: m.fill_diagonal(np.zeros((3, 3), np.int32), 4, inplace=False)
     if m is jnp else _np_fill()),
]


def _np_put():
    x = np.zeros(5, np.int32)
    np.put(x, [0, 2], [7, 8])
    return x


def _np_fill():
    x = np.zeros((3, 3), np.int32)
    np.fill_diagonal(x, 4)
    return x


def _as_list(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


@pytest.mark.parametrize("name,fun", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, fun):
    ours, theirs = _as_list(fun(jnp)), _as_list(fun(np))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        b = np.asarray(b)
        assert np.shape(a) == b.shape, (np.shape(a), b.shape)
        np.testing.assert_allclose(np.asarray(a).astype(b.dtype if b.dtype != bool else bool),
                                   b, rtol=2e-4, atol=2e-4)


def test_grids():
    np.testing.assert_array_equal(jnp.mgrid[0:2, 0:3], np.mgrid[0:2, 0:3])
    for a, b in zip(jnp.ogrid[0:2, 1:4], np.ogrid[0:2, 1:4], strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(jnp.mgrid[0:1:5j], np.mgrid[0:1:5j], rtol=1e-6)


def test_argpartition_orders_like_jax():
    np.testing.assert_array_equal(jnp.argpartition(np.array([5, 1, 4, 2, 3]), 2), [1, 3, 4, 0, 2])
    np.testing.assert_array_equal(jnp.partition(np.array([5, 1, 4, 2, 3]), -2), [1, 2, 3, 4, 5])
    out = jnp.partition(F, 1, axis=0)
    np.testing.assert_array_equal(out[1], np.partition(F, 1, axis=0)[1])


def test_vectorize_with_and_without_signature():
    def f(a, b):
        return a * 2 + b

    np.testing.assert_allclose(jnp.vectorize(f)(F, V[:4]), F * 2 + V[:4])
    mean_dot = jnp.vectorize(lambda a, b: (a * b).mean(), signature="(n),(n)->()")
    np.testing.assert_allclose(mean_dot(F, V[:4]), (F * V[:4]).mean(-1), rtol=1e-6)
    scaled = jnp.vectorize(lambda a, k: a * k, excluded={1})
    np.testing.assert_allclose(scaled(F, 3.0), F * 3)
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(f, signature="n->m")


def test_apply_over_axes_and_misc_predicates():
    np.testing.assert_allclose(jnp.apply_over_axes(jnp.sum, F, [0, 1]),
                               np.apply_over_axes(np.sum, F, [0, 1]), rtol=1e-5)
    assert jnp.isscalar(1.0) and jnp.isscalar(np.float32(1)) and not jnp.isscalar(F)
    assert jnp.iterable([1]) and not jnp.iterable(1)
    assert jnp.astype(F, jnp.int8).dtype == np.int8


def test_errors_of_the_extras():
    with pytest.raises(ValueError, match="cannot modify arrays in place"):
        jnp.put(np.zeros(3), [0], 1.0)
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        jnp.choose(np.array([3]), [np.arange(1)])
    with pytest.raises(ValueError, match="condlist and choicelist must have the same length"):
        jnp.select([IV > 0], [IV, IV])
    with pytest.raises(TypeError, match="gcd accepts integer arrays"):
        jnp.gcd(F, F)
    with pytest.raises(ValueError, match="mode must be 'full', 'same' or 'valid'"):
        jnp.convolve(V, K, mode="circular")
    from laminax_core import errors

    with pytest.raises(errors.ConcretizationTypeError, match="jnp.delete needs a concrete value"):
        make_jaxpr(lambda i: jnp.delete(IV, i))(np.array([1], np.int32))


def test_extras_under_vmap():
    out = vmap(lambda v: jnp.convolve(v, K, "same"))(np.stack([V, V * 2]))
    np.testing.assert_allclose(out[1], np.convolve(V * 2, K, "same"), rtol=1e-5, atol=1e-6)
    out = vmap(lambda v: jnp.interp(v, SORTED, SORTED * 3))(np.stack([V, -V]))
    np.testing.assert_allclose(out[1], np.interp(-V, SORTED, SORTED * 3), rtol=1e-5, atol=1e-6)
    out = vmap(jnp.gcd)(IV.reshape(2, 4) * 4, np.full((2, 4), 6, np.int32))
    np.testing.assert_array_equal(out.ravel(), np.gcd(IV * 4, 6))
