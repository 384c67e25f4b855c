"""Dtypes for laminax: ml_dtypes' narrow types, weak types, x64 canonicalization and promotion.

The public surface mirrors `jax.dtypes` (and the dtype helpers of `jax.numpy`), plus the helpers the
rest of laminax builds on. Three ideas carry it:

* **Canonicalization.** With `jax_enable_x64` off (the default) laminax has no 64-bit dtypes:
  `canonicalize_dtype` maps int64/uint64/float64/complex128 to their 32-bit counterparts.
* **Weak types.** A Python scalar (`1`, `2.0`, `1j`) has a dtype but no opinion about its width:
  it is *weakly typed*, and combining it with an array keeps the array's dtype
  (`result_type(1.0, bfloat16) == bfloat16`).
* **The promotion lattice.** `result_type` finds the least upper bound of its arguments on JAX's
  type promotion lattice (JEP 9407), not NumPy's value-based rules: it never silently widens to
  64 bits, and the 8/6/4-bit floats and 1/2/4-bit integers promote only to themselves.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import ml_dtypes
import numpy as np

from laminax_core.config import enable_x64 as _enable_x64
from laminax_core.config import explicit_x64_dtypes as _explicit_x64_dtypes
from laminax_core.config import numpy_dtype_promotion as _numpy_dtype_promotion

__all__ = [
    "TypePromotionError",
    "bfloat16",
    "bool_",
    "bool_dtypes",
    "can_cast",
    "canonicalize_dtype",
    "check_python_int",
    "array_dtypes",
    "check_and_canonicalize_user_dtype",
    "check_user_dtype_supported",
    "coerce_to_array",
    "complex_",
    "complex_dtypes",
    "default_complex_dtype",
    "default_float_dtype",
    "default_int_dtype",
    "default_uint_dtype",
    "dtype",
    "extended",
    "finfo",
    "float0",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float_",
    "float_dtypes",
    "iinfo",
    "inexact_dtypes",
    "int1",
    "int2",
    "int4",
    "int_",
    "int_dtypes",
    "integer_dtypes",
    "is_weakly_typed",
    "isdtype",
    "issubdtype",
    "itemsize_bits",
    "numeric_dtypes",
    "prng_key",
    "promote_types",
    "python_scalar_dtypes",
    "result_type",
    "safe_to_cast",
    "scalar_type_of",
    "short_dtype_name",
    "to_complex_dtype",
    "to_floating_dtype",
    "to_inexact_dtype",
    "to_numeric_dtype",
    "uint",
    "uint1",
    "uint2",
    "uint4",
    "uint_dtypes",
]

# -- scalar types ---------------------------------------------------------------------------------

bfloat16: type[np.generic] = ml_dtypes.bfloat16
float4_e2m1fn: type[np.generic] = ml_dtypes.float4_e2m1fn
float6_e2m3fn: type[np.generic] = ml_dtypes.float6_e2m3fn
float6_e3m2fn: type[np.generic] = ml_dtypes.float6_e3m2fn
float8_e3m4: type[np.generic] = ml_dtypes.float8_e3m4
float8_e4m3: type[np.generic] = ml_dtypes.float8_e4m3
float8_e4m3b11fnuz: type[np.generic] = ml_dtypes.float8_e4m3b11fnuz
float8_e4m3fn: type[np.generic] = ml_dtypes.float8_e4m3fn
float8_e4m3fnuz: type[np.generic] = ml_dtypes.float8_e4m3fnuz
float8_e5m2: type[np.generic] = ml_dtypes.float8_e5m2
float8_e5m2fnuz: type[np.generic] = ml_dtypes.float8_e5m2fnuz
float8_e8m0fnu: type[np.generic] = ml_dtypes.float8_e8m0fnu
int1: type[np.generic] = ml_dtypes.int1
uint1: type[np.generic] = ml_dtypes.uint1
int2: type[np.generic] = ml_dtypes.int2
uint2: type[np.generic] = ml_dtypes.uint2
int4: type[np.generic] = ml_dtypes.int4
uint4: type[np.generic] = ml_dtypes.uint4

# The 64-bit NumPy scalar types JAX names as the "default" ones (used as dtype arguments).
bool_ = np.bool_
int_ = np.int64
uint = np.uint64
float_ = np.float64
complex_ = np.complex128

float0: np.dtype = np.dtype([("float0", np.void, 0)])
"""The dtype of tangents of integer and boolean values: zero bytes per element."""


class extended(np.generic):  # noqa: N801 (JAX's name)
    """Abstract scalar class of laminax's extended dtypes (PRNG keys); never instantiated.

    `issubdtype(d, extended)` tells an extended dtype from a NumPy one.
    """


class prng_key(extended):  # noqa: N801 (JAX's name)
    """Abstract scalar class of typed PRNG key dtypes; `issubdtype(d, prng_key)` finds them."""


class TypePromotionError(ValueError):
    """Raised when dtypes have no implicit promotion path (JAX: `jax.dtypes.TypePromotionError`).

    Common causes: mixing 8/6/4-bit floats or 1/2/4-bit integers with other dtypes (they
    promote to nothing but themselves), or mixing different dtypes under
    ``jax_numpy_dtype_promotion='strict'``. Fix: cast explicitly, e.g. ``x.astype('float32')``.
    """


# -- dtype sets -----------------------------------------------------------------------------------

_float8_dtypes = tuple(
    np.dtype(t)
    for t in (
        float8_e3m4, float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz,
        float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
    )
)  # fmt: skip
_float6_dtypes = (np.dtype(float6_e2m3fn), np.dtype(float6_e3m2fn))
_float4_dtypes = (np.dtype(float4_e2m1fn),)
_narrow_float_dtypes = (*_float4_dtypes, *_float6_dtypes, *_float8_dtypes)
_custom_float_dtypes = (*_narrow_float_dtypes, np.dtype(bfloat16))
_signed_narrow = (np.dtype(int1), np.dtype(int2), np.dtype(int4))
_unsigned_narrow = (np.dtype(uint1), np.dtype(uint2), np.dtype(uint4))
_intn_dtypes = (*_signed_narrow, *_unsigned_narrow)

bool_dtypes: frozenset[np.dtype] = frozenset({np.dtype(bool)})
int_dtypes: frozenset[np.dtype] = frozenset(
    {*_signed_narrow, *map(np.dtype, ("int8", "int16", "int32", "int64"))}
)
uint_dtypes: frozenset[np.dtype] = frozenset(
    {*_unsigned_narrow, *map(np.dtype, ("uint8", "uint16", "uint32", "uint64"))}
)
integer_dtypes: frozenset[np.dtype] = int_dtypes | uint_dtypes
float_dtypes: frozenset[np.dtype] = frozenset(
    {*_custom_float_dtypes, *map(np.dtype, ("float16", "float32", "float64"))}
)
complex_dtypes: frozenset[np.dtype] = frozenset(map(np.dtype, ("complex64", "complex128")))
inexact_dtypes: frozenset[np.dtype] = float_dtypes | complex_dtypes
numeric_dtypes: frozenset[np.dtype] = integer_dtypes | inexact_dtypes

# Every dtype a laminax array may have (strings only as far as JAX allows them).
_valid_dtypes: frozenset[np.dtype] = frozenset(
    {float0, np.dtypes.StringDType(), *bool_dtypes, *numeric_dtypes}
)
array_dtypes: frozenset[np.dtype] = _valid_dtypes
"""Every dtype an array may hold: booleans, numbers, float0 and NumPy's StringDType."""
_custom_scalar_types = frozenset(d.type for d in (*_custom_float_dtypes, *_intn_dtypes))

_TO_32BIT = {
    np.dtype("int64"): np.dtype("int32"),
    np.dtype("uint64"): np.dtype("uint32"),
    np.dtype("float64"): np.dtype("float32"),
    np.dtype("complex128"): np.dtype("complex64"),
}

# -- defaults and canonicalization ----------------------------------------------------------------

_BOOL = np.dtype(bool)
_DEFAULTS = {
    # kind: (x64 off, x64 on)
    "b": (_BOOL, _BOOL),
    "i": (np.dtype("int32"), np.dtype("int64")),
    "u": (np.dtype("uint32"), np.dtype("uint64")),
    "f": (np.dtype("float32"), np.dtype("float64")),
    "c": (np.dtype("complex64"), np.dtype("complex128")),
}


def default_int_dtype() -> np.dtype:
    """The dtype of Python ints: int32, or int64 when `jax_enable_x64` is on.

    Example:
      >>> default_int_dtype()
      dtype('int32')
    """
    return _DEFAULTS["i"][_enable_x64.value]


def default_uint_dtype() -> np.dtype:
    """The default unsigned dtype: uint32, or uint64 when `jax_enable_x64` is on."""
    return _DEFAULTS["u"][_enable_x64.value]


def default_float_dtype() -> np.dtype:
    """The dtype of Python floats: float32, or float64 when `jax_enable_x64` is on.

    Example:
      >>> default_float_dtype()
      dtype('float32')
    """
    return _DEFAULTS["f"][_enable_x64.value]


def default_complex_dtype() -> np.dtype:
    """The dtype of Python complex numbers: complex64, or complex128 when x64 is on."""
    return _DEFAULTS["c"][_enable_x64.value]


_SCALAR_KIND = {bool: "b", int: "i", float: "f", complex: "c"}


def check_python_int(value: Any) -> None:
    """Raises OverflowError if the Python int `value` does not fit the dtype of weakly typed
    Python ints (int32, or int64 with x64 on), as JAX does wherever a Python int becomes an
    operand: wrapping it silently would give a wrong answer. Other values pass."""
    if type(value) is not int:
        return
    dtype = _DEFAULTS["i"][_enable_x64.value]
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise OverflowError(
            f"Python int {value} too large to convert to {dtype.name}, the dtype of Python "
            f"ints (jax_enable_x64 is {'on' if _enable_x64.value else 'off'}). Pass it as an "
            "array of an explicit dtype (for example np.uint32 or np.float32), or enable x64."
        )


class _PythonScalarDtypes(Mapping):
    """Python scalar type -> its default dtype in the current x64 mode (a live mapping)."""

    def __getitem__(self, typ: type) -> np.dtype:
        return _DEFAULTS[_SCALAR_KIND[typ]][_enable_x64.value]

    def __iter__(self) -> Iterator[type]:
        return iter(_SCALAR_KIND)

    def __len__(self) -> int:
        return len(_SCALAR_KIND)

    def __repr__(self) -> str:
        return repr(dict(self))


python_scalar_dtypes: Mapping[type, np.dtype] = _PythonScalarDtypes()
"""`bool`, `int`, `float`, `complex` -> their default dtypes, following `jax_enable_x64`."""

# (x64 enabled, dtype-like) -> canonical np.dtype. The x64 state is part of the key, so flipping
# `jax_enable_x64` (globally or in a thread) never reads a stale entry.
_canonical_cache: dict[tuple[bool, Any], np.dtype] = {}


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """The dtype laminax uses for `dtype`: 64-bit dtypes become 32-bit unless x64 is on.

    Args:
      dtype: anything `numpy.dtype` accepts (a dtype, scalar type or name).

    Returns:
      The canonical `numpy.dtype`.

    Raises:
      TypeError: `dtype` is not a dtype.

    Example:
      >>> canonicalize_dtype("float64")
      dtype('float32')
      >>> canonicalize_dtype(bfloat16)
      dtype(bfloat16)
    """
    x64 = _enable_x64.value
    try:
        return _canonical_cache[x64, dtype]
    except (KeyError, TypeError):  # TypeError: unhashable dtype-like
        pass
    try:
        np_dtype = np.dtype(dtype)
    except TypeError as err:
        raise TypeError(f"canonicalize_dtype: {dtype!r} is not a dtype.") from err
    result = np_dtype if x64 else _TO_32BIT.get(np_dtype, np_dtype)
    try:
        _canonical_cache[x64, dtype] = result
    except TypeError:
        pass
    return result


def _truncate_explicit_x64(np_dtype: np.dtype, fun_name: str) -> np.dtype:
    """Canonicalizes a dtype the user asked for; warns or raises per jax_explicit_x64_dtypes."""
    mode = _explicit_x64_dtypes.value
    if mode == "allow" or _enable_x64.value:
        return np_dtype
    canonical = _TO_32BIT.get(np_dtype, np_dtype)
    if canonical == np_dtype:
        return np_dtype
    where = f" in {fun_name}" if fun_name else ""
    if mode == "error":
        raise ValueError(
            f"The dtype {np_dtype} was requested{where}, but 64-bit dtypes are disabled. Turn "
            "them on with config.update('jax_enable_x64', True) (or JAX_ENABLE_X64=1), or set "
            "jax_explicit_x64_dtypes to 'allow' or 'warn'."
        )
    warnings.warn(
        f"The dtype {np_dtype} was requested{where}, but 64-bit dtypes are disabled, so "
        f"{canonical} is used instead. For 64-bit dtypes set the jax_enable_x64 configuration "
        "option (config.update('jax_enable_x64', True)) or the JAX_ENABLE_X64 environment "
        "variable; see https://github.com/jax-ml/jax#current-gotchas.",
        UserWarning,
        stacklevel=4,
    )
    return canonical


# -- dtype of a value -----------------------------------------------------------------------------


def _invalid_dtype_error(x: Any, np_dtype: np.dtype) -> TypeError:
    return TypeError(
        f"{x!r} has dtype {np_dtype}, which laminax arrays cannot hold; they hold booleans, "
        "numbers (including bfloat16, float8 and int4) and strings. Convert it first, e.g. "
        "np.asarray(x, np.float32)."
    )


def dtype(x: Any, *, canonicalize: bool = False) -> np.dtype:
    """The dtype of a value, a dtype-like, or a Python scalar type.

    Python scalars and their types (`1.0`, `float`) give their default dtype (float32 unless
    x64 is on); anything with a `.dtype` gives that dtype; NumPy dtype-likes give
    `numpy.dtype(x)`.

    Args:
      x: a value, a dtype, a scalar type or a dtype name.
      canonicalize: also apply `canonicalize_dtype` (64-bit -> 32-bit when x64 is off).

    Returns:
      A `numpy.dtype`.

    Raises:
      TypeError: `x` has no dtype laminax supports (strings of type `U`, objects, lists).
      ValueError: `x` is None.

    Example:
      >>> dtype(1.0)
      dtype('float32')
      >>> dtype(np.zeros(2))
      dtype('float64')
      >>> dtype(np.zeros(2), canonicalize=True)
      dtype('float32')
    """
    if x is None:
        raise ValueError("dtype: got None; pass a value, a dtype or a scalar type.")
    typ = type(x)
    if typ is type:
        if x in _SCALAR_KIND:
            return _DEFAULTS[_SCALAR_KIND[x]][_enable_x64.value]
    elif typ in _SCALAR_KIND:
        return _DEFAULTS[_SCALAR_KIND[typ]][_enable_x64.value]
    np_dtype = _raw_dtype(x)
    if np_dtype not in _valid_dtypes:
        raise _invalid_dtype_error(x, np_dtype)
    return canonicalize_dtype(np_dtype) if canonicalize else np_dtype


def _raw_dtype(x: Any) -> np.dtype:
    """`x`'s NumPy dtype without any laminax rule (Python scalars excluded by the caller)."""
    if isinstance(x, np.dtype):
        return x
    if isinstance(x, (str, type)):
        try:
            return np.dtype(x)
        except TypeError as err:
            raise TypeError(f"dtype: {x!r} is not a dtype or a scalar type.") from err
    attr = getattr(x, "dtype", None)
    if isinstance(attr, np.dtype):
        return attr
    if isinstance(x, (list, tuple)):
        raise TypeError(
            f"dtype: cannot take the dtype of a {type(x).__name__}; convert it first with "
            "np.asarray(x) or jnp.asarray(x)."
        )
    try:
        return np.result_type(x)
    except TypeError as err:
        raise TypeError(f"dtype: cannot determine the dtype of {x!r}.") from err


_WEAK_SCALAR_TYPES = (int, float, complex)


def is_weakly_typed(x: Any) -> bool:
    """Whether `x` is weakly typed: a Python int/float/complex, or a value whose aval is weak.

    Booleans are never weak. Objects with an `aval` report `aval.weak_type`; other objects
    report their own `weak_type` attribute.

    Example:
      >>> is_weakly_typed(1.0), is_weakly_typed(True), is_weakly_typed(np.float32(1))
      (True, False, False)
    """
    typ = type(x)
    if typ in _WEAK_SCALAR_TYPES:
        return True
    aval = getattr(x, "aval", None)
    if aval is not None:
        return bool(getattr(aval, "weak_type", False))
    return bool(getattr(x, "weak_type", False))


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (`bool`, `int`, `float`, `complex`) that matches `x`'s dtype.

    Example:
      >>> scalar_type_of(np.zeros(2, bfloat16))
      <class 'float'>
    """
    np_dtype = dtype(x)
    for typ, kind in (
        (bool, bool_dtypes), (int, integer_dtypes), (float, float_dtypes), (complex, complex_dtypes)
    ):  # fmt: skip
        if np_dtype in kind:
            return typ
    raise TypeError(f"scalar_type_of: {x!r} (dtype {np_dtype}) has no Python scalar type.")


def coerce_to_array(x: Any, dtype: Any = None) -> np.ndarray:
    """`x` as a NumPy array; Python scalars and lists get laminax's canonical dtype.

    Unlike `np.asarray`, `coerce_to_array(1.5)` is float32 (not float64) when x64 is off.

    Args:
      x: a Python scalar, list, NumPy scalar or array.
      dtype: the dtype to use; by default the canonical dtype of `x`.

    Returns:
      A `numpy.ndarray`.

    Raises:
      OverflowError: a Python int does not fit the default integer dtype.

    Example:
      >>> coerce_to_array(1.5).dtype, coerce_to_array([1, 2]).dtype
      (dtype('float32'), dtype('int32'))
    """
    if dtype is not None:
        return np.asarray(x, dtype)
    typ = type(x)
    if typ in _SCALAR_KIND:
        target = _DEFAULTS[_SCALAR_KIND[typ]][_enable_x64.value]
        if typ is int:
            info = np.iinfo(target)
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python int {x} does not fit in {target}.")
        return np.asarray(x, target)
    array = np.asarray(x)
    if isinstance(x, (list, tuple)):
        return array.astype(canonicalize_dtype(array.dtype), copy=False)
    return array


# -- checking user dtypes -------------------------------------------------------------------------


def check_and_canonicalize_user_dtype(dtype: Any, fun_name: str | None = None) -> np.dtype:
    """Checks a dtype a user passed to `fun_name` and returns the dtype laminax will use.

    Python scalar types give their default dtype. A 64-bit dtype with x64 off is truncated to
    32 bits with a UserWarning (or raises ValueError, per ``jax_explicit_x64_dtypes``).

    Raises:
      TypeError: laminax arrays cannot hold this dtype.
      ValueError: `dtype` is None.

    Example:
      >>> check_and_canonicalize_user_dtype(float, "zeros")
      dtype('float32')
    """
    where = f" in {fun_name}" if fun_name else ""
    if dtype is None:
        raise ValueError(f"A dtype is required{where}; got None.")
    if isinstance(dtype, type) and issubclass(dtype, extended):
        return dtype
    if isinstance(dtype, type) and dtype in _SCALAR_KIND:
        return _DEFAULTS[_SCALAR_KIND[dtype]][_enable_x64.value]
    if hasattr(dtype, "dtype") and not isinstance(dtype, (type, np.dtype)):
        raise TypeError(
            f"Got an array as a dtype{where}; pass its dtype instead (dtype=x.dtype)."
        )
    try:
        np_dtype = np.dtype(dtype)
    except TypeError as err:
        raise TypeError(f"{dtype!r} is not a dtype{where}.") from err
    if np_dtype not in _valid_dtypes:
        raise TypeError(
            f"laminax supports boolean, numeric and string dtypes, got {np_dtype}{where}. "
            "Use one of them, e.g. np.float32."
        )
    return _truncate_explicit_x64(np_dtype, fun_name or "")


def check_user_dtype_supported(dtype: Any, fun_name: str | None = None) -> np.dtype | None:
    """Like `check_and_canonicalize_user_dtype`, but None (meaning "the default") passes through.

    Example:
      >>> check_user_dtype_supported(None, "zeros") is None
      True
    """
    if dtype is None:
        return None
    return check_and_canonicalize_user_dtype(dtype, fun_name)


# -- type hierarchy -------------------------------------------------------------------------------

_FLOAT_ANCESTORS = (np.floating, np.inexact, np.number, np.generic)
_SIGNED_ANCESTORS = (np.signedinteger, np.integer, np.number, np.generic)
_UNSIGNED_ANCESTORS = (np.unsignedinteger, np.integer, np.number, np.generic)


def _scalar_class(x: Any) -> type:
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    return np.dtype(x).type


@functools.lru_cache(maxsize=1024)
def _issubdtype_cached(a: Any, b: Any) -> bool:
    b_class = _scalar_class(b)
    if isinstance(a, type) and issubclass(a, extended):
        return issubclass(a, b_class)
    if issubclass(b_class, extended):
        return False
    a_class = _scalar_class(a)
    custom = {_custom_float_dtypes: _FLOAT_ANCESTORS, _signed_narrow: _SIGNED_ANCESTORS,
              _unsigned_narrow: _UNSIGNED_ANCESTORS}  # fmt: skip
    for group, ancestors in custom.items():
        if np.dtype(a_class) in group:
            return b_class is a_class or b_class in ancestors
    return bool(np.issubdtype(a_class, b_class))


def issubdtype(a: Any, b: Any) -> bool:
    """Whether dtype `a` is `b` or below it in NumPy's type hierarchy, laminax's dtypes included.

    Unlike `numpy.issubdtype`, bfloat16 and the float8 types count as `np.floating`, and the
    narrow integers as `np.signedinteger` / `np.unsignedinteger`.

    Example:
      >>> issubdtype(bfloat16, np.floating), issubdtype(int4, np.signedinteger)
      (True, True)
      >>> issubdtype(np.float32, np.integer)
      False
    """
    try:
        return _issubdtype_cached(a, b)
    except TypeError:  # unhashable dtype-like, such as an object with a .dtype
        return _issubdtype_cached(np.dtype(a), np.dtype(b))


_DTYPE_KINDS: dict[str, frozenset[np.dtype]] = {
    "bool": bool_dtypes,
    "signed integer": int_dtypes,
    "unsigned integer": uint_dtypes,
    "integral": integer_dtypes,
    "real floating": float_dtypes,
    "complex floating": complex_dtypes,
    "numeric": numeric_dtypes,
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether `dtype` is of `kind`: a name from the array API, a dtype, or a tuple of those.

    Kinds: 'bool', 'signed integer', 'unsigned integer', 'integral', 'real floating',
    'complex floating', 'numeric' (laminax's narrow types included).

    Example:
      >>> isdtype(bfloat16, "real floating"), isdtype(np.int8, ("bool", np.int8))
      (True, True)
    """
    the_dtype = np.dtype(dtype)
    for entry in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(entry, str) and entry in _DTYPE_KINDS:
            if the_dtype in _DTYPE_KINDS[entry]:
                return True
            continue
        try:
            entry_dtype = np.dtype(entry)
        except TypeError as err:
            if isinstance(entry, str):
                raise ValueError(
                    f"isdtype: unknown kind {entry!r}; use one of {list(_DTYPE_KINDS)} or a dtype."
                ) from err
            raise TypeError(f"isdtype: kind must be a string, a dtype or a tuple, got {entry!r}.")
        if the_dtype == entry_dtype:
            return True
    return False


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """`numpy.can_cast` (laminax's narrow dtypes included through ml_dtypes' casts).

    Example:
      >>> can_cast(np.int8, np.int32), can_cast(np.float32, np.int32)
      (True, False)
    """
    return bool(np.can_cast(from_, to, casting=casting))


class finfo(ml_dtypes.finfo):  # noqa: N801 (NumPy's name)
    """Machine limits of a floating dtype, bfloat16, float8, float6 and float4 included.

    `numpy.finfo`'s fields: bits, eps, epsneg, max, min, tiny, smallest_normal,
    smallest_subnormal, resolution, precision, nexp, nmant, maxexp, minexp, machep, negep.

    Example:
      >>> float(finfo(bfloat16).eps), float(finfo(float8_e4m3fn).max)
      (0.0078125, 448.0)
    """


class iinfo(ml_dtypes.iinfo):  # noqa: N801 (NumPy's name)
    """Machine limits (bits, min, max) of an integer dtype, int1/int2/int4 included.

    Example:
      >>> iinfo(int4).min, iinfo(uint4).max
      (-8, 15)
    """


def itemsize_bits(dtype: Any) -> int:
    """Bits per element of `dtype` (4 for int4, 8 for bool, 64 for complex64).

    Example:
      >>> itemsize_bits(int4), itemsize_bits(np.complex64)
      (4, 64)
    """
    if dtype is None:
        raise ValueError("itemsize_bits: dtype is None.")
    np_dtype = np.dtype(dtype)
    if np_dtype == _BOOL:
        return 8
    if np_dtype in integer_dtypes:
        return int(iinfo(np_dtype).bits)
    if np_dtype in float_dtypes:
        return int(finfo(np_dtype).bits)
    if np_dtype in complex_dtypes:
        return 2 * int(finfo(np_dtype).bits)
    raise ValueError(f"itemsize_bits: {np_dtype} is not a boolean or numeric dtype.")


@functools.lru_cache(maxsize=256)
def short_dtype_name(dtype: Any) -> str:
    """The short name jaxprs print: f32, bf16, i8, u4, c64, bool.

    Example:
      >>> short_dtype_name(np.float32), short_dtype_name(bfloat16)
      ('f32', 'bf16')
    """
    name = np.dtype(dtype).name
    for long, short in (("float", "f"), ("uint", "u"), ("int", "i"), ("complex", "c")):
        name = name.replace(long, short)
    return name


# -- conversions to a family ----------------------------------------------------------------------

_TO_INEXACT = {
    np.dtype(k): np.dtype(v)
    for k, v in [
        ("bool", "float32"), ("uint4", "float32"), ("int4", "float32"),
        ("uint8", "float32"), ("int8", "float32"), ("uint16", "float32"), ("int16", "float32"),
        ("uint32", "float32"), ("int32", "float32"), ("uint64", "float64"), ("int64", "float64"),
    ]
}  # fmt: skip


def to_numeric_dtype(dtype: Any) -> np.dtype:
    """`dtype`, with bool replaced by int32."""
    np_dtype = np.dtype(dtype)
    return np.dtype("int32") if np_dtype == _BOOL else np_dtype


def to_inexact_dtype(dtype: Any) -> np.dtype:
    """`dtype` if floating or complex, else the float that holds it (int64 -> float64, else f32)."""
    np_dtype = np.dtype(dtype)
    return _TO_INEXACT.get(np_dtype, np_dtype)


def to_floating_dtype(dtype: Any) -> np.dtype:
    """The real floating dtype matching `dtype` (complex64 -> float32, int8 -> float32)."""
    return np.dtype(finfo(to_inexact_dtype(dtype)).dtype)


def to_complex_dtype(dtype: Any) -> np.dtype:
    """The complex dtype matching `dtype`: complex128 for 64-bit inputs, else complex64."""
    inexact = to_inexact_dtype(dtype)
    if inexact in (np.dtype("float64"), np.dtype("complex128")):
        return np.dtype("complex128")
    return np.dtype("complex64")


# -- the promotion lattice ------------------------------------------------------------------------
# Nodes are names: a dtype's `.name` for strongly typed values, and "int*", "float*", "complex*"
# for weakly typed Python scalars (booleans are never weak). Each node lists the nodes directly
# above it; promotion is the least upper bound.

_I, _F, _C = "int*", "float*", "complex*"
_WEAK_NODE_OF_TYPE = {int: _I, float: _F, complex: _C}
_WEAK_NODE_KIND = {_I: "i", _F: "f", _C: "c"}
_WEAK_NODE_NUMPY_DTYPE = {_I: np.dtype(int), _F: np.dtype(float), _C: np.dtype(complex)}
_NARROW_FLOAT_NAMES = [d.name for d in _narrow_float_dtypes]
_INTN_NAMES = [d.name for d in _intn_dtypes]
_ALL_STRONG = [
    "bool", *[d.name for d in _unsigned_narrow], "uint8", "uint16", "uint32", "uint64",
    *[d.name for d in _signed_narrow], "int8", "int16", "int32", "int64",
    *_NARROW_FLOAT_NAMES, "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
]  # fmt: skip


def _standard_lattice(x64: bool) -> dict[str, list[str]]:
    lattice = {name: [] for name in _ALL_STRONG}
    lattice.update({
        "bool": [_I],
        _I: ["uint8", "int8", *_INTN_NAMES],
        "uint8": ["int16", "uint16"], "uint16": ["int32", "uint32"],
        # Without x64, uint32 meets int32 at int32 rather than creating an int64.
        "uint32": ["int64", "uint64"] if x64 else ["int32", "uint64"],
        "uint64": [_F],
        "int8": ["int16"], "int16": ["int32"], "int32": ["int64"], "int64": [_F],
        _F: [*_NARROW_FLOAT_NAMES, "bfloat16", "float16", _C],
        "bfloat16": ["float32"], "float16": ["float32"], "float32": ["float64", "complex64"],
        "float64": ["complex128"],
        _C: ["complex64"], "complex64": ["complex128"],
    })  # fmt: skip
    return lattice


def _strict_lattice() -> dict[str, list[str]]:
    lattice = {name: [] for name in _ALL_STRONG}
    ints = [n for n in _ALL_STRONG if np.dtype(n) in integer_dtypes]
    floats = [n for n in _ALL_STRONG if np.dtype(n) in float_dtypes]
    lattice[_I] = [_F, *ints]
    lattice[_F] = [_C, *floats]
    lattice[_C] = ["complex64", "complex128"]
    return lattice


def _upper_bounds(lattice: dict[str, list[str]]) -> dict[str, frozenset[str]]:
    """Each node's set of upper bounds (itself included): the lattice's transitive closure."""
    bounds: dict[str, frozenset[str]] = {}

    def visit(node: str) -> frozenset[str]:
        if node not in bounds:
            bounds[node] = frozenset({node}).union(*(visit(up) for up in lattice[node]))
        return bounds[node]

    for node in lattice:
        visit(node)
    return bounds


_UPPER_BOUNDS = {
    ("standard", False): _upper_bounds(_standard_lattice(x64=False)),
    ("standard", True): _upper_bounds(_standard_lattice(x64=True)),
    ("strict", False): _upper_bounds(_strict_lattice()),
    ("strict", True): _upper_bounds(_strict_lattice()),
}


def _no_path_message(nodes: tuple[str, ...], mode: str) -> str:
    shown = tuple(n if n not in _WEAK_NODE_KIND else f"weak {n[:-1]}" for n in nodes)
    head = f"The dtypes {shown} have no implicit promotion path"
    if mode == "strict":
        return (
            f"{head} under jax_numpy_dtype_promotion='strict'. Cast the inputs to one dtype, "
            "e.g. x.astype('float32'), or set jax_numpy_dtype_promotion='standard'."
        )
    narrow = {**dict.fromkeys(_NARROW_FLOAT_NAMES, "float"), **dict.fromkeys(_INTN_NAMES, "int")}
    for node in nodes:
        if node in narrow:
            target = "float32" if narrow[node] == "float" else "int32"
            return (
                f"{head}: {node} never promotes implicitly to another dtype, so that narrow "
                f"values are not widened by accident. Cast explicitly, e.g. "
                f"x.astype('{target}')."
            )
    return f"{head}. Cast the inputs to one dtype explicitly, e.g. x.astype('float32')."


@functools.lru_cache(maxsize=1024)
def _least_upper_bound(mode: str, x64: bool, nodes: frozenset[str]) -> str:
    table = _UPPER_BOUNDS[mode, x64]
    for node in nodes:
        if node not in table:
            raise TypePromotionError(
                f"The dtype {node} does not take part in type promotion; use a boolean or "
                "numeric dtype."
            )
    common = frozenset.intersection(*(table[n] for n in nodes))
    least = (common & nodes) or {c for c in common if common <= table[c]}
    if len(least) != 1:
        raise TypePromotionError(_no_path_message(tuple(sorted(nodes)), mode))
    return next(iter(least))


def _node_dtype(node: str) -> np.dtype:
    if node in _WEAK_NODE_KIND:
        return _DEFAULTS[_WEAK_NODE_KIND[node]][_enable_x64.value]
    return np.dtype(node)


def _family_kind(np_dtype: np.dtype) -> str:
    if np_dtype in float_dtypes:
        return "f"
    if np_dtype in complex_dtypes:
        return "c"
    if np_dtype in uint_dtypes:
        return "u"
    return "i" if np_dtype in int_dtypes else "b"


def _weak_node(np_dtype: np.dtype) -> str:
    """The weak lattice node for a weakly typed value of `np_dtype` (bool stays strong)."""
    if np_dtype == _BOOL:
        return "bool"
    kind = _family_kind(np_dtype)
    return {"f": _F, "c": _C}.get(kind, _I)


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype two operands of dtypes `a` and `b` promote to, on JAX's lattice.

    The Python types `int`, `float` and `complex` stand for weakly typed scalars and never widen
    the other operand. The result is not canonicalized (see `result_type` for that): when both
    operands are weak the result is NumPy's dtype for the Python type (`int` -> int64).

    Raises:
      TypePromotionError: no implicit promotion exists (e.g. float8 with bfloat16).

    Example:
      >>> promote_types(np.uint8, np.int8), promote_types(np.float16, float)
      (dtype('int16'), dtype('float16'))
      >>> promote_types(bfloat16, np.float16)
      dtype('float32')
    """
    nodes = frozenset(_promote_node(a) for a in (a, b))
    lub = _least_upper_bound(_numpy_dtype_promotion.value, _enable_x64.value, nodes)
    # As in JAX (and NumPy), a weak result is the 64-bit dtype of its Python type, whatever the
    # x64 mode: promote_types(int, bool) is int64.
    return _WEAK_NODE_NUMPY_DTYPE.get(lub) or np.dtype(lub)


def _promote_node(x: Any) -> str:
    for typ, node in _WEAK_NODE_OF_TYPE.items():
        if x is typ:
            return node
    return np.dtype(x).name


def _dtype_and_weak_type(x: Any) -> tuple[np.dtype, bool]:
    """`result_type`'s view of one argument: its canonical dtype and whether it is weak."""
    typ = type(x)
    if typ in _WEAK_SCALAR_TYPES:
        return _DEFAULTS[_SCALAR_KIND[typ]][_enable_x64.value], True
    if isinstance(x, np.dtype):  # a dtype the user named: 64-bit ones warn when x64 is off
        if x not in _valid_dtypes:
            raise _invalid_dtype_error(x, x)
        return (_truncate_explicit_x64(x, "result_type") if x in _TO_32BIT else x), False
    if typ is np.ndarray or isinstance(x, np.generic):  # NumPy values are never weak
        if x.dtype not in _valid_dtypes:
            raise _invalid_dtype_error(x, x.dtype)
        return canonicalize_dtype(x.dtype), False
    if typ is type and x in _SCALAR_KIND:
        return _DEFAULTS[_SCALAR_KIND[x]][_enable_x64.value], x is not bool
    if typ is bool:
        return _BOOL, False
    aval = getattr(x, "aval", None)
    if aval is not None:  # laminax arrays and tracers: their dtype is already what they hold
        return aval.dtype, bool(aval.weak_type)
    np_dtype = _raw_dtype(x)
    if np_dtype not in _valid_dtypes:
        raise _invalid_dtype_error(x, np_dtype)
    if isinstance(x, (str, type)):  # a dtype the user asked for by name
        np_dtype = _truncate_explicit_x64(np_dtype, "result_type")
    else:
        np_dtype = canonicalize_dtype(np_dtype)
    return np_dtype, is_weakly_typed(x)


_NODE_OF_DTYPE = {np.dtype(name): name for name in _ALL_STRONG}


def _strong_node(np_dtype: np.dtype) -> str:
    # A dict lookup: `np.dtype.name` is computed in Python by NumPy and is slow.
    return _NODE_OF_DTYPE.get(np_dtype) or np_dtype.name


@functools.lru_cache(maxsize=4096)
def _promote(
    mode: str, x64: bool, dtypes: tuple[np.dtype, ...], weak_types: tuple[bool, ...]
) -> tuple[np.dtype | str, bool]:
    """The promoted dtype (or the lattice node to turn into one) and whether it is weak."""
    if len(dtypes) == 1:
        return dtypes[0], weak_types[0]
    if len(set(dtypes)) == 1 and not all(weak_types):
        return dtypes[0], False
    if all(weak_types) and mode != "strict":
        # Promote the dtypes as if strong, then mark the result weak.
        return _least_upper_bound(mode, x64, frozenset(map(_strong_node, dtypes))), True
    nodes = frozenset(
        _weak_node(d) if w else _strong_node(d) for d, w in zip(dtypes, weak_types, strict=True)
    )
    lub = _least_upper_bound(mode, x64, nodes)
    return lub, lub in _WEAK_NODE_KIND


def _lattice_result_type(args: tuple[Any, ...]) -> tuple[np.dtype, bool]:
    dtypes, weak_types = zip(*map(_dtype_and_weak_type, args), strict=True)
    out, weak = _promote(_numpy_dtype_promotion.value, _enable_x64.value, dtypes, weak_types)
    out_dtype = _explicit_node_dtype(out) if isinstance(out, str) else out
    return out_dtype, weak and out_dtype != _BOOL


def _explicit_node_dtype(node: str) -> np.dtype:
    if node in _WEAK_NODE_KIND:
        return _node_dtype(node)
    np_dtype = np.dtype(node)
    return _truncate_explicit_x64(np_dtype, "result_type") if np_dtype in _TO_32BIT else np_dtype


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype an operation on `args` computes in, by JAX's promotion rules (canonicalized).

    Args:
      *args: values (arrays, tracers, Python or NumPy scalars), dtypes, scalar types or dtype
        names; None means the default float dtype. Python scalars and the types `int`,
        `float`, `complex` are weakly typed.
      return_weak_type_flag: also return whether the result is weakly typed.

    Returns:
      A `numpy.dtype`, or `(dtype, weak_type)` with `return_weak_type_flag=True`.

    Raises:
      TypePromotionError: the dtypes have no implicit promotion path.
      ValueError: no arguments.

    Example:
      >>> result_type(np.int8, np.uint8)
      dtype('int16')
      >>> result_type(1.0, np.int32, return_weak_type_flag=True)
      (dtype('float32'), True)
      >>> result_type(2, bfloat16)
      dtype(bfloat16)
    """
    if not args:
        raise ValueError("result_type: pass at least one array, value or dtype.")
    args = tuple(default_float_dtype() if arg is None else arg for arg in args)
    out_dtype, weak = _lattice_result_type(args)
    if weak:
        out_dtype = _DEFAULTS[_family_kind(out_dtype)][_enable_x64.value]
    return (out_dtype, weak) if return_weak_type_flag else out_dtype


def safe_to_cast(input_dtype_or_value: Any, output_dtype_or_value: Any) -> bool:
    """Whether promoting the input with the output's dtype gives the output's dtype.

    Example:
      >>> safe_to_cast("int16", "float32"), safe_to_cast("float32", "int16")
      (True, False)
    """
    input_dtype = dtype(input_dtype_or_value, canonicalize=True)
    output_dtype = dtype(output_dtype_or_value, canonicalize=True)
    if input_dtype == output_dtype:
        return True
    return result_type(input_dtype_or_value, output_dtype) == output_dtype
