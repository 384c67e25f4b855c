import numpy as np
import pytest
from laminax_core import ShapedArray, ShapeDtypeStruct, config, dtypes, eval_shape, lax
from laminax_core.internal import get_aval, weak_array


def test_shaped_array_prints_short_form():
    assert ShapedArray((3, 4), np.float32).str_short() == "f32[3,4]"
    assert ShapedArray((), np.int8).str_short() == "i8[]"
    assert ShapedArray((2,), dtypes.bfloat16).str_short() == "bf16[2]"
    assert ShapedArray((2,), np.bool_).str_short() == "bool[2]"
    assert ShapedArray((2,), dtypes.float0).str_short() == "float0[2]"


def test_shaped_array_repr_shows_weak_type():
    assert repr(ShapedArray((), np.float32, weak_type=True)) == (
        "ShapedArray(float32[], weak_type=True)"
    )
    assert repr(ShapedArray((2, 3), np.float32)) == "ShapedArray(float32[2,3])"


def test_shaped_array_canonicalizes_dtype_and_compares():
    assert ShapedArray((2,), np.float64).dtype == np.float32
    with config.enable_x64(True):
        assert ShapedArray((2,), np.float64).dtype == np.float64
    a, b = ShapedArray((2,), np.float32), ShapedArray((2,), np.float32)
    assert a == b and hash(a) == hash(b)
    assert a != a.update(weak_type=True)
    assert a.update(shape=(3,)).shape == (3,)
    assert ShapedArray((), np.float32, True).strip_weak_type().weak_type is False


def test_tangent_aval_of_integers_is_float0():
    assert ShapedArray((2,), np.int32).to_tangent_aval().dtype == dtypes.float0
    assert ShapedArray((2,), np.float32).to_tangent_aval().dtype == np.float32


def test_get_aval_of_python_and_numpy_values():
    assert get_aval(1.0) == ShapedArray((), np.float32, weak_type=True)
    assert get_aval(1) == ShapedArray((), np.int32, weak_type=True)
    assert get_aval(True) == ShapedArray((), np.bool_, weak_type=False)
    assert get_aval(np.float32(1)) == ShapedArray((), np.float32)
    assert get_aval(np.ones((2, 3))) == ShapedArray((2, 3), np.float32)
    assert get_aval(weak_array(2, np.float16)).weak_type


def test_get_aval_rejects_non_arrays():
    with pytest.raises(TypeError, match="is not a valid array type"):
        get_aval("hello")


def test_bad_shape_is_a_type_error():
    with pytest.raises(TypeError, match="negative dimension"):
        ShapedArray((-1,), np.float32)
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type"):
        ShapedArray((1.5,), np.float32)


def test_shape_dtype_struct_repr_and_eq():
    s = ShapeDtypeStruct((2, 3), np.float32)
    assert repr(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    assert s == ShapeDtypeStruct((2, 3), np.float32) and s.ndim == 2 and s.size == 6


def test_eval_shape_takes_shape_dtype_structs_and_pytrees():
    out = eval_shape(
        lambda p: {"y": lax.sin(p["x"]).sum()}, {"x": ShapeDtypeStruct((3,), np.float32)}
    )
    assert out == {"y": ShapeDtypeStruct((), np.float32)}


def test_eval_shape_runs_no_computation():
    calls = []

    def fun(x):
        calls.append(type(x).__name__)
        return x * 2.0

    out = eval_shape(fun, ShapeDtypeStruct((1000, 1000), np.float32))
    assert out.shape == (1000, 1000)
    assert calls == ["JaxprTracer"]


def test_weak_numpy_constants_promote_as_weak():
    # A Python scalar kept as a weak NumPy constant must not upcast a float16 operand.
    from laminax_core import dtypes
    from laminax_core._avals import weak_array

    constant = weak_array(1.0, np.float32)
    assert dtypes.is_weakly_typed(constant)
    assert dtypes.result_type(constant, np.float16(2)) == np.float16
