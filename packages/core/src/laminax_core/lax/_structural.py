"""Structural primitives that change an array's shape but not its elements: broadcasting,
reshaping, squeezing, transposition, reversal and iota, with the compositions built on them
(`full`, `broadcast`, `collapse`, `expand_dims` ...). All are linear in their array operands.

Slicing and padding are in `_slicing.py`, concatenation, splitting, tiling and stacking in
`_joining.py`."""

from __future__ import annotations

import math
import operator

import numpy as np

from laminax_core import _shape_poly, _trace, dtypes
from laminax_core._avals import ShapedArray, canonicalize_shape, get_aval
from laminax_core._manual_axes import vary_like
from laminax_core._sharding_rules import (
    broadcast_in_dim_sharding,
    reduce_sharding,
    requested_sharding,
    reshape_sharding,
    transpose_sharding,
)
from laminax_core._interpreters.batching import move_bdim
from laminax_core._primitive import (
    NO_OPERANDS,
    NOT_LINEAR,
    NUMERIC,
    ZERO_TANGENT,
    check_dtype,
    define_primitive,
    linear,
)
from laminax_core.lax import _hooks
from laminax_core.lax._helpers import as_operands, checked_axis

__all__ = [
    "broadcast", "broadcast_in_dim", "broadcast_to_rank", "broadcasted_iota", "collapse",
    "dimension_as_value",
    "expand_dims", "full", "full_like", "iota", "reshape", "rev", "squeeze", "transpose",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "broadcast_in_dim_p", "dimension_value_p", "iota_p", "reshape_p", "rev_p", "squeeze_p", "transpose_p",
]  # fmt: skip


# ----- broadcast_in_dim ---------------------------------------------------------------------


def broadcast_in_dim(operand, shape, broadcast_dimensions, sharding=None, *,
                     out_sharding=None):
    """Broadcasts `operand` to `shape`; operand dim i becomes dim `broadcast_dimensions[i]`.
    `out_sharding` (JAX's keyword; `sharding` is laminax's older name) types the result's
    layout on a mesh with Explicit axes.

    Example:
      >>> broadcast_in_dim(np.arange(3, dtype=np.float32), (2, 3), (1,)).shape
      (2, 3)
    """
    (operand,) = as_operands(operand)
    sharding = sharding if out_sharding is None else out_sharding
    dims = tuple(operator.index(d) for d in broadcast_dimensions)
    if len(set(dims)) == len(dims) == get_aval(operand).ndim and list(dims) != sorted(dims):
        # distinct but unordered dimensions also transpose the operand (JAX accepts them);
        # the primitive keeps XLA's increasing order
        order = tuple(sorted(range(len(dims)), key=dims.__getitem__))
        operand, dims = transpose(operand, order), tuple(sorted(dims))
    return broadcast_in_dim_p.bind(
        operand, shape=canonicalize_shape(shape, "broadcast_in_dim"),
        broadcast_dimensions=dims, sharding=sharding,
    )


def _broadcast_in_dim_abstract_eval(x, shape, broadcast_dimensions, sharding):
    dims = broadcast_dimensions
    if len(dims) != x.ndim:
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {dims} must have one entry per "
                        f"operand dimension (operand shape {x.shape}).")
    if any(b <= a for a, b in zip(dims, dims[1:])) or any(not 0 <= d < len(shape) for d in dims):
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {dims} must be strictly "
                        f"increasing and within the output rank {len(shape)}.")
    for size, d in zip(x.shape, dims, strict=True):
        if size not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim: operand shape {x.shape} cannot be broadcast to "
                            f"{shape} along broadcast_dimensions {dims}.")
    out = requested_sharding(sharding, len(shape))
    if sharding is None:  # a given one decides, also when it splits nothing
        out = broadcast_in_dim_sharding(x, shape, dims)
    return ShapedArray(shape, x.dtype, x.weak_type, out)


def _broadcast_in_dim_reference(x, shape, broadcast_dimensions, sharding):
    expanded = [1] * len(shape)
    for size, d in zip(x.shape, broadcast_dimensions, strict=True):
        expanded[d] = size
    return np.array(np.broadcast_to(np.reshape(x, expanded), shape))


def _broadcast_in_dim_transpose(ct, x, shape, broadcast_dimensions, sharding):
    dims = broadcast_dimensions
    summed = [d for d in range(len(shape)) if d not in dims]
    summed += [d for size, d in zip(x.aval.shape, dims, strict=True) if size == 1 != shape[d]]
    out = _hooks.reduce_sum(ct, tuple(sorted(summed))) if summed else ct
    return [reshape(out, x.aval.shape) if get_aval(out).shape != x.aval.shape else out]


def _broadcast_in_dim_batch(axis_data, args, dims, shape, broadcast_dimensions, sharding):
    x = move_bdim(args[0], dims[0], 0)
    new_dims = (0, *(d + 1 for d in broadcast_dimensions))
    return broadcast_in_dim(x, (axis_data.size, *shape), new_dims, sharding), 0


def _broadcast_in_dim_print(params):
    dims = params["broadcast_dimensions"]
    return {"broadcast_dimensions": dims} if dims else {}


broadcast_in_dim_p = define_primitive(
    "broadcast_in_dim",
    abstract_eval=_broadcast_in_dim_abstract_eval,
    reference=_broadcast_in_dim_reference,
    jvp=linear,
    transpose=_broadcast_in_dim_transpose,
    batch=_broadcast_in_dim_batch,
    print_params=_broadcast_in_dim_print,
)


def expand_dims(array, dimensions):
    """Inserts size-1 dimensions at `dimensions` (a composition of broadcast_in_dim)."""
    shape = list(get_aval(array).shape)
    ndim_out = len(shape) + len(dimensions)
    dims = sorted(checked_axis(d, ndim_out, "expand_dims") for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"lax.expand_dims: repeated axis in {tuple(dimensions)}.")
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(ndim_out) if i not in dims)
    return broadcast_in_dim(array, tuple(shape), kept)


# ----- reshape ------------------------------------------------------------------------------


def reshape(operand, new_sizes, dimensions=None, sharding=None, *, out_sharding=None):
    """Reshapes `operand` (after transposing it by `dimensions`, if given); `out_sharding`
    types the result's layout on a mesh with Explicit axes."""
    new_sizes = canonicalize_shape(new_sizes, "reshape")
    sharding = sharding if out_sharding is None else out_sharding
    if dimensions is not None:
        dimensions = tuple(operator.index(d) for d in dimensions)
    if get_aval(operand).shape == new_sizes and dimensions is None and sharding is None:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dimensions, sharding=sharding)


def _reshape_abstract_eval(x, new_sizes, dimensions, sharding):
    if math.prod(new_sizes) != x.size:
        raise TypeError(f"reshape: cannot reshape an array of shape {x.shape} (size {x.size}) "
                        f"into shape {new_sizes}.")
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(f"reshape: dimensions {dimensions} must be a permutation of "
                        f"{tuple(range(x.ndim))}.")
    out = requested_sharding(sharding, len(new_sizes))
    if sharding is None:  # a given one decides, also when it splits nothing
        out = reshape_sharding(x, new_sizes, dimensions)
    return ShapedArray(new_sizes, x.dtype, x.weak_type, out)


def _reshape_reference(x, new_sizes, dimensions, sharding):
    return np.reshape(x if dimensions is None else np.transpose(x, dimensions), new_sizes)


def _reshape_transpose(ct, x, new_sizes, dimensions, sharding):
    if dimensions is None:
        return [reshape(ct, x.aval.shape)]
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    return [transpose(reshape(ct, permuted), tuple(np.argsort(dimensions).tolist()))]


def _reshape_batch(axis_data, args, dims, new_sizes, dimensions, sharding):
    x = move_bdim(args[0], dims[0], 0)
    if dimensions is not None:
        x = transpose(x, (0, *(d + 1 for d in dimensions)))
    return reshape(x, (axis_data.size, *new_sizes), None, sharding), 0


reshape_p = define_primitive(
    "reshape",
    abstract_eval=_reshape_abstract_eval,
    reference=_reshape_reference,
    jvp=linear,
    transpose=_reshape_transpose,
    batch=_reshape_batch,
)


# ----- squeeze ------------------------------------------------------------------------------


def squeeze(array, dimensions):
    """Removes the size-1 dimensions listed in `dimensions`."""
    ndim = get_aval(array).ndim
    listed = [checked_axis(d, ndim, "squeeze") for d in dimensions]
    if len(set(listed)) != len(listed):  # JAX's answer; a repeat is not dropped silently
        raise ValueError(f"squeeze: dimensions are not unique: {tuple(dimensions)}.")
    return squeeze_p.bind(array, dimensions=tuple(sorted(listed)))


def _squeeze_abstract_eval(x, dimensions):
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise ValueError(f"squeeze: dimension {d} of an array of shape {x.shape} is not of "
                            "size 1; only size-1 dimensions can be squeezed.")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type, reduce_sharding(x, dimensions, shape, x.dtype))


def _squeeze_transpose(ct, x, dimensions):
    kept = tuple(i for i in range(x.aval.ndim) if i not in dimensions)
    return [broadcast_in_dim(ct, x.aval.shape, kept)]


def _squeeze_batch(axis_data, args, dims, dimensions):
    x = move_bdim(args[0], dims[0], 0)
    return squeeze(x, tuple(d + 1 for d in dimensions)), 0


squeeze_p = define_primitive(
    "squeeze",
    abstract_eval=_squeeze_abstract_eval,
    reference=lambda x, dimensions: np.squeeze(x, axis=dimensions),
    jvp=linear,
    transpose=_squeeze_transpose,
    batch=_squeeze_batch,
)


# ----- transpose ----------------------------------------------------------------------------


def transpose(operand, permutation):
    """Permutes the dimensions of `operand`: output dim i is input dim `permutation[i]`."""
    permutation = tuple(operator.index(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def _transpose_abstract_eval(x, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose: permutation {permutation} is not a permutation of the "
                        f"dimensions of an array of shape {x.shape}.")
    shape = tuple(x.shape[p] for p in permutation)
    return ShapedArray(shape, x.dtype, x.weak_type, transpose_sharding(x, permutation, shape))


def _transpose_batch(axis_data, args, dims, permutation):
    # one transpose: the batch dim goes first and the others follow the permutation
    bdim = dims[0]
    perm = (bdim, *(p + (p >= bdim) for p in permutation))
    return transpose(args[0], perm), 0


transpose_p = define_primitive(
    "transpose",
    abstract_eval=_transpose_abstract_eval,
    reference=lambda x, permutation: np.transpose(x, permutation),
    jvp=linear,
    transpose=lambda ct, x, permutation: [transpose(ct, tuple(np.argsort(permutation).tolist()))],
    batch=_transpose_batch,
)


# ----- iota ---------------------------------------------------------------------------------


def iota(dtype, size: int):
    """`[0, 1, ..., size - 1]` of `dtype`.

    Example:
      >>> iota(np.int32, 3)
      array([0, 1, 2], dtype=int32)
    """
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = canonicalize_shape(size, "lax.iota")
    return iota_p.bind(dtype=dtype, shape=shape, dimension=0, sharding=None)


def _iota_reference(dtype, shape, dimension, sharding):
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    values = np.arange(shape[dimension], dtype=dtype).reshape(expanded)
    return np.array(np.broadcast_to(values, shape))


def _iota_abstract_eval(dtype, shape, dimension, sharding):
    # XLA has no boolean iota; refuse it here, as JAX does, not in the compiler
    check_dtype("iota", dtype, NUMERIC)
    return ShapedArray(shape, dtype, sharding=requested_sharding(sharding, len(shape)))


iota_p = define_primitive(
    "iota",
    abstract_eval=_iota_abstract_eval,
    reference=_iota_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=NO_OPERANDS,
)


def broadcasted_iota(dtype, shape, dimension: int, out_sharding=None, *, sharding=None):
    """An array of `shape` counting 0, 1, ... along `dimension` (constant along the others).

    Example:
      >>> broadcasted_iota(np.int32, (2, 3), 1)
      array([[0, 1, 2],
             [0, 1, 2]], dtype=int32)
    """
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = canonicalize_shape(shape, "broadcasted_iota")
    dimension = checked_axis(dimension, len(shape), "broadcasted_iota")
    # `out_sharding` is JAX's name (a NamedSharding, or a PartitionSpec of the mesh in context)
    sharding = out_sharding if out_sharding is not None else sharding
    return iota_p.bind(dtype=dtype, shape=shape, dimension=dimension, sharding=sharding)


# ----- dimension_as_value -------------------------------------------------------------------


def _dim_value_aval(dim):
    return ShapedArray((), dtypes.canonicalize_dtype(np.int64), weak_type=True)


def _dim_value_reference(dim):
    raise _shape_poly.InconclusiveDimensionOperation(
        f"Symbolic dimension '{dim}' has no value outside a program exported with symbolic "
        "shapes; use it inside the exported function.")


dimension_value_p = define_primitive(
    "dimension_value",
    abstract_eval=_dim_value_aval,
    reference=_dim_value_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=NO_OPERANDS,
)


def dimension_as_value(dim):
    """A dimension as an integer scalar to compute with: the int itself, or for a symbolic
    dimension the value the program computes from its arguments' shapes (JAX's
    `core.dimension_as_value`)."""
    if isinstance(dim, _shape_poly.DimExpr):
        return dimension_value_p.bind(dim=dim)
    return dim


_shape_poly.dimension_as_value_hook.append(dimension_as_value)


# ----- rev ----------------------------------------------------------------------------------


def rev(operand, dimensions):
    """Reverses `operand` along each of `dimensions`.

    Example:
      >>> rev(np.arange(3, dtype=np.int32), (0,))
      array([2, 1, 0], dtype=int32)
    """
    dims = tuple(operator.index(d) for d in dimensions)
    return rev_p.bind(operand, dimensions=dims)


def _rev_abstract_eval(x, dimensions):
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < x.ndim for d in dimensions):
        raise TypeError(f"rev: dimensions {dimensions} must be distinct dimensions of an array "
                        f"of shape {x.shape}.")
    return ShapedArray(x.shape, x.dtype, x.weak_type, x.sharding)


def _rev_batch(axis_data, args, dims, dimensions):
    x = move_bdim(args[0], dims[0], 0)
    return rev(x, tuple(d + 1 for d in dimensions)), 0


rev_p = define_primitive(
    "rev",
    abstract_eval=_rev_abstract_eval,
    reference=lambda x, dimensions: np.flip(x, dimensions) if dimensions else x,
    jvp=linear,
    transpose=lambda ct, x, dimensions: [rev(ct, dimensions)],
    batch=_rev_batch,
)


# ----- compositions: full, broadcast, collapse, and the *_in_dim slicing helpers -------------


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of `shape` filled with `fill_value` (of `dtype`, else the value's dtype).

    Example:
      >>> full((2,), 1.5, np.float32)
      array([1.5, 1.5], dtype=float32)
    """
    if dtype is not None and np.dtype(dtype) == dtypes.float0:
        # float0 holds no data: a NumPy array under every transformation, as JAX's
        return np.zeros(canonicalize_shape(shape, "full"), dtypes.float0)
    (value,) = as_operands(fill_value)  # a Python scalar stays weakly typed
    concrete = not isinstance(value, _trace.Tracer)
    if dtype is not None and concrete:  # converted now, so the jaxpr holds a literal
        value = np.asarray(value, dtypes.canonicalize_dtype(dtype))
    elif dtype is not None and get_aval(value).dtype != dtypes.canonicalize_dtype(dtype):
        value = _hooks.convert_element_type(value, dtype)  # _elementwise builds on this module
    if get_aval(value).ndim:
        raise TypeError(f"full must be called with a scalar fill_value, got "
                        f"{get_aval(value).str_short()}.")
    return broadcast_in_dim(value, canonicalize_shape(shape, "full"), (), sharding)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """`full` with the shape and dtype of `x` unless given."""
    aval = get_aval(x)
    if sharding is None and shape is None:
        sharding = aval.sharding  # same type as x, split as x is along Explicit mesh axes
    out = full(aval.shape if shape is None else shape, fill_value,
               aval.dtype if dtype is None else dtype, sharding=sharding)
    return vary_like(x, out)


def broadcast(operand, sizes, *, out_sharding=None):
    """`operand` with new leading dimensions of `sizes`."""
    aval = get_aval(operand)
    dims = tuple(range(len(sizes), len(sizes) + aval.ndim))
    return broadcast_in_dim(operand, (*sizes, *aval.shape), dims, out_sharding=out_sharding)


def broadcast_to_rank(x, rank: int):
    """`x` with leading size-1 dimensions added up to `rank`."""
    aval = get_aval(x)
    if aval.ndim >= rank:
        return x
    return broadcast(x, (1,) * (rank - aval.ndim))


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """`operand` with dimensions `start_dimension:stop_dimension` merged into one."""
    shape = get_aval(operand).shape
    stop = len(shape) if stop_dimension is None else stop_dimension
    size = int(np.prod(shape[start_dimension:stop], dtype=np.int64))
    return reshape(operand, (*shape[:start_dimension], size, *shape[stop:]))


_hooks.install(broadcast_in_dim=broadcast_in_dim, reshape=reshape, squeeze=squeeze)
