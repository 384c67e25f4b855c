"""laminax's `numpy`: NumPy's API with JAX's semantics, written as compositions of lax.

Arrays are immutable (update them with `x.at[idx].set(v)`), Python scalars are weakly typed (they
do not upcast arrays), and every function works alike on NumPy arrays (core's eager values),
tracers, and the device arrays of the layers above. Modules by family: `_creation`, `_ufuncs`,
`_logic`, `_selection`, `_reductions`, `_shape`, `_indexing`, `_linalg_products`, `_einsum`,
`_sorting`, `_dtypes`, and the public `linalg` and `fft`; this namespace is their `__all__`
together (a function listed in its family's `__all__` appears here). Importing this package
also puts the numpy-backed array methods (`x.sum()`, `x.at[...]`, advanced indexing ...) on
tracers (`_array_methods.py`).
"""

import numpy as _np

from laminax_core import dtypes as _core_dtypes
from laminax_core.numpy import (
    _array_methods,
    _bits,
    _concatenators,
    _creation,
    _dtypes,
    _einsum,
    _histograms,
    _index_tricks,
    _indexing,
    _io,
    _linalg_products,
    _logic,
    _polynomials,
    _reductions,
    _selection,
    _shape,
    _signal,
    _sorting,
    _special_functions,
    _ufunc_objects,
    _ufuncs,
    _vectorize,
)
from laminax_core.numpy import fft as fft
from laminax_core.numpy import linalg as linalg

_FAMILIES = (
    _bits, _concatenators, _creation, _dtypes, _einsum, _histograms, _index_tricks, _indexing,
    _io, _linalg_products, _logic, _polynomials, _reductions, _selection, _shape, _signal,
    _sorting, _special_functions, _ufuncs, _vectorize,
)  # fmt: skip

# Public in their modules (shared between the families, or with the array methods) but not
# part of JAX's `jax.numpy`.
_NOT_JNP = frozenset({
    "IndexUpdateHelper", "IndexUpdateRef", "SCALAR_TYPES", "along_axis_index", "getitem",
    "greedy_path", "iota", "scatter_sharding_check",
})  # fmt: skip


def _gather_namespace() -> list[str]:
    found: dict[str, str] = {}
    for family in _FAMILIES:
        for name in family.__all__:
            if name in _NOT_JNP:
                continue
            if name in found:
                raise ImportError(f"jnp.{name} is exported by both {found[name]} and "
                                  f"{family.__name__}: keep it in one family's __all__")
            found[name] = family.__name__
            globals()[name] = getattr(family, name)
    # the ufunc objects (`jnp.add.reduce` ...) stand in for the plain functions of _ufuncs/_logic
    for name in _ufunc_objects.__all__:
        found[name] = _ufunc_objects.__name__
        globals()[name] = getattr(_ufunc_objects, name)
    return sorted(found)


__all__ = _gather_namespace()

_SCALAR_TYPES = _dtypes.SCALAR_TYPES

# dtype objects usable as constructors: jnp.float32(3) is a 0-d float32 array
bool = _SCALAR_TYPES["bool"]
bool_ = _SCALAR_TYPES["bool_"]
int8 = _SCALAR_TYPES["int8"]
int16 = _SCALAR_TYPES["int16"]
int32 = _SCALAR_TYPES["int32"]
int64 = _SCALAR_TYPES["int64"]
uint8 = _SCALAR_TYPES["uint8"]
uint16 = _SCALAR_TYPES["uint16"]
uint32 = _SCALAR_TYPES["uint32"]
uint64 = _SCALAR_TYPES["uint64"]
float16 = _SCALAR_TYPES["float16"]
float32 = _SCALAR_TYPES["float32"]
float64 = _SCALAR_TYPES["float64"]
complex64 = _SCALAR_TYPES["complex64"]
complex128 = _SCALAR_TYPES["complex128"]
bfloat16 = _SCALAR_TYPES["bfloat16"]
int2 = _SCALAR_TYPES["int2"]
int4 = _SCALAR_TYPES["int4"]
uint2 = _SCALAR_TYPES["uint2"]
uint4 = _SCALAR_TYPES["uint4"]
float4_e2m1fn = _SCALAR_TYPES["float4_e2m1fn"]
float8_e3m4 = _SCALAR_TYPES["float8_e3m4"]
float8_e4m3 = _SCALAR_TYPES["float8_e4m3"]
float8_e4m3b11fnuz = _SCALAR_TYPES["float8_e4m3b11fnuz"]
float8_e4m3fn = _SCALAR_TYPES["float8_e4m3fn"]
float8_e4m3fnuz = _SCALAR_TYPES["float8_e4m3fnuz"]
float8_e5m2 = _SCALAR_TYPES["float8_e5m2"]
float8_e5m2fnuz = _SCALAR_TYPES["float8_e5m2fnuz"]
float8_e8m0fnu = _SCALAR_TYPES["float8_e8m0fnu"]
# ml_dtypes' narrowest types: JAX 0.10.2 names them, though XLA's CPU runtime computes with none
float6_e2m3fn = _SCALAR_TYPES["float6_e2m3fn"]
float6_e3m2fn = _SCALAR_TYPES["float6_e3m2fn"]
int1 = _SCALAR_TYPES["int1"]
uint1 = _SCALAR_TYPES["uint1"]
int_ = _SCALAR_TYPES["int_"]
uint = _SCALAR_TYPES["uint"]
float_ = _SCALAR_TYPES["float_"]
complex_ = _SCALAR_TYPES["complex_"]
single = _SCALAR_TYPES["single"]
double = _SCALAR_TYPES["double"]
csingle = _SCALAR_TYPES["csingle"]
cdouble = _SCALAR_TYPES["cdouble"]

# NumPy's abstract scalar classes, for issubdtype (and object_, which JAX re-exports from NumPy
# to refuse it: arrays of Python objects are not JAX arrays)
object_ = _np.object_
generic = _np.generic
number = _np.number
inexact = _np.inexact
floating = _np.floating
complexfloating = _np.complexfloating
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
character = _np.character
flexible = _np.flexible
dtype = _np.dtype

can_cast = _core_dtypes.can_cast
finfo = _core_dtypes.finfo
iinfo = _core_dtypes.iinfo
isdtype = _core_dtypes.isdtype
issubdtype = _core_dtypes.issubdtype
promote_types = _core_dtypes.promote_types
result_type = _core_dtypes.result_type

e = _np.e
euler_gamma = _np.euler_gamma
inf = _np.inf
nan = _np.nan
newaxis = None
pi = _np.pi

_array_methods.install()

__all__ += [
    "fft", "linalg", "bool", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "complex64", "complex128", "bfloat16",
    "int2", "int4", "uint2", "uint4", "float4_e2m1fn", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "int1", "uint1", "object_", "int_", "uint", "float_", "complex_", "single", "double", "csingle",
    "cdouble", "generic", "number", "inexact", "floating", "complexfloating", "integer",
    "signedinteger", "unsignedinteger", "character", "flexible", "dtype", "can_cast", "finfo",
    "iinfo", "isdtype", "issubdtype", "promote_types", "result_type", "e", "euler_gamma", "inf",
    "nan", "newaxis", "pi",
]  # fmt: skip
