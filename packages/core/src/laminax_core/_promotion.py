"""JAX's type promotion lattice (JEP 9407): `promote_types`, `result_type` (weak types
included) and `safe_to_cast`. Nodes are dtype names for strongly typed values and "int*",
"float*", "complex*" for weakly typed Python scalars; promotion is the least upper bound, never
NumPy's value-based rules."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from laminax_core._dtypes_base import (
    ExtendedDType,
    TypePromotionError,
    _BOOL,
    _DEFAULTS,
    _SCALAR_KIND,
    _TO_32BIT,
    _WEAK_SCALAR_TYPES,
    _intn_dtypes,
    _invalid_dtype_error,
    _narrow_float_dtypes,
    _raw_dtype,
    _signed_narrow,
    _truncate_explicit_x64,
    _unsigned_narrow,
    _valid_dtypes,
    bfloat16,
    canonicalize_dtype,
    complex_dtypes,
    default_float_dtype,
    dtype,
    float_dtypes,
    int_dtypes,
    integer_dtypes,
    is_weakly_typed,
    uint_dtypes,
)
from laminax_core.config import enable_x64 as _enable_x64
from laminax_core.config import numpy_dtype_promotion as _numpy_dtype_promotion

__all__ = ["promote_types", "result_type", "safe_to_cast"]


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
    extended = {getattr(a, "dtype", None) for a in args} - {None}
    if any(isinstance(d, ExtendedDType) for d in extended):
        # as JAX: an extended dtype (typed keys) promotes with nothing but itself
        if len(extended) != 1 or any(not hasattr(a, "dtype") for a in args):
            raise TypeError(f"result_type: cannot combine the dtypes {sorted(map(str, extended))} "
                            "of these arguments: an extended dtype only meets itself.")
        out_dtype = extended.pop()
        return (out_dtype, False) if return_weak_type_flag else out_dtype
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
