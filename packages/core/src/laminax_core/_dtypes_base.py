"""The dtypes themselves: scalar types (ml_dtypes' narrow ones included), the dtype sets,
x64 canonicalization, a value's dtype and weak type, the type hierarchy (`issubdtype`, `finfo`
...) and the conversions to a family. Promotion is in `_promotion.py`; the public module is
`dtypes.py`, which re-exports both."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import ml_dtypes
import numpy as np

from laminax_core.config import enable_x64 as _enable_x64
from laminax_core.config import explicit_x64_dtypes as _explicit_x64_dtypes

__all__ = ["ExtendedDType", "PRNGKeyDType", 
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
    "python_scalar_dtypes",
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


class ExtendedDType:
    """Base class of extended dtype *instances* (JAX's `dtypes.ExtendedDType`): not NumPy
    dtypes. Each names its scalar class (`type`, below `extended`) and its physical layout: an
    array of shape `s` and this dtype is stored as `physical_dtype[*s, *key_shape]`."""

    type: type = extended
    name: str = "extended"
    itemsize: int = 0
    physical_dtype: np.dtype = np.dtype(np.uint32)
    key_shape: tuple[int, ...] = ()

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


class PRNGKeyDType(ExtendedDType):
    """The dtype of typed threefry2x32 PRNG keys, printed `key<fry>` (one instance: `key_fry`);
    each key is two uint32 words."""

    type = prng_key
    name = "key<fry>"
    itemsize = 8
    key_shape = (2,)
    impl_name = "threefry2x32"

    # `wrap(data) -> keys`, installed by laminax_core.random (which sits above dtypes)
    wrap: Any = None

    def zeros(self, shape):
        """Keys of shape `shape` whose data is all zeros (JAX's `zeros_like` of a key)."""
        return self.wrap(np.zeros((*shape, *self.key_shape), self.physical_dtype))

    def __eq__(self, other) -> bool:
        return isinstance(other, PRNGKeyDType)

    def __hash__(self) -> int:
        return hash(PRNGKeyDType)


key_fry = PRNGKeyDType()


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
    if isinstance(dtype, ExtendedDType):
        return dtype
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
    extended_dtype = x if isinstance(x, ExtendedDType) else getattr(x, "dtype", None)
    if isinstance(extended_dtype, ExtendedDType):
        return extended_dtype
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
    if isinstance(dtype, ExtendedDType) or isinstance(dtype, type) and issubclass(dtype, extended):
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
    if isinstance(x, ExtendedDType):
        return x.type
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    return np.dtype(x).type


@functools.lru_cache(maxsize=1024)
def _issubdtype_cached(a: Any, b: Any) -> bool:
    b_class = _scalar_class(b)
    a = a.type if isinstance(a, ExtendedDType) else a
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
