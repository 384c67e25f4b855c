"""Building sharded Arrays from pieces: per-device callbacks, single-device Arrays, and each
process's local data (JAX: `jax.make_array_from_*`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from laminax_core import ShapedArray
from laminax_core import dtypes as core_dtypes
from laminax_dispatch import Sharding, device_put, make_array

__all__ = [
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
]


def _check_sharding(sharding, who: str) -> None:
    if not isinstance(sharding, Sharding):
        raise TypeError(
            f"{who}: sharding must be a jax.sharding.Sharding (for example a NamedSharding), "
            f"got {sharding!r} of type {type(sharding).__name__}."
        )


def make_array_from_callback(
    shape: Sequence[int], sharding, data_callback: Callable[[Any], Any], dtype=None
):
    """An Array of global `shape` laid out by `sharding`, each device's piece produced by
    ``data_callback(index)`` (`index`: the tuple of slices the device holds).

    Args:
      shape: the global shape.
      sharding: any `Sharding`.
      data_callback: index -> array-like piece (NumPy array, scalar or Array).
      dtype: the dtype when no device is addressable (otherwise the pieces' dtype).

    Raises:
      TypeError: `sharding` is not a Sharding.
      ValueError: a piece's shape differs from the sharding's shard shape.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import SingleDeviceSharding, devices
      >>> x = np.arange(4.0)
      >>> make_array_from_callback((4,), SingleDeviceSharding(devices()[0]), lambda i: x[i])
      Array([0., 1., 2., 3.], dtype=float32)
    """
    _check_sharding(sharding, "make_array_from_callback")
    shape = tuple(shape)
    indices = sharding.addressable_devices_indices_map(shape)
    expected = sharding.shard_shape(shape)
    pieces = []
    for device, index in indices.items():
        data = data_callback(index)
        piece = device_put(data, device)
        if piece.shape != expected:
            raise ValueError(
                f"make_array_from_callback: the callback returned a piece of shape "
                f"{piece.shape} for index {index} on {device}, but the sharding's shard shape "
                f"is {expected}; return data[index] of the global array."
            )
        pieces.append(piece)
    if not pieces:
        aval = ShapedArray(shape, core_dtypes.canonicalize_dtype(dtype or np.float32))
    else:
        aval = ShapedArray(shape, pieces[0].dtype)
    return make_array(aval, sharding, pieces)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding, arrays: Sequence, *, dtype=None):
    """An Array of global `shape` laid out by `sharding` from one single-device Array per
    addressable device (in any order), without copying.

    Raises:
      TypeError: `sharding` is not a Sharding, or an element is not an Array.
      ValueError: the pieces' devices, shapes or dtypes do not fit the sharding.
    """
    _check_sharding(sharding, "make_array_from_single_device_arrays")
    arrays = list(arrays)
    for a in arrays:
        if not isinstance(a, _jax.ArrayImpl):
            raise TypeError(
                "make_array_from_single_device_arrays: every element of arrays must be a "
                f"jax.Array on one device, got {type(a).__name__}; device_put it first."
            )
    if not arrays:
        if dtype is None:
            raise ValueError(
                "make_array_from_single_device_arrays: dtype must be given when arrays is empty."
            )
        aval = ShapedArray(tuple(shape), np.dtype(dtype))
    else:
        aval = ShapedArray(tuple(shape), arrays[0].dtype)
    try:
        return make_array(aval, sharding, arrays)
    except (ValueError, RuntimeError) as err:
        raise ValueError(
            f"make_array_from_single_device_arrays: the arrays do not fit {sharding} for shape "
            f"{tuple(shape)}: {err}"
        ) from err


def _process_block(sharding, global_shape, local_shape) -> list[int]:
    """Where this process's local data starts in the global array, per dimension: 0 where the
    local data spans the whole dimension, else the first index its devices hold (their pieces
    must form one block of the local data's size)."""
    everywhere = sharding.devices_indices_map(global_shape)
    here = [everywhere[d] for d in sharding.addressable_devices]
    offsets = []
    for dim, (g, l) in enumerate(zip(global_shape, local_shape)):
        if g == l:
            offsets.append(0)
            continue
        starts = [index[dim].indices(g)[0] for index in here]
        stops = [index[dim].indices(g)[1] for index in here]
        if max(stops) - min(starts) != l:
            raise ValueError(
                f"make_array_from_process_local_data: along dimension {dim} this process's "
                f"devices hold [{min(starts)}, {max(stops)}) of the global {g}, but the local "
                f"data has size {l}; pass exactly the block this process holds, or the whole "
                "dimension."
            )
        offsets.append(min(starts))
    return offsets


def _inferred_global_shape(sharding, local_shape) -> tuple[int, ...]:
    """Each dimension grows by (distinct pieces over all devices) / (distinct pieces here)."""
    # a shape every tiling divides, only to count the distinct pieces along each dimension
    probe = (len(sharding.device_set),) * len(local_shape)
    everywhere = sharding.devices_indices_map(probe)
    here = {d: everywhere[d] for d in sharding.addressable_devices}
    out = []
    for dim, (size, wanted) in enumerate(zip(probe, local_shape)):
        total = len({everywhere[d][dim].indices(size) for d in everywhere})
        local = len({index[dim].indices(size) for index in here.values()})
        out.append(wanted * total // local)
    return tuple(out)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """An Array laid out by `sharding` from the data this process holds: the block of the
    global array its devices need (or whole dimensions, the same in every process).

    `global_shape` defaults to the local shape grown by the number of processes each
    dimension is split over (with one process, the local shape).

    Raises:
      ValueError: the local data is not the block this process's devices hold.
    """
    _check_sharding(sharding, "make_array_from_process_local_data")
    local = np.asarray(local_data)
    if global_shape is None:
        global_shape = (local.shape if sharding.is_fully_addressable
                        else _inferred_global_shape(sharding, local.shape))
    global_shape = tuple(global_shape)
    if sharding.is_fully_addressable:
        if math.prod(global_shape) != local.size:
            raise ValueError(
                f"make_array_from_process_local_data: with every device of the sharding in "
                f"this process, the local data (shape {local.shape}) is the whole array, but "
                f"global_shape={global_shape}."
            )
        local = local.reshape(global_shape)
        return make_array_from_callback(global_shape, sharding, lambda index: local[index])
    if local.ndim != len(global_shape):
        raise ValueError(
            f"make_array_from_process_local_data: local data of rank {local.ndim} for a global "
            f"shape {global_shape} of rank {len(global_shape)}."
        )
    offsets = _process_block(sharding, global_shape, local.shape)

    def piece(index):
        shifted = tuple(
            slice(s.indices(g)[0] - o, s.indices(g)[1] - o)
            for s, g, o in zip(index, global_shape, offsets)
        )
        return local[shifted]

    return make_array_from_callback(global_shape, sharding, piece, dtype=local.dtype)
