"""`ravel_pytree`: a pytree of arrays as one flat vector, and the function that undoes it.

Optimizers and solvers written for vectors (`scipy.optimize.minimize`, `odeint`) use it to work
on parameter pytrees.

Example:
  >>> flat, unravel = ravel_pytree({"a": np.ones(2, np.float32), "b": np.float32(3)})
  >>> flat
  array([1., 1., 3.], dtype=float32)
  >>> unravel(flat)["b"]
  array(3., dtype=float32)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from laminax_core import dtypes, lax
from laminax_core._avals import get_aval
from laminax_pytree import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Flattens a pytree of arrays into one 1-d array.

    The leaves are raveled in `tree_flatten` order and concatenated; their dtypes are promoted
    to one. An empty pytree gives an empty float32 vector.

    Args:
      pytree: a pytree whose leaves are arrays or scalars.

    Returns:
      `(flat, unravel)`: the 1-d array, and a function mapping a vector of the same length back
      to a pytree of `pytree`'s structure, shapes and dtypes. When every leaf already has the
      promoted dtype, `unravel` keeps the dtype it is given (it can unravel tangents of another
      dtype); otherwise it requires the promoted dtype and converts each piece back.
    """
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_leaves = _ravel_leaves(leaves)
    return flat, functools.partial(_unravel_pytree, treedef, unravel_leaves)


def _unravel_pytree(treedef, unravel_leaves, flat):
    return tree_unflatten(treedef, unravel_leaves(flat))


def _ravel_leaves(leaves: list):
    if not leaves:
        return lax.full((0,), 0, np.float32), lambda _: []
    avals = [get_aval(x) for x in leaves]
    from_dtypes = tuple(a.dtype for a in avals)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.prod(a.shape, dtype=int)) for a in avals)
    shapes = tuple(a.shape for a in avals)
    if all(d == to_dtype for d in from_dtypes):
        flat = lax.concatenate([lax.reshape(x, (n,)) for x, n in zip(leaves, sizes)], 0)
        return flat, functools.partial(_unravel_same_dtype, sizes, shapes)
    flat = lax.concatenate(
        [lax.reshape(lax.convert_element_type(x, to_dtype), (n,)) for x, n in zip(leaves, sizes)],
        0,
    )
    return flat, functools.partial(_unravel_mixed_dtypes, sizes, shapes, from_dtypes, to_dtype)


def _check_length(sizes, flat) -> None:
    shape = get_aval(flat).shape
    if shape != (sum(sizes),):
        raise ValueError(
            f"unravel function expects a 1-d array of length {sum(sizes)} (the raveled "
            f"pytree's), got shape {shape}."
        )


def _unravel_same_dtype(sizes, shapes, flat) -> list:
    _check_length(sizes, flat)
    return [lax.reshape(c, s) for c, s in zip(lax.split(flat, sizes), shapes, strict=True)]


def _unravel_mixed_dtypes(sizes, shapes, from_dtypes, to_dtype, flat) -> list:
    flat_dtype = get_aval(flat).dtype
    if flat_dtype != to_dtype:
        raise TypeError(
            f"unravel function given array of dtype {flat_dtype}, but expected dtype "
            f"{to_dtype}: the raveled pytree's leaves were promoted to {to_dtype}."
        )
    _check_length(sizes, flat)
    chunks = lax.split(flat, sizes)
    return [
        lax.convert_element_type(lax.reshape(c, s), d)
        for c, s, d in zip(chunks, shapes, from_dtypes, strict=True)
    ]
