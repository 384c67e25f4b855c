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


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """An Array laid out by `sharding` from the data this process holds (with one process,
    all of it: `global_shape` defaults to ``local_data.shape``).

    Raises:
      ValueError: `global_shape` disagrees with the local data of a single process.
    """
    _check_sharding(sharding, "make_array_from_process_local_data")
    local = np.asarray(local_data)
    if global_shape is None:
        global_shape = local.shape
    global_shape = tuple(global_shape)
    if sharding.is_fully_addressable and math.prod(global_shape) != local.size:
        raise ValueError(
            f"make_array_from_process_local_data: with every device of the sharding in this "
            f"process, the local data (shape {local.shape}) is the whole array, but "
            f"global_shape={global_shape}."
        )
    local = local.reshape(global_shape)
    return make_array_from_callback(global_shape, sharding, lambda index: local[index])
