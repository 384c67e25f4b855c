"""Abstract values: what tracing knows about an array (shape, dtype, weak type, and, on meshes
with Explicit axes, its sharding).

`ShapedArray` is the only abstract value of this phase. `get_aval(x)` maps any value a
transformation may meet (tracers, NumPy arrays and scalars, Python scalars, and whatever an
upper layer registers in `pytype_aval_mappings`) to its `ShapedArray`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from laminax_core import dtypes
from laminax_core._dtypes_base import ExtendedDType
from laminax_core._shape_poly import DimExpr

__all__ = [
    "AbstractRef",
    "AbstractToken",
    "AbstractValue",
    "EMPTY_MAT",
    "ManualAxisType",
    "Ref",
    "ShapeDtypeStruct",
    "ShapedArray",
    "ShardingTypeError",
    "Token",
    "abstract_token",
    "canonicalize_shape",
    "get_aval",
    "is_array_like",
    "pytype_aval_mappings",
    "short_dtype_name",
    "to_numpy",
    "WeakTypedArray",
    "weak_array",
]

_PYTHON_SCALARS = (bool, int, float, complex)

# Upper layers (dispatch's Array) register `type -> (value -> ShapedArray)` here.
pytype_aval_mappings: dict[type, Callable[[Any], ShapedArray]] = {}

# Upper layers (pjit) register `type -> (value, its aval) -> aval`: the aval with the typed
# sharding of a concrete array laid out along Explicit mesh axes (the aval itself otherwise).
sharding_typers: dict[type, Callable[[Any, ShapedArray], ShapedArray]] = {}


def short_dtype_name(dtype) -> str:
    """`float32 -> f32`, `int8 -> i8`, `bfloat16 -> bf16`, `bool -> bool`, as jaxprs print."""
    if isinstance(dtype, ExtendedDType):
        return dtype.name
    dtype = np.dtype(dtype)
    if dtype == dtypes.float0:
        return "float0"
    name = dtype.name
    for long, short in (
        ("bfloat", "bf"),
        ("uint", "u"),
        ("int", "i"),
        ("complex", "c"),
        ("float", "f"),
    ):
        if name.startswith(long):
            return short + name[len(long) :]
    return name


# XLA counts elements in an int64: a larger shape aborts the process inside jaxlib
_MAX_ELEMENTS = 2**63 - 1


def canonicalize_shape(shape, context: str = "", *, allow_unknown: bool = False) -> tuple[int, ...]:
    """Turns a shape-like value into a tuple of non-negative Python ints.

    The one check every shape passes (avals, `reshape`, `zeros`, `iota` ...).

    Args:
      shape: an int or a sequence of ints (NumPy ints too).
      context: the function's name, for errors.
      allow_unknown: allow -1 entries (reshape's unknown dimension), left for the caller.

    Raises:
      TypeError: an entry is not an integer (a float, None, a traced value), or negative.
      ValueError: the element count does not fit in int64 (XLA's limit).
    """
    if type(shape) is tuple and all(type(d) is int and d >= 0 for d in shape):
        if len(shape) > 1 and math.prod(shape) > _MAX_ELEMENTS:
            _too_many_elements(shape, context)
        return shape  # already canonical: most shapes come from another aval
    where = f"{context}: " if context else ""
    if isinstance(shape, int | np.integer) or (
            np.ndim(shape) == 0 and hasattr(shape, "__index__") and not isinstance(shape, str)):
        shape = (shape,)  # one dimension (a 0-d concrete integer array too, as in JAX)
    try:
        # symbolic dimensions (shape polymorphism) pass as they are
        result = tuple(d if type(d) is DimExpr else operator.index(d) for d in shape)
    except TypeError as err:
        raise TypeError(
            f"{where}Shapes must be 1D sequences of concrete values of integer type, got "
            f"{shape!r}. If a dimension is a traced value, make it static (for example with "
            "static_argnums)."
        ) from err
    if any(type(d) is int and d < (-1 if allow_unknown else 0) for d in result):
        raise TypeError(f"{where}shape {result} has a negative dimension.")
    if any(type(d) is DimExpr for d in result):
        return result
    if len(result) > 1 and math.prod(result) > _MAX_ELEMENTS:
        _too_many_elements(result, context)
    return result


def _too_many_elements(shape, context: str):
    where = f"{context}: " if context else ""
    raise ValueError(
        f"{where}the shape {shape} has {math.prod(shape)} elements, more than an array can hold "
        f"({_MAX_ELEMENTS}, the largest int64); check the dimensions."
    )


_KEEP = object()  # `update`'s "leave the sharding as it is"


def _dim_str(size: int, entry) -> str:
    if entry is None:
        return str(size)
    if isinstance(entry, tuple):
        return f"{size}@({','.join(entry)})"
    return f"{size}@{entry}"


class AbstractValue:
    """The base class of abstract values (JAX's `jax.core.AbstractValue`): what a tracer knows
    of the value it stands for. `ShapedArray` is the one kind laminax has."""

    __slots__ = ()


class AbstractToken(AbstractValue):
    """The abstract value of a token (`lax.create_token`, `lax.after_all`): no shape, no
    dtype; it orders effects inside a program. Printed `Tok`, as JAX prints it."""

    __slots__ = ()

    def str_short(self) -> str:
        return "Tok"

    def __repr__(self) -> str:
        return "Tok"

    def __eq__(self, other) -> bool:
        return isinstance(other, AbstractToken)

    def __hash__(self) -> int:
        return hash(AbstractToken)


abstract_token = AbstractToken()


class Token:
    """A token value outside any program (what `create_token` returns eagerly)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Token()"


class ManualAxisType:
    """How a value inside `shard_map` (with `check_vma=True`) relates to the manual mesh axes:
    the axes it varies over (`varying`; JAX's "vma"), and those it holds an unreduced / reduced
    partial sum over. Values are equal when their sets are; `order` (the mesh's axis order, as
    given by whoever builds it) only decides how `{V:(x,y)}` prints.

    Example:
      >>> ManualAxisType(varying=frozenset({"x"}))
      ManualAxisType(varying=frozenset({'x'}), unreduced=frozenset(), reduced=frozenset())
    """

    __slots__ = ("varying", "unreduced", "reduced", "_order", "_hash")

    def __init__(self, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset(),
                 order: tuple = ()):
        varying, unreduced, reduced = map(frozenset, (varying, unreduced, reduced))
        for name, other in (("unreduced", unreduced), ("reduced", reduced)):
            if varying & other:
                raise ValueError(
                    f"varying and {name} cannot have common mesh axes. Got "
                    f"varying={varying} and {name}={other}")
        self.varying, self.unreduced, self.reduced = varying, unreduced, reduced
        self._order = tuple(order)
        self._hash = hash((varying, unreduced, reduced))

    @property
    def empty(self) -> bool:
        return not (self.varying or self.unreduced or self.reduced)

    def update(self, **kwargs) -> ManualAxisType:
        """A copy with the given sets replaced (the print order kept)."""
        fields = dict(varying=self.varying, unreduced=self.unreduced, reduced=self.reduced,
                      order=self._order)
        fields.update(kwargs)
        return ManualAxisType(**fields)

    def __eq__(self, other) -> bool:
        return self is other or (
            isinstance(other, ManualAxisType) and self._hash == other._hash
            and (self.varying, self.unreduced, self.reduced)
            == (other.varying, other.unreduced, other.reduced))

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return (f"ManualAxisType(varying={_set_repr(self.varying)}, "
                f"unreduced={_set_repr(self.unreduced)}, reduced={_set_repr(self.reduced)})")

    def ordered(self, names) -> tuple:
        """`names` in mesh order (names the order does not know last, by name)."""
        known = tuple(n for n in self._order if n in names)
        return known + tuple(sorted((n for n in names if n not in known), key=str))

    def suffix(self) -> str:
        """`{V:x}`, `{V:(x,y)}`, `{V:x, U:y}` as JAX's jaxprs print it ('' when empty)."""
        if self.empty:
            return ""
        parts = []
        for letter, names in (("V", self.varying), ("U", self.unreduced), ("R", self.reduced)):
            if names:
                ordered = self.ordered(names)
                text = ordered[0] if len(ordered) == 1 else f"({','.join(ordered)})"
                parts.append(f"{letter}:{text}")
        return "{" + ", ".join(parts) + "}"


def _set_repr(names) -> str:
    return f"frozenset({{{', '.join(map(repr, sorted(names, key=str)))}}})" if names \
        else "frozenset()"


EMPTY_MAT = ManualAxisType()


class AbstractRef(AbstractValue):
    """The abstract value of a mutable array reference (`new_ref`): the `ShapedArray` it holds
    (`inner_aval`). Printed `Ref{f32[3]}` in jaxprs, as JAX prints it."""

    __slots__ = ("inner_aval",)

    def __init__(self, inner_aval: ShapedArray):
        self.inner_aval = inner_aval

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: self.inner_aval.ndim)
    size = property(lambda self: self.inner_aval.size)
    weak_type = property(lambda self: self.inner_aval.weak_type)
    sharding = property(lambda self: None)

    def update(self, **changes) -> AbstractRef:
        """The reference to `inner_aval.update(**changes)` (vmap's per-example view)."""
        return AbstractRef(self.inner_aval.update(**changes))

    def strip_weak_type(self) -> AbstractRef:
        return self

    def to_tangent_aval(self) -> AbstractRef:
        """A reference's tangent is a reference to tangents."""
        return AbstractRef(self.inner_aval.to_tangent_aval())

    def str_short(self) -> str:
        return f"Ref{{{self.inner_aval.str_short()}}}"

    def __str__(self) -> str:
        return f"Ref{{{self.inner_aval.strip_weak_type()}}}"

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, AbstractRef) and self.inner_aval == other.inner_aval

    def __hash__(self) -> int:
        return hash((AbstractRef, self.inner_aval))


class _RefMeta(type):
    # As JAX's: a traced reference (a tracer whose aval is an AbstractRef) is a `Ref` too.
    def __instancecheck__(cls, inst):
        if type.__instancecheck__(cls, inst):
            return True
        try:
            return isinstance(inst.aval, AbstractRef)
        except Exception:  # noqa: BLE001 (anything without an abstract value is no Ref)
            return False


class Ref(metaclass=_RefMeta):
    """A mutable array reference outside any program: its abstract value and the array it
    holds now (`_buf`, replaced by every write). Reads and writes are the ref primitives
    (`laminax_core.ref` installs the indexing methods)."""

    __slots__ = ("_aval", "_buf", "__weakref__")

    def __init__(self, aval: AbstractRef, buf):
        self._aval = aval
        self._buf = buf

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    # what JAX's Ref forwards to the array it holds
    sharding = property(lambda self: self._buf.sharding)
    format = property(lambda self: self._buf.format)
    committed = property(lambda self: True)

    def unsafe_buffer_pointer(self):
        """The address of the held array's buffer."""
        return self._buf.unsafe_buffer_pointer()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        text = repr(self._buf)
        return "Ref" + text[text.index("("):] if "(" in text else f"Ref({text})"


class ShardingTypeError(Exception):
    """Operands' explicit shardings do not combine (JAX: `ShardingTypeError`): reshard one
    operand (`reshard`) or pass `out_sharding=`."""


class ShapedArray(AbstractValue):
    """The abstract value of an array: its shape, dtype, weak type and typed sharding.

    Args:
      shape: a tuple of non-negative ints.
      dtype: a NumPy dtype (canonicalized, so float64 becomes float32 unless x64 is enabled).
      weak_type: True for values that came from Python scalars and adopt the other operand's
        dtype in binary operations.
      sharding: None (the default: no sharding in the type), or an opaque hashable object from
        an upper layer (pjit's NamedSharding on an abstract mesh) for arrays split along
        Explicit mesh axes. Core reads it only through `aval_partitions` (one entry per
        dimension: None, an axis name or a tuple of names) and `with_aval_partitions(entries)`
        (the same mesh with other entries); see `_sharding_rules`.
      manual_axis_type: inside a `shard_map` with `check_vma=True`, the manual mesh axes the
        value varies over (a `ManualAxisType`, printed `f32[2]{V:x}`); empty elsewhere.

    Example:
      >>> ShapedArray((3, 4), np.float32).str_short()
      'f32[3,4]'
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding", "manual_axis_type")
    array_abstraction_level = 1

    def __init__(self, shape: Sequence[int], dtype, weak_type: bool = False, sharding=None,
                 manual_axis_type: ManualAxisType = EMPTY_MAT):
        self.shape = canonicalize_shape(shape)
        self.dtype = dtypes.canonicalize_dtype(dtype)
        self.weak_type = bool(weak_type)
        if sharding is not None and len(sharding.aval_partitions) != len(self.shape):
            raise ValueError(
                f"Length of sharding.spec must be equal to aval's ndim. Got sharding "
                f"{sharding} for shape {self.shape}; give one entry per dimension."
            )
        self.sharding = sharding
        self.manual_axis_type = manual_axis_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    mat = property(lambda self: self.manual_axis_type)  # JAX's short name

    def update(self, shape=None, dtype=None, weak_type=None, sharding=_KEEP,
               manual_axis_type=None) -> ShapedArray:
        """A copy with the given fields replaced. A new shape drops the typed sharding (its
        entries were per dimension of the old shape) unless `sharding` is given; the manual
        axis type is kept unless given."""
        if sharding is _KEEP:
            sharding = self.sharding if shape is None or tuple(shape) == self.shape else None
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            sharding,
            self.manual_axis_type if manual_axis_type is None else manual_axis_type,
        )

    def strip_weak_type(self) -> ShapedArray:
        """The same aval with `weak_type=False`."""
        return self.update(weak_type=False) if self.weak_type else self

    def to_tangent_aval(self) -> ShapedArray:
        """The aval of this value's tangents: float0 for integer and boolean dtypes."""
        if dtypes.issubdtype(self.dtype, np.inexact):
            return self.update(weak_type=self.weak_type)
        return ShapedArray(self.shape, dtypes.float0, sharding=self.sharding,
                           manual_axis_type=self.manual_axis_type)

    def _dims_str(self) -> str:
        if self.sharding is None:
            return ",".join(map(str, self.shape))
        return ",".join(
            _dim_str(d, p) for d, p in zip(self.shape, self.sharding.aval_partitions, strict=True)
        )

    def str_short(self) -> str:
        """`f32[3,4]`: the form jaxprs print (weak types are not shown, as in JAX); a dimension
        split along explicit mesh axes prints as JAX's `f32[8@x,4]`."""
        mat = self.manual_axis_type
        suffix = "" if mat is EMPTY_MAT else mat.suffix()
        return f"{short_dtype_name(self.dtype)}[{self._dims_str()}]{suffix}"

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, ShapedArray)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
            and self.sharding == other.sharding
            and (self.manual_axis_type is other.manual_axis_type
                 or self.manual_axis_type == other.manual_axis_type)
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type, self.sharding,
                     self.manual_axis_type._hash))

    def __repr__(self) -> str:
        name = self.dtype.name if self.dtype != dtypes.float0 else "float0"
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({name}[{self._dims_str()}]{self.manual_axis_type.suffix()}{weak})"

    def __str__(self) -> str:
        # JAX's str is the full dtype name with a leading `~` for weak types (`~float32[]`);
        # libraries put it in error messages and tests compare those.
        name = self.dtype.name if self.dtype != dtypes.float0 else "float0"
        suffix = self.manual_axis_type.suffix()
        return f"{'~' if self.weak_type else ''}{name}[{self._dims_str()}]{suffix}"


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array, as `eval_shape` returns and accepts.

    Args:
      shape: a tuple of ints.
      dtype: a NumPy dtype.
      weak_type: whether the value is weakly typed.
      sharding: how the array it stands for is laid out (a dispatch `Sharding`), or None;
        `jit(f).lower(...)` places the program as for a committed array of that sharding.

    Example:
      >>> ShapeDtypeStruct((2, 3), np.float32)
      ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape: Sequence[int], dtype, weak_type: bool = False, *, sharding=None):
        self.shape = canonicalize_shape(shape)
        self.dtype = dtype if isinstance(dtype, ExtendedDType) else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __eq__(self, other) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (
            self.shape,
            self.dtype,
            self.weak_type,
            self.sharding,
        ) == (other.shape, other.dtype, other.weak_type, other.sharding)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type, self.sharding))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        sharding = "" if self.sharding is None else f", sharding={self.sharding}"
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak})"


def _python_scalar_aval(x) -> ShapedArray:
    dtypes.check_python_int(x)
    dtype = dtypes.result_type(x)
    return ShapedArray((), dtype, weak_type=type(x) is not bool)


def _numpy_aval(x) -> ShapedArray:
    if type(x) is not np.ndarray and isinstance(x, np.ma.MaskedArray):
        raise ValueError(
            "NumPy masked arrays cannot be laminax arrays: the mask would be dropped. Convert "
            "with x.filled(fill_value) (or x.data) first."
        )
    dtype = dtypes.canonicalize_dtype(x.dtype)
    if dtype not in dtypes.array_dtypes:
        kind = "array" if isinstance(x, np.ndarray) else "scalar"
        raise TypeError(
            f"A NumPy {kind} of dtype {x.dtype} is not a valid JAX array type: laminax arrays "
            "hold booleans, integers, floats and complex numbers (complex64/complex128). "
            "Convert it first (for example x.astype(np.float32))."
        )
    return ShapedArray(np.shape(x), dtype, weak_type=False)


def get_aval(x) -> ShapedArray:
    """The abstract value of `x`: a tracer's aval, or the aval of a concrete array or scalar.

    Raises:
      TypeError: `x` is not an array-like value (for example a string or a list).
    """
    aval = getattr(x, "aval", None)
    if isinstance(aval, AbstractToken) or isinstance(x, Token):
        return abstract_token
    if isinstance(aval, AbstractRef):
        return aval
    if isinstance(aval, ShapedArray):
        if sharding_typers:
            typer = sharding_typers.get(type(x))
            if typer is not None:
                return typer(x, aval)
        return aval
    for base in type(x).__mro__:
        if base in pytype_aval_mappings:
            return pytype_aval_mappings[base](x)
    if isinstance(x, ShapeDtypeStruct):
        # a sharding along Explicit mesh axes is part of the type (see `_sharding_rules`)
        typed = getattr(x.sharding, "as_aval_sharding", None)
        return ShapedArray(x.shape, x.dtype, x.weak_type, typed and typed(len(x.shape)))
    raise TypeError(
        f"Value {x!r} of type {type(x).__name__} is not a valid array type. Arguments of "
        "transformed functions must be arrays, NumPy scalars or Python scalars; mark other "
        "arguments static (static_argnums) or close over them."
    )


pytype_aval_mappings.update({t: _python_scalar_aval for t in _PYTHON_SCALARS})
pytype_aval_mappings[np.ndarray] = _numpy_aval
pytype_aval_mappings[np.generic] = _numpy_aval


def is_array_like(x) -> bool:
    """True if `get_aval(x)` succeeds."""
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def to_numpy(x, aval: ShapedArray | None = None) -> np.ndarray:
    """A concrete value as a NumPy array of its aval's (canonical) dtype."""
    dtype = (aval or get_aval(x)).dtype
    return np.asarray(x, dtype=dtype)


class WeakTypedArray(np.ndarray):
    """A NumPy constant that keeps its weak type (a Python scalar converted to an array dtype).

    `get_aval` reports `weak_type=True` for it, so `x + 1` on a float16 tracer stays float16
    and prints the literal `1.0:f16[]`, as in JAX.
    """

    # What `dtypes.is_weakly_typed` and promotion read from values that are not tracers.
    weak_type = True

    @property
    def val(self) -> np.ndarray:
        """The value as a plain NumPy array (what jaxlib reads from a typed ndarray)."""
        return np.asarray(self)


def weak_array(value, dtype) -> WeakTypedArray:
    """`value` as a weakly typed NumPy constant of `dtype` (a Python int must fit the dtype of
    Python ints first, else OverflowError; it then wraps into `dtype` as in JAX)."""
    dtypes.check_python_int(value)
    return np.asarray(value, dtype=dtype).view(WeakTypedArray)


def _weak_array_aval(x) -> ShapedArray:
    return ShapedArray(x.shape, x.dtype, weak_type=True)


pytype_aval_mappings[WeakTypedArray] = _weak_array_aval
