"""Tests for laminax_core.dtypes: canonicalization, weak types, promotion, dtype helpers."""

import doctest
import threading
import warnings

import ml_dtypes
import numpy as np
import pytest

from laminax_core import _dtypes_base, _promotion, dtypes
from laminax_core.config import (
    config,
    enable_x64,
    explicit_x64_dtypes,
    numpy_dtype_promotion,
)
from laminax_core.dtypes import (
    TypePromotionError,
    bfloat16,
    canonicalize_dtype,
    float0,
    int4,
    promote_types,
    result_type,
)

D = np.dtype

# -- scalar types and sets ------------------------------------------------------------------------


def test_narrow_types_are_ml_dtypes():
    for name in ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                 "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu",
                 "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "int1", "uint1", "int2",
                 "uint2", "int4", "uint4"]:  # fmt: skip
        assert getattr(dtypes, name) is getattr(ml_dtypes, name)


def test_float0_is_zero_size_void():
    assert float0.itemsize == 0
    assert float0 == D([("float0", np.void, 0)])
    assert np.zeros((3,), float0).nbytes == 0


def test_dtype_sets_partition_numeric_dtypes():
    assert dtypes.integer_dtypes == dtypes.int_dtypes | dtypes.uint_dtypes
    assert not dtypes.int_dtypes & dtypes.uint_dtypes
    assert dtypes.inexact_dtypes == dtypes.float_dtypes | dtypes.complex_dtypes
    assert dtypes.numeric_dtypes == dtypes.integer_dtypes | dtypes.inexact_dtypes
    assert D(bfloat16) in dtypes.float_dtypes and D(int4) in dtypes.int_dtypes
    assert D("uint4") in dtypes.uint_dtypes and D(bool) in dtypes.bool_dtypes
    assert len(dtypes.float_dtypes) == 15 and len(dtypes.integer_dtypes) == 14
    for group in (dtypes.float_dtypes, dtypes.int_dtypes, dtypes.bool_dtypes):
        assert isinstance(group, frozenset) and all(isinstance(d, np.dtype) for d in group)


def test_public_names_have_docstrings():
    for name in dtypes.__all__:
        obj = getattr(dtypes, name)
        if isinstance(obj, (frozenset, np.dtype)):
            continue  # data: documented in the module docstring and source comments
        assert getattr(obj, "__doc__", None), name


def test_docstring_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    # the docstrings live where the functions are defined: the dtypes and the lattice modules
    for module in (_dtypes_base, _promotion):
        for test in finder.find(module, globs={"np": np, **vars(dtypes)}):
            runner.run(test)
    assert runner.failures == 0 and runner.tries > 20


# -- canonicalization -----------------------------------------------------------------------------

X32 = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}


@pytest.mark.parametrize("wide,narrow", sorted(X32.items()))
def test_canonicalize_x64_off_and_on(wide, narrow):
    assert canonicalize_dtype(wide) == D(narrow)
    assert canonicalize_dtype(D(wide)) == D(narrow)
    assert canonicalize_dtype(getattr(np, wide)) == D(narrow)
    with enable_x64(True):
        assert canonicalize_dtype(wide) == D(wide)
        assert canonicalize_dtype(getattr(np, wide)) == D(wide)
    assert canonicalize_dtype(wide) == D(narrow)


def test_canonicalize_keeps_other_dtypes():
    for dt in dtypes.numeric_dtypes | dtypes.bool_dtypes:
        if dt.name not in X32:
            assert canonicalize_dtype(dt) == dt
            assert canonicalize_dtype(dt.name) == dt


def test_canonicalize_python_types_and_errors():
    assert canonicalize_dtype(float) == D("float32")
    assert canonicalize_dtype(int) == D("int32")
    with pytest.raises(TypeError, match="is not a dtype"):
        canonicalize_dtype("not-a-dtype")


def test_canonicalize_follows_update_and_threads():
    config.update("jax_enable_x64", True)
    try:
        assert canonicalize_dtype("float64") == D("float64")
    finally:
        config.update("jax_enable_x64", False)
    assert canonicalize_dtype("float64") == D("float32")
    seen = []
    with enable_x64(True):
        thread = threading.Thread(target=lambda: seen.append(canonicalize_dtype("int64")))
        thread.start()
        thread.join()
        assert canonicalize_dtype("int64") == D("int64")
    assert seen == [D("int32")]


def test_defaults_follow_x64():
    assert (dtypes.default_int_dtype(), dtypes.default_uint_dtype()) == (D("int32"), D("uint32"))
    assert (dtypes.default_float_dtype(), dtypes.default_complex_dtype()) == (
        D("float32"), D("complex64"))  # fmt: skip
    assert dict(dtypes.python_scalar_dtypes) == {
        bool: D(bool), int: D("int32"), float: D("float32"), complex: D("complex64")}  # fmt: skip
    with enable_x64(True):
        assert dtypes.default_int_dtype() == D("int64")
        assert dtypes.default_uint_dtype() == D("uint64")
        assert dtypes.default_float_dtype() == D("float64")
        assert dtypes.default_complex_dtype() == D("complex128")
        assert dtypes.python_scalar_dtypes[float] == D("float64")


# -- dtype() and weak types -----------------------------------------------------------------------


class FakeAval:
    def __init__(self, dtype, weak_type):
        self.dtype, self.weak_type, self.shape = np.dtype(dtype), weak_type, ()


class FakeTracer:
    def __init__(self, dtype, weak_type=False):
        self.aval = FakeAval(dtype, weak_type)
        self.dtype = self.aval.dtype


def test_dtype_of_values_and_types():
    assert dtypes.dtype(1) == D("int32") and dtypes.dtype(1.0) == D("float32")
    assert dtypes.dtype(True) == D(bool) and dtypes.dtype(1j) == D("complex64")
    assert dtypes.dtype(float) == D("float32") and dtypes.dtype(bool) == D(bool)
    assert dtypes.dtype(np.float16) == D("float16")
    assert dtypes.dtype("bfloat16") == D(bfloat16)
    assert dtypes.dtype(np.zeros(2, int4)) == D(int4)
    assert dtypes.dtype(np.float64(1)) == D("float64")
    assert dtypes.dtype(np.float64(1), canonicalize=True) == D("float32")
    assert dtypes.dtype(FakeTracer("int8")) == D("int8")
    with enable_x64(True):
        assert dtypes.dtype(1.0) == D("float64")


def test_dtype_errors():
    with pytest.raises(ValueError, match="got None"):
        dtypes.dtype(None)
    with pytest.raises(TypeError, match="cannot hold"):
        dtypes.dtype(np.array(["a"]))
    with pytest.raises(TypeError, match="cannot hold"):
        dtypes.dtype(object)
    with pytest.raises(TypeError, match="convert it first"):
        dtypes.dtype([1.0, 2.0])


def test_is_weakly_typed():
    assert dtypes.is_weakly_typed(1) and dtypes.is_weakly_typed(2.0) and dtypes.is_weakly_typed(1j)
    assert not dtypes.is_weakly_typed(True)
    assert not dtypes.is_weakly_typed(np.float32(1))
    assert not dtypes.is_weakly_typed(np.zeros(2))
    assert dtypes.is_weakly_typed(FakeTracer("float32", weak_type=True))
    assert not dtypes.is_weakly_typed(FakeTracer("float32", weak_type=False))

    class WithFlag:
        weak_type = True

    assert dtypes.is_weakly_typed(WithFlag())


def test_scalar_type_of():
    cases = [(np.zeros(1, bfloat16), float), (np.zeros(1, int4), int), (True, bool),
             (np.zeros(1, np.uint8), int), (1j, complex), (np.float64(1), float)]  # fmt: skip
    for value, typ in cases:
        assert dtypes.scalar_type_of(value) is typ


def test_coerce_to_array():
    assert dtypes.coerce_to_array(1.5).dtype == D("float32")
    assert dtypes.coerce_to_array(3).dtype == D("int32")
    assert dtypes.coerce_to_array(True).dtype == D(bool)
    assert dtypes.coerce_to_array([1.0, 2.0]).dtype == D("float32")
    assert dtypes.coerce_to_array(np.zeros(2)).dtype == D("float64")  # arrays keep theirs
    assert dtypes.coerce_to_array(1, np.int8).dtype == D("int8")
    with pytest.raises(OverflowError, match="does not fit in int32"):
        dtypes.coerce_to_array(2**40)
    with enable_x64(True):
        assert dtypes.coerce_to_array(2**40).dtype == D("int64")
        assert dtypes.coerce_to_array([1.0]).dtype == D("float64")


# -- user dtypes and the 64-bit warning -----------------------------------------------------------


def test_check_user_dtype_warns_and_truncates_64_bit():
    with pytest.warns(UserWarning, match=r"float64 was requested in zeros.*float32 is used.*"
                      r"jax_enable_x64.*JAX_ENABLE_X64"):
        assert dtypes.check_user_dtype_supported(np.float64, "zeros") == D("float32")


def test_check_user_dtype_no_warning_when_x64_or_32_bit():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dtypes.check_user_dtype_supported(np.float32, "zeros") == D("float32")
        assert dtypes.check_user_dtype_supported(float, "zeros") == D("float32")
        assert dtypes.check_user_dtype_supported(None, "zeros") is None
        with enable_x64(True):
            assert dtypes.check_user_dtype_supported("int64", "ones") == D("int64")


def test_explicit_x64_modes():
    with explicit_x64_dtypes("allow"):
        assert dtypes.check_user_dtype_supported(np.int64, "arange") == D("int64")
    with explicit_x64_dtypes("error"):
        with pytest.raises(ValueError, match="int64 was requested in arange"):
            dtypes.check_user_dtype_supported(np.int64, "arange")


@pytest.mark.parametrize("bad", [np.str_, object, "U5", "datetime64[s]"])
def test_check_user_dtype_rejects_unsupported(bad):
    with pytest.raises(TypeError, match="supports boolean, numeric and string dtypes.* in zeros"):
        dtypes.check_user_dtype_supported(bad, "zeros")


def test_check_user_dtype_rejects_arrays_and_none():
    with pytest.raises(TypeError, match="pass its dtype"):
        dtypes.check_and_canonicalize_user_dtype(np.zeros(2), "zeros")
    with pytest.raises(ValueError, match="dtype is required in zeros"):
        dtypes.check_and_canonicalize_user_dtype(None, "zeros")


# -- issubdtype, isdtype, finfo, iinfo ------------------------------------------------------------

NARROW_FLOATS = sorted(
    (d for d in dtypes.float_dtypes if d.type.__module__.startswith("ml_dtypes")), key=str
)


@pytest.mark.parametrize("dt", NARROW_FLOATS, ids=str)
def test_issubdtype_narrow_floats(dt):
    for parent in (np.floating, np.inexact, np.number, np.generic, dt.type, dt):
        assert dtypes.issubdtype(dt, parent)
    for other in (np.integer, np.complexfloating, np.float32, np.bool_):
        assert not dtypes.issubdtype(dt, other)


def test_issubdtype_narrow_ints_and_standard():
    assert dtypes.issubdtype(int4, np.signedinteger)
    assert dtypes.issubdtype("uint2", np.unsignedinteger)
    assert not dtypes.issubdtype(int4, np.unsignedinteger)
    assert dtypes.issubdtype(np.int8, np.integer) and not dtypes.issubdtype(np.int8, np.floating)
    assert dtypes.issubdtype(np.float32, "float32") and dtypes.issubdtype(bool, np.bool_)
    assert dtypes.issubdtype(dtypes.prng_key, dtypes.extended)
    assert not dtypes.issubdtype(np.float32, dtypes.extended)


def test_isdtype():
    assert dtypes.isdtype(bfloat16, "real floating") and dtypes.isdtype(int4, "signed integer")
    assert dtypes.isdtype(np.uint8, ("bool", "integral"))
    assert not dtypes.isdtype(np.float32, "complex floating")
    assert dtypes.isdtype(np.float32, np.float32) and not dtypes.isdtype(bool, "numeric")
    with pytest.raises(ValueError, match="unknown kind 'floating'"):
        dtypes.isdtype(np.float32, "floating")


@pytest.mark.parametrize("dt", sorted(dtypes.float_dtypes, key=str), ids=str)
def test_finfo_every_float(dt):
    info = dtypes.finfo(dt)
    assert info.dtype == dt and info.bits == dtypes.itemsize_bits(dt)
    assert float(info.max) > 0 and float(info.eps) > 0


@pytest.mark.parametrize("dt", sorted(dtypes.integer_dtypes, key=str), ids=str)
def test_iinfo_every_integer(dt):
    info = dtypes.iinfo(dt)
    assert info.bits == dtypes.itemsize_bits(dt)
    assert info.min == (0 if dt in dtypes.uint_dtypes else -(2 ** (info.bits - 1)))


def test_finfo_known_values():
    assert float(dtypes.finfo(bfloat16).eps) == 2.0**-7
    assert float(dtypes.finfo(dtypes.float8_e4m3fn).max) == 448.0
    assert float(dtypes.finfo(dtypes.float8_e5m2).max) == 57344.0
    assert dtypes.iinfo(int4).min == -8 and dtypes.iinfo("uint4").max == 15


def test_itemsize_bits_and_short_names():
    assert dtypes.itemsize_bits(bool) == 8 and dtypes.itemsize_bits("complex128") == 128
    assert dtypes.itemsize_bits(dtypes.float4_e2m1fn) == 4
    with pytest.raises(ValueError, match="not a boolean or numeric"):
        dtypes.itemsize_bits(float0)
    names = [dtypes.short_dtype_name(d) for d in ("float32", bfloat16, "uint8", int4, "complex64")]
    assert names == ["f32", "bf16", "u8", "i4", "c64"]


def test_family_conversions():
    assert dtypes.to_inexact_dtype(np.int64) == D("float64")
    assert dtypes.to_inexact_dtype(int4) == D("float32")
    assert dtypes.to_inexact_dtype(bfloat16) == D(bfloat16)
    assert dtypes.to_floating_dtype(np.complex128) == D("float64")
    assert dtypes.to_complex_dtype(np.float64) == D("complex128")
    assert dtypes.to_complex_dtype(np.int8) == D("complex64")
    assert dtypes.to_numeric_dtype(bool) == D("int32")


def test_can_cast():
    assert dtypes.can_cast(np.int8, np.int16) and not dtypes.can_cast(np.float32, np.int32)
    assert dtypes.can_cast(np.float32, np.int32, casting="unsafe")


# -- promotion ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a,b,expected",
    [
        (np.int8, np.uint8, "int16"),
        (np.uint32, np.int32, "int64"),  # promote_types is not canonicalized
        (np.int64, np.uint64, "float64"),
        (bfloat16, np.float16, "float32"),
        (np.float16, float, "float16"),
        (np.uint8, int, "uint8"),
        (int, float, "float64"),  # a weak result is NumPy's dtype for the Python type
        (bool, int, "int64"),
        (np.int32, complex, "complex128"),
        (np.float32, np.complex64, "complex64"),
        (np.float64, np.complex64, "complex128"),
        (int4, int, "int4"),
        (dtypes.float8_e5m2, float, "float8_e5m2"),
    ],
)
def test_promote_types_pairs(a, b, expected):
    with enable_x64(True):
        assert promote_types(a, b) == D(expected)
        assert promote_types(b, a) == D(expected)


def test_promote_types_of_weak_types_is_64_bit_even_without_x64():
    assert promote_types(bool, int) == D("int64")
    assert promote_types(int, float) == D("float64")
    assert promote_types(np.int8, int) == D("int8")


def test_x32_lattice_keeps_uint32_int32_32_bit():
    assert promote_types(np.uint32, np.int32) == D("int32")
    assert result_type(np.uint32, np.int32) == D("int32")


@pytest.mark.parametrize("a,b", [(dtypes.float8_e4m3fn, bfloat16), (int4, np.int8),
                                 (dtypes.float8_e4m3fn, dtypes.float8_e5m2), ("uint4", int4)])
def test_narrow_types_do_not_promote(a, b):
    with pytest.raises(TypePromotionError, match="never promotes implicitly.*astype"):
        promote_types(a, b)


def test_strict_promotion():
    with numpy_dtype_promotion("strict"):
        with pytest.raises(TypePromotionError, match="strict"):
            result_type(np.int32, np.float32)
        assert result_type(np.float32, 1.0) == D("float32")
        assert result_type(np.int8, np.int8) == D("int8")


def test_result_type_weak_flags():
    assert result_type(1.0, np.int32, return_weak_type_flag=True) == (D("float32"), True)
    assert result_type(1, return_weak_type_flag=True) == (D("int32"), True)
    assert result_type(int, return_weak_type_flag=True) == (D("int32"), True)
    assert result_type(True, return_weak_type_flag=True) == (D(bool), False)
    assert result_type(1, 2.0, return_weak_type_flag=True) == (D("float32"), True)
    assert result_type(1, np.int8, return_weak_type_flag=True) == (D("int8"), False)
    assert result_type(2.0, bfloat16, return_weak_type_flag=True) == (D(bfloat16), False)
    assert result_type(None, return_weak_type_flag=True) == (D("float32"), False)


def test_result_type_reads_avals():
    weak_f16 = FakeTracer("float16", weak_type=True)
    assert result_type(weak_f16, return_weak_type_flag=True) == (D("float32"), True)
    assert result_type(weak_f16, np.int8, return_weak_type_flag=True) == (D("float32"), True)
    assert result_type(FakeTracer("int16"), 3) == D("int16")


def test_result_type_canonicalizes():
    assert result_type(np.zeros(2)) == D("float32")
    assert result_type(np.zeros(2, np.int64), np.float16, np.int8) == D("float16")
    assert result_type(np.zeros(2, np.uint64), np.int8) == D("int32")  # via uint32
    with enable_x64(True):
        assert result_type(np.zeros(2)) == D("float64")
        assert result_type(1.0, return_weak_type_flag=True) == (D("float64"), True)


def test_result_type_warns_for_explicit_64_bit_dtype():
    with pytest.warns(UserWarning, match="float64 was requested in result_type"):
        assert result_type("float64") == D("float32")


def test_result_type_errors():
    with pytest.raises(ValueError, match="at least one"):
        result_type()
    with pytest.raises(TypePromotionError, match="does not take part"):
        result_type(float0, np.float32)


def test_safe_to_cast():
    assert dtypes.safe_to_cast("int16", "float32") and not dtypes.safe_to_cast("float32", "int16")
    assert dtypes.safe_to_cast("float32", "complex64")
