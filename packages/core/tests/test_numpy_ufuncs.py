"""laminax_core.numpy's elementwise functions against NumPy: a table of functions, run over
representative shapes and dtypes (values and result dtypes), plus weak-type promotion, rank
promotion and errors."""

import warnings

import laminax_core.numpy as jnp
import numpy as np
import pytest
from laminax_core import config, dtypes, eval_shape, make_jaxpr

FLOAT = [np.float32]
INT = [np.int32, np.int8, np.uint8]
NUMERIC = FLOAT + INT
SHAPES_1 = [(), (4,), (2, 3)]
SHAPES_2 = [((), ()), ((4,), (4,)), ((2, 3), (3,)), ((2, 1), (1, 3))]


def _draw(shape, dtype, domain, rng=None):
    rng = rng or np.random.RandomState(sum(shape) + len(shape))
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.rand(*shape) > 0.5)
    if np.issubdtype(dtype, np.integer):
        lo, hi = {"positive": (1, 5), "any": (-4, 5)}.get(domain, (-4, 5))
        if np.issubdtype(dtype, np.unsignedinteger):
            lo = max(lo, 1 if domain == "positive" else 0)
        return np.asarray(rng.randint(lo, hi, size=shape)).astype(dtype)
    if domain == "positive":
        return np.asarray(rng.rand(*shape) * 2 + 0.5).astype(dtype)
    if domain == "unit":
        return np.asarray(rng.rand(*shape) * 1.8 - 0.9).astype(dtype)
    if domain == "above_one":
        return np.asarray(rng.rand(*shape) * 2 + 1.1).astype(dtype)
    return np.asarray(rng.randn(*shape) * 2).astype(dtype)


# name, numpy reference, dtypes, domain
UNARY = [
    ("negative", np.negative, NUMERIC, "any"), ("positive", np.positive, NUMERIC, "any"),
    ("absolute", np.absolute, NUMERIC, "any"), ("abs", np.abs, NUMERIC, "any"),
    ("sign", np.sign, [np.float32, np.int32], "any"), ("square", np.square, NUMERIC, "any"),
    ("sqrt", np.sqrt, FLOAT + [np.int32], "positive"), ("cbrt", np.cbrt, FLOAT, "any"),
    ("reciprocal", lambda v: np.reciprocal(v.astype(np.float32)), FLOAT + [np.int32],
                                        "positive"), ("exp", np.exp, FLOAT + [np.int32], "any"),
    ("exp2", np.exp2, FLOAT, "any"), ("expm1", np.expm1, FLOAT, "any"),
    ("log", np.log, FLOAT + [np.int32], "positive"), ("log2", np.log2, FLOAT, "positive"),
    ("log10", np.log10, FLOAT, "positive"), ("log1p", np.log1p, FLOAT, "positive"),
    ("sin", np.sin, FLOAT + [np.int32], "any"), ("cos", np.cos, FLOAT, "any"),
    ("tan", np.tan, FLOAT, "unit"), ("arcsin", np.arcsin, FLOAT, "unit"),
    ("arccos", np.arccos, FLOAT, "unit"), ("arctan", np.arctan, FLOAT, "any"),
    ("sinh", np.sinh, FLOAT, "any"), ("cosh", np.cosh, FLOAT, "any"),
    ("tanh", np.tanh, FLOAT, "any"), ("arcsinh", np.arcsinh, FLOAT, "any"),
    ("arccosh", np.arccosh, FLOAT, "above_one"), ("arctanh", np.arctanh, FLOAT, "unit"),
    ("floor", np.floor, NUMERIC, "any"), ("ceil", np.ceil, NUMERIC, "any"),
    ("trunc", np.trunc, NUMERIC, "any"),
    ("rint", np.rint, FLOAT, "any"), ("round", np.round, FLOAT + [np.int32], "any"),
    ("deg2rad", np.deg2rad, FLOAT, "any"), ("rad2deg", np.rad2deg, FLOAT, "any"),
    ("degrees", np.degrees, FLOAT, "any"), ("radians", np.radians, FLOAT, "any"),
    ("signbit", np.signbit, FLOAT + [np.int32], "any"), ("sinc", np.sinc, FLOAT, "any"),
    ("isnan", np.isnan, FLOAT + [np.int32], "any"), ("isinf", np.isinf, FLOAT, "any"),
    ("isfinite", np.isfinite, FLOAT + [np.int32], "any"),
    ("isposinf", np.isposinf, FLOAT, "any"), ("isneginf", np.isneginf, FLOAT, "any"),
    ("logical_not", np.logical_not, [np.int32, np.bool_], "any"),
    ("invert", np.invert, [np.int32, np.uint8, np.bool_], "any"),
    ("real", np.real, FLOAT, "any"), ("imag", np.imag, FLOAT, "any"),
    ("conjugate", np.conjugate, FLOAT, "any"), ("angle", np.angle, FLOAT, "any"),
    ("nan_to_num", np.nan_to_num, FLOAT + [np.int32], "any"),
    ("bitwise_count", np.bitwise_count, [np.int32, np.uint8], "any"),
]  # fmt: skip

BINARY = [
    ("add", np.add, NUMERIC + [np.bool_], "any"), ("subtract", np.subtract, NUMERIC, "any"),
    ("multiply", np.multiply, NUMERIC + [np.bool_], "any"),
    ("divide", np.divide, FLOAT + [np.int32], "positive"),
    ("true_divide", np.true_divide, FLOAT, "positive"),
    ("floor_divide", np.floor_divide, [np.float32, np.int32, np.uint8], "positive_rhs"),
    ("remainder", np.remainder, [np.float32, np.int32, np.uint8], "positive_rhs"),
    ("mod", np.mod, [np.float32, np.int32], "positive_rhs"),
    ("fmod", np.fmod, [np.float32, np.int32], "positive_rhs"),
    ("power", np.power, FLOAT, "positive"), ("float_power", np.float_power, FLOAT, "positive"),
    ("maximum", np.maximum, NUMERIC, "any"), ("minimum", np.minimum, NUMERIC, "any"),
    ("fmax", np.fmax, FLOAT, "any"), ("fmin", np.fmin, FLOAT, "any"),
    ("arctan2", np.arctan2, FLOAT, "any"), ("hypot", np.hypot, FLOAT, "any"),
    ("logaddexp", np.logaddexp, FLOAT, "any"), ("logaddexp2", np.logaddexp2, FLOAT, "any"),
    ("copysign", np.copysign, FLOAT, "any"), ("heaviside", np.heaviside, FLOAT, "any"),
    ("nextafter", np.nextafter, FLOAT, "any"),
    ("equal", np.equal, NUMERIC, "any"), ("not_equal", np.not_equal, NUMERIC, "any"),
    ("less", np.less, NUMERIC, "any"), ("less_equal", np.less_equal, NUMERIC, "any"),
    ("greater", np.greater, NUMERIC, "any"), ("greater_equal", np.greater_equal, NUMERIC, "any"),
    ("logical_and", np.logical_and, [np.int32, np.bool_], "any"),
    ("logical_or", np.logical_or, [np.int32, np.bool_], "any"),
    ("logical_xor", np.logical_xor, [np.int32, np.bool_], "any"),
    ("bitwise_and", np.bitwise_and, [np.int32, np.uint8, np.bool_], "any"),
    ("bitwise_or", np.bitwise_or, [np.int32, np.uint8, np.bool_], "any"),
    ("bitwise_xor", np.bitwise_xor, [np.int32, np.uint8, np.bool_], "any"),
    ("left_shift", np.left_shift, [np.int32, np.uint8], "shift"),
    ("right_shift", np.right_shift, [np.int32, np.uint8], "shift"),
]  # fmt: skip

UNARY_CASES = [(name, ref, dt, dom, shape) for name, ref, dts, dom in UNARY for dt in dts
               for shape in SHAPES_1]
BINARY_CASES = [(name, ref, dt, dom, shapes) for name, ref, dts, dom in BINARY for dt in dts
                for shapes in SHAPES_2]


def _check(actual, expected, dtype_expected=None, rtol=2e-5):
    expected = np.asarray(expected)
    dtype_expected = dtype_expected or dtypes.canonicalize_dtype(expected.dtype)
    assert np.asarray(actual).dtype == dtype_expected, (np.asarray(actual).dtype, dtype_expected)
    assert np.shape(actual) == expected.shape
    if np.issubdtype(expected.dtype, np.inexact):
        np.testing.assert_allclose(np.asarray(actual, np.float64),
                                   np.asarray(expected, np.float64), rtol=rtol, atol=1e-6)
    else:
        np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("name,reference,dtype,domain,shape", UNARY_CASES,
                         ids=[f"{c[0]}-{np.dtype(c[2]).name}-{c[4]}" for c in UNARY_CASES])
def test_unary_matches_numpy(name, reference, dtype, domain, shape):
    x = _draw(shape, dtype, domain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = reference(x)
    if (name in ("floor", "ceil", "trunc", "round") and
                                np.issubdtype(dtype, np.integer)):
        expected = np.asarray(expected).astype(dtype)  # JAX keeps the input dtype
    if name in ("sign",) and np.issubdtype(dtype, np.integer):
        expected = np.asarray(expected).astype(dtype)
    if name == "bitwise_count":
        expected = np.asarray(expected).astype(np.uint8)
    _check(getattr(jnp, name)(x), expected)


def _draw_pair(shapes, dtype, domain):
    rng = np.random.RandomState(len(shapes[0]) + 3)
    x = _draw(shapes[0], dtype, "any" if domain in ("positive_rhs", "shift") else domain, rng)
    if domain == "positive_rhs":
        y = _draw(shapes[1], dtype, "positive", rng)
    elif domain == "shift":
        y = np.asarray(rng.randint(0, 7, size=shapes[1])).astype(dtype)
    else:
        y = _draw(shapes[1], dtype, domain, rng)
    return x, y


@pytest.mark.parametrize("name,reference,dtype,domain,shapes", BINARY_CASES,
                         ids=[f"{c[0]}-{np.dtype(c[2]).name}-{c[4]}" for c in BINARY_CASES])
def test_binary_matches_numpy(name, reference, dtype, domain, shapes):
    x, y = _draw_pair(shapes, dtype, domain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = reference(x, y)
    if name == "float_power":
        expected = np.asarray(expected).astype(np.float32)
    _check(getattr(jnp, name)(x, y), expected)


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "maximum", "power", "arctan2",
                                  "equal", "less", "divide", "remainder"])
def test_python_scalars_are_weak_and_do_not_upcast(name):
    x = np.ones(3, np.float16)
    out = eval_shape(lambda v: getattr(jnp, name)(v, 2.0), x)
    assert out.dtype == (np.bool_ if name in ("equal", "less") else np.float16)
    out = eval_shape(lambda v: getattr(jnp, name)(3, v), np.ones(3, np.int8))
    expected = {"arctan2": np.float32, "divide": np.float32, "equal": np.bool_,
                "less": np.bool_}.get(name, np.int8)
    assert out.dtype == expected


def test_weak_type_flows_through_scalar_only_operations():
    out = eval_shape(lambda: jnp.add(1.0, 2))
    assert (out.dtype, out.weak_type) == (np.float32, True)
    out = eval_shape(lambda: jnp.sin(1))
    assert (out.dtype, out.weak_type) == (np.float32, True)
    out = eval_shape(lambda v: jnp.multiply(v, 2), np.int8(1))
    assert (out.dtype, out.weak_type) == (np.int8, False)


def test_integer_promotion_follows_jax_lattice():
    out = jnp.add(np.ones(2, np.int8), np.ones(2, np.uint8))
    assert out.dtype == np.int16
    out = jnp.add(np.ones(2, np.int32), np.ones(2, np.float16))
    assert out.dtype == np.float16  # JAX: i32 + f16 -> f16 (NumPy would give float64)


def test_power_with_static_int_exponent_uses_integer_pow():
    jaxpr = make_jaxpr(lambda v: jnp.power(v, 3))(np.float32(2))
    assert "integer_pow[y=3]" in str(jaxpr)
    np.testing.assert_array_equal(jnp.power(np.array([2, -3], np.int32), np.array([3, 2])),
                                  [8, 9])
    assert jnp.power(np.array([2], np.int32), np.array([-1], np.int32))[0] == 0


def test_rank_promotion_config_raise_and_warn():
    x, y = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    with config.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            jnp.add(x, y)
        jnp.add(x, 1.0)  # scalars never count as rank promotion
    with config.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="jax_numpy_rank_promotion='warn'"):
            jnp.add(x, y)


def test_incompatible_shapes_raise_jax_error_naming_the_function():
    # JAX's types: one rank reaches the primitive's shape rule (TypeError), ranks that differ
    # fail in rank promotion (ValueError)
    with pytest.raises(TypeError, match="multiply: incompatible shapes"):
        jnp.multiply(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="multiply: incompatible shapes"):
        jnp.multiply(np.ones((2, 3)), np.ones(4))


def test_non_array_arguments_raise_type_error():
    with pytest.raises(TypeError, match="add requires ndarray or scalar arguments, but got list "
                                        "at position 1"):
        jnp.add(np.ones(2), [1, 2])
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
        jnp.sin("x")


def test_boolean_subtract_and_bitwise_on_floats_raise():
    with pytest.raises(TypeError, match="boolean subtract"):
        jnp.subtract(np.array([True]), np.array([False]))
    with pytest.raises(TypeError, match="bitwise_and accepts integer and boolean"):
        jnp.bitwise_and(np.ones(2, np.float32), 1.0)


def test_divmod_and_float_floor_divide_match_numpy():
    x = np.array([-7.5, 7.5, -3.0, 2.0], np.float32)
    y = np.array([2.0, -2.0, 2.0, 0.75], np.float32)
    q, r = jnp.divmod(x, y)
    np.testing.assert_allclose(q, np.floor_divide(x, y))
    np.testing.assert_allclose(r, np.remainder(x, y), atol=1e-6)
    q, r = jnp.divmod(np.array([-7, 7], np.int32), np.array([2, -2], np.int32))
    np.testing.assert_array_equal(q, [-4, -4])
    np.testing.assert_array_equal(r, [1, -1])


def test_round_decimals_and_halves_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, 1.2345, 123.4], np.float32)
    np.testing.assert_allclose(jnp.round(x), np.round(x))
    np.testing.assert_allclose(jnp.round(x, 2), np.round(x, 2), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="decimals < 0"):
        jnp.round(np.array([15, 25], np.int32), -1)
    assert jnp.around is jnp.round


def test_special_values_of_nan_aware_functions():
    nan, inf = np.nan, np.inf
    x = np.array([nan, 1.0, nan, -inf], np.float32)
    y = np.array([2.0, nan, nan, inf], np.float32)
    np.testing.assert_array_equal(jnp.fmax(x, y), np.fmax(x, y))
    np.testing.assert_array_equal(jnp.fmin(x, y), np.fmin(x, y))
    np.testing.assert_array_equal(jnp.maximum(x, y), np.maximum(x, y))
    np.testing.assert_allclose(jnp.logaddexp(np.float32(-inf), np.float32(-inf)), -inf)
    np.testing.assert_allclose(jnp.hypot(np.float32(inf), np.float32(nan)), inf)
    np.testing.assert_array_equal(jnp.nan_to_num(np.array([nan, inf, -inf], np.float32), nan=1,
                                                 posinf=2, neginf=3), [1, 2, 3])
    np.testing.assert_array_equal(jnp.signbit(np.array([-0.0, 0.0], np.float32)), [True, False])


def test_where_broadcasts_and_promotes():
    out = jnp.where(np.array([True, False]), np.int8(1), 2.5)
    np.testing.assert_allclose(out, [1.0, 2.5])
    assert out.dtype == np.float32
    cond = np.array([[1], [0]])
    out = jnp.where(cond, np.arange(3), -1)
    np.testing.assert_array_equal(out, np.where(cond, np.arange(3), -1))
    with pytest.raises(ValueError, match="pass both x and y, or neither"):
        jnp.where(cond, 1)


def test_clip_matches_numpy_and_accepts_old_keyword_names():
    x = np.array([-3.0, 0.5, 7.0], np.float32)
    np.testing.assert_allclose(jnp.clip(x, -1, 1), np.clip(x, -1, 1))
    np.testing.assert_allclose(jnp.clip(x, max=0.0), np.clip(x, None, 0.0))
    np.testing.assert_allclose(jnp.clip(a=x, a_min=0.0, a_max=2.0), np.clip(x, 0.0, 2.0))
    assert jnp.clip(np.ones(2, np.float16), 0, 1).dtype == np.float16


def test_isclose_allclose_and_array_equal():
    a = np.array([1.0, np.inf, np.nan, 1e-9], np.float32)
    b = np.array([1.0 + 1e-6, np.inf, np.nan, 0.0], np.float32)
    np.testing.assert_array_equal(jnp.isclose(a, b), np.isclose(a, b))
    np.testing.assert_array_equal(jnp.isclose(a, b, equal_nan=True),
                                  np.isclose(a, b, equal_nan=True))
    assert bool(jnp.allclose(np.ones(3), 1.0))
    assert not bool(jnp.allclose(a, b))
    assert bool(jnp.array_equal(np.arange(3), np.arange(3)))
    assert not bool(jnp.array_equal(np.arange(3), np.arange(4)))
    assert bool(jnp.array_equal(a, a, equal_nan=True))
    assert bool(jnp.array_equiv(np.ones((2, 2)), np.ones(2)))
