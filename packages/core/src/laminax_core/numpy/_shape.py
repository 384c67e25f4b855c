"""Shape manipulation: reshaping, transposing, broadcasting, joining, splitting, tiling,
flipping, rolling and padding. All shapes and counts are static (Python ints)."""

from __future__ import annotations

import math
import operator

import numpy as np

from laminax_core import _shape_poly, dtypes, lax
from laminax_core._avals import canonicalize_shape, get_aval
from laminax_core._sharding_rules import requested_sharding
from laminax_core.numpy import _indexing
from laminax_core.numpy._operands import (
    as_array,
    broadcast_to_shape,
    canonicalize_axes,
    canonicalize_axis,
    check_arraylike,
    concrete_array,
    convert_dtype,
    promote_dtypes,
)

__all__ = [
    "append", "array_split", "astype", "atleast_1d", "atleast_2d", "atleast_3d", "block",
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "column_stack", "concat", "concatenate",
    "dsplit", "dstack", "expand_dims", "flip", "fliplr", "flipud", "hsplit", "hstack", "isscalar",
    "iterable", "moveaxis", "ndim", "pad", "permute_dims", "ravel", "repeat", "reshape", "resize",
    "roll", "rollaxis", "rot90", "shape", "size", "split", "squeeze", "stack", "swapaxes", "tile",
    "transpose", "trim_zeros", "unstack", "vsplit", "vstack",
]  # fmt: skip


def _array(name, a):
    check_arraylike(name, a)
    return as_array(a)


def shape(a) -> tuple[int, ...]:
    """The shape of `a`.

    Example:
      >>> shape(np.zeros((2, 3)))
      (2, 3)
    """
    return get_aval(_array("shape", a)).shape


def ndim(a) -> int:
    """The number of dimensions of `a`.

    Example:
      >>> ndim(1.0)
      0
    """
    return get_aval(_array("ndim", a)).ndim


def size(a, axis: int | None = None) -> int:
    """The number of elements of `a` (along `axis` if given).

    Example:
      >>> size(np.zeros((2, 3)))
      6
    """
    aval = get_aval(_array("size", a))
    return aval.size if axis is None else aval.shape[canonicalize_axis(axis, aval.ndim)]


def _resolve_shape(name, size_, newshape):
    newshape = canonicalize_shape(newshape, f"jnp.{name}", allow_unknown=True)
    unknown = [i for i, d in enumerate(newshape) if type(d) is int and d == -1]
    if len(unknown) > 1:
        raise TypeError(f"jnp.{name}: can only specify one unknown dimension (-1), got "
                        f"{newshape}.")
    if unknown:
        known = math.prod([d for d in newshape if type(d) is not int or d != -1])
        if _shape_poly.is_symbolic_dim(size_ % known):
            raise _shape_poly.InconclusiveDimensionOperation(
                f"Cannot divide evenly the size {size_} into the shape {newshape}. The "
                f"remainder {size_ % known} should be 0.")
        if known == 0 or (size_ % known) != 0:
            raise TypeError(f"jnp.{name}: cannot reshape an array of size {size_} into shape "
                            f"{newshape}.")
        newshape = tuple(size_ // known if type(d) is int and d == -1 else d for d in newshape)
    newshape = canonicalize_shape(newshape, f"jnp.{name}")
    if math.prod(newshape) != size_:
        raise TypeError(f"jnp.{name}: cannot reshape an array of size {size_} into shape "
                        f"{newshape}: the sizes differ.")
    return newshape


def reshape(a, shape=None, order: str = "C", *, newshape=None, copy=None,  # noqa: A002
            out_sharding=None):
    """`a` with a new shape of the same size (one dimension may be -1).

    Args:
      a: the array.
      shape: an int or a tuple of ints.
      order: "C" (row-major) or "F" (column-major).
      newshape: NumPy's older name for `shape`.
      copy: accepted for NumPy compatibility.
      out_sharding: the result's layout on a mesh with Explicit axes (a `NamedSharding`, or a
        `PartitionSpec` of the mesh in context).

    Returns:
      The reshaped array.

    Example:
      >>> reshape(np.arange(6), (2, -1)).shape
      (2, 3)
    """
    del copy
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("jnp.reshape: the shape argument is required.")
    if type(a) is np.ndarray and order in ("C", "F", "A"):
        # JAX hands a NumPy array to its own reshape method, so a bad size raises NumPy's
        # ValueError there; checked on a zero-stride view (no memory)
        np.broadcast_to(np.zeros((), np.bool_), a.shape).reshape(shape, order=order)
    a = _array("reshape", a)
    aval = get_aval(a)
    new = _resolve_shape("reshape", aval.size, shape)
    if order == "F":
        reversed_sharding = out_sharding
        typed = requested_sharding(out_sharding, len(new))
        if typed is not None:  # the layout asked for, on the reversed dimensions
            reversed_sharding = typed.with_aval_partitions(typed.aval_partitions[::-1])
        return transpose(lax.reshape(transpose(a), new[::-1], out_sharding=reversed_sharding))
    if order not in ("C", "A"):
        raise ValueError(f"jnp.reshape: order must be 'C' or 'F', got {order!r}.")
    if new == aval.shape and out_sharding is None:
        return a
    return lax.reshape(a, new, out_sharding=out_sharding)


def ravel(a, order: str = "C", *, out_sharding=None):
    """`a` flattened to one dimension (laid out as `out_sharding` says, if given).

    Example:
      >>> ravel(np.ones((2, 2))).shape
      (4,)
    """
    a = _array("ravel", a)
    return reshape(a, (get_aval(a).size,), order, out_sharding=out_sharding)


def transpose(a, axes=None):
    """`a` with its axes permuted (reversed by default).

    Example:
      >>> transpose(np.zeros((2, 3, 4)), (1, 0, 2)).shape
      (3, 2, 4)
    """
    a = _array("transpose", a)
    n = get_aval(a).ndim
    if axes is None:
        perm = tuple(reversed(range(n)))
    else:
        perm = tuple(canonicalize_axis(ax, n, "jnp.transpose") for ax in axes)
        if sorted(perm) != list(range(n)):
            raise TypeError(f"jnp.transpose: axes {tuple(axes)} are not a permutation of the "
                             f"{n} axes.")
    return a if perm == tuple(range(n)) else lax.transpose(a, perm)


def permute_dims(a, /, axes):
    """The Array API name of `transpose` (axes required).

    Example:
      >>> permute_dims(np.zeros((2, 3)), (1, 0)).shape
      (3, 2)
    """
    return transpose(a, axes)


def moveaxis(a, source, destination):
    """`a` with axes moved from `source` to `destination` (ints or sequences).

    Example:
      >>> moveaxis(np.zeros((2, 3, 4)), 0, -1).shape
      (3, 4, 2)
    """
    a = _array("moveaxis", a)
    n = get_aval(a).ndim
    source = canonicalize_axes(source if isinstance(source, (list, tuple)) else [source], n,
                               "jnp.moveaxis")
    destination = canonicalize_axes(destination if isinstance(destination, (list, tuple))
                                    else [destination], n, "jnp.moveaxis")
    if len(source) != len(destination):
        raise ValueError("jnp.moveaxis: source and destination must have the same number of "
                         "elements.")
    order = [i for i in range(n) if i not in source]
    for dst, src in sorted(zip(destination, source, strict=True)):
        order.insert(dst, src)
    return transpose(a, order)


def swapaxes(a, axis1: int, axis2: int):
    """`a` with two axes exchanged.

    Example:
      >>> swapaxes(np.zeros((2, 3)), 0, 1).shape
      (3, 2)
    """
    a = _array("swapaxes", a)
    n = get_aval(a).ndim
    perm = list(range(n))
    i, j = canonicalize_axis(axis1, n, "jnp.swapaxes"), canonicalize_axis(axis2, n, "jnp.swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def squeeze(a, axis=None):
    """`a` without size-1 axes (only those in `axis`, if given).

    Example:
      >>> squeeze(np.zeros((1, 2, 1))).shape
      (2,)
    """
    a = _array("squeeze", a)
    aval = get_aval(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(aval.shape) if d == 1)
    else:
        axes = canonicalize_axes(axis, aval.ndim, "jnp.squeeze")
        for ax in axes:
            if aval.shape[ax] != 1:
                raise ValueError(f"jnp.squeeze: cannot select an axis to squeeze out which has "
                                 f"size not equal to one: axis {ax} of shape {aval.shape}.")
    return lax.squeeze(a, axes) if axes else a


def expand_dims(a, axis):
    """`a` with new size-1 axes at the positions `axis` of the result.

    Example:
      >>> expand_dims(np.zeros(3), (0, 2)).shape
      (1, 3, 1)
    """
    a = _array("expand_dims", a)
    axes = axis if isinstance(axis, (list, tuple)) else (axis,)
    out_ndim = get_aval(a).ndim + len(axes)
    axes = canonicalize_axes(tuple(axes), out_ndim, "jnp.expand_dims")
    return lax.expand_dims(a, tuple(sorted(axes)))


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape that `shapes` broadcast to.

    Example:
      >>> broadcast_shapes((2, 1), (3,))
      (2, 3)
    """
    try:
        return _shape_poly.broadcast_shapes(*shapes)
    except ValueError as err:
        raise ValueError(f"jnp.broadcast_shapes: incompatible shapes for broadcasting: "
                         f"{', '.join(map(str, shapes))}.") from err


def broadcast_to(array, shape, *, out_sharding=None):
    """`array` broadcast to `shape` by NumPy's rules (laid out as `out_sharding` says, if
    given).

    Example:
      >>> broadcast_to(np.arange(3), (2, 3)).shape
      (2, 3)
    """
    array = _array("broadcast_to", array)
    if isinstance(shape, tuple | list) and all(isinstance(d, int | np.integer) for d in shape):
        # JAX's order: shapes that do not match are a ValueError, also when the requested
        # size is negative; a negative size the operand would broadcast to is the shape
        # check's TypeError (below)
        a_shape, lead = get_aval(array).shape, len(shape) - get_aval(array).ndim
        if lead < 0 or any(d not in (1, s) for d, s in zip(a_shape, shape[lead:], strict=True)):
            raise ValueError(f"jnp.broadcast_to: incompatible shapes for broadcasting: "
                             f"{a_shape} and requested shape {tuple(shape)}.")
    shape = canonicalize_shape(shape, "jnp.broadcast_to")
    a_shape = get_aval(array).shape
    lead = len(shape) - len(a_shape)
    if lead < 0 or any(d not in (1, s) for d, s in zip(a_shape, shape[lead:], strict=True)):
        raise ValueError(f"jnp.broadcast_to: incompatible shapes for broadcasting: {a_shape} "
                         f"and requested shape {shape}.")
    if out_sharding is not None:
        return lax.broadcast_in_dim(array, shape, tuple(range(lead, len(shape))),
                                    out_sharding=out_sharding)
    return broadcast_to_shape(array, shape)


def broadcast_arrays(*args) -> list:
    """The arguments broadcast to their common shape.

    Example:
      >>> [x.shape for x in broadcast_arrays(np.zeros((2, 1)), np.zeros(3))]
      [(2, 3), (2, 3)]
    """
    check_arraylike("broadcast_arrays", *args)
    args = [as_array(a) for a in args]
    target = broadcast_shapes(*(get_aval(a).shape for a in args))
    return [broadcast_to_shape(a, target) for a in args]


def _atleast(name, n, arys, place):
    check_arraylike(name, *arys)
    out = []
    for a in arys:
        a = as_array(a)
        shape = get_aval(a).shape
        if len(shape) < n:
            a = lax.reshape(a, place(shape))
        out.append(a)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Each argument with at least one dimension.

    Example:
      >>> atleast_1d(1.0).shape
      (1,)
    """
    return _atleast("atleast_1d", 1, arys, lambda s: (1,))


def atleast_2d(*arys):
    """Each argument with at least two dimensions (a leading axis is added).

    Example:
      >>> atleast_2d(np.zeros(3)).shape
      (1, 3)
    """
    return _atleast("atleast_2d", 2, arys, lambda s: (1,) * (2 - len(s)) + s)


def atleast_3d(*arys):
    """Each argument with at least three dimensions (`(N,)` becomes `(1, N, 1)`).

    Example:
      >>> atleast_3d(np.zeros(3)).shape
      (1, 3, 1)
    """
    def place(s):
        return {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)]

    return _atleast("atleast_3d", 3, arys, place)


def concatenate(arrays, axis: int | None = 0, dtype=None):
    """The arrays joined along an existing `axis` (flattened first if `axis` is None).

    Args:
      arrays: a sequence of arrays (or a single array, joined along its first axis).
      axis: the axis, or None.
      dtype: the result dtype (default: the arrays' promoted dtype).

    Returns:
      The joined array.

    Example:
      >>> concatenate([np.zeros(2), np.ones(1)])
      array([0., 0., 1.], dtype=float32)
    """
    if not isinstance(arrays, (list, tuple)):
        check_arraylike("concatenate", arrays)
        arrays = list(arrays)
    if not arrays:
        raise ValueError("jnp.concatenate: need at least one array to concatenate.")
    check_arraylike("concatenate", *arrays)
    arrays = [as_array(a) for a in arrays]
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    arrays = promote_dtypes(*arrays) if len(arrays) > 1 else arrays
    if dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "concatenate")
        arrays = [convert_dtype(a, dtype) for a in arrays]
    ranks = {get_aval(a).ndim for a in arrays}
    if len(ranks) > 1 or 0 in ranks:
        raise TypeError("jnp.concatenate: all arrays must have the same number of dimensions "
                         f"(at least 1), got shapes {[get_aval(a).shape for a in arrays]}.")
    axis = canonicalize_axis(axis, ranks.pop(), "jnp.concatenate")
    return arrays[0] if len(arrays) == 1 else lax.concatenate(arrays, axis)


def concat(arrays, /, *, axis: int | None = 0):
    """The Array API name of `concatenate`.

    Example:
      >>> concat([np.zeros(1), np.ones(1)]).shape
      (2,)
    """
    return concatenate(arrays, axis)


def stack(arrays, axis: int = 0, out=None, dtype=None):
    """The arrays (all of one shape) joined along a new `axis`.

    Example:
      >>> stack([np.zeros(2), np.ones(2)], axis=1).shape
      (2, 2)
    """
    if out is not None:
        raise NotImplementedError("jnp.stack: the out argument is not supported.")
    if not isinstance(arrays, (list, tuple)):
        arrays = list(_array("stack", arrays))
    if not arrays:
        raise ValueError("jnp.stack: need at least one array to stack.")
    check_arraylike("stack", *arrays)
    arrays = [as_array(a) for a in arrays]
    shapes = {get_aval(a).shape for a in arrays}
    if len(shapes) > 1:
        raise ValueError(f"jnp.stack: all input arrays must have the same shape, got "
                         f"{[get_aval(a).shape for a in arrays]}.")
    axis = canonicalize_axis(axis, get_aval(arrays[0]).ndim + 1, "jnp.stack")
    arrays = promote_dtypes(*arrays) if len(arrays) > 1 else arrays
    if dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "stack")
        arrays = [convert_dtype(a, dtype) for a in arrays]
    return lax.stack(arrays, axis)


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The slices of `x` along `axis`, as a tuple.

    Example:
      >>> len(unstack(np.zeros((3, 2))))
      3
    """
    x = _array("unstack", x)
    if get_aval(x).ndim == 0:
        raise ValueError("jnp.unstack: x must have at least one dimension.")
    axis = canonicalize_axis(axis, get_aval(x).ndim, "jnp.unstack")
    return tuple(lax.unstack(x, axis))


def vstack(tup, dtype=None):
    """Joins arrays along the first axis (1-d arrays become rows).

    Example:
      >>> vstack([np.zeros(2), np.ones(2)]).shape
      (2, 2)
    """
    return concatenate(list(atleast_2d(*tup)) if len(tup) > 1 else [atleast_2d(*tup)], 0, dtype)


def hstack(tup, dtype=None):
    """Joins arrays along the second axis (the first for 1-d arrays).

    Example:
      >>> hstack([np.zeros(2), np.ones(3)]).shape
      (5,)
    """
    arrays = atleast_1d(*tup)
    arrays = list(arrays) if len(tup) > 1 else [arrays]
    return concatenate(arrays, 0 if get_aval(arrays[0]).ndim == 1 else 1, dtype)


def dstack(tup, dtype=None):
    """Joins arrays along the third axis.

    Example:
      >>> dstack([np.zeros((2, 2)), np.ones((2, 2))]).shape
      (2, 2, 2)
    """
    arrays = atleast_3d(*tup)
    return concatenate(list(arrays) if len(tup) > 1 else [arrays], 2, dtype)


def column_stack(tup):
    """Joins 1-d arrays as columns (2-d arrays as they are) into a 2-d array.

    Example:
      >>> column_stack([np.zeros(3), np.ones(3)]).shape
      (3, 2)
    """
    check_arraylike("column_stack", *tup)
    arrays = []
    for a in tup:
        a = as_array(a)
        arrays.append(lax.reshape(a, (get_aval(a).size, 1)) if get_aval(a).ndim < 2 else a)
    return concatenate(arrays, 1)


def _split_at(a, cuts, axis):
    shape = get_aval(a).shape
    bounds = [0, *cuts, shape[axis]]
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        lo, hi = min(max(lo, 0), shape[axis]), min(max(hi, 0), shape[axis])
        start = [0] * len(shape)
        limit = list(shape)
        start[axis], limit[axis] = lo, max(lo, hi)
        parts.append(lax.slice(a, start, limit))
    return parts


def _split(name, ary, indices_or_sections, axis, even: bool):
    ary = _array(name, ary)
    shape = get_aval(ary).shape
    axis = canonicalize_axis(axis, len(shape), f"jnp.{name}")
    n = shape[axis]
    if not isinstance(indices_or_sections, tuple | list | range) and np.ndim(
            indices_or_sections) == 0:
        # a number of sections, read as JAX does (int(): 2.0 is 2 sections)
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"jnp.{name}: the number of sections must be positive.")
        if even and n % sections:
            raise ValueError(f"jnp.{name}: array split does not result in an equal division: "
                             f"axis of size {n} into {sections} sections.")
        base, extra = divmod(n, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        cuts = np.cumsum(sizes)[:-1].tolist()
    else:
        cuts = [operator.index(i) + n if operator.index(i) < 0 else operator.index(i)
                for i in indices_or_sections]
    sizes = np.diff([0, *cuts, n]).tolist()
    if not all(s >= 0 for s in sizes):
        # NumPy gives empty or overlapping pieces here; JAX refuses (decreasing indices, or
        # indices past the end)
        raise ValueError(f"jnp.{name}: sizes passed to split must be nonnegative, got {sizes} "
                         f"(indices {list(cuts)} along an axis of size {n}); give increasing "
                         "indices within the axis.")
    # one `split`, as JAX: its transpose is one concatenate, where slices' are pads
    return list(lax.split(ary, sizes, axis))


def split(ary, indices_or_sections, axis: int = 0) -> list:
    """`ary` split along `axis` into equal sections, or at the given indices.

    Example:
      >>> [p.shape for p in split(np.arange(6), 3)]
      [(2,), (2,), (2,)]
    """
    return _split("split", ary, indices_or_sections, axis, even=True)


def array_split(ary, indices_or_sections, axis: int = 0) -> list:
    """Like `split`, but sections may differ in size by one.

    Example:
      >>> [p.shape for p in array_split(np.arange(5), 2)]
      [(3,), (2,)]
    """
    return _split("array_split", ary, indices_or_sections, axis, even=False)


def hsplit(ary, indices_or_sections) -> list:
    """`split` along the second axis (the first for 1-d arrays).

    Example:
      >>> len(hsplit(np.zeros((2, 4)), 2))
      2
    """
    ary = _array("hsplit", ary)
    return split(ary, indices_or_sections, 0 if get_aval(ary).ndim == 1 else 1)


def vsplit(ary, indices_or_sections) -> list:
    """`split` along the first axis.

    Example:
      >>> len(vsplit(np.zeros((4, 2)), 2))
      2
    """
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections) -> list:
    """`split` along the third axis.

    Example:
      >>> len(dsplit(np.zeros((1, 1, 4)), 2))
      2
    """
    return split(ary, indices_or_sections, 2)


def tile(A, reps):  # noqa: N803 (NumPy's name)
    """`A` repeated `reps` times along each axis.

    Example:
      >>> tile(np.arange(2), (2, 2))
      array([[0, 1, 0, 1],
             [0, 1, 0, 1]], dtype=int32)
    """
    A = _array("tile", A)  # noqa: N806
    reps = (reps,) if isinstance(reps, int | np.integer) else tuple(reps)
    reps = tuple(operator.index(r) for r in reps)
    shape = get_aval(A).shape
    ndim_ = max(len(reps), len(shape))
    reps = (1,) * (ndim_ - len(reps)) + reps
    shape = (1,) * (ndim_ - len(shape)) + shape
    if shape != get_aval(A).shape:
        A = lax.reshape(A, shape)  # noqa: N806
    return lax.tile(A, reps)


def repeat(a, repeats, axis: int | None = None, *, total_repeat_length: int | None = None):
    """Each element of `a` repeated `repeats` times along `axis` (of the flattened array if
    None). `repeats` must be static: an int, or a concrete array of per-element counts.

    Example:
      >>> repeat(np.array([1, 2]), 2)
      array([1, 1, 2, 2], dtype=int32)
    """
    a = _array("repeat", a)
    if isinstance(repeats, list | tuple):
        # JAX takes arrays and scalars only (a list would be read as one array)
        raise TypeError(f"jnp.repeat requires ndarray or scalar arguments, got "
                        f"{type(repeats)} at position 1; pass jnp.array(repeats).")
    if axis is None:
        a = ravel(a)
        axis = 0
    shape = get_aval(a).shape
    axis = canonicalize_axis(axis, len(shape), "jnp.repeat")
    if isinstance(repeats, int | np.integer):
        count = operator.index(repeats)
        expanded = lax.broadcast_in_dim(a, (*shape[:axis + 1], count, *shape[axis + 1:]),
                                        tuple(i for i in range(len(shape) + 1) if i != axis + 1))
        new_shape = (*shape[:axis], shape[axis] * count, *shape[axis + 1:])
        out = lax.reshape(expanded, new_shape)
    else:
        counts = np.asarray(repeats)
        if counts.ndim == 0:
            return repeat(a, int(counts), axis, total_repeat_length=total_repeat_length)
        index = np.repeat(np.arange(shape[axis]), counts)

        out = _indexing.take(a, index.astype(np.int32), axis=axis)
    if total_repeat_length is not None:
        out = _fit_length(out, axis, total_repeat_length)
    return out


def _fit_length(x, axis, length):
    n = get_aval(x).shape[axis]
    if n >= length:
        return _split_at(x, [length], axis)[0]
    last = _split_at(x, [n - 1], axis)[1]
    filler = repeat(last, length - n, axis)
    return concatenate([x, filler], axis)


def flip(m, axis=None):
    """`m` with the order of elements along `axis` (all axes if None) reversed.

    Example:
      >>> flip(np.arange(3))
      array([2, 1, 0], dtype=int32)
    """
    m = _array("flip", m)
    ndim = get_aval(m).ndim
    if isinstance(axis, list | tuple):
        # a repeated axis reaches lax.rev in JAX, whose check raises TypeError
        axes = tuple(canonicalize_axis(a, ndim, "jnp.flip") for a in axis)
        if len(set(axes)) != len(axes):
            raise TypeError(f"jnp.flip: rev dimensions must be unique, got {axes} (axis="
                            f"{axis!r}).")
    else:
        axes = canonicalize_axes(axis, ndim, "jnp.flip")
    return lax.rev(m, axes) if axes else m


def fliplr(m):
    """`m` reversed along its second axis.

    Example:
      >>> fliplr(np.array([[1, 2]]))
      array([[2, 1]], dtype=int32)
    """
    return flip(m, 1)


def flipud(m):
    """`m` reversed along its first axis.

    Example:
      >>> flipud(np.array([[1], [2]]))
      array([[2],
             [1]], dtype=int32)
    """
    return flip(m, 0)


def rot90(m, k: int = 1, axes=(0, 1)):
    """`m` rotated by 90 degrees `k` times in the plane of `axes`.

    Example:
      >>> rot90(np.array([[1, 2], [3, 4]]))
      array([[2, 4],
             [1, 3]], dtype=int32)
    """
    m = _array("rot90", m)
    n = get_aval(m).ndim
    ax1, ax2 = (canonicalize_axis(a, n, "jnp.rot90") for a in axes)
    if ax1 == ax2:
        raise ValueError("jnp.rot90: the axes must be different.")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(n))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


def roll(a, shift, axis=None):
    """`a` with elements shifted by `shift` along `axis` (of the flattened array if None),
    wrapping around. Shifts must be static.

    Example:
      >>> roll(np.arange(4), 1)
      array([3, 0, 1, 2], dtype=int32)
    """
    a = _array("roll", a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), get_aval(a).shape)
    shifts = shift if isinstance(shift, (list, tuple)) else (shift,)
    axes = axis if isinstance(axis, (list, tuple)) else (axis,)
    shifts, axes = np.broadcast_arrays(np.asarray(shifts), np.asarray(axes))
    for s, ax in zip(shifts.tolist(), axes.tolist(), strict=True):
        ax = canonicalize_axis(ax, get_aval(a).ndim, "jnp.roll")
        n = get_aval(a).shape[ax]
        if n == 0:
            continue
        s = operator.index(s) % n
        if s:
            head, tail = _split_at(a, [n - s], ax)
            a = lax.concatenate([tail, head], ax)
    return a


def append(arr, values, axis: int | None = None):
    """`values` appended to `arr` along `axis` (both flattened if None).

    Example:
      >>> append(np.arange(2), 5)
      array([0, 1, 5], dtype=int32)
    """
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# ----- pad ----------------------------------------------------------------------------------


def _pad_widths(pad_width, ndim):
    widths = np.asarray(pad_width)
    if not np.issubdtype(widths.dtype, np.integer):
        raise TypeError(f"jnp.pad: pad_width must be integers, got {pad_width!r}.")
    widths = np.broadcast_to(widths, (ndim, 2)).tolist()
    if any(w < 0 for pair in widths for w in pair):
        raise ValueError(f"jnp.pad: pad_width must be non-negative, got {pad_width!r}.")
    return widths


def _slice_axis(x, axis, lo, hi):
    shape = get_aval(x).shape
    start, limit = [0] * len(shape), list(shape)
    start[axis], limit[axis] = lo, hi
    return lax.slice(x, start, limit)


def _pad_source_indices(n, before, after, mode):
    """For each position of the padded axis, the index of the element it copies."""
    positions = np.arange(-before, n + after)
    if mode == "edge" or n == 1:
        return np.clip(positions, 0, n - 1)
    if mode == "wrap":
        return positions % n
    if mode == "reflect":
        period = 2 * (n - 1)
        folded = positions % period
        return np.where(folded < n, folded, period - folded)
    period = 2 * n  # symmetric: the edge element is repeated
    folded = positions % period
    return np.where(folded < n, folded, period - 1 - folded)


def _pad_axis_by_copies(x, axis, before, after, mode):
    """Edge, wrap, reflect and symmetric padding of one axis: concatenated runs of slices
    (reversed where the source runs backwards), like NumPy's iterated padding."""
    source = _pad_source_indices(get_aval(x).shape[axis], before, after, mode)
    parts, start = [], 0
    while start < len(source):
        step = int(source[start + 1] - source[start]) if start + 1 < len(source) else 1
        step = step if step in (1, -1) else 1
        stop = start + 1
        while stop < len(source) and source[stop] - source[stop - 1] == step:
            stop += 1
        lo, hi = sorted((int(source[start]), int(source[stop - 1])))
        part = _slice_axis(x, axis, lo, hi + 1)
        parts.append(flip(part, axis) if step == -1 and hi > lo else part)
        start = stop
    return concatenate(parts, axis)


def pad(array, pad_width, mode: str = "constant", **kwargs):
    """`array` padded along each axis.

    Args:
      array: the array.
      pad_width: an int, a `(before, after)` pair, or one pair per axis.
      mode: "constant" (with `constant_values`), "edge", "wrap", "reflect" or "symmetric".
      **kwargs: `constant_values` for "constant" mode (a scalar or per-axis pairs).

    Returns:
      The padded array.

    Example:
      >>> pad(np.array([1, 2, 3]), 2, mode="reflect")
      array([3, 2, 1, 2, 3, 2, 1], dtype=int32)
    """
    array = _array("pad", array)
    aval = get_aval(array)
    widths = _pad_widths(pad_width, aval.ndim)
    if mode == "constant":
        values = np.broadcast_to(np.asarray(kwargs.pop("constant_values", 0)), (aval.ndim, 2))
        _no_extra_kwargs(mode, kwargs)
        if len(set(values.ravel().tolist())) == 1:
            fill = np.asarray(values.ravel()[0]).astype(aval.dtype)
            return lax.pad(array, fill, [(lo, hi, 0) for lo, hi in widths])
        for axis, (lo, hi) in enumerate(widths):
            config = [(0, 0, 0)] * aval.ndim
            config[axis] = (lo, 0, 0)
            array = lax.pad(array, np.asarray(values[axis][0]).astype(aval.dtype), config)
            config[axis] = (0, hi, 0)
            array = lax.pad(array, np.asarray(values[axis][1]).astype(aval.dtype), config)
        return array
    if mode not in ("edge", "wrap", "reflect", "symmetric"):
        raise NotImplementedError(f"jnp.pad: mode {mode!r} is not supported; use 'constant', "
                                  "'edge', 'wrap', 'reflect' or 'symmetric'.")
    kwargs.pop("reflect_type", None)
    _no_extra_kwargs(mode, kwargs)
    for axis, (lo, hi) in enumerate(widths):
        if (lo or hi) and aval.shape[axis] == 0:
            raise ValueError(f"jnp.pad: cannot pad an empty axis {axis} in mode {mode!r}.")
        if lo or hi:
            array = _pad_axis_by_copies(array, axis, lo, hi, mode)
    return array


def _no_extra_kwargs(mode, kwargs):
    if kwargs:
        raise ValueError(f"jnp.pad: unsupported keyword arguments for mode {mode!r}: "
                         f"{sorted(kwargs)}.")


# ----- more reshaping: rollaxis, resize, block, trim_zeros; predicates ----------------------


def rollaxis(a, axis: int, start: int = 0):
    """`a` with `axis` moved to lie before position `start` (NumPy's older `moveaxis`).

    Example:
      >>> rollaxis(np.zeros((2, 3, 4)), 2).shape
      (4, 2, 3)
    """
    a = _array("rollaxis", a)
    n = get_aval(a).ndim
    axis = canonicalize_axis(axis, n, "jnp.rollaxis")
    if not -n <= start <= n:
        raise ValueError(f"jnp.rollaxis: start {start} is out of bounds for {n} dimensions.")
    start = start % (n + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start) if axis != start else a


def resize(a, new_shape):
    """`a` flattened and repeated (or truncated) to fill `new_shape`.

    Example:
      >>> resize(np.array([1, 2, 3]), (2, 2))
      array([[1, 2],
             [3, 1]], dtype=int32)
    """
    a = ravel(_array("resize", a))
    new_shape = canonicalize_shape(new_shape, "jnp.resize")
    total = int(np.prod(new_shape, dtype=np.int64))
    n = get_aval(a).shape[0]
    if n == 0 or total == 0:
        return lax.broadcast_in_dim(np.zeros((), get_aval(a).dtype), new_shape, ())
    repeats = -(-total // n)
    return lax.reshape(lax.slice(tile(a, repeats), (0,), (total,)), new_shape)


def _block_depth(arrays):
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError("jnp.block: lists cannot be empty.")
        depths = {_block_depth(a) for a in arrays}
        if len(depths) != 1:
            raise ValueError("jnp.block: list depths are mismatched.")
        return depths.pop() + 1
    return 0


def _block(arrays, depth, max_ndim, level=0):
    if level == depth:
        a = as_array(arrays)
        shape = get_aval(a).shape
        return lax.reshape(a, (1,) * (max_ndim - len(shape)) + shape)
    parts = [_block(a, depth, max_ndim, level + 1) for a in arrays]
    return concatenate(parts, axis=-(depth - level))


def block(arrays):
    """An array assembled from nested lists of blocks (the innermost lists join along the
    last axis, the next ones along the second-to-last, ...).

    Example:
      >>> block([[np.ones((2, 2)), np.zeros((2, 1))]]).shape
      (2, 3)
    """
    if isinstance(arrays, tuple):
        raise TypeError("jnp.block: nest lists, not tuples.")
    depth = _block_depth(arrays)
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for y in x:
                collect(y)
        else:
            leaves.append(as_array(x))

    collect(arrays)
    max_ndim = max(depth, *(get_aval(x).ndim for x in leaves))
    return _block(arrays, depth, max_ndim)


def trim_zeros(filt, trim: str = "fb"):
    """The 1-d `filt` without leading ("f") and/or trailing ("b") zeros (concrete values).

    Example:
      >>> trim_zeros(np.array([0, 1, 2, 0]))
      array([1, 2], dtype=int32)
    """
    filt = _array("trim_zeros", filt)
    value = concrete_array("trim_zeros", filt)
    nonzero = np.flatnonzero(value)
    if nonzero.size == 0:
        return lax.slice(filt, (0,), (0,))
    lo = int(nonzero[0]) if "f" in trim.lower() else 0
    hi = int(nonzero[-1]) + 1 if "b" in trim.lower() else value.shape[0]
    return lax.slice(filt, (lo,), (hi,))


def isscalar(element) -> bool:
    """Whether `element` is a scalar: a Python or NumPy scalar, or a 0-d array.

    Example:
      >>> isscalar(1.0), isscalar(np.zeros(2))
      (True, False)
    """
    if isinstance(element, (bool, int, float, complex, np.generic)):
        return True
    try:
        return get_aval(element).ndim == 0 and not isinstance(element, (str, bytes))
    except TypeError:
        return False


def iterable(y) -> bool:
    """Whether `iter(y)` works.

    Example:
      >>> iterable([1]), iterable(1)
      (True, False)
    """
    try:
        iter(y)
    except TypeError:
        return False
    return True


def astype(x, dtype, /, *, copy: bool = False, device=None):
    """`x` converted to `dtype`.

    Example:
      >>> astype(np.array([1.7, -1.2]), np.int32)
      array([ 1, -1], dtype=int32)
    """
    x = _array("astype", x)
    # None is the default float type, as in JAX (and NumPy)
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype, "astype")
    return lax.convert_element_type(x, dtype)
