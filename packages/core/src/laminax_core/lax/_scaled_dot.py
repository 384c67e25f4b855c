"""`scaled_dot`: a dot product of block-scaled operands (typically float8 values with one
float8_e8m0fnu scale per block of the contracting dimension), `(lhs * lhs_scale) @ (rhs *
rhs_scale)` accumulated in `preferred_element_type` (bfloat16 by default).

Its lowering is JAX's: a `stablehlo.composite "xla.scaled_dot"` whose decomposition widens
each scale over its block, multiplies in bfloat16 and calls dot_general, which a backend with
native block-scaled matmuls may replace. Like JAX's, it has no differentiation rule."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import bdim_at_front
from laminax_core._primitive import Primitive
from laminax_core.lax import _dot, _elementwise, _structural

__all__ = ["scaled_dot", "scaled_dot_decomposition"]
# the primitive, exported beside the function (JAX's lax lists only the function)
__all__ += ["scaled_dot_p"]


def _check_scale(side, operand, scale, contracting):
    for i, size in enumerate(operand.shape):
        if i in contracting:
            if size % scale.shape[i]:
                raise TypeError(f"{side} contracting dim {i} of size {size} must be divisible "
                                f"by its scale's dim size {scale.shape[i]}.")
            if size // scale.shape[i] < 2:
                raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's dim "
                                f"size ({size // scale.shape[i]}) must be at least 2.")
        elif scale.shape[i] != size:
            raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size "
                            f"{scale.shape[i]}.")


def _abstract_eval(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers,
                   preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    ranks = {lhs.ndim, rhs.ndim, lhs_scale.ndim, rhs_scale.ndim}
    if len(ranks) > 1:
        raise TypeError(f"All input tensors must have the same rank. Got lhs rank: {lhs.ndim} "
                        f"rhs rank: {rhs.ndim} lhs_scale rank: {lhs_scale.ndim} rhs_scale "
                        f"rank: {rhs_scale.ndim}.")
    if len(lb) != len(rb):
        raise TypeError("LHS and RHS must have the same number of batch dimensions, got "
                        f"{len(lb)} and {len(rb)}.")
    if len(lc) != len(rc):
        raise TypeError("LHS and RHS must have the same number of contracting dimensions, "
                        f"got {len(lc)} and {len(rc)}.")
    for i, j in zip(lb, rb):
        sizes = {lhs.shape[i], rhs.shape[j], lhs_scale.shape[i], rhs_scale.shape[j]}
        if len(sizes) > 1:
            raise TypeError("All input tensors must have the same batch dimension size for "
                            f"batch dims ({i}, {j}).")
    for i, j in zip(lc, rc):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(f"LHS contracting dim {i} of size {lhs.shape[i]} does not match "
                            f"RHS contracting dim {j} of size {rhs.shape[j]}.")
    _check_scale("LHS", lhs, lhs_scale, lc)
    _check_scale("RHS", rhs, rhs_scale, rc)
    lhs_free = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rhs_free = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lhs_free]
             + [rhs.shape[d] for d in rhs_free])
    return ShapedArray(tuple(shape), np.dtype(preferred_element_type))


def _widen_scale(scale, operand_shape, contracting):
    """Each scale repeated over the block of the contracting dimension it scales."""
    for i in contracting:
        size = get_aval(scale).shape[i]
        if size != operand_shape[i]:
            shape = list(get_aval(scale).shape)
            expanded = _structural.broadcast_in_dim(
                scale, (*shape[:i + 1], operand_shape[i] // size, *shape[i + 1:]),
                tuple(d if d <= i else d + 1 for d in range(len(shape))))
            shape[i] = operand_shape[i]
            scale = _structural.reshape(expanded, tuple(shape))
    return scale


def scaled_dot_decomposition(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers,
                             preferred_element_type):
    """The lax program scaled_dot stands for (its composite's decomposition)."""
    (lc, rc), _ = dimension_numbers
    bf16 = dtypes.bfloat16
    scaled = []
    for x, scale, contracting in ((lhs, lhs_scale, lc), (rhs, rhs_scale, rc)):
        scale = _widen_scale(scale, get_aval(x).shape, contracting)
        scaled.append(_elementwise.mul(_elementwise.convert_element_type(x, bf16),
                                       _elementwise.convert_element_type(scale, bf16)))
    return _dot.dot_general(*scaled, dimension_numbers,
                            preferred_element_type=preferred_element_type)


def _reference(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    bf16 = dtypes.bfloat16
    sides = []
    for x, scale, contracting in ((lhs, lhs_scale, lc), (rhs, rhs_scale, rc)):
        for i in contracting:
            scale = np.repeat(scale, x.shape[i] // scale.shape[i], axis=i)
        sides.append((x.astype(bf16) * scale.astype(bf16)).astype(np.float32))
    out = _dot._dot_general_reference(sides[0], sides[1], dimension_numbers, None, None, None)
    return np.asarray(out).astype(preferred_element_type)


def _batch(axis_data, args, dims, *, dimension_numbers, preferred_element_type):
    args = [bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims)]
    (lc, rc), (lb, rb) = dimension_numbers
    shift = lambda ds: tuple(d + 1 for d in ds)  # noqa: E731
    numbers = ((shift(lc), shift(rc)), ((0, *shift(lb)), (0, *shift(rb))))
    return scaled_dot_p.bind(*args, dimension_numbers=numbers,
                             preferred_element_type=preferred_element_type), 0


scaled_dot_p = Primitive("scaled_dot")
scaled_dot_p.def_abstract_eval(_abstract_eval)
scaled_dot_p.def_reference(_reference)
scaled_dot_p.def_batch(_batch)


def _unit_scale(operand, contracting):
    shape = tuple(1 if d in contracting else n for d, n in enumerate(get_aval(operand).shape))
    ones = _structural.broadcast_in_dim(np.array(1, dtypes.bfloat16), shape, ())
    return _elementwise.convert_element_type(ones, dtypes.float8_e8m0fnu)


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """`(lhs * lhs_scale) @ (rhs * rhs_scale)` (a dot_general) in `preferred_element_type`.

    Args:
      lhs, rhs: the operands (all four arrays have the same rank).
      lhs_scale, rhs_scale: one scale per block of the contracting dimension (the operand's
        contracting size divided by the scale's, at least 2); other dimensions match the
        operand's. None: scales of 1.
      dimension_numbers: `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`;
        default: a batched matmul over the last two dimensions.
      preferred_element_type: the result dtype (default bfloat16).

    Example:
      >>> x = np.ones((2, 4), np.float32)
      >>> scaled_dot(x, x.T, preferred_element_type=np.float32)
      array([[4., 4.],
             [4., 4.]], dtype=float32)
    """
    if dimension_numbers is None:
        n = get_aval(lhs).ndim
        if n < 2:
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        batch = tuple(range(n - 2))
        dimension_numbers = (((n - 1,), (n - 2,)), (batch, batch))
    (lc, rc), (lb, rb) = dimension_numbers
    dimension_numbers = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if lhs_scale is None:
        lhs_scale = _unit_scale(lhs, dimension_numbers[0][0])
    if rhs_scale is None:
        rhs_scale = _unit_scale(rhs, dimension_numbers[0][1])
    element_type = dtypes.bfloat16 if preferred_element_type is None else preferred_element_type
    element_type = dtypes.canonicalize_dtype(np.dtype(element_type))
    return scaled_dot_p.bind(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers=dimension_numbers,
                             preferred_element_type=element_type)
