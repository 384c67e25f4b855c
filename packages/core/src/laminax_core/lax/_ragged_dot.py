"""ragged_dot_general: a `dot_general` whose lhs has one *ragged* dimension split into
consecutive groups by `group_sizes` (mixture-of-experts layers: rows routed to expert `g`
meet expert `g`'s weights), and `ragged_dot`, its common case `[m, k] x [g, k, n] -> [m, n]`.

The ragged dimension's kind sets the mode:
1. non-contracting (`[b, m, k] x [g, b, k, n] -> [b, m, n]`): each row of `m` meets the rhs
   slice of its group (rows past the last group give zeros);
2. contracting (`[b, m, k] x [b, k, n] -> [g, b, m, n]`): one product per group, summed over
   that group's part of `k`;
3. batch (`[b, m, k] x [b, k, n] -> [b, m, n]`): a plain dot_general.

It computes densely, as JAX does on CPU (`ragged_dot_program`, which dispatch lowers): the
lhs is copied once per group with the other groups' entries zeroed, and the group axis is
contracted (mode 1) or kept (mode 2). The jvp differentiates that program (it is bilinear),
so transposes and batching come from dot_general's rules.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from laminax_core import dtypes
from laminax_core._api import vmap
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.jvp import Zero, instantiate_zeros
from laminax_core._primitive import NOT_LINEAR, check_dtype, define_primitive
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._bitwise import bitwise_and
from laminax_core.lax._cumulative import cumsum
from laminax_core.lax._dot import dot_general
from laminax_core.lax._products import canonicalize_precision
from laminax_core.lax._structural import broadcast_in_dim, broadcasted_iota, transpose

__all__ = [
    "RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general", "ragged_dot_program",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "ragged_dot_general_p",
]  # fmt: skip


@dataclasses.dataclass(frozen=True, init=False)
class RaggedDotDimensionNumbers:
    """The dimension numbers of `ragged_dot_general`: dot_general's `((lhs_contracting,
    rhs_contracting), (lhs_batch, rhs_batch))`, the lhs's ragged dimension (one) and the
    rhs's group dimension (one in mode 1, none otherwise)."""

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        numbers = tuple(tuple(tuple(int(d) for d in dims) for dims in pair)
                        for pair in dot_dimension_numbers)
        object.__setattr__(self, "dot_dimension_numbers", numbers)
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(map(int, lhs_ragged_dimensions)))
        object.__setattr__(self, "rhs_group_dimensions", tuple(map(int, rhs_group_dimensions)))


_BASIC = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """`[m, k] x [g, k, n] -> [m, n]`: rows `sum(group_sizes[:i]) ..` of `lhs` times
    `rhs[i]`, for each group `i`; rows past `sum(group_sizes)` are zeros.

    Example:
      >>> ragged_dot(np.ones((3, 2), np.float32), np.stack([np.eye(2, dtype=np.float32),
      ...            2 * np.eye(2, dtype=np.float32)]), np.array([1, 2], np.int32))
      array([[1., 1.],
             [2., 2.],
             [2., 2.]], dtype=float32)
    """
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC, precision=precision,
                              preferred_element_type=preferred_element_type,
                              group_offset=group_offset, out_sharding=out_sharding)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """A dot_general with a ragged lhs dimension (see the module docstring for the three
    modes). `group_sizes` is `[g]`, or carries the lhs's batch dimensions and the dimensions
    outer to the ragged one before `g`."""
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
    return ragged_dot_general_p.bind(
        lhs, rhs, group_sizes, ragged_dot_dimension_numbers=ragged_dot_dimension_numbers,
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type, group_offset=group_offset,
        out_sharding=out_sharding)


def _mode(lhs_ndim, numbers):
    (l_contract, _), (l_batch, _) = numbers.dot_dimension_numbers
    if len(numbers.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension, got "
                        f"{numbers.lhs_ragged_dimensions}.")
    ragged = numbers.lhs_ragged_dimensions[0]
    if not 0 <= ragged < lhs_ndim:
        raise TypeError(f"ragged_dot_general: lhs ragged dimension {ragged} is out of range "
                        f"for an lhs of rank {lhs_ndim}.")
    if ragged in l_contract:
        return 2, ragged
    return (3 if ragged in l_batch else 1), ragged


def _prefix_dims(mode, lhs_ndim, ragged, numbers):
    """The lhs dimensions a multi-dimensional `group_sizes` carries before `g`."""
    (l_contract, _), (l_batch, _) = numbers.dot_dimension_numbers
    if mode == 3:
        return [d for d in l_batch if d < ragged]
    kind = l_contract if mode == 2 else [d for d in range(lhs_ndim)
                                         if d not in l_contract and d not in l_batch]
    return list(l_batch) + [d for d in kind if d < ragged]


def _free(ndim, *used):
    taken = {d for dims in used for d in dims}
    return [d for d in range(ndim) if d not in taken]


def _ragged_dot_general_abstract_eval(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers,
                                      precision, preferred_element_type, group_offset,
                                      out_sharding):
    numbers = ragged_dot_dimension_numbers
    check_dtype("ragged_dot_general", group_sizes.dtype, (np.integer,))
    mode, ragged = _mode(lhs.ndim, numbers)
    (l_contract, r_contract), (l_batch, r_batch) = numbers.dot_dimension_numbers
    groups = numbers.rhs_group_dimensions
    if mode == 1 and len(groups) != 1:
        raise TypeError("ragged_dot_general: a ragged non-contracting dimension needs exactly "
                        f"one rhs group dimension, got {groups}.")
    if mode != 1 and groups:
        raise TypeError("ragged_dot_general: an rhs group dimension is only allowed when the "
                        f"ragged dimension is non-contracting, got {groups}.")
    if group_sizes.ndim < 1:
        raise TypeError("expected rank of group_sizes to be >=1.")
    g = group_sizes.shape[-1]
    if mode == 1 and rhs.shape[groups[0]] != g:
        raise TypeError(f"group_sizes has {g} groups but the rhs group dimension has "
                        f"{rhs.shape[groups[0]]}.")
    prefix = [lhs.shape[d] for d in _prefix_dims(mode, lhs.ndim, ragged, numbers)]
    if group_sizes.ndim > 1 and list(group_sizes.shape[:-1]) != prefix:
        raise TypeError(f"group_sizes must have shape {(*prefix, g)} or ({g},), got "
                        f"{group_sizes.shape}.")
    rhs_dot = ShapedArray(tuple(s for i, s in enumerate(rhs.shape) if i not in groups),
                          rhs.dtype)
    shift = [d - sum(1 for x in groups if x < d) for d in (*r_contract, *r_batch)]
    numbers_no_group = ((l_contract, tuple(shift[:len(r_contract)])),
                        (l_batch, tuple(shift[len(r_contract):])))
    out = _dot_general_shape(lhs, rhs_dot, numbers_no_group)
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(((g,) + out) if mode == 2 else out, dtype)


def _dot_general_shape(lhs, rhs, numbers):
    (lc, rc), (lb, rb) = numbers
    return (*(lhs.shape[d] for d in lb), *(lhs.shape[d] for d in _free(lhs.ndim, lc, lb)),
            *(rhs.shape[d] for d in _free(rhs.ndim, rc, rb)))


def _by_group(x, group_sizes, ragged, prefix):
    """`x` copied once per group along a new leading axis, zero outside the group's slice of
    dimension `ragged`."""
    shape = get_aval(x).shape
    sizes = get_aval(group_sizes)
    full = (sizes.shape[-1], *shape)
    ends = cumsum(group_sizes, axis=sizes.ndim - 1)
    starts = ew.sub(ends, group_sizes)
    dims = [p + 1 for p in prefix] + [0] if sizes.ndim > 1 else [0]
    position = broadcasted_iota(sizes.dtype, full, ragged + 1)
    inside = bitwise_and(ew.le(broadcast_in_dim(starts, full, dims), position),
                            ew.lt(position, broadcast_in_dim(ends, full, dims)))
    copies = broadcast_in_dim(x, full, tuple(range(1, len(full))))
    zeros = broadcast_in_dim(np.zeros((), get_aval(x).dtype), full, ())
    return ew.select_n(inside, zeros, copies)


def ragged_dot_program(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, precision,
                       preferred_element_type, group_offset, out_sharding):
    """ragged_dot_general as lax operations (dense: one masked copy of lhs per group)."""
    numbers = ragged_dot_dimension_numbers
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    lhs_ndim = get_aval(lhs).ndim
    mode, ragged = _mode(lhs_ndim, numbers)
    (l_contract, r_contract), (l_batch, r_batch) = numbers.dot_dimension_numbers
    dot = lambda a, b, dims: dot_general(a, b, dims, precision, preferred_element_type)  # noqa: E731
    if mode == 3:
        return dot(lhs, rhs, numbers.dot_dimension_numbers)
    prefix = _prefix_dims(mode, lhs_ndim, ragged, numbers)
    grouped = _by_group(lhs, group_sizes, ragged, prefix)
    up = lambda dims: tuple(d + 1 for d in dims)  # noqa: E731
    if mode == 1:
        group = numbers.rhs_group_dimensions[0]
        return dot(grouped, rhs, ((up(l_contract) + (0,), r_contract + (group,)),
                                  (up(l_batch), r_batch)))
    out = dot(grouped, rhs, ((up(l_contract), r_contract), (up(l_batch), r_batch)))
    nb = len(l_batch)  # the group axis comes out after the batch dims: move it first
    ndim = get_aval(out).ndim
    return transpose(out, (nb, *range(nb), *range(nb + 1, ndim)))


def _ragged_dot_general_reference(lhs, rhs, group_sizes, **params):
    return np.asarray(ragged_dot_program(lhs, rhs, group_sizes, **params))


def _ragged_dot_general_jvp(primals, tangents, **params):
    lhs, rhs, group_sizes = primals
    out = ragged_dot_general_p.bind(lhs, rhs, group_sizes, **params)
    lhs_dot, rhs_dot, _ = tangents
    if isinstance(lhs_dot, Zero) and isinstance(rhs_dot, Zero):
        return out, Zero.from_primal_value(out)
    # bilinear: the program (dot_general and selects) carries the transposes
    terms = [ragged_dot_program(instantiate_zeros(lhs_dot), rhs, group_sizes, **params)
             if not isinstance(lhs_dot, Zero) else None,
             ragged_dot_program(lhs, instantiate_zeros(rhs_dot), group_sizes, **params)
             if not isinstance(rhs_dot, Zero) else None]
    terms = [t for t in terms if t is not None]
    return out, terms[0] if len(terms) == 1 else ew.add(*terms)


def _ragged_dot_general_batch(axis_data, args, dims, **params):
    program = lambda *xs: ragged_dot_program(*xs, **params)  # noqa: E731
    return vmap(program, in_axes=tuple(dims), axis_size=axis_data.size)(*args), 0


ragged_dot_general_p = define_primitive(
    "ragged_dot_general",
    abstract_eval=_ragged_dot_general_abstract_eval,
    reference=_ragged_dot_general_reference,
    jvp=_ragged_dot_general_jvp,
    transpose=NOT_LINEAR,
    batch=_ragged_dot_general_batch,
)
