"""Structural primitives: broadcasting, reshaping, transposition, slicing, padding and
concatenation. All are linear in their array operands."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import _trace, dtypes
from laminax_core._avals import ShapedArray, canonicalize_shape, get_aval
from laminax_core._interpreters.batching import batch_rules, bdim_at_front, move_bdim
from laminax_core._interpreters.jvp import Zero, instantiate_zeros, zeros_like_aval
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._primitive import (
    NO_OPERANDS,
    NOT_LINEAR,
    ZERO_TANGENT,
    define_primitive,
    linear,
)
from laminax_core.lax._helpers import as_operands

__all__ = [
    "broadcast", "broadcast_in_dim", "broadcast_to_rank", "broadcasted_iota", "collapse",
    "concatenate", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim",
    "expand_dims", "full", "full_like", "index_in_dim", "iota", "pad", "reshape", "rev", "slice",
    "slice_in_dim", "split", "squeeze", "stack", "tile", "transpose", "unstack",
]  # fmt: skip


def _axis(axis: int, ndim: int, name: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}.")
    return axis % ndim if ndim else 0


# ----- broadcast_in_dim ---------------------------------------------------------------------


def broadcast_in_dim(operand, shape, broadcast_dimensions, sharding=None):
    """Broadcasts `operand` to `shape`; operand dim i becomes dim `broadcast_dimensions[i]`.

    Example:
      >>> broadcast_in_dim(np.arange(3, dtype=np.float32), (2, 3), (1,)).shape
      (2, 3)
    """
    (operand,) = as_operands(operand)
    return broadcast_in_dim_p.bind(
        operand, shape=canonicalize_shape(shape, "broadcast_in_dim"),
        broadcast_dimensions=tuple(operator.index(d) for d in broadcast_dimensions),
        sharding=sharding,
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
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_reference(x, shape, broadcast_dimensions, sharding):
    expanded = [1] * len(shape)
    for size, d in zip(x.shape, broadcast_dimensions, strict=True):
        expanded[d] = size
    return np.array(np.broadcast_to(np.reshape(x, expanded), shape))


def _broadcast_in_dim_transpose(ct, x, shape, broadcast_dimensions, sharding):
    # _structural and the families below it define each other's rules: bound at call time
    from laminax_core.lax._reductions import reduce_sum

    dims = broadcast_dimensions
    summed = [d for d in range(len(shape)) if d not in dims]
    summed += [d for size, d in zip(x.aval.shape, dims, strict=True) if size == 1 != shape[d]]
    out = reduce_sum(ct, tuple(sorted(summed))) if summed else ct
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
    dims = sorted(_axis(d, ndim_out, "expand_dims") for d in dimensions)
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(ndim_out) if i not in dims)
    return broadcast_in_dim(array, tuple(shape), kept)


# ----- reshape ------------------------------------------------------------------------------


def reshape(operand, new_sizes, dimensions=None, sharding=None):
    """Reshapes `operand` (after transposing it by `dimensions`, if given)."""
    new_sizes = canonicalize_shape(new_sizes, "reshape")
    if dimensions is not None:
        dimensions = tuple(operator.index(d) for d in dimensions)
    if get_aval(operand).shape == new_sizes and dimensions is None:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dimensions, sharding=sharding)


def _reshape_abstract_eval(x, new_sizes, dimensions, sharding):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise TypeError(f"reshape: cannot reshape an array of shape {x.shape} (size {x.size}) "
                        f"into shape {new_sizes}.")
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(f"reshape: dimensions {dimensions} must be a permutation of "
                        f"{tuple(range(x.ndim))}.")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


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
    dims = tuple(sorted({_axis(d, ndim, "squeeze") for d in dimensions}))
    return squeeze_p.bind(array, dimensions=dims)


def _squeeze_abstract_eval(x, dimensions):
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise TypeError(f"squeeze: dimension {d} of an array of shape {x.shape} is not of "
                            "size 1; only size-1 dimensions can be squeezed.")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type)


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
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


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


# ----- slice --------------------------------------------------------------------------------


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 (JAX's name)
    """The static slice `operand[start:limit:stride, ...]`."""
    start = tuple(operator.index(i) for i in start_indices)
    limit = tuple(operator.index(i) for i in limit_indices)
    strides = None if strides is None else tuple(operator.index(s) for s in strides)
    return slice_p.bind(operand, start_indices=start, limit_indices=limit, strides=strides)


def _slice_abstract_eval(x, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise TypeError(f"slice: start_indices {start_indices}, limit_indices {limit_indices} and "
                        f"strides must each have one entry per dimension of shape {x.shape}.")
    shape = []
    for size, lo, hi, step in zip(x.shape, start_indices, limit_indices, strides, strict=True):
        if not 0 <= lo <= hi <= size or step < 1:
            raise TypeError(f"slice: start_indices {start_indices} and limit_indices "
                            f"{limit_indices} must satisfy 0 <= start <= limit <= {x.shape}.")
        shape.append((hi - lo + step - 1) // step)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _slice_reference(x, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    index = tuple(
        np.s_[lo:hi:step] for lo, hi, step in zip(start_indices, limit_indices, strides, strict=True)
    )
    return x[index]


def _slice_transpose(ct, x, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.aval.ndim
    out_shape = get_aval(ct).shape
    config = []
    for size, lo, step, n in zip(x.aval.shape, start_indices, strides, out_shape, strict=True):
        if n == 0:
            config.append((size, 0, 0))
        else:
            config.append((lo, size - (lo + (n - 1) * step + 1), step - 1))
    return [pad(ct, np.zeros((), get_aval(ct).dtype), tuple(config))]


def _slice_batch(axis_data, args, dims, start_indices, limit_indices, strides):
    x = move_bdim(args[0], dims[0], 0)
    strides = None if strides is None else (1, *strides)
    return slice(x, (0, *start_indices), (axis_data.size, *limit_indices), strides), 0


slice_p = define_primitive(
    "slice",
    abstract_eval=_slice_abstract_eval,
    reference=_slice_reference,
    jvp=linear,
    transpose=_slice_transpose,
    batch=_slice_batch,
)


# ----- dynamic_slice, dynamic_update_slice --------------------------------------------------


def _start_operand(i, size: int, allow_negative: bool):
    """One start index as a scalar integer operand; a negative one counts from the end of its
    dimension where `allow_negative` (statically for Python and NumPy integers, else staged)."""
    if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
        dtype = get_aval(as_operands(i)[0]).dtype
        if dtypes.issubdtype(dtype, np.unsignedinteger):
            return i
        if i < 0 and not allow_negative:
            raise ValueError(f"Index {i} is out of bounds for dimension {size} with "
                             "allow_negative_indices=False; pass a non-negative index.")
        return np.asarray(i + size if i < 0 else i, dtype)
    (i,) = as_operands(i)
    aval = get_aval(i)
    if not dtypes.issubdtype(aval.dtype, np.integer) or aval.ndim != 0:
        raise TypeError(f"dynamic slice indices must be integer scalars, got {aval}.")
    if not allow_negative or dtypes.issubdtype(aval.dtype, np.unsignedinteger):
        return i
    # _structural and the families below it define each other's rules: bound at call time
    from laminax_core.lax._elementwise import add, lt, select_n

    end = np.asarray(size, aval.dtype)
    if isinstance(i, np.ndarray):  # a constant: the test is concrete, the sum is staged
        return select_n(np.less(i, 0), i, add(i, end))
    if isinstance(i, _trace.Tracer):  # `+` promotes a weakly typed index as JAX does
        return select_n(lt(i, 0), i, i + end)
    return select_n(lt(i, 0), i, add(i, end))


def _start_operands(shape, start_indices, allow_negative_indices, name: str) -> list:
    if len(start_indices) != len(shape):
        raise ValueError(f"{name}: an operand of shape {shape} needs {len(shape)} start "
                         f"indices, got {len(start_indices)}.")
    allow = allow_negative_indices
    allow = [allow] * len(shape) if isinstance(allow, bool) else list(allow)
    if len(allow) != len(shape):
        raise ValueError(f"{name}: allow_negative_indices needs one bool per dimension of "
                         f"{shape}, got {len(allow)}.")
    return [_start_operand(i, d, a) for i, d, a in zip(start_indices, shape, allow, strict=True)]


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """`operand[start:start+size, ...]` with traced starts, clamped to stay in bounds.

    Args:
      operand: the array to slice.
      start_indices: one integer scalar per dimension (traced or not).
      slice_sizes: the static size of the slice in every dimension.
      allow_negative_indices: a bool, or one per dimension: whether a negative start counts
        from the end of its dimension (otherwise it is out of bounds and clamps to 0).

    Returns:
      The slice, of shape `slice_sizes`.

    Example:
      >>> dynamic_slice(np.arange(5, dtype=np.float32), (-2,), (2,))
      array([3., 4.], dtype=float32)
    """
    sizes = canonicalize_shape(slice_sizes, "dynamic_slice")
    shape = get_aval(operand).shape
    starts = _start_operands(shape, start_indices, allow_negative_indices, "dynamic_slice")
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=sizes)


def _clamped_starts(shape, sizes, starts):
    return tuple(int(np.clip(s, 0, d - n)) for d, n, s in zip(shape, sizes, starts, strict=True))


def _dynamic_slice_abstract_eval(x, *indices, slice_sizes):
    if len(indices) != x.ndim or len(slice_sizes) != x.ndim:
        raise TypeError(f"dynamic_slice: an operand of shape {x.shape} needs {x.ndim} start "
                        f"indices and slice sizes, got {len(indices)} and {len(slice_sizes)}.")
    if any(not 0 <= n <= d for n, d in zip(slice_sizes, x.shape, strict=True)):
        raise TypeError(f"dynamic_slice: slice_sizes {slice_sizes} exceed the operand shape "
                        f"{x.shape}.")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def _dynamic_slice_reference(x, *indices, slice_sizes):
    starts = _clamped_starts(x.shape, slice_sizes, indices)
    return x[tuple(np.s_[s:s + n] for s, n in zip(starts, slice_sizes, strict=True))]


def _dynamic_slice_jvp(primals, tangents, slice_sizes):
    x, *indices = primals
    ans = dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    if isinstance(tangents[0], Zero):
        return ans, Zero.from_primal_value(ans)
    return ans, dynamic_slice_p.bind(tangents[0], *indices, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *indices, slice_sizes):
    zeros = zeros_like_aval(x.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


def _batched_start_vector(size: int, starts, dims):
    """The scalar start indices of a batched dynamic slice as one index vector: `(size, n)`
    with its batch dimension first if any start is batched (then 0), else `(n,)` (None)."""
    if not any(d is not None for d in dims):
        return concatenate([broadcast(i, (1,)) for i in starts], 0), None
    columns = [broadcast_in_dim(i, (size, 1), () if d is None else (0,))
               for i, d in zip(starts, dims, strict=True)]
    return concatenate(columns, 1), 0


def _dynamic_slice_batch(axis_data, args, dims, slice_sizes):
    # a dynamic slice is a gather of one window: batch it as that gather (as JAX does)
    from laminax_core.lax import _indexing

    everything = tuple(range(len(slice_sizes)))
    dnums = _indexing.GatherDimensionNumbers(offset_dims=everything, collapsed_slice_dims=(),
                                             start_index_map=everything)
    index, index_dim = _batched_start_vector(axis_data.size, args[1:], dims[1:])
    return batch_rules[_indexing.gather_p](
        axis_data, [args[0], index], [dims[0], index_dim], dimension_numbers=dnums,
        slice_sizes=slice_sizes, unique_indices=True, indices_are_sorted=True,
        mode=_indexing.GatherScatterMode.CLIP, fill_value=None)


dynamic_slice_p = define_primitive(
    "dynamic_slice",
    abstract_eval=_dynamic_slice_abstract_eval,
    reference=_dynamic_slice_reference,
    jvp=_dynamic_slice_jvp,
    transpose=_dynamic_slice_transpose,
    batch=_dynamic_slice_batch,
)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """`operand` with `update` written at traced `start_indices` (clamped to stay in bounds).

    Args:
      operand: the array to update.
      update: the values to write, of the operand's rank and dtype.
      start_indices: one integer scalar per dimension (traced or not).
      allow_negative_indices: a bool, or one per dimension: whether a negative start counts
        from the end of its dimension.

    Returns:
      The updated copy of `operand`.

    Example:
      >>> dynamic_update_slice(np.zeros(4, np.float32), np.ones(2, np.float32), (-2,))
      array([0., 0., 1., 1.], dtype=float32)
    """
    (update,) = as_operands(update)
    shape = get_aval(operand).shape
    starts = _start_operands(shape, start_indices, allow_negative_indices,
                             "dynamic_update_slice")
    return dynamic_update_slice_p.bind(operand, update, *starts)


def _dynamic_update_slice_abstract_eval(x, update, *indices):
    if update.ndim != x.ndim or len(indices) != x.ndim:
        raise TypeError(f"dynamic_update_slice: operand {x.shape}, update {update.shape} and "
                        f"{len(indices)} indices must have the same rank.")
    if any(u > d for u, d in zip(update.shape, x.shape, strict=True)):
        raise TypeError(f"dynamic_update_slice: update shape {update.shape} exceeds the operand "
                        f"shape {x.shape}.")
    if update.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice: update dtype {update.dtype.name} differs from "
                        f"the operand dtype {x.dtype.name}.")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _dynamic_update_slice_reference(x, update, *indices):
    starts = _clamped_starts(x.shape, update.shape, indices)
    out = np.array(x)
    out[tuple(np.s_[s:s + n] for s, n in zip(starts, update.shape, strict=True))] = update
    return out


def _dynamic_update_slice_jvp(primals, tangents):
    x, update, *indices = primals
    ans = dynamic_update_slice_p.bind(x, update, *indices)
    if isinstance(tangents[0], Zero) and isinstance(tangents[1], Zero):
        return ans, Zero.from_primal_value(ans)
    t_x, t_update = instantiate_zeros(tangents[0]), instantiate_zeros(tangents[1])
    return ans, dynamic_update_slice_p.bind(t_x, t_update, *indices)


def _dynamic_update_slice_transpose(ct, x, update, *indices):
    update_aval = update.aval if undefined(update) else get_aval(update)
    ct_x = ct_update = None
    if undefined(x):
        ct_x = dynamic_update_slice_p.bind(ct, zeros_like_aval(update_aval), *indices)
    if undefined(update):
        ct_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=update_aval.shape)
    return [ct_x, ct_update] + [None] * len(indices)


def _dynamic_update_slice_batch(axis_data, args, dims):
    # a dynamic update slice is a scatter of one window: batch it as that scatter (as JAX does)
    from laminax_core.lax import _indexing

    x, update, *starts = args
    everything = tuple(range(len(starts)))
    dnums = _indexing.ScatterDimensionNumbers(
        update_window_dims=everything, inserted_window_dims=(),
        scatter_dims_to_operand_dims=everything)
    index, index_dim = _batched_start_vector(axis_data.size, starts, dims[2:])
    return batch_rules[_indexing.scatter_p](
        axis_data, [x, index, update], [dims[0], index_dim, dims[1]], dimension_numbers=dnums,
        indices_are_sorted=True, unique_indices=True, mode=_indexing.GatherScatterMode.CLIP,
        update_jaxpr=None, update_consts=())


dynamic_update_slice_p = define_primitive(
    "dynamic_update_slice",
    abstract_eval=_dynamic_update_slice_abstract_eval,
    reference=_dynamic_update_slice_reference,
    jvp=_dynamic_update_slice_jvp,
    transpose=_dynamic_update_slice_transpose,
    batch=_dynamic_update_slice_batch,
)


# ----- concatenate --------------------------------------------------------------------------


def concatenate(operands, dimension: int):
    """Joins `operands` along `dimension` (same dtypes, same other dimensions).

    Example:
      >>> concatenate([np.zeros(1, np.float32), np.ones(2, np.float32)], 0)
      array([0., 1., 1.], dtype=float32)
    """
    if len(operands) == 1 and isinstance(operands[0], _trace.Tracer):
        return operands[0]  # nothing to join (JAX stages no equation either)
    return concatenate_p.bind(*as_operands(*operands), dimension=operator.index(dimension))


def _concatenate_abstract_eval(*xs, dimension):
    if not xs:
        raise TypeError("concatenate needs at least one operand.")
    first = xs[0]
    if not 0 <= dimension < first.ndim:
        raise TypeError(f"concatenate: dimension {dimension} is out of bounds for rank "
                        f"{first.ndim}.")
    for x in xs:
        others = lambda s: s[:dimension] + s[dimension + 1:]  # noqa: E731
        if x.dtype != first.dtype or x.ndim != first.ndim or others(x.shape) != others(first.shape):
            raise TypeError(f"concatenate: operands must agree in dtype and in every dimension "
                            f"but {dimension}; got {[a.str_short() for a in xs]}.")
    size = sum(x.shape[dimension] for x in xs)
    shape = first.shape[:dimension] + (size,) + first.shape[dimension + 1:]
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


def _concatenate_transpose(ct, *xs, dimension):
    sizes = [(x.aval if undefined(x) else get_aval(x)).shape[dimension] for x in xs]
    pieces = split(ct, sizes, dimension)
    return [piece if undefined(x) else None for piece, x in zip(pieces, xs, strict=True)]


def _concatenate_batch(axis_data, args, dims, dimension):
    moved = [bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims, strict=True)]
    return concatenate(moved, dimension + 1), 0


concatenate_p = define_primitive(
    "concatenate",
    abstract_eval=_concatenate_abstract_eval,
    reference=lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    jvp=linear,
    transpose=_concatenate_transpose,
    batch=_concatenate_batch,
)


# ----- split ------------------------------------------------------------------------------


def split(operand, sizes, axis: int = 0):
    """Splits `operand` along `axis` into pieces of the given `sizes` (which sum to its size).

    Example:
      >>> [p.shape for p in split(np.zeros(5, np.float32), (2, 3))]
      [(2,), (3,)]
    """
    sizes = tuple(operator.index(n) for n in sizes)
    axis = _axis(axis, get_aval(operand).ndim, "split")
    return split_p.bind(operand, sizes=sizes, axis=axis)


def _split_abstract_eval(x, sizes, axis):
    # ValueError, as JAX raises for these
    if not 0 <= axis < x.ndim:
        raise ValueError(f"split: axis {axis} is out of bounds for an array of shape {x.shape}.")
    if any(n < 0 for n in sizes) or sum(sizes) != x.shape[axis]:
        raise ValueError(f"split: sizes {sizes} must be non-negative and sum to dimension {axis} "
                         f"of shape {x.shape} (got {sum(sizes)}).")
    return [x.update(shape=x.shape[:axis] + (n,) + x.shape[axis + 1:]) for n in sizes]


def _split_transpose(cts, x, sizes, axis):
    shape = x.aval.shape
    pieces = [zeros_like_aval(x.aval.update(shape=shape[:axis] + (n,) + shape[axis + 1:]))
              if isinstance(ct, Zero) else ct for ct, n in zip(cts, sizes, strict=True)]
    return [concatenate(pieces, axis)]


def _split_batch(axis_data, args, dims, sizes, axis):
    # the batch dimension stays where it is (as in JAX): no transpose
    (bdim,) = dims
    return split(args[0], sizes, axis + 1 if axis >= bdim else axis), [bdim] * len(sizes)


split_p = define_primitive(
    "split",
    abstract_eval=_split_abstract_eval,
    reference=lambda x, sizes, axis: np.split(x, np.cumsum(sizes)[:-1], axis=axis),
    jvp=linear,
    transpose=_split_transpose,
    batch=_split_batch,
    multiple_results=True,
)


# ----- pad ----------------------------------------------------------------------------------


def pad(operand, padding_value, padding_config):
    """Pads `operand` with `padding_value`: `(low, high, interior)` per dimension (low and
    high may be negative, which crops)."""
    operand, padding_value = as_operands(operand, padding_value)
    config = tuple(tuple(operator.index(v) for v in triple) for triple in padding_config)
    return pad_p.bind(operand, padding_value, padding_config=config)


def _pad_abstract_eval(x, padding_value, padding_config):
    if padding_value.ndim != 0 or padding_value.dtype != x.dtype:
        raise TypeError(f"pad: padding_value must be a scalar of the operand's dtype "
                        f"{x.dtype.name}, got {padding_value.str_short()}.")
    if len(padding_config) != x.ndim or any(i < 0 for _, _, i in padding_config):
        raise TypeError(f"pad: padding_config {padding_config} needs one (low, high, interior) "
                        f"per dimension of shape {x.shape}, with interior >= 0.")
    shape = tuple(lo + hi + d + max(d - 1, 0) * i
                  for d, (lo, hi, i) in zip(x.shape, padding_config, strict=True))
    if any(s < 0 for s in shape):
        raise TypeError(f"pad: padding_config {padding_config} gives a negative dimension.")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_reference(x, padding_value, padding_config):
    grown = [max(lo, 0) + max(hi, 0) + d + max(d - 1, 0) * i
             for d, (lo, hi, i) in zip(x.shape, padding_config, strict=True)]
    out = np.full(grown, padding_value, dtype=x.dtype)
    inner = tuple(np.s_[max(lo, 0):max(lo, 0) + d + max(d - 1, 0) * i:i + 1]
                  for d, (lo, _, i) in zip(x.shape, padding_config, strict=True))
    out[inner] = x
    crop = tuple(np.s_[max(-lo, 0):g - max(-hi, 0)]
                 for g, (lo, hi, _) in zip(grown, padding_config, strict=True))
    return out[crop]


def _pad_transpose(ct, x, padding_value, padding_config):
    # _structural and the families below it define each other's rules: bound at call time
    from laminax_core.lax._elementwise import sub
    from laminax_core.lax._reductions import reduce_sum

    zero = np.zeros((), get_aval(ct).dtype)
    unpadded = pad(ct, zero, tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    ndim = get_aval(ct).ndim
    ct_x = slice(unpadded, (0,) * ndim, get_aval(unpadded).shape,
                 tuple(i + 1 for _, _, i in padding_config))
    ct_value = None
    if undefined(padding_value):
        all_axes = tuple(range(ndim))
        ct_value = sub(reduce_sum(ct, all_axes), reduce_sum(ct_x, all_axes))
    return [ct_x if undefined(x) else None, ct_value]


def _pad_batch(axis_data, args, dims, padding_config):
    # _structural and the families below it define each other's rules: bound at call time
    from laminax_core.lax._elementwise import select_n

    x = bdim_at_front(args[0], dims[0], axis_data.size)
    config = ((0, 0, 0), *padding_config)
    if dims[1] is None:
        return pad(x, args[1], config), 0
    # a batched padding value: pad with zeros, then select it where the mask says "padding"
    aval = get_aval(x)
    mask = pad(np.zeros(aval.shape, np.bool_), True, config)
    value = broadcast_in_dim(move_bdim(args[1], dims[1], 0), get_aval(mask).shape, (0,))
    return select_n(mask, pad(x, np.zeros((), aval.dtype), config), value), 0


pad_p = define_primitive(
    "pad",
    abstract_eval=_pad_abstract_eval,
    reference=_pad_reference,
    jvp=linear,
    transpose=_pad_transpose,
    batch=_pad_batch,
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


iota_p = define_primitive(
    "iota",
    abstract_eval=lambda dtype, shape, dimension, sharding: ShapedArray(shape, dtype),
    reference=_iota_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=NO_OPERANDS,
)


def broadcasted_iota(dtype, shape, dimension: int, sharding=None):
    """An array of `shape` counting 0, 1, ... along `dimension` (constant along the others).

    Example:
      >>> broadcasted_iota(np.int32, (2, 3), 1)
      array([[0, 1, 2],
             [0, 1, 2]], dtype=int32)
    """
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = canonicalize_shape(shape, "broadcasted_iota")
    dimension = _axis(dimension, len(shape), "broadcasted_iota")
    return iota_p.bind(dtype=dtype, shape=shape, dimension=dimension, sharding=sharding)


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
    return ShapedArray(x.shape, x.dtype, x.weak_type)


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
    (value,) = as_operands(fill_value)  # a Python scalar stays weakly typed
    concrete = not isinstance(value, _trace.Tracer)
    if dtype is not None and concrete:  # converted now, so the jaxpr holds a literal
        value = np.asarray(value, dtypes.canonicalize_dtype(dtype))
    elif dtype is not None and get_aval(value).dtype != dtypes.canonicalize_dtype(dtype):
        # _structural and the families below it define each other's rules: bound at call time
        from laminax_core.lax._elementwise import convert_element_type

        value = convert_element_type(value, dtype)
    if get_aval(value).ndim:
        raise TypeError(f"full must be called with a scalar fill_value, got "
                        f"{get_aval(value).str_short()}.")
    return broadcast_in_dim(value, canonicalize_shape(shape, "full"), (), sharding)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """`full` with the shape and dtype of `x` unless given."""
    aval = get_aval(x)
    return full(aval.shape if shape is None else shape, fill_value,
                aval.dtype if dtype is None else dtype, sharding=sharding)


def broadcast(operand, sizes):
    """`operand` with new leading dimensions of `sizes`."""
    aval = get_aval(operand)
    dims = tuple(range(len(sizes), len(sizes) + aval.ndim))
    return broadcast_in_dim(operand, (*sizes, *aval.shape), dims)


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


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """`operand[start:limit:stride]` along `axis` (None bounds mean the ends)."""
    shape = get_aval(operand).shape
    axis = _axis(axis, len(shape), "slice_in_dim")
    start = 0 if start_index is None else operator.index(start_index)
    limit = shape[axis] if limit_index is None else operator.index(limit_index)
    start, limit = (v + shape[axis] if v < 0 else v for v in (start, limit))
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis: int = 0, keepdims: bool = True):
    """The static `index` along `axis` (kept as a size-1 dimension if `keepdims`)."""
    shape = get_aval(operand).shape
    axis = _axis(axis, len(shape), "index_in_dim")
    index = operator.index(index)
    if not -shape[axis] <= index < shape[axis]:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size "
                         f"{shape[axis]}")
    index %= shape[axis]
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _in_dim_starts(ndim: int, start_index, axis: int, allow_negative_indices: bool):
    # zeros (of the index's dtype) on the other dimensions, which never count from the end
    zero = get_aval(as_operands(start_index)[0]).dtype.type(0)
    starts = [zero] * ndim
    starts[axis] = start_index
    allow = [False] * ndim
    allow[axis] = allow_negative_indices
    return starts, allow


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
    """`dynamic_slice` along one `axis` (start 0 on the others).

    Example:
      >>> dynamic_slice_in_dim(np.arange(6, dtype=np.float32).reshape(2, 3), 1, 2, axis=1)
      array([[1., 2.],
             [4., 5.]], dtype=float32)
    """
    shape = get_aval(operand).shape
    axis = _axis(axis, len(shape), "dynamic_slice_in_dim")
    starts, allow = _in_dim_starts(len(shape), start_index, axis, allow_negative_indices)
    sizes = list(shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """The traced `index` along `axis` (kept as a size-1 dimension if `keepdims`).

    Example:
      >>> dynamic_index_in_dim(np.arange(3, dtype=np.float32), -1, keepdims=False)
      array(2., dtype=float32)
    """
    axis = _axis(axis, get_aval(operand).ndim, "dynamic_index_in_dim")
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
    """`dynamic_update_slice` with the start given along one `axis` only.

    Example:
      >>> dynamic_update_slice_in_dim(np.zeros(3, np.float32), np.ones(1, np.float32), 1, 0)
      array([0., 1., 0.], dtype=float32)
    """
    ndim = get_aval(operand).ndim
    axis = _axis(axis, ndim, "dynamic_update_slice_in_dim")
    starts, allow = _in_dim_starts(ndim, start_index, axis, allow_negative_indices)
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices: bool = True):
    """Writes `update` (without, or with a size-1, `axis` dimension) at `index` along `axis`.

    Example:
      >>> dynamic_update_index_in_dim(np.zeros(3, np.float32), np.float32(1), -1, 0)
      array([0., 0., 1.], dtype=float32)
    """
    ndim = get_aval(operand).ndim
    axis = _axis(axis, ndim, "dynamic_update_index_in_dim")
    if get_aval(update).ndim == ndim - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# ----- tile ---------------------------------------------------------------------------------


def tile(operand, reps):
    """`operand` repeated `reps[i]` times along each dimension i.

    Example:
      >>> tile(np.array([1, 2], np.int32), (2,))
      array([1, 2, 1, 2], dtype=int32)
    """
    return tile_p.bind(operand, reps=tuple(operator.index(r) for r in reps))


def _tile_abstract_eval(x, reps):
    if len(reps) != x.ndim:
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} "
                        f"and x.ndim={x.ndim}.")
    if any(r < 0 for r in reps):
        raise TypeError(f"tile: reps {reps} must be non-negative.")
    return ShapedArray(tuple(d * r for d, r in zip(x.shape, reps, strict=True)), x.dtype,
                       x.weak_type)


def _tile_transpose(ct, x, reps):
    # the cotangent viewed as (r0, d0, r1, d1, ...), summed over the repetitions
    from laminax_core.lax._reductions import reduce_sum

    shape = x.aval.shape
    split_shape = tuple(v for r, d in zip(reps, shape, strict=True) for v in (r, d))
    summed = reduce_sum(reshape(ct, split_shape), tuple(range(0, 2 * len(shape), 2)))
    return [summed]


def _tile_batch(axis_data, args, dims, reps):
    x = move_bdim(args[0], dims[0], 0)
    return tile(x, (1, *reps)), 0


tile_p = define_primitive(
    "tile",
    abstract_eval=_tile_abstract_eval,
    reference=lambda x, reps: np.tile(x, reps),
    jvp=linear,
    transpose=_tile_transpose,
    batch=_tile_batch,
)


# ----- stack, unstack -----------------------------------------------------------------------


def stack(operands, axis: int = 0):
    """Joins arrays of one shape and dtype along a new dimension `axis`.

    Example:
      >>> stack([np.zeros(2, np.float32), np.ones(2, np.float32)], 1).shape
      (2, 2)
    """
    operands = as_operands(*operands)
    if not operands:
        raise ValueError("stack requires at least one array.")
    axis = _axis(axis, get_aval(operands[0]).ndim + 1, "stack")
    return stack_p.bind(*operands, axis=axis)


def _stack_abstract_eval(*xs, axis):
    first = xs[0]
    if len({x.shape for x in xs}) > 1:
        listed = ", ".join(str(x.shape) for x in xs)
        raise ValueError(f"All input arrays must have the same shape. Got {listed}.")
    if len({x.dtype for x in xs}) > 1:
        listed = ", ".join(x.dtype.name for x in xs)
        raise TypeError(f"lax.stack requires arguments to have the same dtypes, got {listed}.")
    shape = first.shape[:axis] + (len(xs),) + first.shape[axis:]
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


def _stack_transpose(ct, *xs, axis):
    pieces = unstack(ct, axis)
    return [piece if undefined(x) else None for piece, x in zip(pieces, xs, strict=True)]


def _stack_batch(axis_data, args, dims, axis):
    moved = [bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims, strict=True)]
    return stack_p.bind(*moved, axis=axis + 1), 0


stack_p = define_primitive(
    "stack",
    abstract_eval=_stack_abstract_eval,
    reference=lambda *xs, axis: np.stack(xs, axis),
    jvp=linear,
    transpose=_stack_transpose,
    batch=_stack_batch,
)


def unstack(operand, axis: int = 0):
    """The slices of `operand` along `axis`, as a tuple of arrays without that dimension.

    Example:
      >>> [a.shape for a in unstack(np.zeros((2, 3), np.float32), 1)]
      [(2,), (2,), (2,)]
    """
    axis = _axis(axis, get_aval(operand).ndim, "unstack")
    return tuple(unstack_p.bind(operand, axis=axis))


def _unstack_abstract_eval(x, axis):
    if not 0 <= axis < x.ndim:
        raise TypeError(f"unstack: axis {axis} is out of bounds for shape {x.shape}.")
    piece = x.update(shape=x.shape[:axis] + x.shape[axis + 1:])
    return [piece] * x.shape[axis]


def _unstack_transpose(cts, x, axis):
    pieces = [zeros_like_aval(ct.aval) if isinstance(ct, Zero) else ct for ct in cts]
    return [stack_p.bind(*pieces, axis=axis)]


def _unstack_batch(axis_data, args, dims, axis):
    x = move_bdim(args[0], dims[0], 0)
    outs = unstack_p.bind(x, axis=axis + 1)
    return outs, [0] * len(outs)


unstack_p = define_primitive(
    "unstack",
    abstract_eval=_unstack_abstract_eval,
    reference=lambda x, axis: [np.take(x, i, axis) for i in range(x.shape[axis])],
    jvp=linear,
    transpose=_unstack_transpose,
    batch=_unstack_batch,
    multiple_results=True,
)
