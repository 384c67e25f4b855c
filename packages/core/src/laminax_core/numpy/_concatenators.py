"""Index-expression helpers: `r_` and `c_` (concatenate slices, scalars and arrays given in
square brackets) and NumPy's own `s_` and `index_exp` (build index tuples), as JAX
re-exports them.

`r_[...]` reads each item as an array (a slice `a:b:step` is `arange`, a complex step `n*1j`
means `linspace` with n points), raises each to at least `ndmin` dims, and concatenates along
`axis`. A leading string changes the defaults: `"axis,ndmin,trans1d"` (trans1d: where a
raised 1-D item's axis goes), or `"r"`/`"c"` to make a 1-D result a row or column matrix.
`c_` is `r_` with the defaults `"-1,2,0"` (items become columns).
"""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core.numpy._creation import arange, array, linspace
from laminax_core.numpy._shape import concatenate, expand_dims

__all__ = ["c_", "index_exp", "r_", "s_"]

s_ = np.s_
index_exp = np.index_exp


def _slice_to_array(s: slice, name: str):
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)))
    return arange(start, s.stop, step)


def _parse_directive(directive: str, defaults: list[int], name: str) -> list[int]:
    if directive in ("r", "c"):
        return [*defaults[:3], 0 if directive == "r" else 1]
    try:
        given = [int(part) for part in directive.split(",")]
    except ValueError:
        raise ValueError(
            f"jnp.{name}: directive {directive!r} is not 'r', 'c' or 'axis[,ndmin[,trans1d]]' "
            "with integers."
        ) from None
    if len(given) > 3:
        raise ValueError(f"jnp.{name}: directive {directive!r} has more than 3 integers.")
    return given + defaults[len(given):]


def _raise_rank(item, ndmin: int, trans1d: int):
    """`item` with leading size-1 dims up to `ndmin`, its own dims rotated to `trans1d`."""
    item_ndim = np.ndim(item) if not hasattr(item, "ndim") else item.ndim
    raised = array(item, copy=False, ndmin=ndmin)
    if trans1d != -1 and ndmin - item_ndim > 0:
        shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
        order = tuple(range(ndmin))
        raised = lax.transpose(raised, order[shift:] + order[:shift])
    return raised


class _AxisConcatenator:
    """`r_`/`c_`: concatenation written as indexing (see the module docstring)."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int):
        self.name = name
        self.defaults = [axis, ndmin, trans1d, -1]

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        params = self.defaults
        if items and isinstance(items[0], str):
            params = _parse_directive(items[0], self.defaults, self.name)
            items = items[1:]
        axis, ndmin, trans1d, matrix = params
        pieces = []
        for item in items:
            if isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            if isinstance(item, slice):
                pieces.append(_raise_rank(_slice_to_array(item, self.name), ndmin, trans1d))
            else:
                pieces.append(_raise_rank(item, ndmin, trans1d))
        result = concatenate(pieces, axis=axis)
        if matrix != -1 and result.ndim == 1:
            result = expand_dims(result, matrix)
        return result

    def __repr__(self) -> str:
        return f"jnp.{self.name}"


r_ = _AxisConcatenator("r_", axis=0, ndmin=1, trans1d=-1)
r_.__doc__ = (
    "Concatenates slices, scalars and arrays along the first axis: `r_[1:3, 0, [7, 8]]`.\n\n"
    "Example:\n  >>> r_[1:3, 0, np.array([7, 8])]\n  array([1, 2, 0, 7, 8], dtype=int32)\n"
)
c_ = _AxisConcatenator("c_", axis=-1, ndmin=2, trans1d=0)
c_.__doc__ = (
    "Stacks 1-D items as columns (concatenation along the last axis, each raised to 2-D).\n\n"
    "Example:\n  >>> c_[np.array([1, 2]), np.array([3, 4])].shape\n  (2, 2)\n"
)
