"""`scipy.ndimage.map_coordinates` for orders 0 and 1, as gathers and weighted sums."""

from __future__ import annotations

import itertools

from laminax_core import numpy as jnp

__all__ = ["map_coordinates"]


def _fix_index(index, size, mode):
    """The in-bounds index each integer sample position reads under `mode`, and whether the
    position lies inside (only 'constant' reads `cval` outside)."""
    inside = (index >= 0) & (index < size)
    if mode == "constant":
        return jnp.clip(index, 0, size - 1), inside
    if mode == "nearest":
        return jnp.clip(index, 0, size - 1), None
    if mode == "wrap":
        return jnp.mod(index, size), None
    if mode == "mirror":
        if size == 1:
            return jnp.zeros_like(index), None
        period = 2 * size - 2
        folded = jnp.mod(index, period)
        return jnp.where(folded < size, folded, period - folded), None
    period = 2 * size  # reflect: the edge sample repeats
    folded = jnp.mod(index, period)
    return jnp.where(folded < size, folded, period - 1 - folded), None


_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def map_coordinates(input, coordinates, order: int, mode: str = "constant",  # noqa: A002
                    cval=0.0):
    """`input` sampled at `coordinates` (one array per axis of `input`) by nearest-neighbour
    (`order=0`) or linear (`order=1`) interpolation, with SciPy's boundary `mode`s."""
    input_arr = jnp.asarray(input)
    coordinates = [jnp.asarray(c) for c in coordinates]
    if len(coordinates) != input_arr.ndim:
        raise ValueError(f"jax.scipy.ndimage.map_coordinates: coordinates must be a sequence "
                         f"of length input.ndim, but {len(coordinates)} != {input_arr.ndim}")
    if order not in (0, 1):
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires "
                                  f"order<=1, got order={order}")
    if mode not in _MODES:
        raise NotImplementedError(f"jax.scipy.ndimage.map_coordinates does not yet support "
                                  f"mode {mode!r}; supported modes: {list(_MODES)}")
    per_axis = []
    for coordinate, size in zip(coordinates, input_arr.shape):
        if order == 0:
            index = jnp.floor(coordinate + 0.5).astype("int32")
            per_axis.append([(_fix_index(index, size, mode), None)])
        else:
            lower = jnp.floor(coordinate)
            upper_weight = coordinate - lower
            index = lower.astype("int32")
            per_axis.append([(_fix_index(index, size, mode), 1 - upper_weight),
                             (_fix_index(index + 1, size, mode), upper_weight)])
    total = None
    cval = jnp.asarray(cval, dtype=input_arr.dtype)
    for corner in itertools.product(*per_axis):
        indices = tuple(fixed[0] for fixed, _ in corner)
        value = input_arr[indices]
        masks = [fixed[1] for fixed, _ in corner if fixed[1] is not None]
        if masks:
            value = jnp.where(jnp.logical_and.reduce(jnp.stack(masks)) if len(masks) > 1
                              else masks[0], value, cval)
        for _, weight in corner:
            if weight is not None:
                value = value * weight
        total = value if total is None else total + value
    if jnp.issubdtype(input_arr.dtype, jnp.integer):
        total = jnp.round(total)
    return total.astype(input_arr.dtype)
