"""`associative_scan`: an inclusive prefix scan with any associative binary function, in
O(log n) rounds of whole-array work (no loop primitive; everything is slices, pads and calls
of `fn`).

The recursion (Blelloch's odd/even scheme, the same tree of combinations JAX uses, so
floating-point results round alike): combine neighbouring pairs, scan the half-length
result recursively (that gives the prefixes ending at odd positions), combine those with the
next even element to get the prefixes ending at even positions, and interleave the two.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core._avals import get_aval
from laminax_core.lax._bitwise import bitwise_or
from laminax_core.lax._elementwise import add
from laminax_core.lax._joining import concatenate
from laminax_core.lax._slicing import pad, slice_in_dim
from laminax_core.lax._structural import rev

__all__ = ["associative_scan"]


def _slice(x, start, stop, axis, stride=1):
    return slice_in_dim(x, start, stop, stride, axis)


def _interleave(evens, odds, axis):
    """Alternates `evens` and `odds` along `axis` (evens first; it may be one longer): each is
    spread out with interior zero padding and the two are summed (or'ed for booleans)."""
    aval = get_aval(evens)
    same = aval.shape[axis] == get_aval(odds).shape[axis]
    zero = np.zeros((), aval.dtype)

    def config(lo, hi):
        return [(lo, hi, 1) if d == axis else (0, 0, 0) for d in range(aval.ndim)]

    spread_evens = pad(evens, zero, config(0, 1 if same else 0))
    spread_odds = pad(odds, zero, config(1, 0 if same else 1))
    combine = bitwise_or if aval.dtype == np.bool_ else add
    return combine(spread_evens, spread_odds)


def _scan(combine, elems, axis):
    n = get_aval(elems[0]).shape[axis]
    if n < 2:
        return elems
    pairs = combine([_slice(x, 0, n - 1, axis, 2) for x in elems],
                    [_slice(x, 1, n, axis, 2) for x in elems])
    odd_prefixes = _scan(combine, pairs, axis)
    following = [_slice(x, 2, n, axis, 2) for x in elems]
    if n % 2 == 0:
        m = get_aval(odd_prefixes[0]).shape[axis]
        even_prefixes = combine([_slice(x, 0, m - 1, axis) for x in odd_prefixes], following)
    else:
        even_prefixes = combine(odd_prefixes, following)
    even_prefixes = [concatenate([_slice(x, 0, 1, axis), prefix], axis)
                     for x, prefix in zip(elems, even_prefixes, strict=True)]
    return [_interleave(e, o, axis) for e, o in zip(even_prefixes, odd_prefixes, strict=True)]


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
    """Inclusive scan of `elems` along `axis` with an associative `fn`:
    `out[i] = fn(... fn(fn(elems[0], elems[1]), elems[2]) ..., elems[i])`.

    Args:
      fn: an associative function of two pytrees shaped like `elems`, applied to whole
        slices at once (it must work elementwise along `axis`).
      elems: a pytree of arrays, all of the same length along `axis`.
      reverse: scan from the end (`out[i]` combines `elems[i:]`).
      axis: the axis to scan along.

    Returns:
      A pytree like `elems` of the running combinations.

    Raises:
      ValueError: the leaves differ in length along `axis`.

    Example:
      >>> associative_scan(lambda a, b: a + b, np.arange(5, dtype=np.int32))
      array([ 0,  1,  3,  6, 10], dtype=int32)
    """
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    ndim = get_aval(leaves[0]).ndim
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for rank {ndim}.")
    axis %= ndim
    lengths = [get_aval(x).shape[axis] for x in leaves]
    if len(set(lengths)) > 1:
        raise ValueError(
            "associative_scan: every array in elems must have the same length along axis "
            f"{axis}; got lengths {lengths}."
        )

    def combine(a_leaves, b_leaves):
        out = fn(tree_unflatten(tree, a_leaves), tree_unflatten(tree, b_leaves))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(
                f"associative_scan: fn must return the structure of elems ({tree}), got "
                f"{out_tree}."
            )
        return out_leaves

    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]
    scanned = _scan(combine, leaves, axis)
    if reverse:
        scanned = [rev(x, (axis,)) for x in scanned]
    return tree_unflatten(tree, scanned)
