"""Operand handling shared by every `laminax_core.numpy` function: checking array-likes, dtype
promotion (JAX's lattice, weak types included), rank promotion (`jax_numpy_rank_promotion`),
and axis normalisation. Everything here is a composition of lax, so it works on NumPy arrays
(the reference interpreter), tracers, and the device arrays of the layers above alike."""

from __future__ import annotations

import operator
import warnings

import numpy as np

from laminax_core import _shape_poly, _trace, config, dtypes, errors, lax
from laminax_core._shape_poly import broadcast_shapes
from laminax_core._avals import WeakTypedArray, get_aval, weak_array
from laminax_core._dtypes_base import ExtendedDType

__all__ = [
    "as_array",
    "broadcast_to_shape",
    "canonicalize_axes",
    "canonicalize_axis",
    "check_arraylike",
    "concrete_array",
    "convert_dtype",
    "install_array",
    "is_arraylike",
    "is_concrete",
    "promote_args",
    "promote_args_inexact",
    "promote_dtypes",
    "promote_dtypes_inexact",
    "promote_shapes",
    "result_type",
    "select",
    "flatten_or_axis",
]

_SCALARS = (bool, int, float, complex)


def is_arraylike(x) -> bool:
    """Whether `x` is an array, tracer, NumPy scalar or Python scalar (lists are not)."""
    if isinstance(x, (list, tuple, str, bytes)) or x is None:
        return False
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def check_arraylike(name: str, *args) -> None:
    """Raises TypeError naming `name` and the position of the first non-array argument."""
    for position, x in enumerate(args):
        if not is_arraylike(x):
            hint = " Convert it first with jnp.asarray." if isinstance(x, (list, tuple)) else ""
            raise TypeError(f"{name} requires ndarray or scalar arguments, but got "
                            f"{type(x).__name__} at position {position}.{hint}")


def is_concrete(x) -> bool:
    """Whether `x` is a concrete value (not a tracer without a known value)."""
    return not isinstance(x, _trace.Tracer) or x.to_concrete_value() is not None


def concrete_array(name: str, x) -> np.ndarray:
    """`x` as a NumPy array; a tracer must carry its value (the caller's result shape depends
    on it)."""
    if isinstance(x, _trace.Tracer):
        if not is_concrete(x):
            raise errors.ConcretizationTypeError(
                x, f"jnp.{name} needs a concrete value here (its result's shape depends on it)")
        x = x.to_concrete_value()
    return np.asarray(x)


def _array_not_installed(x):
    raise RuntimeError("laminax_core.numpy._creation has not installed jnp.array; import "
                       "laminax_core")


# `jnp.array` (in `_creation`, above this module) turns lists and tuples into arrays; it
# installs itself here at import, so that operand handling sits beneath array creation.
_array_from_sequence = _array_not_installed


def install_array(array) -> None:
    global _array_from_sequence
    _array_from_sequence = array


def as_array(x, name: str = "asarray"):
    """`x` as an array operand: arrays and tracers pass through; Python scalars become weakly
    typed arrays of their default dtype; lists and tuples become arrays (stacked with lax
    if they hold tracers)."""
    if isinstance(x, (list, tuple)):
        return _array_from_sequence(x)
    if isinstance(x, _shape_poly.DimExpr):  # a symbolic dimension: its value in the program
        return lax.dimension_as_value(x)
    check_arraylike(name, x)
    if type(x) in _SCALARS:
        if type(x) is bool:
            return np.asarray(x)
        return weak_array(x, dtypes.result_type(x))
    if isinstance(x, np.generic):
        return np.asarray(x, dtypes.canonicalize_dtype(x.dtype))
    if isinstance(x, np.ndarray) and x.dtype != dtypes.canonicalize_dtype(x.dtype):
        return np.asarray(x, dtypes.canonicalize_dtype(x.dtype))
    return x


def convert_dtype(x, dtype, weak_type: bool = False):
    """`x` converted to `dtype` (kept as is when it already has it), weakly typed if asked."""
    aval = get_aval(x)
    if aval.dtype == dtype and isinstance(dtype, ExtendedDType):  # typed keys: nothing to do
        return x
    dtype = np.dtype(dtype)
    if aval.dtype == dtype and aval.weak_type == weak_type:
        return x
    # scalars convert here (they become jaxpr literals); arrays with lax, which keeps weak
    # types under tracing and prints JAX's convert_element_type
    if type(x) in _SCALARS or isinstance(x, np.generic) or (
            isinstance(x, np.ndarray) and x.ndim == 0):
        # Python ints out of the target's range wrap, as lax's conversion does (JAX: u8 + -1),
        # once they fit the dtype of Python ints
        dtypes.check_python_int(x)
        if weak_type:
            return weak_array(np.asarray(x).astype(dtype), dtype)
        value = np.asarray(x).astype(dtype)
        return value.view(np.ndarray) if isinstance(value, WeakTypedArray) else value
    return lax.convert_element_type(x, dtype, weak_type=weak_type)


class _AvalView:
    """Shows `dtypes.result_type` a value's aval (so weakly typed NumPy constants count as
    weak; `result_type` reads plain NumPy arrays as strongly typed)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


def result_type(*args, return_weak_type_flag: bool = False):
    """`dtypes.result_type` of operands, reading weakly typed constants as weak."""
    views = [_AvalView(get_aval(a)) if isinstance(a, WeakTypedArray) else a for a in args]
    return dtypes.result_type(*views, return_weak_type_flag=return_weak_type_flag)


def promote_dtypes(*args) -> list:
    """The arguments converted to their common dtype by JAX's promotion; if that result is
    weakly typed (only weak operands and weak-compatible ones), every argument becomes weak."""
    if len(args) < 2:
        return [as_array(a) for a in args]
    dtype, weak = result_type(*args, return_weak_type_flag=True)
    return [convert_dtype(a, dtype, weak) for a in args]


def promote_dtypes_inexact(*args) -> list:
    """Like `promote_dtypes`, then integers and booleans go to their inexact dtype."""
    dtype, weak = result_type(*args, return_weak_type_flag=True)
    dtype = dtypes.to_inexact_dtype(dtype)
    return [convert_dtype(a, dtype, weak) for a in args]


def _rank_promotion_check(name: str, shapes) -> None:
    mode = config.numpy_rank_promotion.value
    if mode == "allow":
        return
    message = (f"Operands could not be broadcast together for {name} on shapes "
               f"{' '.join(map(str, shapes))} and with the config option "
               f"jax_numpy_rank_promotion='{mode}'. Add the missing leading axes explicitly "
               "(x[None, :] or jnp.expand_dims), or set jax_numpy_rank_promotion to 'allow'.")
    if mode == "raise":
        raise ValueError(message)
    warnings.warn(message, stacklevel=4)


# binary functions whose operands JAX broadcasts explicitly before computing (they are built of
# several primitives), so a mismatch is broadcasting's ValueError there
_BROADCAST_FIRST = frozenset({"copysign", "heaviside", "gcd", "lcm"})


def promote_shapes(name: str, *args) -> list:
    """The arguments brought to a common rank by adding leading size-1 axes (NumPy's rank
    promotion); raises TypeError (one rank) or ValueError (several) if the shapes do not
    broadcast."""
    if len(args) < 2:
        return list(args)
    shapes = [get_aval(a).shape for a in args]
    nonscalar_ranks = {len(s) for s in shapes if s}
    try:
        result = broadcast_shapes(*shapes)
    except ValueError as err:
        if any(_shape_poly.is_symbolic_dim(d) for s in shapes for d in s):  # JAX's words
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(map(str, shapes))}.") from err
        # as JAX: two operands of one rank reach the binary primitive's shape rule
        # (TypeError); ranks that differ fail in the rank promotion before it, and where's
        # three operands in an explicit broadcast (ValueError)
        binary = len(args) == 2 and name not in _BROADCAST_FIRST
        error = TypeError if len(nonscalar_ranks) < 2 and binary else ValueError
        raise error(f"{name}: incompatible shapes for broadcasting: "
                    f"{', '.join(map(str, shapes))}.") from err
    if len(nonscalar_ranks) < 2:
        return list(args)
    _rank_promotion_check(name, shapes)
    out = []
    for a, shape in zip(args, shapes, strict=True):
        if 0 < len(shape) < len(result):
            lead = len(result) - len(shape)
            a = lax.broadcast_in_dim(a, (1,) * lead + shape, tuple(range(lead, len(result))))
        out.append(a)
    return out


def promote_args(name: str, *args) -> list:
    """`check_arraylike`, `promote_dtypes`, then `promote_shapes`."""
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes(*args))


def promote_args_inexact(name: str, *args) -> list:
    """`check_arraylike`, `promote_dtypes_inexact`, then `promote_shapes`."""
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes_inexact(*args))


def canonicalize_axis(axis, ndim: int, name: str = "axis") -> int:
    """`axis` as a non-negative int below `ndim`; raises numpy-style errors otherwise."""
    try:
        axis = operator.index(axis)
    except TypeError as err:
        raise TypeError(f"{name}: axis must be an integer, got {axis!r}.") from err
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of dimension "
                         f"{ndim}.")
    return axis % ndim


def flatten_or_axis(name: str, a, axis):
    """`a` as an array with `axis` canonicalized; `axis=None` means the flattened array, axis 0
    (NumPy's convention for take, sort, compress ...)."""
    check_arraylike(name, a)
    a = as_array(a)
    if axis is None:
        return lax.reshape(a, (get_aval(a).size,)), 0
    return a, canonicalize_axis(axis, get_aval(a).ndim, f"jnp.{name}")


def canonicalize_axes(axis, ndim: int, name: str = "axis") -> tuple[int, ...]:
    """`axis` (None, an int, or a sequence) as a tuple of distinct non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(canonicalize_axis(a, ndim, name) for a in axis)
    else:
        axes = (canonicalize_axis(axis, ndim, name),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {axis!r}.")
    return axes


def broadcast_to_shape(x, shape):
    """`x` broadcast to `shape` by NumPy's rules (leading axes added, size-1 axes stretched)."""
    aval = get_aval(x)
    shape = tuple(shape)
    if aval.shape == shape:
        return x
    lead = len(shape) - aval.ndim
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def select(pred, on_false, on_true):
    """`lax.select_n(pred, on_false, on_true)` with all three broadcast to their common shape
    (the cases must already share a dtype)."""
    shape = broadcast_shapes(*(get_aval(v).shape for v in (pred, on_false, on_true)))
    return lax.select_n(*(broadcast_to_shape(v, shape) for v in (pred, on_false, on_true)))
