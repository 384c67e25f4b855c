"""Structural primitives that join arrays or take them apart along an axis: concatenate, split,
tile, stack and unstack. All are linear in their array operands."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import _trace
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import bdim_at_front, move_bdim
from laminax_core._interpreters.jvp import Zero, zeros_like_aval
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._primitive import define_primitive, linear
from laminax_core._sharding_rules import axis_inserted, axis_removed, same_sharding, sliced_sharding
from laminax_core.lax import _hooks
from laminax_core.lax._helpers import as_operands, checked_axis
from laminax_core.lax._structural import reshape

__all__ = [
    "concatenate", "split", "stack", "tile", "unstack",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "concatenate_p", "split_p", "stack_p", "tile_p", "unstack_p",
]  # fmt: skip


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
        raise ValueError("concatenate needs at least one operand (a non-empty sequence of "
                         "arrays).")
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
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs),
                       same_sharding("concatenate", xs))


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
    axis = checked_axis(axis, get_aval(operand).ndim, "split")
    return split_p.bind(operand, sizes=sizes, axis=axis)


def _split_abstract_eval(x, sizes, axis):
    # ValueError, as JAX raises for these
    if not 0 <= axis < x.ndim:
        raise ValueError(f"split: axis {axis} is out of bounds for an array of shape {x.shape}.")
    if any(n < 0 for n in sizes) or sum(sizes) != x.shape[axis]:
        raise ValueError(f"split: sizes {sizes} must be non-negative and sum to dimension {axis} "
                         f"of shape {x.shape} (got {sum(sizes)}).")
    shapes = [x.shape[:axis] + (n,) + x.shape[axis + 1:] for n in sizes]
    return [x.update(shape=s, sharding=sliced_sharding(x, s, "split")) for s in shapes]


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
                       x.weak_type, x.sharding)


def _tile_transpose(ct, x, reps):
    # the cotangent viewed as (r0, d0, r1, d1, ...), summed over the repetitions
    shape = x.aval.shape
    split_shape = tuple(v for r, d in zip(reps, shape, strict=True) for v in (r, d))
    summed = _hooks.reduce_sum(reshape(ct, split_shape), tuple(range(0, 2 * len(shape), 2)))
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
    axis = checked_axis(axis, get_aval(operands[0]).ndim + 1, "stack")
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
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs),
                       axis_inserted("concatenate", xs, axis))


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
    axis = checked_axis(axis, get_aval(operand).ndim, "unstack")
    return tuple(unstack_p.bind(operand, axis=axis))


def _unstack_abstract_eval(x, axis):
    if not 0 <= axis < x.ndim:
        raise TypeError(f"unstack: axis {axis} is out of bounds for shape {x.shape}.")
    piece = x.update(shape=x.shape[:axis] + x.shape[axis + 1:],
                     sharding=axis_removed(x, axis, "unstack"))
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
