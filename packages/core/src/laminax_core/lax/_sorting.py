"""Sorting and selection: `sort` (several operands sorted together by their first `num_keys`)
and `top_k`. Both differentiate by gathering the tangents with the permutation they apply.

Order: NaNs sort last (top_k treats them as largest), -0.0 and 0.0 compare equal, complex
numbers compare by real then imaginary part, and ties keep their input order.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, ShardingTypeError, get_aval
from laminax_core._interpreters.batching import bdim_at_front, move_bdim
from laminax_core._interpreters.jvp import Zero
from laminax_core._primitive import NOT_LINEAR, check_dtype, define_primitive
from laminax_core._sharding_rules import unsplit_axis_sharding
from laminax_core.lax._indexing import GatherDimensionNumbers, GatherScatterMode, gather
from laminax_core.lax._structural import broadcasted_iota, expand_dims

__all__ = ["sort", "sort_key_val", "top_k", "take_along_axis"]
# the primitives, which lax exports beside their functions
__all__ += [
    "sort_p", "top_k_p",
]  # fmt: skip


def _canonical_dimension(ndim: int, dimension: int, name: str) -> int:
    dimension = operator.index(dimension)
    if not -ndim <= dimension < max(ndim, 1):
        raise ValueError(f"{name}: dimension {dimension} is out of bounds for rank {ndim}.")
    return dimension % max(ndim, 1)


def take_along_axis(x, indices, axis: int):
    """`x` permuted along `axis` by integer `indices` of the same shape (a gather whose other
    dimensions are batching dimensions, so it transposes to a scatter-add)."""
    shape = get_aval(indices).shape
    others = tuple(d for d in range(len(shape)) if d != axis)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                   start_index_map=(axis,), operand_batching_dims=others,
                                   start_indices_batching_dims=others)
    return gather(x, expand_dims(indices, (len(shape),)), dnums, (1,) * len(shape),
                  mode=GatherScatterMode.PROMISE_IN_BOUNDS)


def _sort_keys(x):
    """NumPy lexsort keys (least significant first) that order `x` as lax.sort does."""
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return [x.imag, x.real]
    if dtypes.issubdtype(x.dtype, np.floating) and x.dtype.itemsize < 4:
        return [x.astype(np.float32)]
    return [x]


# ----- sort ---------------------------------------------------------------------------------


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sorts `operand` (an array, or a sequence of arrays of one shape sorted together by the
    first `num_keys` of them, lexicographically) along `dimension`.

    Example:
      >>> keys, values = sort((np.array([3, 1, 2], np.int32), np.array([0, 1, 2], np.int32)))
      >>> values
      array([1, 2, 0], dtype=int32)
    """
    single = not isinstance(operand, tuple | list)
    operands = [operand] if single else list(operand)
    if single and num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    ndim = get_aval(operands[0]).ndim
    dimension = _canonical_dimension(ndim, dimension, "sort")
    outs = sort_p.bind(*operands, dimension=dimension, is_stable=bool(is_stable),
                       num_keys=operator.index(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """Sorts `keys` along `dimension` and permutes `values` the same way."""
    return sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)


def _sort_abstract_eval(*xs, dimension, is_stable, num_keys):
    if not xs:
        raise TypeError("sort requires at least one operand.")
    if len({x.shape for x in xs}) > 1:
        listed = " ".join(str(x.shape) for x in xs)
        raise TypeError(f"Arguments to sort must have equal shapes, got: {listed}")
    if not 1 <= num_keys <= len(xs):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(xs)}).")
    if xs[0].ndim and not 0 <= dimension < xs[0].ndim:
        raise ValueError(f"sort: dimension {dimension} is out of bounds for shape "
                         f"{xs[0].shape}.")
    sharding = _sort_sharding(xs, dimension)
    return [ShapedArray(x.shape, x.dtype, x.weak_type, sharding) for x in xs]


def _sort_sharding(xs, dimension):
    """The typed operands' common sharding, which every result gets (an untyped operand, such
    as argsort's iota, follows the keys as JAX builds it)."""
    typed = [x for x in xs if x.sharding is not None]
    for x in typed:
        unsplit_axis_sharding(
            x, dimension, "sort",
            "Arguments to sort must be unsharded over the sorting dimension. Got arg sharding="
            f"{x.str_short()} and sorting dimension={dimension}; reshard it first.")
        if x.sharding != typed[0].sharding:
            shown = " ".join(a.str_short() for a in typed)
            raise ShardingTypeError(f"Arguments to sort must have equal shardings, got: {shown}")
    return typed[0].sharding if typed else None


def _sort_reference(*xs, dimension, is_stable, num_keys):
    if xs[0].ndim == 0:
        return list(xs)
    keys = [k for x in reversed(xs[:num_keys]) for k in _sort_keys(x)]
    order = np.lexsort(keys, axis=dimension)
    return [np.take_along_axis(x, order, axis=dimension) for x in xs]


def _sort_jvp(primals, tangents, dimension, is_stable, num_keys):
    shape = get_aval(primals[0]).shape
    iota = broadcasted_iota(np.int32, shape, dimension) if shape else np.zeros((), np.int32)
    *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                              num_keys=num_keys)
    out_tangents = [
        Zero.from_primal_value(o) if isinstance(t, Zero) or not shape
        else take_along_axis(t, perm, dimension)
        for o, t in zip(outs, tangents, strict=True)
    ]
    return outs, out_tangents


def _sort_batch(axis_data, args, dims, dimension, is_stable, num_keys):
    moved = [bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims, strict=True)]
    outs = sort_p.bind(*moved, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


sort_p = define_primitive(
    "sort",
    abstract_eval=_sort_abstract_eval,
    reference=_sort_reference,
    jvp=_sort_jvp,
    transpose=NOT_LINEAR,
    batch=_sort_batch,
    multiple_results=True,
)


# ----- top_k --------------------------------------------------------------------------------


def top_k(operand, k: int, *, axis: int = -1):
    """The `k` largest entries along `axis` (descending) and their int32 indices.

    Example:
      >>> values, indices = top_k(np.array([1, 5, 3], np.float32), 2)
      >>> values, indices
      (array([5., 3.], dtype=float32), array([1, 2], dtype=int32))
    """
    ndim = get_aval(operand).ndim
    axis = _canonical_dimension(ndim, axis, "top_k")
    values, indices = top_k_p.bind(operand, k=operator.index(k), axis=axis)
    return values, indices


def _top_k_abstract_eval(x, k, axis):
    check_dtype("top_k", x.dtype, (np.integer, np.floating, np.bool_))
    if x.ndim == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got ().")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if x.shape[axis] < k:
        raise ValueError(f"k argument to top_k must be no larger than size along axis; got "
                         f"k={k} with shape={list(x.shape)} and axis={axis}")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    sharding = unsplit_axis_sharding(x, axis, "top_k")
    return [ShapedArray(shape, x.dtype, x.weak_type, sharding),
            ShapedArray(shape, np.int32, sharding=sharding)]


def _top_k_reference(x, k, axis):
    if dtypes.issubdtype(x.dtype, np.floating):
        wide = x.astype(np.float64)
        descending, not_nan = -wide, ~np.isnan(wide)
    else:  # an order-reversing map without overflow
        ints = x.astype(np.uint8) if x.dtype == np.bool_ else x
        signed = dtypes.issubdtype(ints.dtype, np.signedinteger)
        descending = ~ints if signed else np.iinfo(ints.dtype).max - ints
        not_nan = np.ones(x.shape, bool)
    order = np.lexsort([descending, not_nan], axis=axis)
    indices = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, indices, axis=axis), indices.astype(np.int32)]


def _top_k_jvp(primals, tangents, k, axis):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    tangent = Zero.from_primal_value(values) if isinstance(t, Zero) else take_along_axis(
        t, indices, axis)
    return [values, indices], [tangent, Zero.from_primal_value(indices)]


def _top_k_batch(axis_data, args, dims, k, axis):
    x = move_bdim(args[0], dims[0], 0)
    return top_k_p.bind(x, k=k, axis=axis + 1), [0, 0]


top_k_p = define_primitive(
    "top_k",
    abstract_eval=_top_k_abstract_eval,
    reference=_top_k_reference,
    jvp=_top_k_jvp,
    transpose=NOT_LINEAR,
    batch=_top_k_batch,
    multiple_results=True,
)
