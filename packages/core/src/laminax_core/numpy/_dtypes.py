"""The dtype objects of `jnp` (`jnp.float32`, `jnp.int8`, `jnp.bfloat16`, ...), usable both as
dtypes (`x.astype(jnp.float32)`, `np.dtype(jnp.float32)`) and as constructors
(`jnp.float32(3)` is a 0-d float32 array), plus `jnp.ndarray` for isinstance checks."""

from __future__ import annotations

import numpy as np

from laminax_core import _trace, dtypes
from laminax_core._avals import pytype_aval_mappings
from laminax_core.numpy._creation import asarray

__all__ = ["SCALAR_TYPES", "ndarray"]


class _ScalarMeta(type):
    """Metaclass of the scalar types: compares and hashes like the NumPy scalar type, calling
    one converts its argument to an array of that dtype."""

    dtype: np.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other) -> bool:
        return cls is other or other == cls.dtype.type

    def __ne__(cls, other) -> bool:
        return not cls == other

    def __call__(cls, x):
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, cls.dtype.type)


def _scalar_type(name: str, np_type) -> _ScalarMeta:
    doc = (f"The {np.dtype(np_type).name} scalar type, usable as a dtype and as a constructor.\n\n"
           f"Calling it converts a value to an array of dtype {np.dtype(np_type).name}.\n\n"
           f"Example:\n  >>> {name}(1).dtype\n  dtype('{np.dtype(np_type).name}')\n")
    return _ScalarMeta(name, (object,), {"dtype": np.dtype(np_type), "__doc__": doc,
                                         "__module__": "laminax_core.numpy"})


_NAMES = {
    "bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "complex64": np.complex64, "complex128": np.complex128, "bfloat16": dtypes.bfloat16,
    "int2": dtypes.int2, "int4": dtypes.int4, "uint2": dtypes.uint2, "uint4": dtypes.uint4,
    "float4_e2m1fn": dtypes.float4_e2m1fn, "float8_e3m4": dtypes.float8_e3m4,
    "float8_e4m3": dtypes.float8_e4m3, "float8_e4m3b11fnuz": dtypes.float8_e4m3b11fnuz,
    "float8_e4m3fn": dtypes.float8_e4m3fn, "float8_e4m3fnuz": dtypes.float8_e4m3fnuz,
    "float8_e5m2": dtypes.float8_e5m2, "float8_e5m2fnuz": dtypes.float8_e5m2fnuz,
    "float8_e8m0fnu": dtypes.float8_e8m0fnu, "float6_e2m3fn": dtypes.float6_e2m3fn,
    "float6_e3m2fn": dtypes.float6_e3m2fn, "int1": dtypes.int1, "uint1": dtypes.uint1,
}  # fmt: skip

# name -> scalar type; aliases (`bool_`, `int_`, `single` ...) share the object of their dtype
SCALAR_TYPES: dict[str, _ScalarMeta] = {n: _scalar_type(n, t) for n, t in _NAMES.items()}
_ALIASES = {
    "bool_": "bool", "int_": "int64", "uint": "uint64", "float_": "float64",
    "complex_": "complex128", "single": "float32", "double": "float64", "csingle": "complex64",
    "cdouble": "complex128",
}
SCALAR_TYPES.update({alias: SCALAR_TYPES[name] for alias, name in _ALIASES.items()})


class _ArrayMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        if isinstance(instance, (np.ndarray, _trace.Tracer)):
            return True
        if isinstance(instance, (np.generic, bool, int, float, complex)):
            return False
        return any(base in pytype_aval_mappings for base in type(instance).__mro__)


class ndarray(metaclass=_ArrayMeta):  # noqa: N801 (JAX's name)
    """The array type for `isinstance` checks: true for NumPy arrays (core's eager values),
    tracers, and the array types the layers above register.

    Unlike `jax.Array`, it cannot be instantiated; create arrays with `jnp.array`.

    Example:
      >>> isinstance(np.zeros(2), ndarray), isinstance(1.0, ndarray)
      (True, False)
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("jnp.ndarray cannot be instantiated; use jnp.array or jnp.zeros.")
