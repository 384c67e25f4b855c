"""`scipy.interpolate.RegularGridInterpolator`: linear and nearest interpolation on a
rectilinear grid, a pytree (grid, values and fill value are its leaves) as in JAX."""

from __future__ import annotations

import itertools

import numpy as np
from laminax_pytree import register_pytree_node_class

from laminax_core import numpy as jnp
from laminax_core.numpy._operands import promote_dtypes_inexact

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


@register_pytree_node_class
class RegularGridInterpolator:
    """Interpolates `values` given on the grid `points` (one increasing 1-d array per axis) at
    arbitrary coordinates; points outside the grid get `fill_value` (None extrapolates)."""

    def __init__(self, points, values, method: str = "linear", bounds_error: bool = False,
                 fill_value=np.nan):
        if method not in _METHODS:
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined; "
                             f"use one of {list(_METHODS)}.")
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        self.method = method
        self.bounds_error = bounds_error
        self.grid = tuple(promote_dtypes_inexact(*(jnp.asarray(p) for p in points)))
        values = jnp.asarray(values)
        (self.values,) = promote_dtypes_inexact(values)
        if len(self.grid) > self.values.ndim:
            raise ValueError(f"RegularGridInterpolator: there are {len(self.grid)} point "
                             f"arrays, but values has {self.values.ndim} dimensions.")
        self.fill_value = None if fill_value is None else jnp.asarray(fill_value)

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined; "
                             f"use one of {list(_METHODS)}.")
        ndim = len(self.grid)
        if isinstance(xi, (tuple, list)) and len(xi) == ndim and ndim > 1:
            xi = jnp.stack(jnp.broadcast_arrays(*(jnp.asarray(x) for x in xi)), axis=-1)
        (xi,) = promote_dtypes_inexact(jnp.asarray(xi))
        if xi.shape[-1] != ndim:
            raise ValueError(f"RegularGridInterpolator: the requested sample points xi have "
                             f"dimension {xi.shape[-1]}, but this interpolator has dimension "
                             f"{ndim}.")
        batch = xi.shape[:-1]
        xi = jnp.reshape(xi, (-1, ndim))
        lows, fractions, outside = [], [], jnp.zeros(xi.shape[0], bool)
        for axis, grid in enumerate(self.grid):
            x = xi[:, axis]
            low = jnp.clip(jnp.searchsorted(grid, x) - 1, 0, grid.shape[0] - 2)
            lows.append(low)
            fractions.append((x - grid[low]) / (grid[low + 1] - grid[low]))
            outside = outside | (x < grid[0]) | (x > grid[-1])
        trailing = (slice(None),) + (None,) * (self.values.ndim - ndim)
        if method == "nearest":
            index = tuple(jnp.where(f <= 0.5, low, low + 1) for low, f in zip(lows, fractions))
            result = self.values[index]
        else:
            result = None
            for corner in itertools.product((0, 1), repeat=ndim):
                weight = 1.0
                for upper, f in zip(corner, fractions):
                    weight = weight * (f if upper else 1 - f)
                term = self.values[tuple(low + c for low, c in zip(lows, corner))]
                term = term * weight[trailing]
                result = term if result is None else result + term
        if self.fill_value is not None:
            result = jnp.where(outside[trailing], self.fill_value, result)
        return jnp.reshape(result, batch + self.values.shape[ndim:])

    def tree_flatten(self):
        return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

    @classmethod
    def tree_unflatten(cls, aux, children):
        grid, values, fill_value = children
        obj = object.__new__(cls)
        obj.method, obj.bounds_error = aux
        obj.grid, obj.values, obj.fill_value = grid, values, fill_value
        return obj
