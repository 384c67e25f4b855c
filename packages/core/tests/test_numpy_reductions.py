"""laminax_core.numpy's reductions against NumPy: axis/keepdims/where/initial/dtype over
representative shapes and dtypes, JAX's dtype rules, NaN variants, cumulative reductions."""

import warnings

import laminax_core.numpy as jnp
import numpy as np
import pytest
from laminax_core import eval_shape

X_F = np.random.RandomState(0).randn(3, 4, 5).astype(np.float32)
X_I = np.random.RandomState(1).randint(-5, 6, size=(3, 4, 5)).astype(np.int32)
AXES = [None, 0, 1, -1, (0, 2), (0, 1, 2)]


def _compare(actual, expected, rtol=1e-5):
    expected = np.asarray(expected)
    assert np.shape(actual) == expected.shape
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected.astype(np.float64),
                               rtol=rtol, atol=1e-5)


REDUCTIONS = ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "ptp",
              "count_nonzero", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar",
              "nanstd"]
CASES = [(name, axis, keepdims, x) for name in REDUCTIONS for axis in AXES
         for keepdims in (False, True) for x in ("f", "i")]


@pytest.mark.parametrize("name,axis,keepdims,kind", CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CASES])
def test_reduction_matches_numpy(name, axis, keepdims, kind):
    x = X_F if kind == "f" else X_I
    if name in ("prod", "nanprod"):
        x = x * 0.5 if kind == "f" else np.clip(x, -2, 2)
    if name == "count_nonzero" and isinstance(axis, tuple):
        axis = axis[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    _compare(getattr(jnp, name)(x, axis=axis, keepdims=keepdims), expected,
             rtol=1e-4 if name in ("var", "std", "prod", "nanprod", "nanvar", "nanstd") else 1e-5)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std", "all",
                                  "any"])
def test_where_mask_matches_numpy(name):
    mask = np.random.RandomState(2).rand(3, 4, 5) > 0.3
    kwargs = {"initial": -10.0 if name == "max" else 10.0} if name in ("max", "min") else {}
    x = X_F * 0.5
    expected = getattr(np, name)(x, axis=1, where=mask, **kwargs)
    _compare(getattr(jnp, name)(x, axis=1, where=mask, **kwargs), expected, rtol=1e-4)


def test_max_with_where_needs_initial():
    with pytest.raises(ValueError, match="no identity, so a where mask needs an initial value"):
        jnp.max(X_F, where=X_F > 0)


def test_sum_dtypes_follow_jax():
    assert jnp.sum(np.ones(3, np.int8)).dtype == np.int32
    assert jnp.sum(np.ones(3, np.uint8)).dtype == np.uint32
    assert jnp.sum(np.ones(3, np.bool_)).dtype == np.int32
    assert jnp.sum(np.ones(3, np.int8), promote_integers=False).dtype == np.int8
    assert jnp.sum(np.ones(3, np.float16)).dtype == np.float16
    assert jnp.sum(np.ones(3, np.int32), dtype=np.float32).dtype == np.float32
    assert jnp.mean(np.ones(3, np.int32)).dtype == np.float32
    assert jnp.var(np.ones(3, np.complex64)).dtype == np.float32
    assert jnp.cumsum(np.ones(3, np.bool_)).dtype == np.int32


def test_float16_sums_accumulate_in_float32():
    x = np.full(4096, 1.0, np.float16)
    out = jnp.sum(x)
    assert out.dtype == np.float16 and float(out) == 4096.0  # f16 accumulation would stop at 2048


def test_initial_and_empty_reductions():
    assert float(jnp.sum(np.ones(3), initial=10.0)) == 13.0
    assert float(jnp.max(np.zeros((0,)), initial=-1.0)) == -1.0
    with pytest.raises(ValueError, match="zero-size array to a reduction operation max"):
        jnp.max(np.zeros((0, 2)))


def test_var_ddof_and_correction():
    _compare(jnp.var(X_F, axis=0, ddof=1), np.var(X_F, axis=0, ddof=1), rtol=1e-4)
    _compare(jnp.std(X_F, correction=1), np.std(X_F, ddof=1), rtol=1e-4)
    with pytest.raises(ValueError, match="pass ddof or correction, not both"):
        jnp.var(X_F, ddof=1, correction=1)


@pytest.mark.parametrize("name", ["argmax", "argmin", "nanargmax", "nanargmin"])
@pytest.mark.parametrize("axis", [None, 0, 2, -2])
def test_arg_reductions_match_numpy(name, axis):
    x = X_F.copy()
    x[0, 1, 2] = np.nan if name.startswith("nan") else x[0, 1, 2]
    out = getattr(jnp, name)(x, axis=axis)
    np.testing.assert_array_equal(out, getattr(np, name)(x, axis=axis))
    assert out.dtype == np.int32
    out = getattr(jnp, name)(x, axis=axis, keepdims=True)
    assert out.shape == getattr(np, name)(x, axis=axis, keepdims=True).shape


def test_nan_variants_of_all_nan_slices():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("nanmax", "nanmin", "nanmean"):
            np.testing.assert_array_equal(getattr(jnp, name)(x, axis=1),
                                          getattr(np, name)(x, axis=1))
    np.testing.assert_array_equal(jnp.nanargmax(x, axis=1), [-1, 0])


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumulative_matches_numpy(name, axis):
    x = (X_F[:, :, :3] * 0.5).copy()
    x[1, 1, 1] = np.nan if name.startswith("nan") else x[1, 1, 1]
    _compare(getattr(jnp, name)(x, axis=axis), getattr(np, name)(x, axis=axis), rtol=1e-4)
    np.testing.assert_array_equal(getattr(jnp, name)(X_I[:, :2, :2], axis=axis),
                                  getattr(np, name)(X_I[:, :2, :2], axis=axis))


def test_cumulative_sum_include_initial():
    np.testing.assert_array_equal(jnp.cumulative_sum(np.array([1, 2, 3]), include_initial=True),
                                  [0, 1, 3, 6])
    np.testing.assert_array_equal(jnp.cumulative_prod(np.array([[1, 2], [3, 4]]), axis=0),
                                  [[1, 2], [3, 8]])
    with pytest.raises(ValueError, match="axis is required"):
        jnp.cumulative_sum(np.ones((2, 2)))


def test_average_with_weights():
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    _compare(jnp.average(X_F, axis=1, weights=w), np.average(X_F, axis=1, weights=w))
    avg, total = jnp.average(X_F, axis=(0, 1), returned=True)
    exp_avg, exp_total = np.average(X_F, axis=(0, 1), returned=True)
    _compare(avg, exp_avg)
    _compare(total, exp_total)
    with pytest.raises(ValueError, match="weights of shape"):
        jnp.average(X_F, axis=1, weights=np.ones(3))


def test_reduction_errors_name_the_function():
    with pytest.raises(ValueError, match=r"jnp.sum: axis 3 is out of bounds"):
        jnp.sum(X_F, axis=3)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.sum(X_F, axis=(0, 0))
    with pytest.raises(NotImplementedError, match="out argument is not supported"):
        jnp.sum(X_F, out=np.zeros(()))


def test_reductions_of_python_scalars_are_weak():
    out = eval_shape(lambda: jnp.sum(1.0))
    assert out.dtype == np.float32
    assert eval_shape(jnp.mean, np.ones(3, np.float16)).dtype == np.float16


def test_var_method_stages_under_make_jaxpr():
    # A staging tracer's own slots must not hide jnp's array methods (x.var() once did).
    from laminax_core import make_jaxpr

    x = np.arange(4.0, dtype=np.float32)
    jaxpr = make_jaxpr(lambda v: v.var())(x)
    assert jaxpr.out_avals[0].shape == ()
    assert "reduce_sum" in str(jaxpr)
